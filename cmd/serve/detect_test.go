package main

import (
	"encoding/json"
	"testing"
)

// newMarkersTemplate writes calls in a shape no registered format has
// (per-parameter values inside <calls>, markers of its own), as an unseen
// model family's template might.
const newMarkersTemplate = `{%- for m in messages %}<|im_start|>{{ m.role }}
{% if m.tool_calls %}<calls>
{% for tc in m.tool_calls %}<fn name="{{ tc.function.name }}">{% for k, v in tc.function.arguments.items() %}<arg name="{{ k }}">{{ v }}</arg>{% endfor %}</fn>
{% endfor %}</calls>{% else %}{{ m.content }}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// TestDetectedTemplateFormat: a template whose call format is built from
// its rendering serves tool calls with no code for it: the calls parse and
// their arguments validate, through chat and Messages.
func TestDetectedTemplateFormat(t *testing.T) {
	ts := newTestServer(t, Config{}, newMarkersTemplate)
	if ts.model.Description == nil || ts.model.Format != templateFormat {
		t.Fatalf("format %q (%s), description %v: want one built from the template", ts.model.Format, ts.model.FormatSource, ts.model.Description)
	}
	sch := compileSchema(t, weatherParams)
	calls := 0
	for i := range 8 {
		resp, out := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"max_tokens": 120, "seed": i,
			"tools":       []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": json.RawMessage(weatherParams)}}},
			"tool_choice": "required"}))
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, out)
		}
		var r struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   *string    `json:"content"`
					ToolCalls []ToolCall `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		ch := r.Choices[0]
		if len(ch.Message.ToolCalls) == 0 {
			t.Errorf("tool_choice required, no call: %s", out)
		}
		for _, c := range ch.Message.ToolCalls {
			calls++
			if c.Function.Name != "get_weather" {
				t.Errorf("call of %q", c.Function.Name)
			}
			validate(t, sch, c.Function.Arguments)
		}
		if ch.Message.Content != nil && *ch.Message.Content != "" {
			t.Errorf("content %q beside required calls", *ch.Message.Content)
		}
	}
	if calls == 0 {
		t.Error("no call validated")
	}
}
