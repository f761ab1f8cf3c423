package llamaengine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"conform/internal/llama"
	"conform/runner"
)

// TestLoadBadFiles runs in both builds: the binding validates the file in
// pure Go before llama.cpp sees it.
func TestLoadBadFiles(t *testing.T) {
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "model.gguf")
	if err := os.WriteFile(notGGUF, []byte("this is not a GGUF file at all, just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.gguf")
	// A GGUF magic and version 3, then nothing: the header is cut short.
	if err := os.WriteFile(truncated, []byte("GGUF\x03\x00\x00\x00\x05"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
	}{
		{"missing", filepath.Join(dir, "nope.gguf")},
		{"not gguf", notGGUF},
		{"truncated", truncated},
		{"empty", empty},
		{"directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Load(tt.path, llama.Params{})
			if err == nil {
				e.Close()
				t.Fatalf("Load(%s) = nil error, want a bad model file", tt.path)
			}
			if !errors.Is(err, &Error{Code: CodeLoad}) || !errors.Is(err, llama.ErrModelFile) {
				t.Errorf("Load(%s) = %v, want CodeLoad wrapping llama.ErrModelFile", tt.path, err)
			}
		})
	}
}

func TestDecodeBatchShape(t *testing.T) {
	var e Engine // no model: the shape check comes first
	err := e.Decode(runner.Batch{Tokens: []runner.TokenID{1, 2}, Pos: []int{0}, Seq: []int{0, 0}, Logits: []bool{false, true}})
	if !errors.Is(err, &Error{Code: CodeBatch}) {
		t.Errorf("Decode(ragged batch) = %v, want CodeBatch", err)
	}
}

func TestNewRejectsNil(t *testing.T) {
	if _, err := New(nil, nil); !errors.Is(err, &Error{Code: CodeVocabulary}) {
		t.Errorf("New(nil, nil) = %v, want CodeVocabulary", err)
	}
}

func TestErrorString(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Code: CodeLoad, Op: "load", Path: "m.gguf", Err: cause}, "llamaengine: load m.gguf: load failed: boom"},
		{&Error{Code: CodeBatch, Op: "decode", Msg: "ragged"}, "llamaengine: decode: bad batch: ragged"},
		{&Error{Code: CodeVocabulary}, "llamaengine: bad vocabulary"},
		{&Error{Code: 99}, "llamaengine: ErrorCode(99)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("(%#v).Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
	if !errors.Is(&Error{Code: CodeLoad, Err: cause}, cause) {
		t.Errorf("errors.Is(Error wrapping cause, cause) = false, want true")
	}
}
