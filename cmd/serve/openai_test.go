package main

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"conform/runner"
	"conform/templates"
	"conform/turn"
)

func ptr[T any](v T) *T { return &v }

// valueJSON prints a template value as compact JSON, through the template
// language's own tojson (keys in the value's order).
func valueJSON(t *testing.T, v templates.Value) string {
	t.Helper()
	tmpl, err := templates.Parse(`{{ messages | tojson(separators=(",", ":")) }}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Render(templates.Vars{Messages: v})
	if err != nil {
		t.Fatalf("tojson: %v", err)
	}
	return out
}

func TestFromChatRequest(t *testing.T) {
	user := ChatMessage{Role: "user", Content: json.RawMessage(`"hi"`)}
	tests := []struct {
		name  string
		req   ChatRequest
		check func(t *testing.T, j *chatJob)
	}{
		{"defaults", ChatRequest{Model: "m", Messages: []ChatMessage{user}}, func(t *testing.T, j *chatJob) {
			if j.Gen.N != 1 || j.Gen.MaxTokens != 0 || j.Spec.ToolMode != turn.ToolDefault || !j.Spec.Parallel || j.Spec.Output.Kind != turn.OutputText {
				t.Errorf("job = %+v", j)
			}
		}},
		{"tool_choice required, parallel false", ChatRequest{Messages: []ChatMessage{user}, ToolChoice: json.RawMessage(`"required"`), ParallelToolCalls: ptr(false),
			Tools: []ToolDef{{Type: "function", Function: FunctionDef{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`), Strict: ptr(true)}}}},
			func(t *testing.T, j *chatJob) {
				want := []turn.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}}
				if j.Spec.ToolMode != turn.ToolRequired || j.Spec.Parallel || !reflect.DeepEqual(j.Spec.Tools, want) {
					t.Errorf("spec = %+v", j.Spec)
				}
				if got := valueJSON(t, j.Tools); got != `[{"type":"function","function":{"name":"f","description":"","parameters":{"type":"object","properties":{}}}}]` {
					t.Errorf("template tools = %s", got)
				}
			}},
		{"named tool", ChatRequest{Messages: []ChatMessage{user}, ToolChoice: json.RawMessage(`{"type":"function","function":{"name":"g"}}`)}, func(t *testing.T, j *chatJob) {
			if j.Spec.ToolMode != turn.ToolNamed || j.Spec.ToolName != "g" {
				t.Errorf("spec = %+v", j.Spec)
			}
		}},
		{"messages", ChatRequest{Messages: []ChatMessage{
			{Role: "developer", Content: json.RawMessage(`[{"type":"text","text":"be "},{"type":"text","text":"brief"}]`)},
			{Role: "assistant", Content: json.RawMessage(`null`), ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "f", Arguments: `{"a": 1}`}}}},
			{Role: "tool", ToolCallID: "call_1", Content: json.RawMessage(`"42"`)},
		}}, func(t *testing.T, j *chatJob) {
			want := `[{"role":"system","content":"be brief"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","content":"42","name":"f","tool_call_id":"call_1"}]`
			if got := valueJSON(t, j.Messages); got != want {
				t.Errorf("messages = %s\nwant %s", got, want)
			}
		}},
		{"sampling", ChatRequest{Messages: []ChatMessage{user}, MaxTokens: ptr(9), MaxCompletionTokens: ptr(7), Temperature: ptr(0.5), TopP: ptr(0.9), TopK: ptr(40),
			MinP: ptr(0.1), RepetitionPenalty: ptr(1.1), PresencePenalty: ptr(0.5), FrequencyPenalty: ptr(-0.5), Seed: ptr(int64(5)), N: ptr(2),
			Stop: json.RawMessage(`["a","","b"]`), LogitBias: map[string]float64{"12": -100}, Logprobs: true, TopLogprobs: ptr(3),
			Stream: true, StreamOptions: &StreamOptions{IncludeUsage: true}}, func(t *testing.T, j *chatJob) {
			g, p := j.Gen, j.Gen.Params
			if g.MaxTokens != 7 || *p.Temperature != 0.5 || p.TopP != 0.9 || p.TopK != 40 || p.MinP != 0.1 || p.RepetitionPenalty != 1.1 ||
				p.PresencePenalty != 0.5 || p.FrequencyPenalty != -0.5 || p.Seed != 5 || !g.SeedSet || g.N != 2 || !reflect.DeepEqual(g.Stop, []string{"a", "b"}) ||
				p.LogitBias[12] != -100 || !p.Logprobs || p.TopLogprobs != 3 || !g.Stream || !g.IncludeUsage {
				t.Errorf("gen = %+v params = %+v", g, p)
			}
		}},
		{"response_format json_schema", ChatRequest{Messages: []ChatMessage{user}, ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "x", Schema: json.RawMessage(`{"type":"string"}`), Strict: ptr(true)}}},
			func(t *testing.T, j *chatJob) {
				want := turn.Output{Kind: turn.OutputJSONSchema, Schema: json.RawMessage(`{"type":"string"}`), Strict: true, Param: "response_format.json_schema.schema"}
				if !reflect.DeepEqual(j.Spec.Output, want) {
					t.Errorf("output = %+v", j.Spec.Output)
				}
			}},
		{"structured_outputs regex", ChatRequest{Messages: []ChatMessage{user}, StructuredOutputs: &StructuredOutputs{Regex: ptr("a+")}}, func(t *testing.T, j *chatJob) {
			if j.Spec.Output.Kind != turn.OutputRegex || j.Spec.Output.Regex != "a+" || j.Spec.Output.Param != "structured_outputs.regex" {
				t.Errorf("output = %+v", j.Spec.Output)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := FromChatRequest(&tt.req, Limits{})
			if err != nil {
				t.Fatalf("FromChatRequest error: %v", err)
			}
			tt.check(t, j)
		})
	}
}

func TestFromChatRequestErrors(t *testing.T) {
	user := ChatMessage{Role: "user", Content: json.RawMessage(`"hi"`)}
	tests := []struct {
		name  string
		req   ChatRequest
		param string
	}{
		{"no messages", ChatRequest{}, "messages"},
		{"image part", ChatRequest{Messages: []ChatMessage{{Role: "user", Content: json.RawMessage(`[{"type":"image_url"}]`)}}}, "messages[0].content[0].type"},
		{"tool without id", ChatRequest{Messages: []ChatMessage{{Role: "tool", Content: json.RawMessage(`"x"`)}}}, "messages[0].tool_call_id"},
		{"tool_calls on user", ChatRequest{Messages: []ChatMessage{{Role: "user", ToolCalls: []ToolCall{{Function: FunctionCall{Name: "f"}}}}}}, "messages[0].tool_calls"},
		{"tool type", ChatRequest{Messages: []ChatMessage{user}, Tools: []ToolDef{{Type: "custom"}}}, "tools[0].type"},
		{"tool_choice", ChatRequest{Messages: []ChatMessage{user}, ToolChoice: json.RawMessage(`"sometimes"`)}, "tool_choice"},
		{"response_format type", ChatRequest{Messages: []ChatMessage{user}, ResponseFormat: &ResponseFormat{Type: "xml"}}, "response_format.type"},
		{"json_schema without schema", ChatRequest{Messages: []ChatMessage{user}, ResponseFormat: &ResponseFormat{Type: "json_schema"}}, "response_format.json_schema.schema"},
		{"top_logprobs without logprobs", ChatRequest{Messages: []ChatMessage{user}, TopLogprobs: ptr(2)}, "top_logprobs"},
		{"max_tokens", ChatRequest{Messages: []ChatMessage{user}, MaxTokens: ptr(0)}, "max_tokens"},
		{"n", ChatRequest{Messages: []ChatMessage{user}, N: ptr(100)}, "n"},
		{"stop", ChatRequest{Messages: []ChatMessage{user}, Stop: json.RawMessage(`["a","b","c","d","e"]`)}, "stop"},
		{"top_p", ChatRequest{Messages: []ChatMessage{user}, TopP: ptr(0.0)}, "top_p"},
		{"stream_options without stream", ChatRequest{Messages: []ChatMessage{user}, StreamOptions: &StreamOptions{}}, "stream_options"},
		{"two outputs", ChatRequest{Messages: []ChatMessage{user}, ResponseFormat: &ResponseFormat{Type: "json_object"}, GuidedChoice: []string{"a"}}, "guided_choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromChatRequest(&tt.req, Limits{})
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != tt.param {
				t.Errorf("FromChatRequest error = %v, want 400 naming %q", err, tt.param)
			}
		})
	}
}

func TestFinishReason(t *testing.T) {
	tests := []struct {
		f     runner.FinishReason
		calls int
		want  string
	}{
		{runner.FinishEOS, 0, "stop"},
		{runner.FinishConstraint, 2, "tool_calls"},
		{runner.FinishEOS, 1, "tool_calls"},
		{runner.FinishLength, 1, "length"},
		{runner.FinishContext, 0, "length"},
		{runner.FinishStop, 0, "stop"},
	}
	for _, tt := range tests {
		if got := finishReason(tt.f, tt.calls); got != tt.want {
			t.Errorf("finishReason(%q, %d) = %q, want %q", tt.f, tt.calls, got, tt.want)
		}
	}
}

func TestFromCompletionRequest(t *testing.T) {
	prompts, out, g, err := FromCompletionRequest(&CompletionRequest{Prompt: json.RawMessage(`["a","b"]`), GuidedRegex: ptr("x"), Logprobs: ptr(2)}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prompts, []completionPrompt{{Text: "a"}, {Text: "b"}}) || out.Kind != turn.OutputRegex || g.MaxTokens != 16 || g.Params.TopLogprobs != 2 {
		t.Errorf("got %v %+v %+v", prompts, out, g)
	}
	for _, p := range []string{`3`, `[]`, `""`, `[""]`} {
		if _, _, _, err := FromCompletionRequest(&CompletionRequest{Prompt: json.RawMessage(p)}, Limits{}); err == nil {
			t.Errorf("prompt %s: no error", p)
		}
	}
}

func TestToUsage(t *testing.T) {
	got := ToUsage(turn.SumUsage([]*runner.Usage{{PromptTokens: 10, CompletionTokens: 3, CachedTokens: 4}, {PromptTokens: 10, CompletionTokens: 5}}, 2))
	want := &Usage{PromptTokens: 10, CompletionTokens: 8, TotalTokens: 18, PromptTokensDetails: &PromptTokensDetails{CachedTokens: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ToUsage = %+v, want %+v", got, want)
	}
}
