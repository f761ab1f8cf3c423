package tokenizer

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func tinyPath(kind string) string { return filepath.Join("testdata", kind, "tiny-tokenizer.json") }

func mustLoadHF(t testing.TB, path string) *Vocabulary {
	t.Helper()
	v, err := LoadHF(path)
	if err != nil {
		t.Fatalf("LoadHF(%s): %v", path, err)
	}
	return v
}

func sp(s string) []byte { return specialBytes(s) }

func TestLoadHFTiny(t *testing.T) {
	tests := []struct {
		kind    string
		n       int
		bos     TokenID
		eos     []TokenID
		tokens  map[TokenID][]byte
		special []TokenID
	}{
		{
			kind: "bytelevel", n: 303, bos: 300, eos: []TokenID{301},
			tokens: map[TokenID][]byte{
				0: {0}, 32: []byte(" "), 10: []byte("\n"), 0xE9: {0xE9},
				256: []byte(" t"), 258: []byte(" the"), 266: []byte(" xyz"),
				267: nil, 299: nil,
				300: sp("<|begin_of_text|>"), 301: sp("<|eot_id|>"), 302: []byte("<tool>"),
			},
			special: []TokenID{300, 301},
		},
		{
			kind: "sentencepiece", n: 273, bos: 1, eos: []TokenID{2},
			tokens: map[TokenID][]byte{
				0: sp("<unk>"), 1: sp("<s>"), 2: sp("</s>"), 3: {0}, 3 + 10: []byte("\n"), 258: {0xFF},
				259: []byte(" "), 260: []byte("a"),
			},
			special: []TokenID{0, 1, 2},
		},
	}
	for _, tt := range tests {
		v := mustLoadHF(t, tinyPath(tt.kind))
		if len(v.Tokens) != tt.n || v.Width != tt.n || len(v.Special) != tt.n {
			t.Errorf("LoadHF(%s): %d tokens, width %d, want %d", tt.kind, len(v.Tokens), v.Width, tt.n)
		}
		if v.BOS != tt.bos || !slices.Equal(v.EOS, tt.eos) {
			t.Errorf("LoadHF(%s): BOS %d EOS %v, want %d %v", tt.kind, v.BOS, v.EOS, tt.bos, tt.eos)
		}
		for id, want := range tt.tokens {
			if got := v.Tokens[id]; !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("LoadHF(%s).Tokens[%d] = %q, want %q", tt.kind, id, got, want)
			}
		}
		var special []TokenID
		for id, s := range v.Special {
			if s {
				special = append(special, TokenID(id))
			}
		}
		if !slices.Equal(special, tt.special) {
			t.Errorf("LoadHF(%s) special ids = %v, want %v", tt.kind, special, tt.special)
		}
	}
}

func TestLoadHFShared(t *testing.T) {
	tests := []struct {
		name   string
		width  int
		bos    TokenID
		eos    []TokenID
		tokens map[TokenID][]byte
	}{
		{"llama3_1", 128256, 128000, []TokenID{128001, 128009}, map[TokenID][]byte{
			220: []byte(" "), 198: []byte("\n"), 15339: []byte("hello"), 1917: []byte(" world"),
			128009: sp("<|eot_id|>"), 128255: sp("<|reserved_special_token_250|>"),
		}},
		{"qwen3", 151669, NoToken, []TokenID{151643, 151645}, map[TokenID][]byte{
			220: []byte(" "), 14990: []byte("hello"), 151644: sp("<|im_start|>"), 151657: []byte("<tool_call>"),
		}},
		{"llama2", 32000, 1, []TokenID{2}, map[TokenID][]byte{
			0: sp("<unk>"), 13: []byte("\n"), 28705: []byte(" "), 259: []byte("  "), 21558: []byte("hello"),
		}},
		{"gemma3", 262145, 2, []TokenID{1, 106}, map[TokenID][]byte{
			248: []byte("\n"), 138: []byte("  "), 29104: []byte(" hello"), 106: sp("<end_of_turn>"),
			245237: []byte("Ġ"), 262144: sp("<image_soft_token>"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, v := sharedHF(t, tt.name)
			if v.Width != tt.width || len(v.Tokens) != tt.width || v.BOS != tt.bos || !slices.Equal(v.EOS, tt.eos) {
				t.Errorf("width %d (%d tokens) BOS %d EOS %v, want %d %d %v", v.Width, len(v.Tokens), v.BOS, v.EOS, tt.width, tt.bos, tt.eos)
			}
			for id, want := range tt.tokens {
				if got := v.Tokens[id]; !bytes.Equal(got, want) {
					t.Errorf("Tokens[%d] = %q, want %q", id, got, want)
				}
			}
			// Every byte must be expressible: byte-level vocabularies have a
			// token per byte, SentencePiece ones a <0xNN> fallback per byte.
			single := map[byte]bool{}
			for id, tok := range v.Tokens {
				if len(tok) == 1 && !v.Special[id] {
					single[tok[0]] = true
				}
			}
			if len(single) != 256 {
				t.Errorf("%d distinct single-byte tokens, want 256", len(single))
			}
			// Special tokens start with 0xFF; a plain token that does (the
			// raw byte 0xFF) is not valid UTF-8, so text cannot produce it.
			for id, tok := range v.Tokens {
				hasPrefix := len(tok) > 0 && tok[0] == SpecialPrefix
				if v.Special[id] && !hasPrefix || !v.Special[id] && hasPrefix && utf8.Valid(tok) {
					t.Fatalf("Tokens[%d] = %q, Special = %v: want the 0xFF prefix on special tokens only", id, tok, v.Special[id])
				}
			}
		})
	}
}

func TestVocabularyDecode(t *testing.T) {
	v := mustLoadHF(t, tinyPath("bytelevel"))
	tests := []struct {
		ids  []TokenID
		want string
	}{
		{nil, ""},
		{[]TokenID{300, 258, 302}, "<|begin_of_text|> the<tool>"},
		{[]TokenID{104, 101, 0xC3, 0xA9}, "heé"},
		{[]TokenID{-1, 5000, 267, 104}, "h"}, // out of range and holes are skipped
	}
	for _, tt := range tests {
		if got := string(v.Decode(tt.ids)); got != tt.want {
			t.Errorf("Decode(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
	if got := string(v.Text(301)); got != "<|eot_id|>" {
		t.Errorf("Text(301) = %q, want %q", got, "<|eot_id|>")
	}
	if !v.IsEOS(301) || v.IsEOS(300) {
		t.Errorf("IsEOS(301), IsEOS(300) = %v, %v, want true, false", v.IsEOS(301), v.IsEOS(300))
	}
}

func TestFingerprint(t *testing.T) {
	base := mustLoadHF(t, tinyPath("bytelevel"))
	fp := base.Fingerprint()
	if len(fp) != 64 {
		t.Fatalf("Fingerprint() = %q, want 64 hex digits", fp)
	}
	if again := mustLoadHF(t, tinyPath("bytelevel")).Fingerprint(); again != fp {
		t.Errorf("Fingerprint() differs between two loads: %s, %s", fp, again)
	}
	if other := mustLoadHF(t, tinyPath("sentencepiece")).Fingerprint(); other == fp {
		t.Errorf("Fingerprint() is the same for different vocabularies")
	}
	edits := map[string]func(v *Vocabulary){
		"token bytes":  func(v *Vocabulary) { v.Tokens[104] = []byte("H") },
		"special flag": func(v *Vocabulary) { v.Special[302] = true },
		"EOS":          func(v *Vocabulary) { v.EOS = append(v.EOS, 300) },
		"width":        func(v *Vocabulary) { v.Width++ },
		"hole filled":  func(v *Vocabulary) { v.Tokens[267] = []byte{} },
		"split tokens": func(v *Vocabulary) { v.Tokens[256], v.Tokens[257] = []byte(" th"), []byte("e") },
	}
	for name, edit := range edits {
		v := mustLoadHF(t, tinyPath("bytelevel"))
		edit(v)
		if v.Fingerprint() == fp {
			t.Errorf("Fingerprint() unchanged after editing %s", name)
		}
	}
	// Name and BOS do not change what masks mean.
	v := mustLoadHF(t, tinyPath("bytelevel"))
	v.Name, v.BOS = "other", NoToken
	if v.Fingerprint() != fp {
		t.Errorf("Fingerprint() changed with Name and BOS")
	}
}

// TestRoundTripShared checks Decode(Encode(s)) == s on the reference texts.
// Llama-2's normalizer prepends "▁" to each text segment, which decodes to
// a leading space per segment; its texts are checked through
// prependedText.
func TestRoundTripShared(t *testing.T) {
	for _, name := range sharedVocabs {
		t.Run(name, func(t *testing.T) {
			f, enc, v := sharedHF(t, name)
			readJSONL(t, sharedPathFor(t, name), 0, func(i int, c refCase) {
				want := c.Text
				if name == "llama2" {
					want = prependedText(f, c.Text)
				}
				if got := string(v.Decode(enc.Encode(c.Text))); got != want {
					t.Errorf("Decode(Encode(%s)) = %s, want %s", strconv.Quote(c.Text), strconv.Quote(got), strconv.Quote(want))
				}
			})
		})
	}
}

// prependedText is what a Prepend("▁") normalizer makes of text after
// decoding: a space before every non-empty segment between added tokens.
func prependedText(f *HFFile, text string) string {
	spans := newAddedSet(f.Added).split(text, nil)
	var out []byte
	for _, s := range spans {
		if s.id == NoToken {
			out = append(out, ' ')
		}
		out = append(out, text[s.start:s.end]...)
	}
	return string(out)
}

// randomText builds a string from pieces that stress pre-tokenizers and
// BPE: ASCII words and digits, whitespace runs, punctuation, CJK, emoji,
// combining marks, and (when invalid is set) bytes that are not UTF-8.
func randomText(r *rand.Rand, invalid bool) string {
	parts := []string{"hello", " world", "  ", "\n", "\r\n", "\t", "123456", "3.14", "'s", "'LL", "{\"a\":", " [1, 2]", "!!", "...",
		"日本語", "테스트", "🎉", "👩‍💻", "e\u0301", "\u00a0", "\u3000", "ß", "Ω", "_x", "<|eot_id|>", "<|im_end|>", "</s>", "<end_of_turn>", "▁", "<0x0A>"}
	if invalid {
		parts = append(parts, "\xff", "\xc3", "\x80\x80")
	}
	var sb strings.Builder
	for n := r.IntN(12); n >= 0; n-- {
		sb.WriteString(parts[r.IntN(len(parts))])
	}
	return sb.String()
}

// TestRoundTripSharedRandom: Decode(Encode(s)) gives s back on the real
// vocabularies for random mixed texts: exactly for Llama-3 (also with
// invalid UTF-8), after NFC for Qwen3, and for the SentencePiece-style
// ones with "▁" read as a space (a literal "▁" in the text is a space to
// them, as in the reference) and, for Llama-2, a leading space per segment.
func TestRoundTripSharedRandom(t *testing.T) {
	for _, name := range sharedVocabs {
		t.Run(name, func(t *testing.T) {
			f, enc, v := sharedHF(t, name)
			r := rand.New(rand.NewPCG(1, 2))
			for range 300 {
				s := randomText(r, name == "llama3_1")
				want := s
				switch name {
				case "qwen3":
					want = norm.NFC.String(s)
				case "llama2":
					want = strings.ReplaceAll(prependedText(f, s), "▁", " ")
				case "gemma3":
					want = strings.ReplaceAll(s, "▁", " ")
				}
				if got := string(v.Decode(enc.Encode(s))); got != want {
					t.Errorf("Decode(Encode(%q)) = %q, want %q", s, got, want)
				}
			}
		})
	}
}
