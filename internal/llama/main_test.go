package llama

import (
	"log/slog"
	"os"
	"testing"

	"conform/internal/mkmodel"
)

var testDir string

func TestMain(m *testing.M) {
	// llama.cpp logs through ollama's hook at slog's level: keep warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	d, err := os.MkdirTemp("", "conform-llama-test-")
	if err != nil {
		panic(err)
	}
	testDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// smallVocab is a hand-made byte-level vocabulary: the 256 single bytes,
// one merge, and two control tokens; enough for files that must parse.
func smallVocab() *mkmodel.Vocab {
	v := &mkmodel.Vocab{Model: "gpt2", Pre: "default", Source: "small"}
	for b := range 256 {
		v.Tokens = append(v.Tokens, gpt2Byte(byte(b)))
		v.Types = append(v.Types, 1)
	}
	v.Tokens = append(v.Tokens, "ab", "<|endoftext|>", "<|im_start|>")
	v.Types = append(v.Types, 1, 3, 3)
	v.Merges = []string{"a b"}
	v.EOS, v.BOS = 257, 257
	return v
}

func gpt2Byte(b byte) string {
	if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
		return string(rune(b))
	}
	n := 0
	for c := 0; c < int(b); c++ {
		if !(c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE) {
			n++
		}
	}
	return string(rune(256 + n))
}
