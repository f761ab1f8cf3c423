package llama

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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

var (
	modelsMu sync.Mutex
	models   = map[string]string{}
)

// synthModel writes (once per test binary) a tiny synthetic model with the
// vocabulary spec ("cl100k" or a tokenizer.json path) and returns its path.
func synthModel(t testing.TB, spec string) string {
	t.Helper()
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if p, ok := models[spec]; ok {
		return p
	}
	v, err := mkmodel.LoadVocab(spec)
	if err != nil {
		t.Fatalf("LoadVocab(%q): %v", spec, err)
	}
	p := filepath.Join(testDir, "model"+string(rune('a'+len(models)))+".gguf")
	if err := mkmodel.Write(p, mkmodel.Options{Vocab: v, Seed: 1}); err != nil {
		t.Fatalf("mkmodel.Write: %v", err)
	}
	models[spec] = p
	return p
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
