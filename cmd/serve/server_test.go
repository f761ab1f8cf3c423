package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/runner"
)

const weatherParams = `{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"type":"string","enum":["c","f"]}},"required":["city"],"additionalProperties":false}`
const timeParams = `{"type":"object","properties":{"tz":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["tz"],"additionalProperties":false}`

var testTools = []any{
	map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Weather in a city", "parameters": json.RawMessage(weatherParams), "strict": true}},
	map[string]any{"type": "function", "function": map[string]any{"name": "get_time", "parameters": json.RawMessage(timeParams)}},
}

func (ts *testServer) post(t *testing.T, path string, body any, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		bs, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(bs)
	}
	req, _ := http.NewRequest("POST", ts.http.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func chatBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": "fake", "messages": []any{map[string]any{"role": "user", "content": "What is the weather in Paris?"}}, "max_tokens": 80}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func decodeChat(t *testing.T, status int, body []byte) ChatResponse {
	t.Helper()
	if status != 200 {
		t.Fatalf("status %d, body %s", status, body)
	}
	var r ChatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return r
}

func compileSchema(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, s string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Errorf("%q is not JSON: %v", s, err)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%q does not validate: %v", s, err)
	}
}

func TestHealthAndModels(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	srv := NewServer(Config{Parallel: 1, MaxBodyBytes: 1 << 20}, ts.log)
	rec := httptestDo(srv, "GET", "/health")
	if rec != 503 {
		t.Errorf("GET /health before loading = %d, want 503", rec)
	}
	srv.SetModel(ts.model)
	if rec := httptestDo(srv, "GET", "/health"); rec != 200 {
		t.Errorf("GET /health after loading = %d, want 200", rec)
	}
	resp, err := http.Get(ts.http.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var ml ModelList
	json.NewDecoder(resp.Body).Decode(&ml)
	resp.Body.Close()
	if ml.Object != "list" || len(ml.Data) != 1 || ml.Data[0].ID != "fake" || ml.Data[0].Object != "model" {
		t.Errorf("GET /v1/models = %+v, want one model \"fake\"", ml)
	}
}

func TestChatPlain(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"seed": 3, "max_tokens": 20}))
	r := decodeChat(t, resp.StatusCode, body)
	if r.Object != "chat.completion" || !strings.HasPrefix(r.ID, "chatcmpl-") || r.Model != "fake" || r.Created == 0 || r.SystemFingerprint == "" {
		t.Errorf("response header fields = %+v", r)
	}
	if len(r.Choices) != 1 || r.Choices[0].Message.Role != "assistant" || r.Choices[0].Message.Content == nil {
		t.Fatalf("choices = %+v", r.Choices)
	}
	if f := r.Choices[0].FinishReason; f != "stop" && f != "length" {
		t.Errorf("finish_reason = %q, want stop or length", f)
	}
	if r.Usage == nil || r.Usage.PromptTokens == 0 || r.Usage.TotalTokens != r.Usage.PromptTokens+r.Usage.CompletionTokens {
		t.Errorf("usage = %+v", r.Usage)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("no X-Request-Id header")
	}
	// Raw shape: message.content present, refusal null, logprobs null.
	var raw map[string]any
	json.Unmarshal(body, &raw)
	ch := raw["choices"].([]any)[0].(map[string]any)
	if _, ok := ch["logprobs"]; !ok {
		t.Errorf("choice has no logprobs key: %s", body)
	}
}

// TestChatToolModes runs each tool_choice mode with random seeds and checks
// the guarantee: calls parse, arguments validate, markup never in content.
func TestChatToolModes(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	schemas := map[string]*jsonschema.Schema{"get_weather": compileSchema(t, weatherParams), "get_time": compileSchema(t, timeParams)}
	named := map[string]any{"type": "function", "function": map[string]any{"name": "get_time"}}
	tests := []struct {
		name      string
		choice    any
		parallel  any
		wantCalls func(n int) bool
	}{
		{"required", "required", nil, func(n int) bool { return n >= 1 }},
		{"required single", "required", false, func(n int) bool { return n == 1 }},
		{"named", named, nil, func(n int) bool { return n == 1 }},
		{"auto", "auto", nil, func(n int) bool { return true }},
		{"none", "none", nil, func(n int) bool { return n == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := 0
			for seed := 0; seed < 12; seed++ {
				extra := map[string]any{"tools": testTools, "tool_choice": tt.choice, "seed": seed, "temperature": 1, "max_tokens": 120}
				if tt.parallel != nil {
					extra["parallel_tool_calls"] = tt.parallel
				}
				resp, body := ts.post(t, "/v1/chat/completions", chatBody(extra))
				r := decodeChat(t, resp.StatusCode, body)
				msg := r.Choices[0].Message
				if r.Choices[0].FinishReason == "length" {
					continue // cut short: arguments may be incomplete by design
				}
				if !tt.wantCalls(len(msg.ToolCalls)) {
					t.Errorf("seed %d: %d tool calls: %s", seed, len(msg.ToolCalls), body)
				}
				if msg.Content != nil && (strings.Contains(*msg.Content, "<tool_call>") || strings.Contains(*msg.Content, "</tool_call>")) {
					t.Errorf("seed %d: markup in content %q", seed, *msg.Content)
				}
				if len(msg.ToolCalls) > 0 && r.Choices[0].FinishReason != "tool_calls" {
					t.Errorf("seed %d: finish_reason %q with tool calls, want tool_calls", seed, r.Choices[0].FinishReason)
				}
				for _, c := range msg.ToolCalls {
					total++
					if c.Type != "function" || !strings.HasPrefix(c.ID, "call_") {
						t.Errorf("tool call header %+v", c)
					}
					if tt.name == "named" && c.Function.Name != "get_time" {
						t.Errorf("named: call to %q", c.Function.Name)
					}
					sch := schemas[c.Function.Name]
					if sch == nil {
						t.Errorf("call to unknown function %q", c.Function.Name)
						continue
					}
					validate(t, sch, c.Function.Arguments)
				}
			}
			if tt.name != "auto" && tt.name != "none" && total == 0 {
				t.Errorf("no complete call in 12 requests")
			}
		})
	}
}

func TestChatStrictAndLenient(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	bad := `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"},"uniqueItems":true}},"required":["xs"]}`
	tool := func(strict bool) []any {
		return []any{map[string]any{"type": "function", "function": map[string]any{"name": "f", "parameters": json.RawMessage(bad), "strict": strict}}}
	}
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"tools": tool(true), "tool_choice": "required"}))
	if resp.StatusCode != 400 {
		t.Fatalf("strict unsupported keyword: status %d, want 400: %s", resp.StatusCode, body)
	}
	var eb ErrorBody
	json.Unmarshal(body, &eb)
	if eb.Error.Param == nil || *eb.Error.Param != "tools[0].function.parameters" || eb.Error.Code == nil || *eb.Error.Code != "invalid_schema" ||
		!strings.Contains(eb.Error.Message, "/properties/xs/uniqueItems") || !strings.Contains(eb.Error.Message, "uniqueItems") || eb.Error.Type != "invalid_request_error" {
		t.Errorf("strict error = %s", body)
	}
	resp, body = ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"tools": tool(false), "tool_choice": "required", "max_tokens": 60}))
	r := decodeChat(t, resp.StatusCode, body)
	if h := resp.Header.Get("X-Conform-Unenforced"); h != "tools[0].function.parameters#/properties/xs/uniqueItems uniqueItems" {
		t.Errorf("X-Conform-Unenforced = %q", h)
	}
	if len(r.Unenforced) != 1 || r.Unenforced[0].Keyword != "uniqueItems" || r.Unenforced[0].Pointer != "/properties/xs/uniqueItems" {
		t.Errorf("conform_unenforced = %+v", r.Unenforced)
	}
}

func TestChatStructuredOutputs(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	schema := `{"type":"object","properties":{"answer":{"type":"string","maxLength":8},"n":{"type":"integer","minimum":0,"maximum":99}},"required":["answer","n"],"additionalProperties":false}`
	sch := compileSchema(t, schema)
	tests := []struct {
		name  string
		extra map[string]any
		check func(t *testing.T, content string)
	}{
		{"response_format json_schema", map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "a", "schema": json.RawMessage(schema), "strict": true}}},
			func(t *testing.T, s string) { validate(t, sch, s) }},
		{"response_format json_object", map[string]any{"response_format": map[string]any{"type": "json_object"}},
			func(t *testing.T, s string) {
				var v map[string]any
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					t.Errorf("json_object content %q: %v", s, err)
				}
			}},
		{"structured_outputs regex", map[string]any{"structured_outputs": map[string]any{"regex": `[0-9]{3}-[a-z]{2,4}`}},
			func(t *testing.T, s string) {
				if len(s) < 6 || len(s) > 8 || s[3] != '-' {
					t.Errorf("regex content %q", s)
				}
			}},
		{"structured_outputs choice", map[string]any{"structured_outputs": map[string]any{"choice": []string{"red", "green", "blue"}}},
			func(t *testing.T, s string) {
				if s != "red" && s != "green" && s != "blue" {
					t.Errorf("choice content %q", s)
				}
			}},
		{"guided_json", map[string]any{"guided_json": json.RawMessage(schema)}, func(t *testing.T, s string) { validate(t, sch, s) }},
		{"guided_choice", map[string]any{"guided_choice": []string{"yes", "no"}}, func(t *testing.T, s string) {
			if s != "yes" && s != "no" {
				t.Errorf("guided_choice content %q", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := 0; seed < 5; seed++ {
				tt.extra["seed"] = seed
				tt.extra["max_tokens"] = 200
				resp, body := ts.post(t, "/v1/chat/completions", chatBody(tt.extra))
				r := decodeChat(t, resp.StatusCode, body)
				if r.Choices[0].FinishReason != "stop" {
					continue
				}
				tt.check(t, *r.Choices[0].Message.Content)
			}
		})
	}
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"guided_regex": "a", "structured_outputs": map[string]any{"choice": []string{"x"}}}))
	if resp.StatusCode != 400 || !strings.Contains(string(body), "both constrain") {
		t.Errorf("two structured outputs: %d %s", resp.StatusCode, body)
	}
}

// sseEvents reads a streaming response into its data payloads.
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		} else if line != "" {
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return out
}

func TestChatStream(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	sch := compileSchema(t, weatherParams)
	for seed := 0; seed < 6; seed++ {
		resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{
			"tools": testTools, "tool_choice": "required", "stream": true, "stream_options": map[string]any{"include_usage": true}, "seed": seed, "max_tokens": 150,
		}))
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		evs := sseEvents(t, body)
		if len(evs) < 4 || evs[len(evs)-1] != "[DONE]" {
			t.Fatalf("events %q", evs)
		}
		var first ChatChunk
		json.Unmarshal([]byte(evs[0]), &first)
		if first.Object != "chat.completion.chunk" || len(first.Choices) != 1 || first.Choices[0].Delta.Role != "assistant" {
			t.Errorf("first chunk %s", evs[0])
		}
		var usage ChatChunk
		json.Unmarshal([]byte(evs[len(evs)-2]), &usage)
		if usage.Usage == nil || len(usage.Choices) != 0 || !strings.Contains(evs[len(evs)-2], `"choices":[]`) {
			t.Errorf("usage chunk %s", evs[len(evs)-2])
		}
		type call struct{ id, name, args string }
		calls := map[int]*call{}
		finish := ""
		for _, e := range evs[1 : len(evs)-2] {
			var ck ChatChunk
			if err := json.Unmarshal([]byte(e), &ck); err != nil {
				t.Fatalf("chunk %s: %v", e, err)
			}
			if !strings.Contains(e, `"usage":null`) {
				t.Errorf("chunk without usage null: %s", e)
			}
			d := ck.Choices[0].Delta
			if d.Content != nil && strings.Contains(*d.Content, "tool_call") {
				t.Errorf("markup in content delta %s", e)
			}
			for _, tc := range d.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index: %s", e)
				}
				c := calls[*tc.Index]
				if c == nil {
					if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
						t.Errorf("first delta of call %d lacks id/type/name: %s", *tc.Index, e)
					}
					c = &call{id: tc.ID, name: tc.Function.Name}
					calls[*tc.Index] = c
				} else if tc.ID != "" || tc.Function.Name != "" {
					t.Errorf("id/name repeated for call %d: %s", *tc.Index, e)
				}
				c.args += tc.Function.Arguments
			}
			if f := ck.Choices[0].FinishReason; f != nil {
				finish = *f
			}
		}
		if finish == "length" {
			continue
		}
		if finish != "tool_calls" || len(calls) == 0 {
			t.Errorf("seed %d: finish %q with %d calls", seed, finish, len(calls))
		}
		for _, c := range calls {
			if c.name == "get_weather" {
				validate(t, sch, c.args)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	ts := newTestServer(t, Config{APIKey: "sekret", MaxBodyBytes: 2048}, "")
	auth := []string{"Authorization", "Bearer sekret"}
	tests := []struct {
		name   string
		body   any
		hdr    []string
		status int
		code   string
		param  string
	}{
		{"no key", chatBody(nil), nil, 401, "invalid_api_key", ""},
		{"wrong key", chatBody(nil), []string{"Authorization", "Bearer nope"}, 401, "invalid_api_key", ""},
		{"unknown model", map[string]any{"model": "gpt-9", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, auth, 404, "model_not_found", "model"},
		{"bad json", "{", auth, 400, "invalid_json", ""},
		{"too large", `{"model":"fake","messages":[{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}]}`, auth, 413, "request_too_large", ""},
		{"temperature", chatBody(map[string]any{"temperature": 3}), auth, 400, "invalid_value", "temperature"},
		{"no messages", map[string]any{"model": "fake", "messages": []any{}}, auth, 400, "invalid_value", "messages"},
		{"bad role", map[string]any{"model": "fake", "messages": []any{map[string]any{"role": "robot", "content": "x"}}}, auth, 400, "invalid_value", "messages[0].role"},
		{"tool_choice unknown function", chatBody(map[string]any{"tools": testTools, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "nope"}}}), auth, 400, "invalid_request", "tool_choice.function.name"},
		{"bad regex", chatBody(map[string]any{"guided_regex": "(a"}), auth, 400, "invalid_schema", "guided_regex"},
		{"logit bias key", chatBody(map[string]any{"logit_bias": map[string]any{"x": 1}}), auth, 400, "invalid_value", "logit_bias"},
		{"logit bias outside vocab", chatBody(map[string]any{"logit_bias": map[string]any{"999999": 1}}), auth, 400, "invalid_value", "logit_bias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.post(t, "/v1/chat/completions", tt.body, tt.hdr...)
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
			if resp.StatusCode != tt.status || code != tt.code || param != tt.param || eb.Error.Message == "" || eb.Error.Type == "" {
				t.Errorf("got %d %q %q (%s), want %d %q %q", resp.StatusCode, code, param, body, tt.status, tt.code, tt.param)
			}
		})
	}
}

func TestQueueFull(t *testing.T) {
	ts := newTestServer(t, Config{Parallel: 1, MaxQueue: 1}, "")
	// Fill the admission: one slot, one queue place.
	if err := ts.acquire(2); err != nil {
		t.Fatal(err)
	}
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(nil))
	if resp.StatusCode != 429 || !strings.Contains(string(body), "queue_full") {
		t.Errorf("queue full: %d %s", resp.StatusCode, body)
	}
	ts.release(2)
	resp, body = ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"max_tokens": 4}))
	if resp.StatusCode != 200 {
		t.Errorf("after release: %d %s", resp.StatusCode, body)
	}
}

func TestChatNAndLogprobs(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"n": 3, "logprobs": true, "top_logprobs": 2, "max_tokens": 5, "seed": 1}))
	r := decodeChat(t, resp.StatusCode, body)
	if len(r.Choices) != 3 {
		t.Fatalf("n=3 gave %d choices", len(r.Choices))
	}
	for i, c := range r.Choices {
		if c.Index != i || c.Logprobs == nil || len(c.Logprobs.Content) == 0 {
			t.Fatalf("choice %d: %+v", i, c)
		}
		for _, lp := range c.Logprobs.Content {
			if lp.Logprob > 0 || len(lp.TopLogprobs) > 2 {
				t.Errorf("logprob %+v", lp)
			}
		}
	}
	if r.Usage.CompletionTokens < 3 {
		t.Errorf("usage %+v for 3 choices", r.Usage)
	}
}

func TestCompletions(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	resp, body := ts.post(t, "/v1/completions", map[string]any{"model": "fake", "prompt": []string{"Once upon", "A time"}, "max_tokens": 6, "guided_regex": "[a-z]{4}", "logprobs": 1})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var r CompletionResponse
	json.Unmarshal(body, &r)
	if r.Object != "text_completion" || len(r.Choices) != 2 {
		t.Fatalf("response %s", body)
	}
	for _, c := range r.Choices {
		if len(c.Text) != 4 || strings.Trim(c.Text, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Errorf("text %q does not match [a-z]{4}", c.Text)
		}
		if c.Logprobs == nil || len(c.Logprobs.Tokens) == 0 {
			t.Errorf("logprobs %+v", c.Logprobs)
		}
	}
	resp, body = ts.post(t, "/v1/completions", map[string]any{"model": "fake", "prompt": "x", "max_tokens": 3, "stream": true})
	evs := sseEvents(t, body)
	if resp.StatusCode != 200 || len(evs) < 2 || evs[len(evs)-1] != "[DONE]" {
		t.Errorf("streaming completions: %d %q", resp.StatusCode, evs)
	}
}

func TestMetrics(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"max_tokens": 3, "guided_choice": []string{"a", "b"}}))
	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"conform_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 1", "conform_prompt_tokens_total", "conform_completion_tokens_total",
		"conform_time_to_first_token_seconds_bucket", "conform_inter_token_latency_seconds", "conform_queue_depth", "conform_busy_slots",
		"conform_constraint_compile_seconds_count 1", "conform_constraint_cache_hits_total", "conform_constraint_cache_misses_total 1", "conform_forced_token_share"} {
		if !strings.Contains(string(b), name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
}

// TestDisconnectCancels: a streaming client that goes away cancels its
// generation (which could otherwise run for 100k tokens: EOS is banned).
func TestDisconnectCancels(t *testing.T) {
	ts := newTestServer(t, Config{Parallel: 1}, "")
	var logs syncBuffer
	ts.Server.log = slog.New(slog.NewJSONHandler(&logs, nil))
	block := make(chan struct{})
	ts.eng.setBlock(block)
	eos := ts.model.Vocab.EOS[0]
	body := fmt.Sprintf(`{"model":"fake","stream":true,"max_tokens":100000,"messages":[{"role":"user","content":"x"}],"logit_bias":{"%d":-100}}`, eos)
	req, _ := http.NewRequest("POST", ts.http.URL+"/v1/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	if n := ts.metrics.inflight.Load(); n != 1 {
		t.Errorf("in flight = %d during the stream, want 1", n)
	}
	resp.Body.Close()
	close(block)
	for ts.metrics.inflight.Load() != 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if st := ts.model.Runner.Stats(); st.Sampled >= 100000 {
		t.Errorf("the generation ran to its end (%d tokens) after the client left", st.Sampled)
	}
	// A client going away is not a server fault: logged at info, no error
	// event written to nobody.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), `"msg":"request"`); {
		if time.Now().After(deadline) {
			t.Fatalf("no request log line after the disconnect: %s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := logs.String(); strings.Contains(l, `"level":"ERROR"`) {
		t.Errorf("log after a disconnect:\n%s\nwant no error", l)
	}
}

// TestStreamFailAfterDisconnect: a generation that ends with an error after
// its client went away (its context is done) is logged at info, and no
// error event is written; with the client still there, the error is logged
// as an error and sent as an event.
func TestStreamFailAfterDisconnect(t *testing.T) {
	for _, gone := range []bool{true, false} {
		var logs syncBuffer
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		ctx, cancel := context.WithCancel(context.Background())
		c.Request = httptest.NewRequest("POST", "/v1/chat/completions", nil).WithContext(ctx)
		c.Set(ctxLogger, slog.New(slog.NewJSONHandler(&logs, nil)))
		if gone {
			cancel()
		}
		w := newSSE(c)
		w.fail(&runner.Error{Code: runner.CodeEngine, Msg: "boom"})
		cancel()
		l, body := logs.String(), rec.Body.String()
		if gone && (strings.Contains(l, `"level":"ERROR"`) || !strings.Contains(l, "client went away") || body != "") {
			t.Errorf("client gone: log %s body %q; want \"client went away\" at info and nothing written", l, body)
		}
		if !gone && (!strings.Contains(l, `"level":"ERROR"`) || !strings.Contains(body, `"error"`)) {
			t.Errorf("client there: log %s body %q; want an error log and an error event", l, body)
		}
	}
}

// TestChatWithoutModel checks that an absent "model" means the served
// model (as llama-server does), while a wrong one stays a 404.
func TestChatWithoutModel(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	body := chatBody(map[string]any{"max_tokens": 5})
	delete(body, "model")
	resp, raw := ts.post(t, "/v1/chat/completions", body)
	r := decodeChat(t, resp.StatusCode, raw)
	if r.Model != "fake" {
		t.Errorf("chat without model: model = %q, want %q", r.Model, "fake")
	}
}
