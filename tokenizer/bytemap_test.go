package tokenizer

import (
	"bytes"
	"testing"
	"unicode"
)

func TestGPT2ByteMap(t *testing.T) {
	tests := []struct {
		in   []byte
		want string
	}{
		{[]byte(" "), "Ġ"},
		{[]byte("\n"), "Ċ"},
		{[]byte("\t"), "ĉ"},
		{[]byte("hello world"), "helloĠworld"},
		{[]byte{0x00, 0x7F, 0xAD}, "\u0100\u0121\u0143"},
		{[]byte("é"), "Ã©"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := GPT2Encode(tt.in); got != tt.want {
			t.Errorf("GPT2Encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got, ok := GPT2Decode(tt.want); !ok || !bytes.Equal(got, tt.in) {
			t.Errorf("GPT2Decode(%q) = %q, %v, want %q, true", tt.want, got, ok, tt.in)
		}
	}
}

func TestGPT2ByteMapProperties(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		s := GPT2Encode([]byte{byte(b)})
		r := []rune(s)
		if len(r) != 1 {
			t.Fatalf("GPT2Encode(%#x) = %q, want one character", b, s)
		}
		if seen[r[0]] {
			t.Errorf("GPT2Encode(%#x) = %q, already used by another byte", b, s)
		}
		seen[r[0]] = true
		if !unicode.IsPrint(r[0]) || unicode.IsSpace(r[0]) {
			t.Errorf("GPT2Encode(%#x) = %q, want a printable non-space character", b, s)
		}
		if b >= '!' && b <= '~' && r[0] != rune(b) {
			t.Errorf("GPT2Encode(%q) = %q, want the character itself", rune(b), s)
		}
	}
	for _, s := range []string{"<|eot_id|> x", "\u0200", "a\xffb"} {
		if _, ok := GPT2Decode(s); ok {
			t.Errorf("GPT2Decode(%q) ok = true, want false", s)
		}
	}
}
