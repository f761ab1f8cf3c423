package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadHFFileTiny(t *testing.T) {
	tests := []struct {
		dir          string
		kind         Kind
		pre          string
		nVocab       int
		nTokens      int
		firstMerge   string
		bos, eos     string
		chatTemplate string
	}{
		{"bytelevel", KindByteLevel, "llama-bpe", 267, 303, "Ġ t", "<|begin_of_text|>", "<|eot_id|>", "{% for m in messages %}{{ m.content }}{% endfor %}"},
		{"sentencepiece", KindSentencePiece, "default", 273, 273, "▁ h", "<s>", "</s>", "T"},
	}
	for _, tt := range tests {
		f, err := ReadHFFile(filepath.Join("testdata", tt.dir, "tiny-tokenizer.json"))
		if err != nil {
			t.Fatalf("ReadHFFile(%s): %v", tt.dir, err)
		}
		if f.ModelType != "BPE" || f.Kind != tt.kind || f.Pre != tt.pre {
			t.Errorf("ReadHFFile(%s): type %q kind %v pre %q, want BPE %v %q", tt.dir, f.ModelType, f.Kind, f.Pre, tt.kind, tt.pre)
		}
		if len(f.Vocab) != tt.nVocab || len(f.Tokens()) != tt.nTokens {
			t.Errorf("ReadHFFile(%s): %d vocab, %d tokens, want %d, %d", tt.dir, len(f.Vocab), len(f.Tokens()), tt.nVocab, tt.nTokens)
		}
		if len(f.Merges) == 0 || f.Merges[0] != tt.firstMerge {
			t.Errorf("ReadHFFile(%s).Merges[0] = %q, want %q", tt.dir, f.Merges, tt.firstMerge)
		}
		if f.BOS != tt.bos || f.EOS != tt.eos || f.ChatTemplate != tt.chatTemplate {
			t.Errorf("ReadHFFile(%s): bos %q eos %q template %q, want %q %q %q", tt.dir, f.BOS, f.EOS, f.ChatTemplate, tt.bos, tt.eos, tt.chatTemplate)
		}
	}
}

func TestHFFileTokenTypes(t *testing.T) {
	f, err := ReadHFFile(filepath.Join("testdata", "sentencepiece", "tiny-tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	types := f.TokenTypes()
	want := map[int]int32{0: TokenTypeUnknown, 1: TokenTypeControl, 2: TokenTypeControl, 3: TokenTypeByte, 258: TokenTypeByte, 259: TokenTypeNormal}
	for id, w := range want {
		if types[id] != w {
			t.Errorf("TokenTypes()[%d] = %d, want %d", id, types[id], w)
		}
	}
	// "▁hello" is made by merge 4, so its score is -4.
	id := slices.Index(f.Vocab, "▁hello")
	if id < 0 || f.Scores[id] != -4 {
		t.Errorf("Scores[%d (▁hello)] = %v, want -4", id, f.Scores[id])
	}

	f, err = ReadHFFile(filepath.Join("testdata", "bytelevel", "tiny-tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	types = f.TokenTypes()
	want = map[int]int32{0: TokenTypeNormal, 266: TokenTypeNormal, 267: TokenTypeUnused, 299: TokenTypeUnused, 300: TokenTypeControl, 302: TokenTypeUserDefined}
	for id, w := range want {
		if types[id] != w {
			t.Errorf("TokenTypes()[%d] = %d, want %d", id, types[id], w)
		}
	}
}

func TestReadHFFileErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body string
		code       ErrorCode
	}{
		{"badjson", `{"model": `, CodeSyntax},
		{"novocab", `{"model": {"type": "BPE"}}`, CodeSyntax},
		{"dupid", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}`, CodeInvalid},
		{"negid", `{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}`, CodeInvalid},
		{"badmerge", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["abc"]}}`, CodeSyntax},
		{"badpair", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}}`, CodeSyntax},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".json")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadHFFile(p)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Errorf("ReadHFFile(%s) error = %v, want code %v", c.name, err, c.code)
		}
	}
	_, err := ReadHFFile(filepath.Join(dir, "absent.json"))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeIO {
		t.Errorf("ReadHFFile(absent) error = %v, want code %v", err, CodeIO)
	}
}

func TestReadHFFileShared(t *testing.T) {
	tests := []struct {
		name        string
		kind        Kind
		pre         string
		nVocab      int
		nMerges     int
		nAdded      int
		bos, eos    string
		hasTemplate bool
	}{
		{"llama3_1", KindByteLevel, "llama-bpe", 128000, 280147, 256, "<|begin_of_text|>", "<|eot_id|>", true},
		{"qwen3", KindByteLevel, "qwen2", 151643, 151387, 26, "", "<|im_end|>", true},
		{"llama2", KindSentencePiece, "default", 32000, 58980, 3, "<s>", "</s>", false},
		{"gemma3", KindSentencePiece, "default", 262144, 514906, 6415, "<bos>", "<end_of_turn>", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := sharedHF(t, tt.name)
			if f.Kind != tt.kind || f.Pre != tt.pre || len(f.Vocab) != tt.nVocab || len(f.Merges) != tt.nMerges || len(f.Added) != tt.nAdded {
				t.Errorf("got kind %v pre %q vocab %d merges %d added %d, want %v %q %d %d %d",
					f.Kind, f.Pre, len(f.Vocab), len(f.Merges), len(f.Added), tt.kind, tt.pre, tt.nVocab, tt.nMerges, tt.nAdded)
			}
			if f.BOS != tt.bos || f.EOS != tt.eos || (f.ChatTemplate != "") != tt.hasTemplate {
				t.Errorf("got bos %q eos %q template %d bytes, want %q %q template %v", f.BOS, f.EOS, len(f.ChatTemplate), tt.bos, tt.eos, tt.hasTemplate)
			}
		})
	}
}
