package turn_test

import (
	"encoding/json"
	"os"
	"testing"

	"conform/turn"
)

// BenchmarkCompileAgentTools is a constraint cache miss for an agent's
// first request: the 24 tools Claude Code sends
// (cmd/serve/testdata/agent_tools.json, not strict, tool_choice auto,
// parallel calls) compiled to a token constraint over Qwen3's vocabulary
// (../shared/vocab/qwen3; skipped without it), in each tool-call format.
// The per-parameter formats (qwen3_coder, minimax_m2, glm45) compile each
// parameter's value on its own.
func BenchmarkCompileAgentTools(b *testing.B) {
	v := qwen3Vocab(b)
	raw, err := os.ReadFile("../cmd/serve/testdata/agent_tools.json")
	if err != nil {
		b.Fatal(err)
	}
	var defs []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &defs); err != nil {
		b.Fatal(err)
	}
	var tools []turn.Tool
	for _, d := range defs {
		tools = append(tools, turn.Tool{Name: d.Name, Parameters: d.InputSchema})
	}
	for _, f := range []turn.Format{turn.FormatHermes, turn.FormatQwen3Coder, turn.FormatMiniMaxM2, turn.FormatGLM45} {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				c, err := turn.NewCompiler(turn.CompilerConfig{Vocab: v, Format: f})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Compile(b.Context(), turn.Spec{Tools: tools, ToolMode: turn.ToolAuto, Parallel: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
