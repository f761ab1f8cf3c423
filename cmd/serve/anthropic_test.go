package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"conform/turn"
)

// anthTestTools are the tools of testTools in Anthropic's form.
func anthTestTools() []anthropic.ToolUnionParam {
	var w, tm anthropic.ToolInputSchemaParam
	if err := json.Unmarshal([]byte(weatherParams), &w); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte(timeParams), &tm); err != nil {
		panic(err)
	}
	return []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather in a city"), InputSchema: w, Strict: anthropic.Bool(true)}},
		{OfTool: &anthropic.ToolParam{Name: "get_time", InputSchema: tm}},
	}
}

func anthClient(ts *testServer, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(ts.http.URL), option.WithAPIKey("unused"), option.WithMaxRetries(0)}, opts...)...)
}

// anthSend sends p, streamed and accumulated with the SDK's helper, or
// not; it reports errors rather than failing, for goroutines.
func anthSend(cl anthropic.Client, p anthropic.MessageNewParams, stream bool, opts ...option.RequestOption) (*anthropic.Message, error) {
	if !stream {
		return cl.Messages.New(context.Background(), p, opts...)
	}
	var msg anthropic.Message
	st := cl.Messages.NewStreaming(context.Background(), p, opts...)
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			return nil, err
		}
	}
	return &msg, st.Err()
}

func anthParams(extra func(*anthropic.MessageNewParams)) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{Model: "fake", MaxTokens: 60,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))}}
	if extra != nil {
		extra(&p)
	}
	return p
}

// checkToolUses validates every tool_use block of content against its tool's
// schema and returns how many there are and the names called.
func checkToolUses(t *testing.T, content []anthropic.ContentBlockUnion) (names []string) {
	t.Helper()
	schemas := map[string]string{"get_weather": weatherParams, "get_time": timeParams}
	for _, b := range content {
		if b.Type != "tool_use" {
			continue
		}
		s, ok := schemas[b.Name]
		if !ok {
			t.Errorf("tool_use of unknown tool %q", b.Name)
			continue
		}
		if !strings.HasPrefix(b.ID, "toolu_") {
			t.Errorf("tool_use id %q, want toolu_ prefix", b.ID)
		}
		validate(t, compileSchema(t, s), string(b.Input))
		names = append(names, b.Name)
	}
	return names
}

func TestMessagesPlain(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	msg, err := cl.Messages.New(context.Background(), anthParams(func(p *anthropic.MessageNewParams) {
		p.System = []anthropic.TextBlockParam{{Text: "Be brief.", CacheControl: anthropic.NewCacheControlEphemeralParam()}}
		p.Metadata = anthropic.MetadataParam{UserID: anthropic.String("u1")}
	}), option.WithJSONSet("temperature", 0.7), option.WithJSONSet("top_k", 20), option.WithJSONSet("top_p", 0.9))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(msg.ID, "msg_") || msg.Model != "fake" {
		t.Errorf("id %q model %q", msg.ID, msg.Model)
	}
	if msg.StopReason != "end_turn" && msg.StopReason != "max_tokens" {
		t.Errorf("stop_reason %q", msg.StopReason)
	}
	if msg.Usage.InputTokens <= 0 || msg.Usage.OutputTokens <= 0 || msg.Usage.OutputTokens > 60 {
		t.Errorf("usage %+v", msg.Usage)
	}
	for _, b := range msg.Content {
		if b.Type != "text" || b.Text == "" {
			t.Errorf("block %+v: want non-empty text only", b)
		}
	}
}

// anthSSE splits an Anthropic stream into its named events, checking that
// each data line follows its event line and names the same type.
func anthSSE(t *testing.T, body []byte) (names []string, datas []map[string]json.RawMessage) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]json.RawMessage
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			var typ string
			_ = json.Unmarshal(d["type"], &typ)
			if typ != name {
				t.Errorf("event %q carries data of type %q", name, typ)
			}
			names, datas = append(names, name), append(datas, d)
			name = ""
		case line != "":
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return names, datas
}

// checkOrder checks the reference's event grammar: message_start, ping,
// (content_block_start content_block_delta* content_block_stop)* with
// indexes 0, 1, ..., message_delta, message_stop.
func checkOrder(t *testing.T, names []string, datas []map[string]json.RawMessage) {
	t.Helper()
	if len(names) < 4 || names[0] != "message_start" || names[1] != "ping" || names[len(names)-2] != "message_delta" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events %v", names)
	}
	open, next := -1, 0
	for i, n := range names[2 : len(names)-2] {
		var idx int
		_ = json.Unmarshal(datas[i+2]["index"], &idx)
		switch n {
		case "content_block_start":
			if open >= 0 || idx != next {
				t.Fatalf("events %v: block %d starts at %d", names, idx, i+2)
			}
			open = idx
		case "content_block_delta":
			if open != idx {
				t.Fatalf("events %v: delta of block %d while %d is open", names, idx, open)
			}
		case "content_block_stop":
			if open != idx {
				t.Fatalf("events %v: stop of block %d while %d is open", names, idx, open)
			}
			open, next = -1, next+1
		default:
			t.Fatalf("events %v: %q inside the message", names, n)
		}
	}
	if open >= 0 {
		t.Fatalf("events %v: block %d never stops", names, open)
	}
}

func TestMessagesStream(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	for _, tc := range []struct {
		name   string
		choice anthropic.ToolChoiceUnionParam
	}{{"text", anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}}, {"any", anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			// The fake model may draw EOS first (about 2% of unseeded
			// requests), a valid empty answer: up to 5 requests are made
			// for one with output.
			var acc anthropic.Message
			for try := 0; try < 5 && (try == 0 || acc.Usage.OutputTokens == 0); try++ {
				st := cl.Messages.NewStreaming(context.Background(), anthParams(func(p *anthropic.MessageNewParams) {
					p.Tools, p.ToolChoice, p.MaxTokens = anthTestTools(), tc.choice, 120
				}))
				acc = anthropic.Message{}
				for st.Next() {
					if err := acc.Accumulate(st.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := st.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.HasPrefix(acc.ID, "msg_") || acc.Usage.InputTokens <= 0 || acc.Usage.OutputTokens <= 0 {
				t.Errorf("accumulated id %q usage %+v", acc.ID, acc.Usage)
			}
			names := checkToolUses(t, acc.Content)
			switch tc.name {
			case "text":
				if len(names) != 0 {
					t.Errorf("tool_choice none made calls %v", names)
				}
			case "any":
				if len(names) == 0 || acc.StopReason != "tool_use" && acc.StopReason != "max_tokens" {
					t.Errorf("tool_choice any: calls %v, stop_reason %q", names, acc.StopReason)
				}
			}
		})
	}
	// The raw stream: event order, and input_json_delta fragments that
	// spell an input valid against the schema.
	body := map[string]any{"model": "fake", "max_tokens": 120, "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"tools":       []any{map[string]any{"name": "get_weather", "input_schema": json.RawMessage(weatherParams)}},
		"tool_choice": map[string]any{"type": "tool", "name": "get_weather"}}
	for range 5 {
		resp, out := ts.post(t, "/v1/messages?beta=true", body, "anthropic-version", "2023-06-01", "anthropic-beta", "fine-grained-tool-streaming-2025-05-14")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
		}
		names, datas := anthSSE(t, out)
		checkOrder(t, names, datas)
		var input strings.Builder
		calls := 0
		for i, n := range names {
			var d struct {
				Delta struct {
					Type        string `json:"type"`
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
				Block struct{ Type, Name string } `json:"content_block"`
			}
			raw, _ := json.Marshal(datas[i])
			_ = json.Unmarshal(raw, &d)
			if n == "content_block_start" && d.Block.Type == "tool_use" {
				calls++
				if d.Block.Name != "get_weather" {
					t.Errorf("tool_use of %q", d.Block.Name)
				}
			}
			if d.Delta.Type == "input_json_delta" {
				input.WriteString(d.Delta.PartialJSON)
			}
		}
		var md struct {
			Delta struct {
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
		}
		raw, _ := json.Marshal(datas[len(datas)-2])
		_ = json.Unmarshal(raw, &md)
		if md.Delta.StopReason == "max_tokens" {
			continue // a cut input need not validate
		}
		if calls != 1 || md.Delta.StopReason != "tool_use" {
			t.Fatalf("tool_choice tool: %d calls, stop_reason %q: %s", calls, md.Delta.StopReason, out)
		}
		validate(t, compileSchema(t, weatherParams), input.String())
	}
}

func TestMessagesToolChoice(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	for _, tc := range []struct {
		name   string
		choice anthropic.ToolChoiceUnionParam
	}{
		{"auto", anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}},
		{"any", anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(true)}}},
		{"tool", anthropic.ToolChoiceParamOfTool("get_time")},
		{"none", anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 6 {
				msg, err := cl.Messages.New(context.Background(), anthParams(func(p *anthropic.MessageNewParams) {
					p.Tools, p.ToolChoice, p.MaxTokens = anthTestTools(), tc.choice, 150
				}), option.WithJSONSet("temperature", 1))
				if err != nil {
					t.Fatal(err)
				}
				names := checkToolUses(t, msg.Content)
				cut := msg.StopReason == "max_tokens"
				switch tc.name {
				case "none":
					if len(names) > 0 {
						t.Errorf("none: calls %v", names)
					}
				case "any":
					if !cut && (len(names) != 1 || msg.StopReason != "tool_use") {
						t.Errorf("any without parallel: calls %v, stop_reason %q", names, msg.StopReason)
					}
				case "tool":
					if !cut && (len(names) != 1 || names[0] != "get_time" || msg.StopReason != "tool_use") {
						t.Errorf("tool get_time: calls %v, stop_reason %q", names, msg.StopReason)
					}
				case "auto":
					if (len(names) > 0) != (msg.StopReason == "tool_use") && !cut {
						t.Errorf("auto: calls %v, stop_reason %q", names, msg.StopReason)
					}
				}
			}
		})
	}
}

func TestMessagesToolLoop(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	p := anthParams(func(p *anthropic.MessageNewParams) {
		p.Tools, p.ToolChoice, p.MaxTokens = anthTestTools(), anthropic.ToolChoiceParamOfTool("get_weather"), 150
	})
	for round := range 3 {
		msg, err := cl.Messages.New(context.Background(), p)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		checkToolUses(t, msg.Content)
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				results = append(results, anthropic.NewToolResultBlock(b.ID, "18 degrees", round == 1))
			}
		}
		if len(results) == 0 {
			if msg.StopReason != "max_tokens" {
				t.Fatalf("round %d: no tool_use, stop_reason %q", round, msg.StopReason)
			}
			return
		}
		p.Messages = append(p.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}
	// A tool_result answering no tool_use is refused.
	resp, out := ts.post(t, "/v1/messages", map[string]any{"model": "fake", "max_tokens": 10, "messages": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_x", "content": "1"}}}}})
	checkAnthError(t, resp, out, 400, "invalid_request_error", "toolu_x")
}

// TestMessagesStructuredOutput asks for a JSON answer through
// output_config.format, plain and streamed: the text validates.
func TestMessagesStructuredOutput(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	var schema map[string]any
	_ = json.Unmarshal([]byte(weatherParams), &schema)
	validated := 0
	for _, stream := range []bool{false, true} {
		for range 6 {
			p := anthParams(func(p *anthropic.MessageNewParams) {
				p.MaxTokens = 200
				p.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
			})
			msg, err := anthSend(cl, p, stream)
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, b := range msg.Content {
				if b.Type != "text" {
					t.Errorf("block %s in a structured answer", b.Type)
				}
				text.WriteString(b.Text)
			}
			if msg.StopReason == "end_turn" {
				validate(t, compileSchema(t, weatherParams), text.String())
				validated++
			}
		}
	}
	if validated == 0 {
		t.Error("no answer completed within 200 tokens")
	}
}

func TestMessagesCountTokens(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := anthClient(ts)
	count := func(text string, tools bool) int64 {
		p := anthropic.MessageCountTokensParams{Model: "fake", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}}
		if tools {
			for _, tl := range anthTestTools() {
				p.Tools = append(p.Tools, anthropic.MessageCountTokensToolUnionParam{OfTool: tl.OfTool})
			}
		}
		r, err := cl.Messages.CountTokens(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return r.InputTokens
	}
	short, long, withTools := count("hi", false), count(strings.Repeat("hello there ", 20), false), count("hi", true)
	if short <= 0 || long <= short || withTools <= short {
		t.Errorf("counts: short %d, long %d, with tools %d", short, long, withTools)
	}
	// The count is the prompt a generation sees.
	msg, err := cl.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "fake", MaxTokens: 5,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Usage.InputTokens != short {
		t.Errorf("usage.input_tokens %d, count_tokens %d", msg.Usage.InputTokens, short)
	}
}

func checkAnthError(t *testing.T, resp *http.Response, out []byte, status int, typ, contains string) {
	t.Helper()
	var e AnthError
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if resp.StatusCode != status || e.Type != "error" || e.Error.Type != typ || !strings.Contains(e.Error.Message, contains) {
		t.Errorf("got %d %s, want %d error %s containing %q", resp.StatusCode, out, status, typ, contains)
	}
}

func TestMessagesErrors(t *testing.T) {
	ts := newTestServer(t, Config{APIKey: "sekret"}, "")
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	key := []string{"x-api-key", "sekret"}
	for _, tc := range []struct {
		name     string
		path     string
		body     any
		hdr      []string
		status   int
		typ      string
		contains string
	}{
		{"missing max_tokens", "/v1/messages", map[string]any{"model": "fake", "messages": msgs}, key, 400, "invalid_request_error", "max_tokens"},
		{"no key", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": msgs}, nil, 401, "authentication_error", "x-api-key"},
		{"wrong key", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": msgs}, []string{"x-api-key", "nope"}, 401, "authentication_error", "x-api-key"},
		{"unknown model", "/v1/messages", map[string]any{"model": "claude-x", "max_tokens": 5, "messages": msgs}, key, 404, "not_found_error", "claude-x"},
		{"thinking", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": msgs, "thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}, key, 400, "invalid_request_error", "thinking"},
		{"unknown field", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": msgs, "frobnicate": 1}, key, 400, "invalid_request_error", "frobnicate"},
		{"system role", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": []any{map[string]any{"role": "system", "content": "x"}}}, key, 400, "invalid_request_error", "system"},
		{"server tool", "/v1/messages", map[string]any{"model": "fake", "max_tokens": 5, "messages": msgs, "tools": []any{map[string]any{"type": "web_search_20250305", "name": "web_search"}}}, key, 400, "invalid_request_error", "web_search_20250305"},
		{"count no key", "/v1/messages/count_tokens", map[string]any{"model": "fake", "messages": msgs}, nil, 401, "authentication_error", "x-api-key"},
		{"bad json", "/v1/messages", "{", key, 400, "invalid_request_error", "JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := ts.post(t, tc.path, tc.body, tc.hdr...)
			checkAnthError(t, resp, out, tc.status, tc.typ, tc.contains)
		})
	}
	// Both auth styles pass; the SDK reads the error envelope.
	for _, opt := range []option.RequestOption{option.WithAPIKey("sekret"), option.WithAuthToken("sekret")} {
		cl := anthropic.NewClient(option.WithBaseURL(ts.http.URL), option.WithMaxRetries(0), opt)
		if _, err := cl.Messages.New(context.Background(), anthParams(nil)); err != nil {
			t.Errorf("with the key: %v", err)
		}
	}
	cl := anthropic.NewClient(option.WithBaseURL(ts.http.URL), option.WithMaxRetries(0), option.WithAPIKey("nope"))
	_, err := cl.Messages.New(context.Background(), anthParams(nil))
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Errorf("wrong key through the SDK: %v", err)
	}
}

func TestAnthChatMessages(t *testing.T) {
	for _, tc := range []struct {
		name, system, msgs, want, err string
	}{
		{name: "string", msgs: `[{"role":"user","content":"hi"}]`, want: `[{"role":"user","content":"hi"}]`},
		{name: "system blocks", system: `[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]`, msgs: `[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]`,
			want: `[{"role":"system","content":"ab"},{"role":"user","content":"xy"}]`},
		{name: "tool loop", msgs: `[{"role":"user","content":"w?"},{"role":"assistant","content":[{"type":"text","text":"let me"},{"type":"tool_use","id":"t1","name":"get","input":{"c":1}},{"type":"tool_use","id":"t2","name":"put","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"bad"}],"is_error":true},{"type":"text","text":"thanks"}]}]`,
			want: `[{"role":"user","content":"w?"},{"role":"assistant","content":"let me","tool_calls":[{"id":"t1","type":"function","function":{"name":"get","arguments":"{\"c\":1}"}},{"id":"t2","type":"function","function":{"name":"put","arguments":"{}"}}]},` +
				`{"role":"tool","content":"ok","tool_call_id":"t1"},{"role":"tool","content":"Error: bad","tool_call_id":"t2"},{"role":"user","content":"thanks"}]`},
		{name: "system role", msgs: `[{"role":"system","content":"x"}]`, err: "messages.0.role"},
		{name: "tool_use from user", msgs: `[{"role":"user","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}]`, err: "messages.0.content.0.type"},
		{name: "image", msgs: `[{"role":"user","content":[{"type":"image"}]}]`, err: "messages.0.content.0.type"},
		{name: "no content", msgs: `[{"role":"user"}]`, err: "messages.0.content"},
		{name: "number content", msgs: `[{"role":"user","content":3}]`, err: "messages.0.content"},
		{name: "bad system", system: `[{"type":"image"}]`, msgs: `[{"role":"user","content":"x"}]`, err: "system.0.type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []AnthMessage
			if err := json.Unmarshal([]byte(tc.msgs), &msgs); err != nil {
				t.Fatal(err)
			}
			var sys json.RawMessage
			if tc.system != "" {
				sys = json.RawMessage(tc.system)
			}
			got, err := anthChatMessages(sys, msgs)
			if tc.err != "" {
				var ae *apiError
				if !errors.As(err, &ae) || ae.Param != tc.err {
					t.Fatalf("err %v, want a 400 on %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestFromMessagesRequest(t *testing.T) {
	for _, tc := range []struct {
		name, body, err string
		check           func(t *testing.T, j *chatJob)
	}{
		{name: "sampling", body: `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"x"}],"temperature":0.5,"top_p":0.9,"top_k":3,"stop_sequences":["a",""],"stream":true}`,
			check: func(t *testing.T, j *chatJob) {
				g := j.Gen
				if g.MaxTokens != 7 || g.Params.TopK != 3 || g.Params.TopP != 0.9 || len(g.Stop) != 1 || g.Stop[0] != "a" || !g.Stream || g.N != 1 {
					t.Errorf("gen %+v", g)
				}
			}},
		{name: "tool named", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true}}`,
			check: func(t *testing.T, j *chatJob) {
				s := j.Spec
				if len(s.Tools) != 1 || s.ToolMode != 4 || s.ToolName != "f" || s.Parallel {
					t.Errorf("spec %+v", s)
				}
				if j.Tools == nil {
					t.Error("no template tools")
				}
			}},
		{name: "default parallel", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`,
			check: func(t *testing.T, j *chatJob) {
				if !j.Spec.Parallel || j.Spec.ToolMode != 0 {
					t.Errorf("spec %+v", j.Spec)
				}
			}},
		{name: "adaptive thinking", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`},
		{name: "no max_tokens", body: `{"messages":[{"role":"user","content":"x"}]}`, err: "max_tokens"},
		{name: "zero max_tokens", body: `{"max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, err: "max_tokens"},
		{name: "hot", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"temperature":1.5}`, err: "temperature"},
		{name: "no messages", body: `{"max_tokens":7,"messages":[]}`, err: "messages"},
		{name: "thinking budget", body: `{"max_tokens":2000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":100}}`, err: "thinking.budget_tokens"},
		{name: "thinking over max_tokens", body: `{"max_tokens":1024,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":1024}}`, err: "max_tokens"},
		{name: "thinking enabled", body: `{"max_tokens":2000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, j *chatJob) {
				if j.Thinking.Off || j.Thinking.Budget == nil || *j.Thinking.Budget != 1024 {
					t.Errorf("thinking %+v", j.Thinking)
				}
			}},
		{name: "thinking disabled", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"disabled"}}`,
			check: func(t *testing.T, j *chatJob) {
				if !j.Thinking.Off {
					t.Errorf("thinking %+v", j.Thinking)
				}
			}},
		{name: "format without schema", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"json_schema"}}}`, err: "output_config.format.schema"},
		{name: "format type", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"xml","schema":{}}}}`, err: "output_config.format.type"},
		{name: "two formats", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"output_format":{"type":"json_schema","schema":{}},"output_config":{"format":{"type":"json_schema","schema":{}}}}`, err: "output_format"},
		{name: "format", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`,
			check: func(t *testing.T, j *chatJob) {
				o := j.Spec.Output
				if o.Kind != turn.OutputJSONSchema || !o.Strict || string(o.Schema) != `{"type":"object"}` || o.Param != "output_config.format.schema" {
					t.Errorf("output %+v", o)
				}
			}},
		{name: "beta output_format", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"output_format":{"type":"json_schema","schema":{"type":"object"}}}`,
			check: func(t *testing.T, j *chatJob) {
				if o := j.Spec.Output; o.Kind != turn.OutputJSONSchema || o.Param != "output_format.schema" {
					t.Errorf("output %+v", o)
				}
			}},
		{name: "choice without tools", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"any"}}`, err: "tool_choice"},
		{name: "bad choice", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"required"}}`, err: "tool_choice.type"},
		{name: "no schema", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f"}]}`, err: "tools.0.input_schema"},
		{name: "array schema", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"array"}}]}`, err: "tools.0.input_schema"},
		{name: "server tool", body: `{"max_tokens":7,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`, err: "tools.0.type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r MessagesRequest
			if _, err := decodeRequest([]byte(tc.body), &r); err != nil {
				t.Fatal(err)
			}
			j, err := FromMessagesRequest(&r, Limits{})
			if tc.err != "" {
				var ae *apiError
				if !errors.As(err, &ae) || ae.Param != tc.err || ae.Status != 400 {
					t.Fatalf("err %v, want a 400 on %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, j)
			}
		})
	}
}

func FuzzMessagesRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"fake","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		`{"max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}],"is_error":true}]}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{"a":{"type":"integer"}}}}],"tool_choice":{"type":"any"}}`,
		`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"stop_sequences":["a"],"temperature":0.2,"top_k":4,"thinking":{"type":"disabled"},"metadata":{"user_id":"u"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r MessagesRequest
		if _, err := decodeRequest(body, &r); err != nil {
			checkRefusal(t, "decodeRequest", err)
			return
		}
		j, err := FromMessagesRequest(&r, fuzzLimits)
		if err != nil {
			checkRefusal(t, "FromMessagesRequest", err)
			return
		}
		checkGen(t, j.Gen)
		if len(j.Spec.Tools) > fuzzLimits.MaxTools {
			t.Fatalf("%d tools passed the limit of %d", len(j.Spec.Tools), fuzzLimits.MaxTools)
		}
	})
}

// TestMessagesStopSequence: a turn ended by one of several stop sequences
// names it in stop_sequence, plain and streamed, and the text stops before
// it.
func TestMessagesStopSequence(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	stops := []string{"e", "a", "zzz"}
	named := 0
	for _, stream := range []bool{false, true} {
		for range 6 {
			body := map[string]any{"model": "fake", "max_tokens": 200, "stream": stream, "stop_sequences": stops,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
			resp, out := ts.post(t, "/v1/messages", body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, out)
			}
			var reason, seq, text string
			if stream {
				names, datas := anthSSE(t, out)
				for k, n := range names {
					raw, _ := json.Marshal(datas[k])
					var d struct {
						Delta struct {
							Text         string  `json:"text"`
							StopReason   string  `json:"stop_reason"`
							StopSequence *string `json:"stop_sequence"`
						} `json:"delta"`
					}
					_ = json.Unmarshal(raw, &d)
					text += d.Delta.Text
					if n == "message_delta" {
						reason = d.Delta.StopReason
						if d.Delta.StopSequence != nil {
							seq = *d.Delta.StopSequence
						}
					}
				}
			} else {
				var m AnthResponse
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatal(err)
				}
				reason = *m.StopReason
				if m.StopSequence != nil {
					seq = *m.StopSequence
				}
				for _, b := range m.Content {
					text += *b.Text
				}
			}
			if reason != "stop_sequence" {
				continue
			}
			named++
			if seq != "e" && seq != "a" || strings.Contains(text, seq) {
				t.Errorf("stop_sequence %q, text %q", seq, text)
			}
		}
	}
	if named == 0 {
		t.Error("no turn ended by a stop sequence")
	}
}
