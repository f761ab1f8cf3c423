package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"conform/gguf"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{{ messages }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.gguf")
	if err := run("tiny", "cl100k", tmpl, 3, out); err != nil {
		t.Fatalf("run: %v", err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatalf("gguf.Open(output): %v", err)
	}
	if got, _ := f.String("tokenizer.chat_template"); got != "{{ messages }}" {
		t.Errorf("chat template = %q, want the -chat-template file", got)
	}
	if got, _ := f.Uint32("llama.embedding_length"); got != 64 {
		t.Errorf("embedding_length = %d, want the tiny preset's 64", got)
	}
	bad := []struct {
		preset, tok, tmpl, out, want string
	}{
		{"tiny", "", "", out, "required"},
		{"tiny", "cl100k", "", "", "required"},
		{"huge", "cl100k", "", out, "unknown preset"},
		{"tiny", filepath.Join(dir, "absent.json"), "", out, "vocabulary"},
		{"tiny", "cl100k", filepath.Join(dir, "absent.jinja"), out, "chat template"},
	}
	for _, tt := range bad {
		err := run(tt.preset, tt.tok, tt.tmpl, 1, tt.out)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q, %q, %q, %q): got %v, want an error containing %q", tt.preset, tt.tok, tt.tmpl, tt.out, err, tt.want)
		}
	}
}
