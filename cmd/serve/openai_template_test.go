package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestTemplateInputs: the template values a chat request makes, printed
// back as JSON: arguments that hold JSON decoded (in their key order),
// other arguments kept as strings, a tool message named after the call it
// answers, an explicit name kept, and tools with neutral descriptions and
// properties; arguments nested deeper than templates take are refused
// naming them.
func TestTemplateInputs(t *testing.T) {
	call := func(id, args string) ToolCall {
		return ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: "f", Arguments: args}}
	}
	tests := []struct {
		name string
		msgs []ChatMessage
		want string
	}{
		{"arguments in key order", []ChatMessage{{Role: "assistant", ToolCalls: []ToolCall{call("c1", ` {"z": 1, "a": [true, null, 1.5]} `)}}},
			`[{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{"z":1,"a":[true,null,1.5]}}}]}]`},
		{"arguments that are not JSON", []ChatMessage{{Role: "assistant", ToolCalls: []ToolCall{call("", "not json")}}},
			`[{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":"not json"}}]}]`},
		{"tool names", []ChatMessage{
			{Role: "assistant", ToolCalls: []ToolCall{call("c1", "{}")}},
			{Role: "tool", ToolCallID: "c1", Content: json.RawMessage(`"one"`)},
			{Role: "tool", ToolCallID: "c1", Name: "mine", Content: json.RawMessage(`[{"type":"text","text":"t"},{"type":"text","text":"wo"}]`)},
		}, `[{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","content":"one","name":"f","tool_call_id":"c1"},{"role":"tool","content":"two","name":"mine","tool_call_id":"c1"}]`},
	}
	for _, tt := range tests {
		v, err := templateMessages(tt.msgs)
		if err != nil {
			t.Errorf("%s: templateMessages error %v", tt.name, err)
			continue
		}
		if got := valueJSON(t, v); got != tt.want {
			t.Errorf("%s: template messages\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	_, err := templateMessages([]ChatMessage{{Role: "user", Content: json.RawMessage(`"x"`)}, {Role: "assistant", ToolCalls: []ToolCall{call("c", deep)}}})
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != "messages[1].tool_calls[0].function.arguments" {
		t.Errorf("arguments 600 deep: %v, want a 400 naming them", err)
	}
	var spec = chatJob{}
	tools, err := chatTools([]ToolDef{{Type: "function", Function: FunctionDef{Name: "g", Description: "d", Parameters: json.RawMessage(`{"properties":{"b":{},"a":{}}}`)}}, {Type: "function", Function: FunctionDef{Name: "h"}}}, Limits{}, &spec.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"function","function":{"name":"g","description":"d","parameters":{"properties":{"b":{},"a":{}}}}},{"type":"function","function":{"name":"h","description":"","parameters":{"type":"object","properties":{}}}}]`
	if got := valueJSON(t, tools); got != want || len(spec.Spec.Tools) != 2 {
		t.Errorf("template tools\n%s\nwant\n%s (spec tools %d)", got, want, len(spec.Spec.Tools))
	}
}
