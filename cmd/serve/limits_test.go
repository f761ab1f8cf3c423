package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"conform/runner"
	"conform/templates"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		code    string // "" means it decodes
		param   string
		ignored []string
	}{
		{"plain", `{"messages":[]}`, "", "", nil},
		{"ignored fields, sorted", `{"store":true,"metadata":{},"messages":[]}`, "", "", []string{"metadata", "store"}},
		{"empty", ``, "invalid_json", "", nil},
		{"not UTF-8", "{\"model\":\"\xff\"}", "invalid_json", "", nil},
		{"trailing data", `{"messages":[]} {}`, "invalid_json", "", nil},
		{"array", `[1]`, "invalid_json", "", nil},
		{"null", `null`, "invalid_json", "", nil},
		{"deep", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "invalid_json", "", nil},
		{"unknown", `{"tempreture":1}`, "unknown_parameter", "tempreture", nil},
		{"refused", `{"functions":[]}`, "unsupported_parameter", "functions", nil},
		{"wrong type", `{"temperature":"1"}`, "invalid_type", "temperature", nil},
		{"wrong nested type", `{"messages":[{"role":2}]}`, "invalid_type", "messages.role", nil},
		{"structured_outputs not an object", `{"structured_outputs":3}`, "invalid_type", "structured_outputs", nil},
		{"structured_outputs member type", `{"structured_outputs":{"regex":3}}`, "invalid_type", "structured_outputs.regex", nil},
	}
	for _, tt := range tests {
		var r ChatRequest
		ignored, err := decodeRequest([]byte(tt.body), &r)
		if tt.code == "" {
			if err != nil || !reflect.DeepEqual(ignored, tt.ignored) {
				t.Errorf("%s: decodeRequest(%.40q) = %v, %v; want %v, nil", tt.name, tt.body, ignored, err, tt.ignored)
			}
			continue
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != tt.code || ae.Param != tt.param {
			t.Errorf("%s: decodeRequest(%.40q) error = %v, want 400 %s at %q", tt.name, tt.body, err, tt.code, tt.param)
		}
	}
	// Completions have their own fields.
	var c CompletionRequest
	if _, err := decodeRequest([]byte(`{"prompt":"a","messages":[]}`), &c); err == nil {
		t.Errorf("decodeRequest(completions with messages) = nil error, want unknown_parameter")
	}
}

func TestStructuredOutputsUnknown(t *testing.T) {
	var so StructuredOutputs
	if err := json.Unmarshal([]byte(`{"regex":"a","lark":"x","grammar":"y"}`), &so); err != nil {
		t.Fatal(err)
	}
	if so.Regex == nil || *so.Regex != "a" || !reflect.DeepEqual(so.Unknown, []string{"grammar", "lark"}) {
		t.Errorf("StructuredOutputs = %+v, want regex a, unknown [grammar lark]", so)
	}
	_, err := outputOf(nil, &so, nil, nil, nil, Limits{})
	var ae *apiError
	if !errors.As(err, &ae) || ae.Param != "structured_outputs.grammar" || !strings.Contains(ae.Msg, structuredKinds) {
		t.Errorf("outputOf(unknown kind) error = %v, want structured_outputs.grammar naming the kinds", err)
	}
}

func TestToolParameters(t *testing.T) {
	tests := []struct {
		raw, want string // want "" means refused
	}{
		{``, `{"type":"object","properties":{}}`},
		{`null`, `{"type":"object","properties":{}}`},
		{`{}`, `{"properties":{}}`},
		{`{"type":"object"}`, `{"type":"object","properties":{}}`},
		{` {"type" : "object" } `, `{"type" : "object","properties":{}}`},
		{`{"type":["object"],"properties":{"a":{}}}`, `{"type":["object"],"properties":{"a":{}}}`},
		{`{"type":"string"}`, ""},
		{`{"type":["object","null"]}`, ""},
		{`"object"`, ""},
		{`[]`, ""},
		{`true`, ""},
	}
	for _, tt := range tests {
		got, err := toolParameters(json.RawMessage(tt.raw), "p", Limits{})
		if tt.want == "" {
			if err == nil {
				t.Errorf("toolParameters(%s) = %s, want an error", tt.raw, got)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("toolParameters(%s) = %s, %v; want %s", tt.raw, got, err, tt.want)
		}
	}
}

func TestParsePrompt(t *testing.T) {
	tests := []struct {
		raw   string
		want  []completionPrompt
		param string // the error's param when want is nil
	}{
		{`"a"`, []completionPrompt{{Text: "a"}}, ""},
		{`["a","b"]`, []completionPrompt{{Text: "a"}, {Text: "b"}}, ""},
		{`[1,2]`, []completionPrompt{{Tokens: []runner.TokenID{1, 2}}}, ""},
		{`[[1],[2,3]]`, []completionPrompt{{Tokens: []runner.TokenID{1}}, {Tokens: []runner.TokenID{2, 3}}}, ""},
		{`null`, nil, "prompt"},
		{`""`, nil, "prompt"},
		{`[]`, nil, "prompt"},
		{`[[]]`, nil, "prompt[0]"},
		{`[-1]`, nil, "prompt[0]"},
		{`[1.0]`, nil, "prompt[0]"},
		{`[1e3]`, nil, "prompt[0]"},
		{`[1,"2"]`, nil, "prompt[1]"},
		{`["a",["b"]]`, nil, "prompt[1]"},
		{`[[1],2]`, nil, "prompt[1]"},
		{`[[[1]]]`, nil, "prompt[0][0]"},
		{`[4294967296]`, nil, "prompt[0]"},
		{`{"a":1}`, nil, "prompt"},
	}
	for _, tt := range tests {
		got, err := parsePrompt(json.RawMessage(tt.raw))
		if tt.want != nil {
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parsePrompt(%s) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
			}
			continue
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Param != tt.param {
			t.Errorf("parsePrompt(%s) error = %v, want one at %q", tt.raw, err, tt.param)
		}
	}
}

func TestJSONDepth(t *testing.T) {
	tests := []struct {
		s     string
		limit int
		want  int
	}{
		{`1`, 10, 0},
		{`{}`, 10, 1},
		{`{"a":[{"b":"[[[{{"}]}`, 10, 3},
		{`["\"[[["]`, 10, 1},
		{`["\\",[[]]]`, 10, 3},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), 10, 11},
	}
	for _, tt := range tests {
		if got := jsonDepth([]byte(tt.s), tt.limit); got != tt.want {
			t.Errorf("jsonDepth(%.30s, %d) = %d, want %d", tt.s, tt.limit, got, tt.want)
		}
	}
}

func TestLimitsFromConfig(t *testing.T) {
	c, err := ParseConfig([]string{"--demo", "--max-messages", "10", "--max-schema-depth", "8"},
		func(k string) string {
			return map[string]string{"CONFORM_MAX_TOOLS": "3", "CONFORM_MAX_PROMPT_BYTES": "5000", "CONFORM_MAX_SCHEMA_BYTES": "900"}[k]
		}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxMessages: 10, MaxTools: 3, MaxPromptBytes: 5000, MaxSchemaBytes: 900, MaxSchemaDepth: 8}
	if got := c.Limits(); got != want {
		t.Errorf("Limits() = %+v, want %+v", got, want)
	}
	d, _ := ParseConfig([]string{"--demo"}, func(string) string { return "" }, io.Discard)
	if got := d.Limits(); got != (Limits{}).withDefaults() {
		t.Errorf("default Limits() = %+v, want %+v", got, (Limits{}).withDefaults())
	}
	if _, err := ParseConfig([]string{"--demo", "--max-tools", "0"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--max-tools") {
		t.Errorf("--max-tools 0: error %v, want one naming --max-tools", err)
	}
	// Each limit refuses with its flag in the message.
	user := ChatMessage{Role: "user", Content: json.RawMessage(`"hi"`)}
	lim := Limits{MaxMessages: 2, MaxTools: 1, MaxSchemaBytes: 40, MaxSchemaDepth: 3}
	tool := ToolDef{Type: "function", Function: FunctionDef{Name: "f"}}
	for _, tt := range []struct {
		req  ChatRequest
		flag string
	}{
		{ChatRequest{Messages: []ChatMessage{user, user, user}}, "--max-messages"},
		{ChatRequest{Messages: []ChatMessage{user}, Tools: []ToolDef{tool, tool}}, "--max-tools"},
		{ChatRequest{Messages: []ChatMessage{user}, GuidedJSON: json.RawMessage(`{"type":"string","description":"` + strings.Repeat("x", 40) + `"}`)}, "--max-schema-bytes"},
		{ChatRequest{Messages: []ChatMessage{user}, GuidedJSON: json.RawMessage(`{"a":{"b":{"c":{}}}}`)}, "--max-schema-depth"},
		{ChatRequest{Messages: []ChatMessage{user}, GuidedRegex: ptr(strings.Repeat("a", 41))}, "--max-schema-bytes"},
		{ChatRequest{Messages: []ChatMessage{user}, GuidedChoice: []string{strings.Repeat("a", 30), strings.Repeat("b", 30)}}, "--max-schema-bytes"},
	} {
		_, err := FromChatRequest(&tt.req, lim)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Msg, tt.flag) {
			t.Errorf("FromChatRequest over %s: error %v, want a 400 naming it", tt.flag, err)
		}
	}
}

// TestPromptFits: a prompt that needs more tokens than the context at
// MaxTokenBytes bytes a token is refused before tokenizing, and the runner
// still refuses one that passes the bound and is too long once tokenized.
func TestPromptFits(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	m := ts.model
	if m.MaxTokenBytes != len(`", "arguments": `) {
		t.Errorf("MaxTokenBytes = %d, want the longest fake token %d", m.MaxTokenBytes, len(`", "arguments": `))
	}
	limit := m.Context * m.MaxTokenBytes
	if err := promptFits(m, limit, "p"); err != nil {
		t.Errorf("promptFits(%d bytes) = %v, want nil", limit, err)
	}
	err := promptFits(m, limit+1, "p")
	var ae *apiError
	if !errors.As(err, &ae) || ae.Code != "context_length_exceeded" {
		t.Errorf("promptFits(%d bytes) = %v, want context_length_exceeded", limit+1, err)
	}
	// Under the bound but over the context once tokenized (one token a byte).
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"messages": []any{map[string]any{"role": "user", "content": strings.Repeat("x", m.Context)}}}))
	if resp.StatusCode != 400 || !strings.Contains(string(body), "context_length_exceeded") {
		t.Errorf("a prompt over the context: %d %s", resp.StatusCode, body)
	}
}

// TestHermesInputs: the Hermes template refuses a tool message without a
// name and cannot print a tool without a description; the template input
// the server builds gives both, so an OpenAI SDK tool loop renders.
func TestHermesInputs(t *testing.T) {
	text, _ := catalogTemplate()
	if text == "" {
		t.Skip("no shared templates (" + hermesTemplatePath + ")")
	}
	tmpl, err := templates.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	// The raw OpenAI shapes fail, as the issue reports.
	raw := `[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":{}}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]`
	msgs, _ := templates.DecodeJSON([]byte(raw))
	if _, err := tmpl.Render(templates.Vars{Messages: msgs, AddGenerationPrompt: true}); err == nil || !strings.Contains(err.Error(), "require a 'name' key") {
		t.Fatalf("Hermes on a tool message without name: %v, want its raise_exception", err)
	}
	rawTools, _ := templates.DecodeJSON([]byte(`[{"type":"function","function":{"name":"get_weather"}}]`))
	if _, err := tmpl.Render(templates.Vars{Messages: msgs, Tools: rawTools}); err == nil {
		t.Fatalf("Hermes on a tool without description and parameters rendered; want a failure")
	}
	// Through the server's conversion both render.
	req := ChatRequest{
		Messages: []ChatMessage{
			{Role: "user", Content: json.RawMessage(`"hi"`)},
			{Role: "assistant", Content: json.RawMessage(`null`), ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: "{}"}}}},
			{Role: "tool", ToolCallID: "c1", Content: json.RawMessage(`"sunny"`)},
		},
		Tools: []ToolDef{{Type: "function", Function: FunctionDef{Name: "get_weather"}}, {Type: "function", Function: FunctionDef{Name: "get_time", Parameters: json.RawMessage(`{"type":"object"}`)}}},
	}
	j, err := FromChatRequest(&req, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Render(templates.Vars{Messages: j.Messages, Tools: j.Tools, AddGenerationPrompt: true})
	if err != nil {
		t.Fatalf("Hermes on the server's input: %v", err)
	}
	for _, want := range []string{`{"name": "get_weather", "content": "sunny"}`, `"name": "get_time"`} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered prompt lacks %s:\n%s", want, out)
		}
	}
}

// TestCatalogTemplatePath keeps the catalog's template path in step with
// the shared corpus layout.
func TestCatalogTemplatePath(t *testing.T) {
	if _, err := os.Stat("../../../shared"); err != nil {
		t.Skip("no shared folder")
	}
	if text, _ := catalogTemplate(); !strings.Contains(text, "Tool response dicts require a 'name' key") {
		t.Errorf("%s is not the Hermes template the catalog means", hermesTemplatePath)
	}
}
