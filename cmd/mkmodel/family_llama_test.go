//go:build cgo

package main

import (
	"path/filepath"
	"slices"
	"testing"

	"conform/gguf"
	"conform/internal/llama"
	"conform/internal/sharedtest"
	"conform/tokenizer"
)

// TestFamiliesInLlamaCpp loads every family model in llama.cpp and checks
// that it treats the markers as the real model does: each marker tokenizes
// to its one id when specials are parsed; a control marker is not produced
// from plain text (parse_special off), while a user-defined one (Qwen's
// <think>) is, as in the real GGUF files. llama.cpp itself turns five
// harmony tokens into user-defined ones at load time, whatever the file says
// (llama-vocab.cpp, v0.24.0's copy: "quick hack for gpt-oss, always render
// these tokens", and <|end|> when <|return|> and <|call|> are both EOG), so
// real gpt-oss files behave the same way.
func TestFamiliesInLlamaCpp(t *testing.T) {
	shared := sharedtest.Path(t, "vocab", "qwen3", "tokenizer.json")
	shared = filepath.Dir(filepath.Dir(filepath.Dir(shared)))
	dir := t.TempDir()
	for _, name := range familyNames() {
		t.Run(name, func(t *testing.T) {
			fam := families[name]
			out := filepath.Join(dir, name+".gguf")
			if err := run(config{preset: "tiny", family: name, shared: shared, seed: 1, out: out}); err != nil {
				t.Fatalf("run: %v", err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			tokens, _ := f.Strings("tokenizer.ggml.tokens")
			m, err := llama.Load(out, llama.Params{ContextSize: 256, Threads: 1})
			if err != nil {
				t.Fatalf("llama.Load: %v", err)
			}
			defer m.Close()
			if m.NumVocab() != len(tokens) {
				t.Errorf("llama.cpp has %d tokens, the file %d", m.NumVocab(), len(tokens))
			}
			for _, mk := range fam.markers {
				id := llama.TokenID(slices.Index(tokens, mk.text))
				got, err := m.Tokenize("a"+mk.text+"b", false, true)
				if err != nil {
					t.Fatalf("Tokenize(%q): %v", mk.text, err)
				}
				if !slices.Contains(got, id) {
					t.Errorf("Tokenize(a%sb, parse specials) = %v, want it to contain id %d", mk.text, got, id)
				}
				plain, err := m.Tokenize("a"+mk.text+"b", false, false)
				if err != nil {
					t.Fatalf("Tokenize(%q): %v", mk.text, err)
				}
				if want := mk.typ == tokenizer.TokenTypeUserDefined || llamaCppUserDefined[mk.text]; slices.Contains(plain, id) != want {
					t.Errorf("Tokenize(a%sb, plain text) = %v: contains id %d = %v, want %v", mk.text, plain, id, !want, want)
				}
			}
		})
	}
}

// llamaCppUserDefined are the tokens llama.cpp makes user-defined at load
// time by their text (gpt-oss's harmony markers).
var llamaCppUserDefined = map[string]bool{
	"<|channel|>": true, "<|message|>": true, "<|start|>": true, "<|constrain|>": true, "<|end|>": true,
}
