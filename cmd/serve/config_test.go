package main

import (
	"conform/internal/llama"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(c Config) bool
	}{
		{"defaults serve the default model", nil, nil, func(c Config) bool {
			return c.HF == DefaultModel && c.Host == "127.0.0.1" && c.Port == 8080 && c.ToolCallParser == "auto" && c.Parallel == 4 && c.PropertyOrder == "schema"
		}},
		{"property order", []string{"--demo", "--property-order", "any"}, nil, func(c Config) bool { return c.PropertyOrder == "any" }},
		{"kv layout", []string{"--demo", "--kv-layout", "per-sequence"}, nil, func(c Config) bool { k, err := c.kvLayout(); return err == nil && k == llama.KVPerSequence }},
		{"kv layout default", []string{"--demo"}, nil, func(c Config) bool { k, err := c.kvLayout(); return err == nil && k == llama.KVAuto }},
		{"flags", []string{"--model", "m.gguf", "--port", "9000", "--parallel", "2", "--tool-call-parser", "llama3_json", "--api-key", "k", "--max-queue", "3", "--max-body-bytes", "4096", "--n-gpu-layers", "-1"}, nil,
			func(c Config) bool {
				return c.Model == "m.gguf" && c.HF == "" && c.Port == 9000 && c.Parallel == 2 && c.ToolCallParser == "llama3_json" && c.APIKey == "k" && c.MaxQueue == 3 && c.MaxBodyBytes == 4096 && c.NGPULayers == -1
			}},
		{"environment", nil, map[string]string{"CONFORM_DEMO": "true", "CONFORM_PORT": "7000", "CONFORM_CTX_SIZE": "2048", "HF_TOKEN": "t", "HF_ENDPOINT": "http://mirror", "CONFORM_SHUTDOWN_TIMEOUT": "3s"},
			func(c Config) bool {
				return c.Demo && c.HF == "" && c.Port == 7000 && c.CtxSize == 2048 && c.HFToken == "t" && c.HFEndpoint == "http://mirror" && c.ShutdownTimeout == 3*time.Second
			}},
		{"flag beats environment", []string{"--port", "1"}, map[string]string{"CONFORM_PORT": "2", "CONFORM_DEMO": "1"}, func(c Config) bool { return c.Port == 1 }},
		{"CONFORM_HF_ENDPOINT beats HF_ENDPOINT", []string{"--demo"}, map[string]string{"CONFORM_HF_ENDPOINT": "a", "HF_ENDPOINT": "b"}, func(c Config) bool { return c.HFEndpoint == "a" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatalf("ParseConfig(%q) error: %v", tt.args, err)
			}
			if !tt.check(c) {
				t.Errorf("ParseConfig(%q) = %+v", tt.args, c)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--model", "a", "--demo"}, nil, "only one of"},
		{[]string{"--demo", "--parallel", "0"}, nil, "--parallel"},
		{[]string{"--demo", "--port", "70000"}, nil, "--port"},
		{[]string{"--demo", "--tool-call-parser", "xml"}, nil, "--tool-call-parser"},
		{[]string{"--demo", "--property-order", "sorted"}, nil, "--property-order"},
		{[]string{"--demo", "--kv-layout", "shared"}, nil, "--kv-layout"},
		{[]string{"--demo", "--ctx-size", "8"}, nil, "--ctx-size"},
		{[]string{"--hf", "not a ref"}, nil, "--hf"},
		{[]string{"--demo"}, map[string]string{"CONFORM_PORT": "eighty"}, "CONFORM_PORT"},
		{[]string{"--demo", "extra"}, nil, "unexpected argument"},
		{[]string{"--nope"}, nil, "not defined"},
	}
	for _, tt := range tests {
		_, err := ParseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseConfig(%q) error = %v, want one mentioning %q", tt.args, err, tt.want)
		}
	}
}

// TestRunMissingModel: a missing --model file fails fast with a message that
// says what to do, and /health never turned 200.
func TestRunMissingModel(t *testing.T) {
	var out strings.Builder
	err := run(t.Context(), []string{"--model", "/nonexistent/m.gguf", "--port", "0"}, func(string) string { return "" }, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "--demo") || !strings.Contains(err.Error(), "/nonexistent/m.gguf") {
		t.Errorf("run with a missing model: %v", err)
	}
}

func TestContextSize(t *testing.T) {
	for _, tc := range []struct {
		ctx, parallel, trained, want int
	}{
		{ctx: 4096, parallel: 4, trained: 32768, want: 4096},             // given: as given
		{ctx: 0, parallel: 4, trained: 32768, want: 4 * autoSlotContext}, // auto: per slot
		{ctx: 0, parallel: 2, trained: 2048, want: 2 * 2048},             // auto, capped by the training context
		{ctx: 0, parallel: 1, trained: 0, want: autoSlotContext},         // the file does not say
	} {
		c := Config{CtxSize: tc.ctx, Parallel: tc.parallel}
		if got := c.contextSize(tc.trained); got != tc.want {
			t.Errorf("ctx %d parallel %d trained %d: %d, want %d", tc.ctx, tc.parallel, tc.trained, got, tc.want)
		}
	}
}
