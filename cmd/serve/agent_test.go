package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// agentTools are 24 tool definitions of the shape Claude Code sends
// (testdata/agent_tools.json: draft 2020-12 and draft-07 schemas with
// default, integer bounds up to 2^53-1, exclusiveMinimum, minItems /
// maxItems, minLength / maxLength up to 524288, pattern, format uri,
// anyOf of const, propertyNames and free-form {} values), in Anthropic's
// form, with each input_schema compiled for validation.
func agentTools(t *testing.T) ([]map[string]any, map[string]*jsonschema.Schema) {
	t.Helper()
	b, err := os.ReadFile("testdata/agent_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range tools {
		out = append(out, map[string]any{"name": tl.Name, "description": tl.Description, "input_schema": tl.InputSchema})
		schemas[tl.Name] = compileSchema(t, string(tl.InputSchema))
	}
	return out, schemas
}

// TestClaudeCodeShape sends what Claude Code sends: HEAD / first, then
// POST /v1/messages?beta=true with anthropic-version and several
// anthropic-beta flags, accept: application/json though it streams,
// max_tokens 32000, thinking adaptive, context_management,
// output_config.effort, metadata, system as blocks with cache_control, 24
// tool schemas without strict and no tool_choice. The stream must carry
// named events in order and every tool_use input must validate against
// its schema; the lenient compile reports what it does not enforce.
func TestClaudeCodeShape(t *testing.T) {
	// The fake tokenizer spends a token per byte or so: the 24 tools take
	// 12k of them.
	ts := newTestServer(t, Config{CtxSize: 32768}, "")
	req, _ := http.NewRequest(http.MethodHead, ts.http.URL+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HEAD / = %d", resp.StatusCode)
	}
	tools, schemas := agentTools(t)
	body := map[string]any{
		"model": "fake", "max_tokens": 32000, "stream": true, "thinking": map[string]any{"type": "adaptive"},
		"context_management": map[string]any{"edits": []any{map[string]any{"type": "clear_thinking_20251015", "keep": "all"}}},
		"output_config":      map[string]any{"effort": "medium"}, "metadata": map[string]any{"user_id": "user_abc_session_1"},
		"system": []any{
			map[string]any{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.", "cache_control": map[string]any{"type": "ephemeral"}},
			map[string]any{"type": "text", "text": strings.Repeat("Use the tools. ", 100), "cache_control": map[string]any{"type": "ephemeral"}},
		},
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>context</system-reminder>"},
			map[string]any{"type": "text", "text": "list the files", "cache_control": map[string]any{"type": "ephemeral"}}}}},
		"tools": tools,
	}
	calls := 0
	for i := range 16 {
		t0 := time.Now()
		resp, out := ts.post(t, "/v1/messages?beta=true", body, "anthropic-version", "2023-06-01",
			"anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27", "Accept", "application/json")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
		}
		if i == 0 {
			t.Logf("first request (24 tools compiled, lenient) in %v; unenforced: %s", time.Since(t0).Round(time.Millisecond), resp.Header.Get("X-Conform-Unenforced"))
		}
		names, datas := anthSSE(t, out)
		checkOrder(t, names, datas)
		// Rebuild each tool_use input from its fragments.
		var cur string
		var input strings.Builder
		for k, n := range names {
			raw, _ := json.Marshal(datas[k])
			var d struct {
				Delta struct{ Type, PartialJSON string } `json:"delta"`
				Block struct{ Type, Name string }        `json:"content_block"`
			}
			_ = json.Unmarshal(raw, &d)
			var pj struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			_ = json.Unmarshal(raw, &pj)
			switch {
			case n == "content_block_start" && d.Block.Type == "tool_use":
				cur = d.Block.Name
				input.Reset()
			case n == "content_block_delta" && cur != "":
				input.WriteString(pj.Delta.PartialJSON)
			case n == "content_block_stop" && cur != "":
				sch, ok := schemas[cur]
				if !ok {
					t.Errorf("tool_use of unknown tool %q", cur)
				} else {
					// Complete even in a turn cut by max_tokens.
					validate(t, sch, input.String())
				}
				calls++
				cur = ""
			}
		}
	}
	t.Logf("%d tool calls over 16 requests", calls)
}

// TestClaudeCodeErrors checks the two refusals Claude Code acts on: a
// "system" message inside messages (it retries with top-level system on
// Anthropic's wording) and a prompt longer than the context (it compacts
// the conversation on "prompt is too long").
func TestClaudeCodeErrors(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	resp, out := ts.post(t, "/v1/messages", map[string]any{"model": "fake", "max_tokens": 100,
		"messages": []any{map[string]any{"role": "system", "content": "s"}, map[string]any{"role": "user", "content": "hi"}}})
	checkAnthError(t, resp, out, 400, "invalid_request_error", `Unexpected role "system"`)
	long := strings.Repeat("word ", 6000) // over the fake model's 4096-token context
	resp, out = ts.post(t, "/v1/messages", map[string]any{"model": "fake", "max_tokens": 100, "messages": []any{map[string]any{"role": "user", "content": long}}})
	checkAnthError(t, resp, out, 400, "invalid_request_error", "prompt is too long")
	// The OpenAI routes keep OpenAI's code for the same failure.
	resp, out = ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": long, "max_output_tokens": 10})
	if resp.StatusCode != 400 || !strings.Contains(string(out), `"code":"context_length_exceeded"`) {
		t.Errorf("responses: %d %s", resp.StatusCode, out)
	}
}
