package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func mustEncoder(t testing.TB, path string) *Encoder {
	t.Helper()
	e, err := NewEncoder(path)
	if err != nil {
		t.Fatalf("NewEncoder(%s): %v", path, err)
	}
	return e
}

// The tiny tokenizers' ids: bytelevel has byte b at id b, merges 0..9 make
// ids 256..265 (Ġt he Ġthe ll el hell hello 12 123 Ġh) and 266 is "Ġxyz",
// reachable only through ignore_merges. sentencepiece has <unk> <s> </s>,
// <0x00>..<0xFF> at 3..258, ▁ a b h e l o at 259..265 and merges 0..6 make
// 266..272 (▁h el ▁hel lo ▁hello ab ▁a).
var tinyEncodeTests = []struct {
	kind, text string
	want       []TokenID
}{
	{"bytelevel", "", nil},
	{"bytelevel", "hello", []TokenID{262}},
	{"bytelevel", "hellos", []TokenID{262, 's'}},
	{"bytelevel", " the", []TokenID{258}},
	{"bytelevel", " then", []TokenID{258, 'n'}},
	{"bytelevel", " hello", []TokenID{' ', 262}}, // "he" (rank 1) is merged before "Ġh" (rank 9)
	{"bytelevel", "1234", []TokenID{264, '4'}},
	{"bytelevel", " xyz", []TokenID{266}}, // ignore_merges: a whole pre-token in the vocabulary
	{"bytelevel", " xyzw", []TokenID{' ', 'x', 'y', 'z', 'w'}},
	{"bytelevel", "hello  world", []TokenID{262, ' ', ' ', 'w', 'o', 'r', 'l', 'd'}},
	{"bytelevel", "<|begin_of_text|>hello<tool>", []TokenID{300, 262, 302}},
	{"bytelevel", "<|eot_id", []TokenID{'<', '|', 'e', 'o', 't', '_', 'i', 'd'}},
	{"bytelevel", "a<|eot_id|><|eot_id|>", []TokenID{'a', 301, 301}},
	{"bytelevel", "é", []TokenID{0xC3, 0xA9}},
	{"bytelevel", "\xff\xfe", []TokenID{0xFF, 0xFE}},
	{"sentencepiece", "", nil},
	{"sentencepiece", "hello", []TokenID{270}},
	{"sentencepiece", "hello hello", []TokenID{270, 270}},
	{"sentencepiece", "ab", []TokenID{259, 271}}, // "ab" (rank 5) before "▁a" (rank 6)
	{"sentencepiece", "a", []TokenID{272}},
	{"sentencepiece", "é", []TokenID{259, 3 + 0xC3, 3 + 0xA9}},
	{"sentencepiece", "x", []TokenID{259, 3 + 'x'}},
	{"sentencepiece", "a</s>b", []TokenID{272, 2, 259, 261}},
	{"sentencepiece", " ", []TokenID{259, 259}},
	{"sentencepiece", "\xff", []TokenID{259, 3 + 0xFF}},
}

func TestEncodeTiny(t *testing.T) {
	encs := map[string]*Encoder{}
	for _, tt := range tinyEncodeTests {
		enc := encs[tt.kind]
		if enc == nil {
			enc = mustEncoder(t, tinyPath(tt.kind))
			encs[tt.kind] = enc
		}
		for range 2 { // the second call is served from the cache
			if got := enc.Encode(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("%s: Encode(%s) = %v, want %v", tt.kind, strconv.Quote(tt.text), got, tt.want)
			}
		}
	}
}

// variant writes a copy of a tiny tokenizer.json with edit applied to its
// decoded JSON and returns the new path.
func variant(t testing.TB, kind string, edit func(m map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(tinyPath(kind))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func model(m map[string]any) map[string]any { return m["model"].(map[string]any) }

func TestEncodeUnknown(t *testing.T) {
	tests := []struct {
		name string
		edit func(m map[string]any)
		text string
		want []TokenID
	}{
		{"unk fused", func(m map[string]any) { model(m)["byte_fallback"] = false }, "xyab", []TokenID{259, 0, 271}},
		{"unk not fused", func(m map[string]any) { model(m)["byte_fallback"] = false; model(m)["fuse_unk"] = false }, "xyab", []TokenID{259, 0, 0, 271}},
		{"no unk: dropped", func(m map[string]any) { model(m)["byte_fallback"] = false; model(m)["unk_token"] = nil }, "xyab", []TokenID{259, 271}},
		{"no prepend", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}
		}, "hello a", []TokenID{262, 267, 269, 272}},
		{"metaspace", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}
		}, "hello hello", []TokenID{270, 270}},
		{"metaspace first", func(m map[string]any) {
			m["normalizer"] = nil
			m["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
		}, "a</s>a", []TokenID{272, 2, 260}},
	}
	for _, tt := range tests {
		enc := mustEncoder(t, variant(t, "sentencepiece", tt.edit))
		if got := enc.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestEncodeByteLevelVariants(t *testing.T) {
	tests := []struct {
		name string
		edit func(m map[string]any)
		text string
		want []TokenID
	}{
		{"merges only", func(m map[string]any) { model(m)["ignore_merges"] = false }, " xyz", []TokenID{' ', 'x', 'y', 'z'}},
		{"GPT-2 ByteLevel regex with prefix space", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": true, "use_regex": true}
		}, "the 1234", []TokenID{258, ' ', 264, '4'}},
		{"added token normalized", func(m map[string]any) {
			m["normalizer"] = map[string]any{"type": "Lowercase"}
			m["added_tokens"].([]any)[2].(map[string]any)["normalized"] = true
		}, "<TOOL>HELLO", []TokenID{302, 262}},
		{"lstrip and rstrip", func(m map[string]any) {
			a := m["added_tokens"].([]any)[2].(map[string]any)
			a["lstrip"], a["rstrip"] = true, true
		}, "a  <tool>  b", []TokenID{'a', 302, 'b'}},
		{"single word", func(m map[string]any) {
			m["added_tokens"].([]any)[2].(map[string]any)["single_word"] = true
		}, "x<tool> <tool>", []TokenID{'x', '<', 't', 'o', 'o', 'l', '>', ' ', 302}},
	}
	for _, tt := range tests {
		enc := mustEncoder(t, variant(t, "bytelevel", tt.edit))
		if got := enc.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestNewEncoderErrors(t *testing.T) {
	tests := []struct {
		name string
		kind string
		edit func(m map[string]any)
		code ErrorCode
	}{
		{"unigram", "sentencepiece", func(m map[string]any) { model(m)["type"] = "Unigram" }, CodeUnsupported},
		{"normalizer", "sentencepiece", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "StripAccents"} }, CodeUnsupported},
		{"pre-tokenizer", "bytelevel", func(m map[string]any) { m["pre_tokenizer"] = map[string]any{"type": "Whitespace"} }, CodeUnsupported},
		{"split behavior", "bytelevel", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Sideways"}
		}, CodeUnsupported},
		{"bad regex", "bytelevel", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"Regex": "(["}, "behavior": "Isolated"}
		}, CodeUnsupported},
		{"merge of unknown token", "bytelevel", func(m map[string]any) { model(m)["merges"] = []any{"q zz"} }, CodeInvalid},
		{"subword prefix", "bytelevel", func(m map[string]any) { model(m)["continuing_subword_prefix"] = "##" }, CodeUnsupported},
	}
	for _, tt := range tests {
		_, err := NewEncoder(variant(t, tt.kind, tt.edit))
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("%s: NewEncoder error = %v, want code %v", tt.name, err, tt.code)
		}
	}
}

func TestSplitBehaviors(t *testing.T) {
	tests := []struct {
		behavior string
		invert   bool
		want     []string
	}{
		{"Isolated", false, []string{"the", "-", "final", "-", "-", "countdown"}},
		{"Removed", false, []string{"the", "final", "countdown"}},
		{"MergedWithPrevious", false, []string{"the-", "final-", "-", "countdown"}},
		{"MergedWithNext", false, []string{"the", "-final", "-", "-countdown"}},
		{"Contiguous", false, []string{"the", "-", "final", "--", "countdown"}},
		{"Removed", true, []string{"-", "-", "-"}},
	}
	for _, tt := range tests {
		p, err := splitter(literalMatcher("-"), tt.behavior, tt.invert, "test")
		if err != nil {
			t.Fatal(err)
		}
		if got := p("the-final--countdown", true, nil); !slices.Equal(got, tt.want) {
			t.Errorf("split %s (invert %v) = %q, want %q", tt.behavior, tt.invert, got, tt.want)
		}
	}
}

// TestRoundTripTiny checks Decode(Encode(s)) == s, byte for byte, including
// invalid UTF-8 and added tokens, on the tiny byte-level tokenizer.
func TestRoundTripTiny(t *testing.T) {
	enc := mustEncoder(t, tinyPath("bytelevel"))
	v := mustLoadHF(t, tinyPath("bytelevel"))
	texts := []string{
		"", "hello world", "  \n\n\t x", "don't STOP", "12345678", "a<|eot_id|>b<tool>", "\xff\x00\x80",
		"日本語のテキスト", "emoji 🎉 and ZWJ 👩‍💻", strings.Repeat("ab ", 200), "{\"a\": [1, 2.5e-3, null]}",
	}
	for _, s := range texts {
		if got := string(v.Decode(enc.Encode(s))); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

// TestEncodeConcurrent: one Encoder used from several goroutines (sharing
// its cache) gives the same ids as sequential use.
func TestEncodeConcurrent(t *testing.T) {
	want := map[string][]TokenID{}
	seq := mustEncoder(t, tinyPath("bytelevel"))
	for _, tt := range tinyEncodeTests {
		if tt.kind == "bytelevel" {
			want[tt.text] = seq.Encode(tt.text)
		}
	}
	enc := mustEncoder(t, tinyPath("bytelevel"))
	errs := make(chan string, 8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				for text, w := range want {
					if got := enc.Encode(text); !slices.Equal(got, w) {
						errs <- fmt.Sprintf("goroutine %d round %d: Encode(%q) = %v, want %v", g, i, text, got, w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
