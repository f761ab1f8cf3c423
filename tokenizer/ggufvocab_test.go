package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"conform/gguf"
)

// ggufOptions tweak what writeVocabGGUF writes.
type ggufOptions struct {
	model       string // tokenizer.ggml.model; "" picks from the kind
	noTypes     bool
	shortTypes  bool
	outputWidth int // when > 0, add an output.weight tensor of this vocab width
}

// writeVocabGGUF writes f's vocabulary as GGUF tokenizer metadata, the way
// a converter does, and returns the file's path.
func writeVocabGGUF(t testing.TB, f *HFFile, opt ggufOptions) string {
	t.Helper()
	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	model := opt.model
	if model == "" {
		model = "llama"
		if f.Kind == KindByteLevel {
			model = "gpt2"
		}
	}
	w.AddString(ggufKeyModel, model)
	tokens := f.Tokens()
	w.AddStrings(ggufKeyTokens, tokens)
	types := f.TokenTypes()
	if opt.shortTypes {
		types = types[:len(types)-1]
	}
	if !opt.noTypes {
		w.AddInt32s(ggufKeyTypes, types)
	}
	w.AddStrings("tokenizer.ggml.merges", f.Merges)
	w.AddUint32("llama.vocab_size", uint32(len(tokens)))
	if id := slices.Index(tokens, f.EOS); id >= 0 && f.EOS != "" {
		w.AddUint32(ggufKeyEOS, uint32(id))
	}
	if id := slices.Index(tokens, f.BOS); id >= 0 && f.BOS != "" {
		w.AddUint32(ggufKeyBOS, uint32(id))
	}
	if opt.outputWidth > 0 {
		w.AddTensor(ggufOutputTensor, gguf.TensorF32, []uint64{2, uint64(opt.outputWidth)}, make([]byte, 2*4*opt.outputWidth))
	}
	p := filepath.Join(t.TempDir(), "model.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustReadHF(t testing.TB, path string) *HFFile {
	t.Helper()
	f, err := ReadHFFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLoadGGUFMatchesHF: a vocabulary written to GGUF and read back with
// LoadGGUF is the same, fingerprint for fingerprint, as LoadHF's.
func TestLoadGGUFMatchesHF(t *testing.T) {
	check := func(t *testing.T, f *HFFile, hv *Vocabulary) {
		gv, err := LoadGGUF(writeVocabGGUF(t, f, ggufOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		if gv.Fingerprint() != hv.Fingerprint() || gv.BOS != hv.BOS {
			n := 0
			for id := range min(len(gv.Tokens), len(hv.Tokens)) {
				if string(gv.Tokens[id]) != string(hv.Tokens[id]) || gv.Special[id] != hv.Special[id] {
					if n++; n <= 5 {
						t.Errorf("token %d: GGUF %q special %v, HF %q special %v", id, gv.Tokens[id], gv.Special[id], hv.Tokens[id], hv.Special[id])
					}
				}
			}
			t.Errorf("LoadGGUF: %d tokens, width %d, EOS %v, BOS %d; LoadHF: %d, %d, %v, %d (%d tokens differ)",
				len(gv.Tokens), gv.Width, gv.EOS, gv.BOS, len(hv.Tokens), hv.Width, hv.EOS, hv.BOS, n)
		}
	}
	for _, kind := range []string{"bytelevel", "sentencepiece"} {
		t.Run(kind, func(t *testing.T) {
			check(t, mustReadHF(t, tinyPath(kind)), mustLoadHF(t, tinyPath(kind)))
		})
	}
	for _, name := range []string{"llama3_1", "qwen3", "llama2"} {
		t.Run(name, func(t *testing.T) {
			f, _, v := sharedHF(t, name)
			check(t, f, v)
		})
	}
}

func TestLoadGGUFTiny(t *testing.T) {
	f := mustReadHF(t, tinyPath("sentencepiece"))
	v, err := LoadGGUF(writeVocabGGUF(t, f, ggufOptions{outputWidth: 300}))
	if err != nil {
		t.Fatal(err)
	}
	if v.Width != 300 || len(v.Tokens) != 273 {
		t.Errorf("LoadGGUF: width %d with %d tokens, want 300 (from output.weight) and 273", v.Width, len(v.Tokens))
	}
	// Without token types every token is normal: "<0x0A>" stays text.
	v, err = LoadGGUF(writeVocabGGUF(t, f, ggufOptions{noTypes: true}))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v.Tokens[13]); got != "<0x0A>" || v.Special[1] {
		t.Errorf("LoadGGUF without types: Tokens[13] = %q, Special[1] = %v, want %q, false", got, v.Special[1], "<0x0A>")
	}
}

func TestLoadGGUFErrors(t *testing.T) {
	f := mustReadHF(t, tinyPath("bytelevel"))
	notGGUF := filepath.Join(t.TempDir(), "x.gguf")
	if err := os.WriteFile(notGGUF, []byte("not a gguf file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		code       ErrorCode
	}{
		{"absent", filepath.Join(t.TempDir(), "absent.gguf"), CodeIO},
		{"not GGUF", notGGUF, CodeSyntax},
		{"bert", writeVocabGGUF(t, f, ggufOptions{model: "bert"}), CodeUnsupported},
		{"types length", writeVocabGGUF(t, f, ggufOptions{shortTypes: true}), CodeInvalid},
	}
	for _, tt := range tests {
		_, err := LoadGGUF(tt.path)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("LoadGGUF(%s) error = %v, want code %v", tt.name, err, tt.code)
		}
	}
	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	p := filepath.Join(t.TempDir(), "novocab.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	_, err := LoadGGUF(p)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalid || !strings.Contains(err.Error(), ggufKeyModel) {
		t.Errorf("LoadGGUF(no tokenizer keys) error = %v, want code %v naming %s", err, CodeInvalid, ggufKeyModel)
	}
}
