package main

import (
	"encoding/json"
	"os"
	"testing"

	"conform/internal/sharedtest"
	"conform/templates"
	"conform/turn"
)

// TestReasoningTemplates renders the real chat templates of the reasoning
// families (../shared/templates) as chatTurn does, thinking on and off,
// and checks the reasoning format detected and what the rendered prompt
// leaves of the block: the turn the model is then held to.
func TestReasoningTemplates(t *testing.T) {
	type state = turn.PromptState
	tests := []struct {
		file   string
		format turn.ReasoningFormat
		on     state          // thinking on (the default)
		off    state          // thinking off (budget 0, enable_thinking false)
		kwargs map[string]any // extra chat_template_kwargs for "on"
	}{
		{file: "qwen3.jinja", format: turn.ReasoningThink, on: turn.PromptPlain, off: turn.PromptClosed},
		{file: "Qwen3.5-4B.jinja", format: turn.ReasoningThink, on: turn.PromptOpened, off: turn.PromptClosed},
		{file: "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", format: turn.ReasoningThink, on: turn.PromptOpened, off: turn.PromptClosed},
		// llama.cpp's copy reads enable_thinking as thinking.
		{file: "deepseek-ai-DeepSeek-V3.1.jinja", format: turn.ReasoningThink, on: turn.PromptOpened, off: turn.PromptClosed},
		{file: "deepseek-ai-DeepSeek-V3.1.jinja", format: turn.ReasoningThink, on: turn.PromptClosed, off: turn.PromptClosed, kwargs: map[string]any{"thinking": false}},
		{file: "glm_4_5.jinja", format: turn.ReasoningThink, on: turn.PromptPlain, off: turn.PromptClosed},
		{file: "MiniMax-M2.jinja", format: turn.ReasoningThink, on: turn.PromptOpened, off: turn.PromptOpened},
		{file: "moonshotai-Kimi-K2.jinja", format: turn.ReasoningNone, on: turn.PromptPlain, off: turn.PromptPlain},
		{file: "openai-gpt-oss-120b.jinja", format: turn.ReasoningHarmony, on: turn.PromptPlain, off: turn.PromptPlain},
		{file: "tool_chat_template_hermes.jinja", format: turn.ReasoningNone, on: turn.PromptPlain, off: turn.PromptPlain},
	}
	for _, tt := range tests {
		src, err := os.ReadFile(sharedtest.Path(t, "templates", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := pickReasoning("auto", string(src))
		if err != nil || f != tt.format {
			t.Errorf("%s: reasoning format %q, %v; want %q", tt.file, f, err, tt.format)
			continue
		}
		tmpl, err := templates.Parse(string(src))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		for _, off := range []bool{false, true} {
			r := ChatRequest{Messages: []ChatMessage{{Role: "user", Content: json.RawMessage(`"hi"`)}}}
			want := tt.on
			if off {
				zero := 0
				r.ThinkingTokenBudget, want = &zero, tt.off
			} else if tt.kwargs != nil {
				r.ChatTemplateKwargs = map[string]json.RawMessage{}
				for k, v := range tt.kwargs {
					r.ChatTemplateKwargs[k], _ = json.Marshal(v)
				}
			}
			j, err := FromChatRequest(&r, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			vars := j.Thinking.templateVars(j.TemplateVars, f)
			text, err := tmpl.Render(templates.Vars{Messages: j.Messages, AddGenerationPrompt: true, Extra: vars})
			if err != nil {
				t.Fatalf("%s: render: %v", tt.file, err)
			}
			rs := j.Thinking.reasoning(f, turn.NoBudget, text)
			enabled := !off && tt.kwargs["thinking"] != false // thinking false in the kwargs turns it off too
			if rs.Prompt != want || rs.Enabled != enabled {
				t.Errorf("%s (off %v, kwargs %v): prompt state %d, enabled %v; want %d, %v; prompt ends %q", tt.file, off, tt.kwargs, rs.Prompt, rs.Enabled, want, enabled, tail(text, 40))
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
