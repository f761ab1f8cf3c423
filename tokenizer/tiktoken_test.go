package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// tiktokenTexts are checked against github.com/pkoukk/tiktoken-go.
var tiktokenTexts = []string{
	"hello world", "Hello, World!", "  leading and trailing  ", "don't you're we'LL",
	"1234567 3.14159", "日本語のテキスト", "emoji 🎉 👩‍💻", "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}",
	"line1\r\nline2\n\n\tindented", "ñandú café naïve", strings.Repeat("abc", 100),
}

func tiktokenRef(t *testing.T, name string) *tiktoken.Tiktoken {
	t.Helper()
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		t.Fatalf("tiktoken.GetEncoding(%s): %v", name, err)
	}
	return enc
}

func TestLoadTiktoken(t *testing.T) {
	tests := []struct {
		name     string
		width    int
		holes    int
		eos      []TokenID
		specials []string
	}{
		{"cl100k_base", 100277, 16, []TokenID{100257}, []string{"<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"}},
		{"o200k_base", 200019, 19, []TokenID{199999}, []string{"<|endoftext|>", "<|endofprompt|>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := LoadTiktoken(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			holes := 0
			for _, tok := range v.Tokens {
				if tok == nil {
					holes++
				}
			}
			if v.Width != tt.width || len(v.Tokens) != tt.width || holes != tt.holes || v.BOS != NoToken || !slices.Equal(v.EOS, tt.eos) || v.Name != tt.name {
				t.Errorf("width %d, %d tokens, %d holes, BOS %d, EOS %v, name %q; want %d, %d, %d, -1, %v, %q",
					v.Width, len(v.Tokens), holes, v.BOS, v.EOS, v.Name, tt.width, tt.width, tt.holes, tt.eos, tt.name)
			}
			ref := tiktokenRef(t, tt.name)
			nSpecial := 0
			for _, s := range v.Special {
				if s {
					nSpecial++
				}
			}
			if nSpecial != len(tt.specials) {
				t.Errorf("%d special tokens, want %d", nSpecial, len(tt.specials))
			}
			for _, s := range tt.specials {
				ids := ref.Encode(s, []string{"all"}, nil)
				if len(ids) != 1 {
					t.Fatalf("tiktoken-go Encode(%s) = %v, want one id", s, ids)
				}
				id := ids[0]
				if !v.Special[id] || string(v.Tokens[id]) != string(specialBytes(s)) {
					t.Errorf("Tokens[%d] = %q (special %v), want %q special", id, v.Tokens[id], v.Special[id], specialBytes(s))
				}
			}
			for _, text := range tiktokenTexts {
				ids := ref.EncodeOrdinary(text)
				tids := make([]TokenID, len(ids))
				for i, id := range ids {
					tids[i] = TokenID(id)
				}
				if got := string(v.Decode(tids)); got != text {
					t.Errorf("Decode(tiktoken-go ids of %q) = %q", text, got)
				}
			}
		})
	}
	_, err := LoadTiktoken("cl200k_base")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeUnknownEncoding {
		t.Errorf("LoadTiktoken(cl200k_base) error = %v, want code %v", err, CodeUnknownEncoding)
	}
}

// TestTiktokenMerges writes cl100k_base as a byte-level BPE tokenizer.json
// from the recovered merges and checks that the Encoder then gives the
// same ids as tiktoken-go.
func TestTiktokenMerges(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100k-token tokenizer.json")
	}
	tokens, merges, err := TiktokenMerges("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 100256 || len(merges) != len(tokens)-256 {
		t.Fatalf("TiktokenMerges: %d tokens, %d merges, want 100256 and 256 fewer merges", len(tokens), len(merges))
	}
	if tokens[0] != "!" || tokens[220] != "Ġ" || merges[0] != "Ġ Ġ" {
		t.Errorf("TiktokenMerges: tokens[0], tokens[220], merges[0] = %q, %q, %q, want %q, %q, %q", tokens[0], tokens[220], merges[0], "!", "Ġ", "Ġ Ġ")
	}
	vocab := make(map[string]int, len(tokens))
	for i, s := range tokens {
		vocab[s] = i
	}
	doc := map[string]any{
		"added_tokens": []any{map[string]any{"id": 100257, "content": "<|endoftext|>", "special": true}},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Regex}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": false},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	enc := mustEncoder(t, p)
	ref := tiktokenRef(t, "cl100k_base")
	for _, text := range append(tiktokenTexts, "<|endoftext|>x") {
		want := ref.Encode(text, []string{"all"}, nil)
		got := enc.Encode(text)
		if len(got) != len(want) || !slices.EqualFunc(got, want, func(a TokenID, b int) bool { return int(a) == b }) {
			t.Errorf("Encode(%s) = %v, tiktoken-go gives %v", strconv.Quote(text), got, want)
		}
	}
}
