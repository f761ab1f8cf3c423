package main

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// TestStreamOptionsBothEndpoints: stream_options is checked in one place,
// so chat and completions refuse it without stream alike and take
// include_usage alike.
func TestStreamOptionsBothEndpoints(t *testing.T) {
	user := ChatMessage{Role: "user", Content: json.RawMessage(`"hi"`)}
	tests := []struct {
		name      string
		stream    bool
		opts      *StreamOptions
		param     string // the refused parameter, "" when accepted
		wantUsage bool
	}{
		{"stream_options without stream", false, &StreamOptions{IncludeUsage: true}, "stream_options", false},
		{"empty stream_options without stream", false, &StreamOptions{}, "stream_options", false},
		{"stream with include_usage", true, &StreamOptions{IncludeUsage: true}, "", true},
		{"stream without options", true, nil, "", false},
		{"neither", false, nil, "", false},
	}
	for _, tt := range tests {
		j, cerr := FromChatRequest(&ChatRequest{Messages: []ChatMessage{user}, Stream: tt.stream, StreamOptions: tt.opts}, Limits{})
		_, _, g, perr := FromCompletionRequest(&CompletionRequest{Prompt: json.RawMessage(`"x"`), Stream: tt.stream, StreamOptions: tt.opts}, Limits{})
		for _, r := range []struct {
			api string
			err error
			g   genParams
		}{{"chat", cerr, func() genParams {
			if j == nil {
				return genParams{}
			}
			return j.Gen
		}()}, {"completions", perr, g}} {
			if tt.param != "" {
				var ae *apiError
				if !errors.As(r.err, &ae) || ae.Status != 400 || ae.Param != tt.param {
					t.Errorf("%s: %s: error %v, want a 400 naming %s", tt.name, r.api, r.err, tt.param)
				}
				continue
			}
			if r.err != nil || r.g.Stream != tt.stream || r.g.IncludeUsage != tt.wantUsage {
				t.Errorf("%s: %s: stream %v include_usage %v, %v; want %v %v", tt.name, r.api, r.g.Stream, r.g.IncludeUsage, r.err, tt.stream, tt.wantUsage)
			}
		}
	}
}

// TestCompletionsUsageStreamed: a streamed completion of several prompts
// reports the usage of all of them, each prompt once, as the one that is
// not streamed does (it used to report only the first prompt's).
func TestCompletionsUsageStreamed(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	prompts := []string{"Once upon", "A time"}
	want := len(prompts[0]) + len(prompts[1]) // the fake tokenizer: a token a byte
	body := func(stream bool) map[string]any {
		b := map[string]any{"model": "fake", "prompt": prompts, "n": 2, "max_tokens": 3, "seed": 4}
		if stream {
			b["stream"] = true
			b["stream_options"] = map[string]any{"include_usage": true}
		}
		return b
	}
	resp, raw := ts.post(t, "/v1/completions", body(false))
	var whole CompletionResponse
	if err := json.Unmarshal(raw, &whole); err != nil || resp.StatusCode != 200 {
		t.Fatalf("completions: %d %s", resp.StatusCode, raw)
	}
	if whole.Usage.PromptTokens != want || len(whole.Choices) != 4 {
		t.Errorf("not streamed: prompt_tokens %d over %d choices, want %d over 4", whole.Usage.PromptTokens, len(whole.Choices), want)
	}
	resp, raw = ts.post(t, "/v1/completions", body(true))
	evs := sseEvents(t, raw)
	if resp.StatusCode != 200 || len(evs) < 2 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("streamed: %d %q", resp.StatusCode, evs)
	}
	var last CompletionResponse
	if err := json.Unmarshal([]byte(evs[len(evs)-2]), &last); err != nil || last.Usage == nil {
		t.Fatalf("usage chunk %s: %v", evs[len(evs)-2], err)
	}
	finished := map[int]bool{}
	tokens := 0
	for _, e := range evs[:len(evs)-2] {
		var ck CompletionResponse
		if err := json.Unmarshal([]byte(e), &ck); err != nil || len(ck.Choices) != 1 {
			t.Fatalf("chunk %s: %v", e, err)
		}
		if ck.Choices[0].FinishReason != nil {
			finished[ck.Choices[0].Index] = true
		}
		tokens++
	}
	if last.Usage.PromptTokens != want || len(finished) != 4 || last.Usage.TotalTokens != last.Usage.PromptTokens+last.Usage.CompletionTokens {
		t.Errorf("streamed: usage %+v with %d choices finished, want %d prompt tokens over 4", last.Usage, len(finished), want)
	}
	if last.Usage.CompletionTokens > 4*3 || last.Usage.CompletionTokens < 4 {
		t.Errorf("streamed: %d completion tokens for 4 choices of at most 3", last.Usage.CompletionTokens)
	}
}

// sinkContext is a gin context over a recorder, for driving sinks by hand.
func sinkContext() (*gin.Context, *httptest.ResponseRecorder) {
	gin.SetMode(gin.TestMode)
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest("POST", "/v1/chat/completions", nil)
	return c, rec
}

// sinkSteps are two choices' steps: content then a call on choice 0, a cut
// text on choice 1.
func sinkSteps() []turn.Step {
	fin := func(r turn.FinishReason, calls, out int) turn.Event {
		return turn.Event{Kind: turn.EventFinish, Finish: &turn.Finish{Reason: r, Calls: calls, Usage: runner.Usage{PromptTokens: 7, CompletionTokens: out}}}
	}
	return []turn.Step{
		{Choice: 0, Events: []turn.Event{{Kind: turn.EventContent, Text: "Let me see."}}},
		{Choice: 1, Events: []turn.Event{{Kind: turn.EventContent, Text: "abc"}}},
		{Choice: 0, Events: []turn.Event{{Kind: turn.EventCallStart, Index: 0, Name: "get_time"}, {Kind: turn.EventCallArgs, Index: 0, Text: `{"tz": `}}},
		{Choice: 0, Events: []turn.Event{{Kind: turn.EventCallArgs, Index: 0, Text: `"UTC"}`}, {Kind: turn.EventCallEnd, Index: 0}, fin(turn.FinishToolCalls, 1, 9)}},
		{Choice: 1, Events: []turn.Event{fin(turn.FinishLength, 0, 4)}},
	}
}

// freeTurn is the fake model and an unconstrained turn of it, for sinks
// (which read only its unenforced keywords).
func freeTurn(t *testing.T) (*Model, *turn.Turn) {
	t.Helper()
	m := newTestServer(t, Config{}, "").model
	tc, err := turn.NewCompiler(turn.CompilerConfig{Vocab: m.Tokens, Format: m.Format})
	if err != nil {
		t.Fatal(err)
	}
	tn, err := tc.Compile(t.Context(), turn.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	return m, tn
}

func runSink(sk sink, steps []turn.Step) error {
	sk.open(2)
	ms := make([]*runner.Usage, 2)
	for _, st := range steps {
		sk.step(st)
		if f := st.Finish(); f != nil {
			ms[st.Choice] = &f.Usage
		}
	}
	return sk.close(turn.SumUsage(ms, 2))
}

// TestChatSinks writes the same steps through both chat sinks: the body
// holds each choice's content, calls and finish_reason; the stream has the
// role chunks, the deltas in order (the call's id and name once), a
// finish_reason per choice and the usage chunk.
func TestChatSinks(t *testing.T) {
	m, tn := freeTurn(t)
	c, rec := sinkContext()
	if err := runSink(chatSink(c, m, tn, genParams{N: 2}), sinkSteps()); err != nil {
		t.Fatal(err)
	}
	var body ChatResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	if len(body.Choices) != 2 || body.Usage.PromptTokens != 7 || body.Usage.CompletionTokens != 13 {
		t.Fatalf("body %s", rec.Body)
	}
	c0, c1 := body.Choices[0], body.Choices[1]
	if *c0.Message.Content != "Let me see." || c0.FinishReason != "tool_calls" || len(c0.Message.ToolCalls) != 1 ||
		c0.Message.ToolCalls[0].Function != (FunctionCall{Name: "get_time", Arguments: `{"tz": "UTC"}`}) || !strings.HasPrefix(c0.Message.ToolCalls[0].ID, "call_") {
		t.Errorf("choice 0 = %+v", c0)
	}
	if *c1.Message.Content != "abc" || c1.FinishReason != "length" || c1.Message.ToolCalls != nil {
		t.Errorf("choice 1 = %+v", c1)
	}

	c, rec = sinkContext()
	if err := runSink(chatSink(c, m, tn, genParams{N: 2, Stream: true, IncludeUsage: true}), sinkSteps()); err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, rec.Body.Bytes())
	type delta struct {
		choice        int
		content, args string
		id, name      string
		finish        string
	}
	var got []delta
	for _, e := range evs[2 : len(evs)-2] {
		var ck ChatChunk
		if err := json.Unmarshal([]byte(e), &ck); err != nil || len(ck.Choices) != 1 {
			t.Fatalf("chunk %s: %v", e, err)
		}
		ch := ck.Choices[0]
		d := delta{choice: ch.Index}
		if ch.Delta.Content != nil {
			d.content = *ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			d.args, d.name = tc.Function.Arguments, tc.Function.Name
			if tc.ID != "" {
				d.id = "call_"
			}
		}
		if ch.FinishReason != nil {
			d.finish = *ch.FinishReason
		}
		got = append(got, d)
	}
	want := []delta{
		{choice: 0, content: "Let me see."},
		{choice: 1, content: "abc"},
		{choice: 0, id: "call_", name: "get_time"},
		{choice: 0, args: `{"tz": `},
		{choice: 0, args: `"UTC"}`},
		{choice: 0, finish: "tool_calls"},
		{choice: 1, finish: "length"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deltas = %+v\nwant %+v", got, want)
	}
	var usage ChatChunk
	json.Unmarshal([]byte(evs[len(evs)-2]), &usage)
	if !strings.Contains(evs[0], `"role":"assistant"`) || !strings.Contains(evs[1], `"index":1`) || usage.Usage == nil || usage.Usage.TotalTokens != 20 || evs[len(evs)-1] != "[DONE]" {
		t.Errorf("role chunks %s %s, usage chunk %s, last %s", evs[0], evs[1], evs[len(evs)-2], evs[len(evs)-1])
	}
}

// TestCompletionSinks writes the same steps through both completion sinks:
// text only (a call's events are not text), the finish reasons, the usage.
func TestCompletionSinks(t *testing.T) {
	m, tn := freeTurn(t)
	c, rec := sinkContext()
	if err := runSink(completionSink(c, m, tn, genParams{N: 2}), sinkSteps()); err != nil {
		t.Fatal(err)
	}
	var body CompletionResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Choices) != 2 {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	if body.Choices[0].Text != "Let me see." || *body.Choices[1].FinishReason != "length" || body.Usage.TotalTokens != 20 {
		t.Errorf("body %s", rec.Body)
	}
	c, rec = sinkContext()
	if err := runSink(completionSink(c, m, tn, genParams{N: 2, Stream: true, IncludeUsage: true}), sinkSteps()); err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, rec.Body.Bytes())
	text := map[int]string{}
	for _, e := range evs[:len(evs)-2] {
		var ck CompletionResponse
		if err := json.Unmarshal([]byte(e), &ck); err != nil || len(ck.Choices) != 1 {
			t.Fatalf("chunk %s: %v", e, err)
		}
		text[ck.Choices[0].Index] += ck.Choices[0].Text
	}
	var usage CompletionResponse
	json.Unmarshal([]byte(evs[len(evs)-2]), &usage)
	if text[0] != "Let me see." || text[1] != "abc" || usage.Usage == nil || usage.Usage.PromptTokens != 7 || evs[len(evs)-1] != "[DONE]" {
		t.Errorf("streamed texts %v, usage chunk %s", text, evs[len(evs)-2])
	}
}
