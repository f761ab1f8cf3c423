package llamaengine

import (
	"log/slog"
	"os"
	"testing"
)

// testDir holds the models the tests generate; removed after the run.
var testDir string

func TestMain(m *testing.M) {
	// llama.cpp logs through ollama's hook at slog's level: keep warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	d, err := os.MkdirTemp("", "conform-llamaengine-test-")
	if err != nil {
		panic(err)
	}
	testDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
