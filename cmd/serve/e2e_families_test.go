//go:build cgo

package main

// End-to-end runs of reasoning and tool-call families on synthetic models
// through llama.cpp: cmd/mkmodel -family builds a tiny model with the real
// Qwen3 vocabulary, the family's marker tokens as the real model has them,
// and the family's chat template from ../shared (read at build time, never
// copied into the repository); the server detects the formats from the
// template and serves chat completions at temperature 1.

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"conform/internal/sharedtest"
)

// familyServer builds family's tiny model and serves it on a loopback port.
func familyServer(t *testing.T, family string) openai.Client {
	t.Helper()
	dir := sharedtest.Path(t)
	out := filepath.Join(t.TempDir(), family+".gguf")
	cmd := exec.Command("go", "run", "../mkmodel", "-family", family, "-shared", dir, "-preset", "tiny", "-seed", "1", "-out", out)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkmodel -family %s: %v\n%s", family, err, b)
	}
	args := []string{"--model", out, "--port", "0", "--parallel", "2", "--ctx-size", "8192", "--served-model-name", "fam", "--log-level", "warn", "--threads", "1", "--reasoning-budget", "16"}
	return startServer(t, args).client
}

// TestE2EFamilies: on the Qwen3 family (think + hermes) and gpt-oss
// (harmony reasoning + harmony calls), tool_choice required / named / none
// and a json_schema answer with thinking on: every call parses and
// validates, the answer validates, reasoning_content comes back and no
// markup leaks into content or reasoning.
func TestE2EFamilies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two synthetic models")
	}
	markup := []string{"<think>", "</think>", "<tool_call>", "<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|constrain|>"}
	for _, family := range []string{"qwen3", "gpt-oss"} {
		t.Run(family, func(t *testing.T) {
			cl := familyServer(t, family)
			schemas := e2eSchemas(t)
			weather := compileSchema(t, mustJSON(e2eWeather))
			ctx := context.Background()
			reasoned, calls := 0, 0
			check := func(what, s string) {
				for _, m := range markup {
					if strings.Contains(s, m) {
						t.Errorf("%s: %s %q holds %q", family, what, s, m)
					}
				}
			}
			for i := range 6 {
				base := openai.ChatCompletionNewParams{Model: "fam", Messages: userMsg("Call a tool."), MaxTokens: openai.Int(160), Temperature: openai.Float(1), Seed: openai.Int(int64(i))}
				modes := map[string]openai.ChatCompletionNewParams{}
				p := base
				p.Tools, p.ToolChoice = e2eTools(), openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
				modes["required"] = p
				p = base
				p.Tools, p.ToolChoice = e2eTools(), openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"})
				modes["named"] = p
				p = base
				p.Tools, p.ToolChoice = e2eTools(), openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
				modes["none"] = p
				p = base
				p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Schema: e2eWeather, Strict: openai.Bool(true)}}}
				modes["json"] = p
				for name, p := range modes {
					r, err := cl.Chat.Completions.New(ctx, p)
					if err != nil {
						t.Fatalf("%s %s: %v", family, name, err)
					}
					ch := r.Choices[0]
					check("content", ch.Message.Content)
					var rc struct {
						ReasoningContent string `json:"reasoning_content"`
					}
					_ = json.Unmarshal([]byte(ch.Message.RawJSON()), &rc)
					check("reasoning_content", rc.ReasoningContent)
					if rc.ReasoningContent != "" {
						reasoned++
					}
					switch name {
					case "required", "named":
						if len(ch.Message.ToolCalls) == 0 {
							t.Errorf("%s %s: no call (finish %s)", family, name, ch.FinishReason)
						}
						for _, c := range ch.Message.ToolCalls {
							calls++
							if name == "named" && c.Function.Name != "get_time" {
								t.Errorf("%s named: call of %q", family, c.Function.Name)
							}
							validateCall(t, schemas, i, c.Function.Name, c.Function.Arguments)
						}
					case "none":
						if len(ch.Message.ToolCalls) > 0 {
							t.Errorf("%s none: %d calls", family, len(ch.Message.ToolCalls))
						}
					case "json":
						validate(t, weather, ch.Message.Content)
					}
				}
			}
			t.Logf("%s: 24 requests, %d calls validated, %d answers with reasoning", family, calls, reasoned)
			if reasoned == 0 {
				t.Errorf("%s: no answer carried reasoning", family)
			}
		})
	}
}
