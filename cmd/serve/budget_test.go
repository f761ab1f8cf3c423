package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCloseBudgetTooSmall checks the refusal before generation of a constrained
// request whose shortest output does not fit: a 400 that names the limit's
// field and says the minimum, for max_tokens, max_completion_tokens, the
// completions endpoint and the context; and that the minimum itself is
// served, with an output that validates.
func TestCloseBudgetTooSmall(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	schema := `{"type":"object","properties":{"city":{"type":"string","minLength":3},"days":{"type":"array","items":{"type":"integer"},"minItems":2}},"required":["city","days"],"additionalProperties":false}`
	format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "w", "schema": json.RawMessage(schema)}}
	// The minimum, as the refusal of max_tokens 1 states it; the tests
	// below check that it is the exact threshold.
	need := minimumOf(t, ts, withMax("max_tokens", 1, map[string]any{"response_format": format}))
	if need < 10 {
		t.Fatalf("minimum %d, want 10 or more for %s", need, schema)
	}
	// [a-z]{6} in this vocabulary: "hello" or "city" and letters, at
	// least two tokens.
	if n := minimumOf(t, ts, withMax("max_tokens", 1, map[string]any{"guided_regex": "[a-z]{6}"})); n != 2 {
		t.Errorf("minimum of [a-z]{6} = %d, want 2", n)
	}
	tests := []struct {
		name  string
		path  string
		body  map[string]any
		code  string
		param string
	}{
		{"max_tokens", "/v1/chat/completions", withMax("max_tokens", need-1, map[string]any{"response_format": format}), "max_tokens_too_small", "max_tokens"},
		{"max_completion_tokens", "/v1/chat/completions", withMax("max_completion_tokens", 3, map[string]any{"response_format": format}), "max_tokens_too_small", "max_completion_tokens"},
		{"streaming", "/v1/chat/completions", withMax("max_tokens", 1, map[string]any{"response_format": format, "stream": true}), "max_tokens_too_small", "max_tokens"},
		{"regex", "/v1/chat/completions", withMax("max_tokens", 1, map[string]any{"guided_regex": "[a-z]{6}"}), "max_tokens_too_small", "max_tokens"},
		{"completions", "/v1/completions", map[string]any{"model": "fake", "prompt": "x", "max_tokens": 1, "guided_regex": "[a-z]{6}"}, "max_tokens_too_small", "max_tokens"},
		// 16 by default; "hello" is the longest lowercase token.
		{"completions default max_tokens", "/v1/completions", map[string]any{"model": "fake", "prompt": "x", "guided_regex": "[a-z]{100}"}, "max_tokens_too_small", "max_tokens"},
		{"context", "/v1/chat/completions", withMax("", 0, map[string]any{"guided_regex": "a{4090}"}), "context_length_exceeded", "messages"},
		{"completions context", "/v1/completions", map[string]any{"model": "fake", "prompt": strings.Repeat("x", 100), "max_tokens": 4095, "guided_regex": "a{4000}"}, "context_length_exceeded", "prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.post(t, tt.path, tt.body)
			var eb ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			code, param := "", ""
			if eb.Error.Code != nil {
				code = *eb.Error.Code
			}
			if eb.Error.Param != nil {
				param = *eb.Error.Param
			}
			if resp.StatusCode != 400 || code != tt.code || param != tt.param || eb.Error.Type != "invalid_request_error" {
				t.Fatalf("got %d %q %q (%s), want 400 %q %q", resp.StatusCode, code, param, body, tt.code, tt.param)
			}
			if !strings.Contains(eb.Error.Message, "takes ") {
				t.Errorf("message %q does not say the minimum", eb.Error.Message)
			}
		})
	}
	resp, body := ts.post(t, "/v1/chat/completions", withMax("max_tokens", need-1, map[string]any{"response_format": format}))
	if want := fmt.Sprintf("takes %d tokens", need); resp.StatusCode != 400 || !strings.Contains(string(body), want) {
		t.Errorf("max_tokens %d: %d %s, want a message with %q", need-1, resp.StatusCode, body, want)
	}

	// The minimum and a little more are served, and every output is
	// complete and valid; at the minimum the budget closes it (length).
	sch := compileSchema(t, schema)
	for _, n := range []int{need, need + 1, need + 3} {
		for seed := range 4 {
			resp, body := ts.post(t, "/v1/chat/completions", withMax("max_tokens", n, map[string]any{"response_format": format, "seed": seed}))
			r := decodeChat(t, resp.StatusCode, body)
			c := r.Choices[0]
			if c.Message.Content == nil {
				t.Fatalf("max_tokens %d: no content in %s", n, body)
			}
			validate(t, sch, *c.Message.Content)
			if r.Usage.CompletionTokens > n {
				t.Errorf("max_tokens %d: %d completion tokens", n, r.Usage.CompletionTokens)
			}
			if n == need && c.FinishReason != "length" {
				t.Errorf("max_tokens %d (the minimum): finish_reason %q, want length", n, c.FinishReason)
			}
		}
	}
}

// withMax is a chat body without chatBody's max_tokens, and with field set
// to n when field is not empty.
func withMax(field string, n int, extra map[string]any) map[string]any {
	b := chatBody(extra)
	delete(b, "max_tokens")
	if field != "" {
		b[field] = n
	}
	return b
}

// minimumOf posts body, which must be refused for a budget below the
// shortest output, and returns the minimum the message states.
func minimumOf(t *testing.T, ts *testServer, body map[string]any) int {
	t.Helper()
	resp, out := ts.post(t, "/v1/chat/completions", body)
	var eb ErrorBody
	if err := json.Unmarshal(out, &eb); err != nil || resp.StatusCode != 400 {
		t.Fatalf("got %d %s, want a 400", resp.StatusCode, out)
	}
	var n int
	i := strings.Index(eb.Error.Message, "takes ")
	if i < 0 {
		t.Fatalf("message %q states no minimum", eb.Error.Message)
	}
	if _, err := fmt.Sscanf(eb.Error.Message[i:], "takes %d tokens", &n); err != nil {
		t.Fatalf("message %q: %v", eb.Error.Message, err)
	}
	return n
}
