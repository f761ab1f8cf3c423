package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"conform/turn"
)

func respClient(ts *testServer) openai.Client {
	return openai.NewClient(option.WithBaseURL(ts.http.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

// respTestTools are the tools of testTools as Responses functions.
func respTestTools() []responses.ToolUnionParam {
	var w, tm map[string]any
	if err := json.Unmarshal([]byte(weatherParams), &w); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte(timeParams), &tm); err != nil {
		panic(err)
	}
	return []responses.ToolUnionParam{
		{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Description: openai.String("Weather in a city"), Parameters: w, Strict: openai.Bool(true)}},
		{OfFunction: &responses.FunctionToolParam{Name: "get_time", Parameters: tm, Strict: openai.Bool(false)}},
	}
}

func respParams(extra func(*responses.ResponseNewParams)) responses.ResponseNewParams {
	p := responses.ResponseNewParams{Model: "fake", MaxOutputTokens: openai.Int(60),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")}}
	if extra != nil {
		extra(&p)
	}
	return p
}

// checkRespOutput checks a response's items (ids, statuses, one text part
// per message) and validates every function call's arguments against its
// function's parameters; it returns the names called and the text.
func checkRespOutput(t *testing.T, r *responses.Response) (names []string, text string) {
	t.Helper()
	schemas := map[string]string{"get_weather": weatherParams, "get_time": timeParams}
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Model != "fake" {
		t.Errorf("id %q object %q model %q", r.ID, r.Object, r.Model)
	}
	if r.Status != "completed" && r.Status != "incomplete" {
		t.Errorf("status %q", r.Status)
	}
	if (r.Status == "incomplete") != (r.IncompleteDetails.Reason == "max_output_tokens") {
		t.Errorf("status %q with incomplete_details %+v", r.Status, r.IncompleteDetails)
	}
	if r.Usage.InputTokens <= 0 || r.Usage.OutputTokens < 0 || r.Usage.OutputTokens > r.MaxOutputTokens || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Errorf("usage %+v", r.Usage)
	}
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			if !strings.HasPrefix(it.ID, "msg_") || it.Role != "assistant" || len(it.Content) != 1 || it.Content[0].Type != "output_text" {
				t.Errorf("message item %s", it.RawJSON())
				continue
			}
			text += it.Content[0].Text
		case "function_call":
			if !strings.HasPrefix(it.ID, "fc_") || !strings.HasPrefix(it.CallID, "call_") {
				t.Errorf("function_call ids %q %q", it.ID, it.CallID)
			}
			s, ok := schemas[it.Name]
			if !ok {
				t.Errorf("call of unknown function %q", it.Name)
				continue
			}
			if it.Status == "completed" {
				validate(t, compileSchema(t, s), it.Arguments.OfString)
			}
			names = append(names, it.Name)
		default:
			t.Errorf("output item type %q", it.Type)
		}
	}
	return names, text
}

func TestResponsesPlain(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := respClient(ts)
	// The fake model may draw EOS first (about 2% of unseeded requests):
	// an empty answer is valid, so up to 5 requests are made for a text.
	var r *responses.Response
	for try := 0; try < 5; try++ {
		var err error
		r, err = cl.Responses.New(context.Background(), respParams(func(p *responses.ResponseNewParams) {
			p.Instructions = openai.String("Be brief.")
			p.Temperature, p.TopP = openai.Float(0.7), openai.Float(0.9)
			p.Store = openai.Bool(false)
		}))
		if err != nil {
			t.Fatal(err)
		}
		names, text := checkRespOutput(t, r)
		if len(names) != 0 {
			t.Fatalf("calls %v in a request without tools", names)
		}
		if text != "" {
			break
		}
		if try == 4 {
			t.Errorf("5 requests, no text: want text")
		}
	}
	if r.Instructions.OfString != "Be brief." || r.Temperature != 0.7 || r.TopP != 0.9 || r.MaxOutputTokens != 60 {
		t.Errorf("echo: instructions %q temperature %v top_p %v max %d", r.Instructions.OfString, r.Temperature, r.TopP, r.MaxOutputTokens)
	}
}

// respSend sends p, streamed (checked by checkRespStream) or not, and
// returns the response, or nil after reporting why with Errorf (so that
// goroutines may call it).
func respSend(t *testing.T, cl openai.Client, p responses.ResponseNewParams, stream bool) *responses.Response {
	t.Helper()
	if !stream {
		r, err := cl.Responses.New(context.Background(), p)
		if err != nil {
			t.Errorf("responses: %v", err)
			return nil
		}
		return r
	}
	st := cl.Responses.NewStreaming(context.Background(), p)
	var evs []responses.ResponseStreamEventUnion
	for st.Next() {
		evs = append(evs, st.Current())
	}
	if err := st.Err(); err != nil {
		t.Errorf("responses (stream): %v", err)
		return nil
	}
	return checkRespStream(t, evs)
}

// respEvents is one response stream as the SDK reads it.
func respEvents(t *testing.T, st interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}) []responses.ResponseStreamEventUnion {
	t.Helper()
	var evs []responses.ResponseStreamEventUnion
	for st.Next() {
		evs = append(evs, st.Current())
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

// checkRespStream checks a stream's order and consistency and returns its
// final response: created and in_progress first; sequence numbers 0, 1, …;
// each item added, then its parts and deltas, then done, before the next
// starts; the deltas spell what the .done events and the final response
// say; completed or incomplete last. It returns nil after an error that
// leaves nothing to check further (it reports with Errorf, so that
// goroutines may call it).
func checkRespStream(t *testing.T, evs []responses.ResponseStreamEventUnion) *responses.Response {
	t.Helper()
	if len(evs) < 3 || evs[0].Type != "response.created" || evs[1].Type != "response.in_progress" {
		t.Errorf("stream starts %v", respTypes(evs))
		return nil
	}
	last := evs[len(evs)-1]
	if last.Type != "response.completed" && last.Type != "response.incomplete" {
		t.Errorf("stream ends %v", respTypes(evs))
		return nil
	}
	open := -1
	var text strings.Builder
	var items []string // each item's final text or arguments, from its deltas
	for i, e := range evs {
		if e.SequenceNumber != int64(i) {
			t.Errorf("event %d has sequence_number %d", i, e.SequenceNumber)
			return nil
		}
		switch e.Type {
		case "response.output_item.added":
			if open >= 0 || int(e.OutputIndex) != len(items) {
				t.Errorf("%v: item %d added at %d", respTypes(evs), e.OutputIndex, i)
				return nil
			}
			open = int(e.OutputIndex)
			text.Reset()
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_text.delta":
			if int(e.OutputIndex) != open {
				t.Errorf("%v: delta of item %d while %d is open", respTypes(evs), e.OutputIndex, open)
				return nil
			}
			text.WriteString(e.Delta)
		case "response.output_text.done", "response.reasoning_text.done":
			if e.Text != text.String() {
				t.Errorf("%s text %q, deltas spell %q", e.Type, e.Text, text.String())
			}
		case "response.function_call_arguments.done":
			if e.Arguments != text.String() && !(text.Len() == 0 && e.Arguments == "{}") {
				t.Errorf("arguments.done %q, deltas spell %q", e.Arguments, text.String())
			}
		case "response.output_item.done":
			if int(e.OutputIndex) != open {
				t.Errorf("%v: item %d done while %d is open", respTypes(evs), e.OutputIndex, open)
				return nil
			}
			items = append(items, text.String())
			open = -1
		case "response.content_part.added", "response.content_part.done":
			if int(e.OutputIndex) != open {
				t.Errorf("%v: part of item %d while %d is open", respTypes(evs), e.OutputIndex, open)
				return nil
			}
		case "response.created", "response.in_progress":
			if i > 1 {
				t.Errorf("%s at %d", e.Type, i)
				return nil
			}
		case "response.completed", "response.incomplete":
			if i != len(evs)-1 {
				t.Errorf("%s at %d of %d", e.Type, i, len(evs))
				return nil
			}
		default:
			t.Errorf("unexpected event %q", e.Type)
			return nil
		}
	}
	final := last.Response
	if len(final.Output) != len(items) {
		t.Errorf("final response has %d items, the stream %d", len(final.Output), len(items))
		return nil
	}
	for k, it := range final.Output {
		var got string
		switch it.Type {
		case "message", "reasoning":
			var c struct {
				Content []struct{ Text string } `json:"content"`
			}
			if json.Unmarshal([]byte(it.RawJSON()), &c) != nil || len(c.Content) != 1 {
				t.Errorf("item %d: content %s", k, it.RawJSON())
				continue
			}
			got = c.Content[0].Text
		case "function_call":
			got = it.Arguments.OfString
			if got == "{}" && items[k] == "" {
				got = ""
			}
		}
		if got != items[k] {
			t.Errorf("item %d: final %q, stream %q", k, got, items[k])
		}
	}
	return &final
}

func respTypes(evs []responses.ResponseStreamEventUnion) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func TestResponsesStream(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := respClient(ts)
	for _, tc := range []struct {
		name   string
		choice responses.ToolChoiceOptions
	}{{"text", responses.ToolChoiceOptionsNone}, {"required", responses.ToolChoiceOptionsRequired}, {"auto", responses.ToolChoiceOptionsAuto}} {
		t.Run(tc.name, func(t *testing.T) {
			for range 4 {
				st := cl.Responses.NewStreaming(context.Background(), respParams(func(p *responses.ResponseNewParams) {
					p.Tools = respTestTools()
					p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(tc.choice)}
					p.MaxOutputTokens = openai.Int(120)
				}))
				final := checkRespStream(t, respEvents(t, st))
				if final == nil {
					return
				}
				names, _ := checkRespOutput(t, final)
				switch {
				case tc.name == "text" && len(names) != 0:
					t.Errorf("tool_choice none made calls %v", names)
				case tc.name == "required" && len(names) == 0 && final.Status == "completed":
					t.Errorf("tool_choice required made no call")
				}
			}
		})
	}
}

func TestResponsesToolChoice(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := respClient(ts)
	for _, tc := range []struct {
		name   string
		choice responses.ResponseNewParamsToolChoiceUnion
		want   func(names []string) bool
	}{
		{"auto", responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsAuto)}, func([]string) bool { return true }},
		{"required", responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}, func(n []string) bool { return len(n) > 0 }},
		{"none", responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}, func(n []string) bool { return len(n) == 0 }},
		{"function", responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_time"}},
			func(n []string) bool { return reflect.DeepEqual(n, []string{"get_time"}) }},
		{"allowed_tools", responses.ResponseNewParamsToolChoiceUnion{OfAllowedTools: &responses.ToolChoiceAllowedParam{Mode: responses.ToolChoiceAllowedModeRequired,
			Tools: []map[string]any{{"type": "function", "name": "get_weather"}}}},
			func(n []string) bool { return len(n) > 0 && !strings.Contains(strings.Join(n, ","), "get_time") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 8 {
				r, err := cl.Responses.New(context.Background(), respParams(func(p *responses.ResponseNewParams) {
					p.Tools, p.ToolChoice, p.MaxOutputTokens = respTestTools(), tc.choice, openai.Int(200)
					if tc.name == "function" {
						p.ParallelToolCalls = openai.Bool(false)
					}
				}))
				if err != nil {
					t.Fatal(err)
				}
				names, _ := checkRespOutput(t, r)
				if r.Status == "completed" && !tc.want(names) {
					t.Errorf("calls %v", names)
				}
			}
		})
	}
}

func TestResponsesToolLoop(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := respClient(ts)
	first, err := cl.Responses.New(context.Background(), respParams(func(p *responses.ResponseNewParams) {
		p.Tools, p.MaxOutputTokens = respTestTools(), openai.Int(200)
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_weather"}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := checkRespOutput(t, first)
	if len(names) == 0 {
		t.Fatalf("no call: %s", first.RawJSON())
	}
	// The follow-up: the conversation so far, the call and its output.
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser)}
	for _, it := range first.Output {
		if it.Type == "function_call" {
			input = append(input, responses.ResponseInputItemParamOfFunctionCall(it.Arguments.OfString, it.CallID, it.Name))
			out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp": 21}`)
			out.OfFunctionCallOutput.CallID = openai.String(it.CallID)
			input = append(input, out)
		}
	}
	second, err := cl.Responses.New(context.Background(), respParams(func(p *responses.ResponseNewParams) {
		p.Tools, p.Input = respTestTools(), responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	}))
	if err != nil {
		t.Fatal(err)
	}
	checkRespOutput(t, second)
	if second.Usage.InputTokens <= first.Usage.InputTokens {
		t.Errorf("the follow-up's prompt (%d tokens) is not longer than the first (%d)", second.Usage.InputTokens, first.Usage.InputTokens)
	}
	// An answer to a call that was never made is refused.
	bad := responses.ResponseInputItemParamOfFunctionCallOutput("x")
	bad.OfFunctionCallOutput.CallID = openai.String("call_nope")
	_, err = cl.Responses.New(context.Background(), respParams(func(p *responses.ResponseNewParams) {
		p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser), bad}}
	}))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Errorf("unknown call_id: %v", err)
	}
}

func TestResponsesJSONSchema(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	cl := respClient(ts)
	var schema map[string]any
	_ = json.Unmarshal([]byte(weatherParams), &schema)
	for _, stream := range []bool{false, true} {
		for range 6 {
			p := respParams(func(p *responses.ResponseNewParams) {
				p.MaxOutputTokens = openai.Int(200)
				f := responses.ResponseFormatTextConfigParamOfJSONSchema("weather", schema)
				f.OfJSONSchema.Strict = openai.Bool(true)
				p.Text = responses.ResponseTextConfigParam{Format: f}
			})
			r := respSend(t, cl, p, stream)
			if r == nil {
				return
			}
			_, text := checkRespOutput(t, r)
			if r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "weather" {
				t.Errorf("text.format echo %s", r.Text.Format.RawJSON())
			}
			if r.Status == "completed" {
				validate(t, compileSchema(t, weatherParams), text)
			}
		}
	}
}

func checkRespError(t *testing.T, resp *http.Response, out []byte, status int, param, contains string) {
	t.Helper()
	var e ErrorBody
	if resp.StatusCode != status || json.Unmarshal(out, &e) != nil || e.Error.Message == "" || !strings.Contains(e.Error.Message, contains) {
		t.Errorf("status %d body %s: want %d with %q", resp.StatusCode, out, status, contains)
		return
	}
	if param != "" && (e.Error.Param == nil || *e.Error.Param != param) {
		t.Errorf("param %v, want %q (%s)", e.Error.Param, param, out)
	}
}

func TestResponsesErrors(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	base := func() map[string]any {
		return map[string]any{"model": "fake", "input": "hi", "max_output_tokens": 20}
	}
	with := func(k string, v any) map[string]any {
		b := base()
		b[k] = v
		return b
	}
	for _, tc := range []struct {
		name          string
		body          any
		status        int
		param, substr string
	}{
		{"stateless", with("previous_response_id", "resp_1"), 400, "previous_response_id", "stateless"},
		{"conversation", with("conversation", "conv_1"), 400, "conversation", "stateless"},
		{"background", with("background", true), 400, "background", "background"},
		{"unknown field", with("frobnicate", 1), 400, "frobnicate", "unknown parameter"},
		{"no input", map[string]any{"model": "fake"}, 400, "input", "Field required"},
		{"item_reference", with("input", []any{map[string]any{"type": "item_reference", "id": "msg_1"}}), 400, "input[0].type", "stateless"},
		{"image", with("input", []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image", "image_url": "x"}}}}), 400, "input[0].content[0].type", "text parts only"},
		{"bad role", with("input", []any{map[string]any{"role": "robot", "content": "x"}}), 400, "input[0].role", "want user"},
		{"hosted tool choice", with("tool_choice", map[string]any{"type": "web_search_preview"}), 400, "tool_choice.type", "hosted"},
		{"required without tools", with("tool_choice", "required"), 400, "tool_choice", "function"},
		{"unknown function", with("tool_choice", map[string]any{"type": "function", "name": "nope"}), 400, "tool_choice.name", "not among"},
		{"bad format", with("text", map[string]any{"format": map[string]any{"type": "yaml"}}), 400, "text.format.type", "want text"},
		{"schema name", with("text", map[string]any{"format": map[string]any{"type": "json_schema", "name": "a b", "schema": map[string]any{}}}), 400, "text.format.name", "a-z"},
		{"strict schema", with("text", map[string]any{"format": map[string]any{"type": "json_schema", "name": "s", "strict": true,
			"schema": map[string]any{"type": "string", "format": "frobnicate"}}}), 400, "", "format"},
		{"strict function", with("tools", []any{map[string]any{"type": "function", "name": "f",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"u": map[string]any{"type": "string", "format": "frobnicate"}}}}}), 400, "", "format"},
		{"temperature", with("temperature", 3), 400, "temperature", "between"},
		{"max_output_tokens", with("max_output_tokens", 0), 400, "max_output_tokens", "at least 1"},
		{"include", with("include", []any{"message.output_text.logprobs"}), 400, "include[0]", "not supported"},
		{"verbosity", with("text", map[string]any{"verbosity": "low"}), 400, "text.verbosity", "verbosity"},
		{"truncation", with("truncation", "auto"), 400, "truncation", "disabled"},
		{"max_tool_calls", with("max_tool_calls", 3), 400, "max_tool_calls", "above 1"},
		{"duplicate function", with("tools", []any{map[string]any{"type": "function", "name": "f"}, map[string]any{"type": "function", "name": "f"}}), 400, "tools[1].name", "twice"},
		{"model", with("model", "gpt-9"), 404, "model", "does not exist"},
		{"encrypted only", with("input", []any{map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}, "encrypted_content": "gAAA"}}), 400, "input[0].encrypted_content", "encrypted_content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := ts.post(t, "/v1/responses", tc.body)
			checkRespError(t, resp, out, tc.status, tc.param, tc.substr)
		})
	}
}

// TestResponsesCodexShape sends a request shaped as Codex sends it: a
// developer message for its system prompt, reasoning and include,
// store false, prompt_cache_key and client_metadata, no max_output_tokens,
// function tools with strict false, a namespace of functions and a
// web_search tool, streamed. It must answer 200 with response.created, an
// output_item.done per item and response.completed or incomplete, name
// the hosted tool it ignores, and call namespaced functions by namespace
// and name.
func TestResponsesCodexShape(t *testing.T) {
	ts := newTestServer(t, Config{DefaultMaxOutput: 150}, "")
	body := map[string]any{
		"model": "fake", "stream": true, "store": false, "prompt_cache_key": "k1", "client_metadata": map[string]any{"x": "y"},
		"reasoning": map[string]any{"effort": "medium", "summary": "auto"}, "include": []any{"reasoning.encrypted_content"},
		"parallel_tool_calls": false, "tool_choice": "required",
		"input": []any{
			map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": strings.Repeat("You are Codex. ", 50)}}},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "list the files"}}},
		},
		"tools": []any{
			map[string]any{"type": "function", "name": "shell", "description": "run a command", "strict": false,
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 4}}, "required": []any{"command"}, "additionalProperties": false}},
			map[string]any{"type": "namespace", "name": "mcp__fs", "description": "files", "tools": []any{
				map[string]any{"type": "function", "name": "read", "strict": false, "parameters": json.RawMessage(timeParams)},
			}},
			map[string]any{"type": "web_search", "external_web_access": false},
		},
	}
	for range 6 {
		resp, out := ts.post(t, "/v1/responses", body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
		}
		if got := resp.Header.Get("X-Conform-Ignored-Tools"); got != "tools[2] (web_search)" {
			t.Errorf("X-Conform-Ignored-Tools %q", got)
		}
		names, datas := anthSSE(t, out) // named events, data type = event name
		if names[0] != "response.created" || (names[len(names)-1] != "response.completed" && names[len(names)-1] != "response.incomplete") {
			t.Fatalf("events %v", names)
		}
		var final struct {
			Response RespObject `json:"response"`
		}
		raw, _ := json.Marshal(datas[len(datas)-1])
		if err := json.Unmarshal(raw, &final); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, n := range names {
			if n == "response.output_item.done" {
				done++
			}
		}
		if done != len(final.Response.Output) || done == 0 {
			t.Errorf("%d output_item.done for %d items", done, len(final.Response.Output))
		}
		if final.Response.MaxOutputTokens != nil || final.Response.Usage.OutputTokens > 150 {
			t.Errorf("default cap: max_output_tokens %v, %d output tokens", final.Response.MaxOutputTokens, final.Response.Usage.OutputTokens)
		}
		for _, it := range final.Response.Output {
			if it.Type != "function_call" {
				t.Errorf("tool_choice required gave a %s item", it.Type)
				continue
			}
			switch {
			case it.Name == "shell" && it.Namespace == "":
			case it.Name == "read" && it.Namespace == "mcp__fs":
				if final.Response.Status == "completed" {
					validate(t, compileSchema(t, timeParams), *it.Arguments)
				}
			default:
				t.Errorf("call %q in namespace %q", it.Name, it.Namespace)
			}
		}
	}
}

func TestRespMessages(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		instr *string
		input string
		want  []ChatMessage
		err   string
	}{
		{"string", str("Be brief."), `"hi"`, []ChatMessage{{Role: "system", Content: rawString("Be brief.")}, {Role: "user", Content: rawString("hi")}}, ""},
		{"easy messages", nil, `[{"role":"developer","content":"sys"},{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]`,
			[]ChatMessage{{Role: "developer", Content: rawString("sys")}, {Role: "user", Content: rawString("ab")}}, ""},
		{"calls join the assistant turn", nil, `[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"let me"}]},` +
			`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"g","namespace":"ns","arguments":"{\"a\":1}"},` +
			`{"type":"function_call_output","call_id":"c1","output":"r1"},{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"r2"}]}]`,
			[]ChatMessage{{Role: "user", Content: rawString("q")},
				{Role: "assistant", Content: rawString("let me"), ToolCalls: []ToolCall{
					{ID: "c1", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}},
					{ID: "c2", Type: "function", Function: FunctionCall{Name: "ns.g", Arguments: `{"a":1}`}}}},
				{Role: "tool", ToolCallID: "c1", Content: rawString("r1")}, {Role: "tool", ToolCallID: "c2", Content: rawString("r2")}}, ""},
		{"reasoning goes with the turn after it", nil, `[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s1"},{"type":"summary_text","text":"s2"}]},` +
			`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]`,
			[]ChatMessage{{Role: "user", Content: rawString("q")},
				{Role: "assistant", Content: rawString(""), ReasoningContent: "s1\n\ns2", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}}}}}, ""},
		{"reasoning content wins over its summary", nil, `[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}],"content":[{"type":"reasoning_text","text":"full"}]},{"role":"assistant","content":"a"}]`,
			[]ChatMessage{{Role: "assistant", Content: rawString("a"), ReasoningContent: "full"}}, ""},
		{"empty", nil, `[]`, nil, "at least one item"},
		{"not items", nil, `{"role":"user"}`, nil, "string or an array"},
		{"call without id", nil, `[{"type":"function_call","name":"f"}]`, nil, "call_id and name"},
		{"output without id", nil, `[{"type":"function_call_output","output":"x"}]`, nil, "call_id"},
		{"unknown item", nil, `[{"type":"computer_call","id":"x"}]`, nil, "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := respMessages(tc.instr, json.RawMessage(tc.input), Limits{}.withDefaults())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestFromResponsesRequest(t *testing.T) {
	dec := func(s string) *ResponsesRequest {
		var r ResponsesRequest
		if _, err := decodeRequest([]byte(s), &r); err != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		return &r
	}
	j, err := FromResponsesRequest(dec(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object"}},`+
		`{"type":"function","name":"g","strict":false},{"type":"namespace","name":"ns","description":"d","tools":[{"type":"function","name":"f"},{"type":"custom","name":"c"}]},`+
		`{"type":"file_search","vector_store_ids":["v"]}],"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"ns.f"}]},`+
		`"parallel_tool_calls":false,"text":{"format":{"type":"json_object"}}}`), Limits{}, 77)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var strict []bool
	for _, tl := range j.Spec.Tools {
		names, strict = append(names, tl.Name), append(strict, tl.Strict)
	}
	if !reflect.DeepEqual(names, []string{"ns.f"}) || !reflect.DeepEqual(strict, []bool{true}) {
		t.Errorf("callable tools %v strict %v: allowed_tools keeps ns.f, strict by default", names, strict)
	}
	if !reflect.DeepEqual(j.Funcs["ns.f"], respFunc{Namespace: "ns", Name: "f"}) || len(j.Funcs) != 3 {
		t.Errorf("funcs %+v", j.Funcs)
	}
	if !reflect.DeepEqual(j.IgnoredTools, []string{"tools[2].tools[1] (custom)", "tools[3] (file_search)"}) {
		t.Errorf("ignored tools %v", j.IgnoredTools)
	}
	if j.Spec.Parallel || j.Spec.Output.Kind != turn.OutputJSONObject || j.Gen.MaxTokens != 77 || !j.MaxDefault {
		t.Errorf("parallel %v output %v max %d default %v", j.Spec.Parallel, j.Spec.Output.Kind, j.Gen.MaxTokens, j.MaxDefault)
	}
	if string(j.Echo.ToolChoice) == `"auto"` || j.Echo.Text.Format.Type != "json_object" || j.Echo.Store {
		t.Errorf("echo %+v", j.Echo)
	}
}

func FuzzResponsesRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}],"tool_choice":"required"}`,
		`{"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true}},"max_output_tokens":5}`,
		`{"input":[{"type":"reasoning","id":"r","summary":[{"type":"summary_text","text":"t"}]}],"tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]},{"type":"web_search"}],"tool_choice":{"type":"allowed_tools","tools":[{"type":"function","name":"n.f"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r ResponsesRequest
		if _, err := decodeRequest(body, &r); err != nil {
			return
		}
		j, err := FromResponsesRequest(&r, Limits{}, 100)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Msg == "" {
				t.Fatalf("error %v (%T) is not a 400 apiError", err, err)
			}
			return
		}
		if j.Gen.MaxTokens < 1 || j.Messages == nil {
			t.Fatalf("converted without a budget or messages: %+v", j.Gen)
		}
		for _, tl := range j.Spec.Tools {
			if _, ok := j.Funcs[tl.Name]; !ok {
				t.Fatalf("tool %q has no function", tl.Name)
			}
		}
	})
}

// TestMetricsEndpoints: requests to the Messages and Responses routes are
// counted by endpoint and status like the chat ones.
func TestMetricsEndpoints(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	msg := map[string]any{"model": "fake", "max_tokens": 5, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	ts.post(t, "/v1/messages", msg)
	ts.post(t, "/v1/messages", map[string]any{"model": "fake", "messages": []any{}})
	ts.post(t, "/v1/messages/count_tokens", map[string]any{"model": "fake", "messages": msg["messages"]})
	ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "max_output_tokens": 5})
	ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "max_output_tokens": 5, "stream": true})
	ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "previous_response_id": "resp_1"})
	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		`conform_requests_total{endpoint="/v1/messages",status="200"} 1`,
		`conform_requests_total{endpoint="/v1/messages",status="400"} 1`,
		`conform_requests_total{endpoint="/v1/messages/count_tokens",status="200"} 1`,
		`conform_requests_total{endpoint="/v1/responses",status="200"} 2`,
		`conform_requests_total{endpoint="/v1/responses",status="400"} 1`,
	} {
		if !strings.Contains(string(b), line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// TestToolParamNames: schema errors and unenforced keywords of a tool name
// the parameter in the request's own API: tools.0.input_schema on
// Messages, tools[0].parameters on Responses.
func TestToolParamNames(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	schema := map[string]any{"type": "object", "properties": map[string]any{"u": map[string]any{"type": "string", "format": "frob"}}}
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	resp, out := ts.post(t, "/v1/messages", map[string]any{"model": "fake", "max_tokens": 50, "messages": msgs,
		"tools": []any{map[string]any{"name": "f", "strict": true, "input_schema": schema}}})
	checkAnthError(t, resp, out, 400, "invalid_request_error", "of tools.0.input_schema")
	resp, _ = ts.post(t, "/v1/messages", map[string]any{"model": "fake", "max_tokens": 50, "messages": msgs,
		"tools": []any{map[string]any{"name": "f", "input_schema": schema}}})
	if h := resp.Header.Get("X-Conform-Unenforced"); h != "tools.0.input_schema#/properties/u/format format" {
		t.Errorf("Messages X-Conform-Unenforced %q", h)
	}
	resp, out = ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "tools": []any{map[string]any{"type": "function", "name": "f", "parameters": schema}}})
	checkRespError(t, resp, out, 400, "tools[0].parameters", "format")
}
