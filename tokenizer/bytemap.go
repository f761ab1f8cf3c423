package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// The GPT-2 byte map (from OpenAI's gpt-2 encoder.py, bytes_to_unicode) gives
// every byte a printable Unicode character so that byte-level BPE
// vocabularies can be stored as text: the printable Latin-1 bytes
// '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves, and the other 68
// bytes (controls, space, 0x7F-0xA0, 0xAD) are mapped, in byte order, to
// U+0100, U+0101, ... So a space is "Ġ" (U+0120) and a newline "Ċ" (U+010A).
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
	// byteToString caches string(byteToRune[b]).
	byteToString [256]string
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF) {
			r = rune(256 + n)
			n++
		}
		byteToRune[b] = r
		runeToByte[r] = byte(b)
		byteToString[b] = string(r)
	}
}

// GPT2Encode maps raw bytes to their GPT-2 byte-level text form, the form
// in which byte-level BPE vocabularies (GPT-2, Llama-3, Qwen) and their
// merges are written in tokenizer.json and in GGUF files.
func GPT2Encode(b []byte) string {
	var sb strings.Builder
	sb.Grow(2 * len(b))
	for _, c := range b {
		sb.WriteRune(byteToRune[c])
	}
	return sb.String()
}

// GPT2Decode undoes GPT2Encode. It reports false, with the bytes decoded so
// far, when s holds a character outside the byte map (such a string is not
// a byte-level token, for example an added token written as plain text).
func GPT2Decode(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r == utf8.RuneError {
			return out, false
		}
		b, ok := runeToByte[r]
		if !ok {
			return out, false
		}
		out = append(out, b)
	}
	return out, true
}
