package main

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// respUsage converts a request's usage.
func respUsage(u runner.Usage) *RespUsage {
	return &RespUsage{InputTokens: u.PromptTokens, InputTokensDetails: RespInputDetails{CachedTokens: u.CachedTokens},
		OutputTokens: u.CompletionTokens, OutputTokensDetails: RespOutputDetails{ReasoningTokens: u.ReasoningTokens},
		TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// respItems builds a response's output items from a choice's events, in
// the order they come: a reasoning item for reasoning text, a message for
// content, a function_call per call. Each kind of event after another kind
// starts a new item. The streaming sink reports each change through the
// hooks; the aggregated one reads the items at the end.
type respItems struct {
	items []RespOutItem
	text  strings.Builder // the open reasoning or message item's text
	open  bool            // the last item is still being written
	funcs map[string]respFunc

	// Hooks of the streaming sink (nil for the aggregated one).
	added func(idx int, it RespOutItem)           // an item opened
	delta func(idx int, it RespOutItem, d string) // text or arguments grew by d
	done  func(idx int, it RespOutItem)           // an item closed, with its final content
}

func (o *respItems) cur() *RespOutItem { return &o.items[len(o.items)-1] }

// start opens an item of typ, closing the open one.
func (o *respItems) start(it RespOutItem) {
	o.finish("completed")
	it.Status = "in_progress"
	o.items = append(o.items, it)
	o.open = true
	o.text.Reset()
	if o.added != nil {
		o.added(len(o.items)-1, it)
	}
}

// finish closes the open item with status.
func (o *respItems) finish(status string) {
	if !o.open {
		return
	}
	it := o.cur()
	switch it.Type {
	case "message":
		it.Content = []RespOutPart{{Type: "output_text", Text: o.text.String()}}
	case "reasoning":
		it.Content = []RespOutPart{{Type: "reasoning_text", Text: o.text.String()}}
		status = "" // reasoning items carry no status in a response
	case "function_call":
		if it.Arguments == nil || *it.Arguments == "" {
			empty := "{}"
			it.Arguments = &empty
		}
	}
	it.Status = status
	o.open = false
	if o.done != nil {
		o.done(len(o.items)-1, *it)
	}
}

// write appends d to the open item of typ, opening one if need be.
func (o *respItems) write(typ, d string) {
	if d == "" {
		return
	}
	if !o.open || o.cur().Type != typ {
		it := RespOutItem{Type: typ, ID: newID("msg_"), Role: "assistant"}
		if typ == "reasoning" {
			it.ID, it.Role = newID("rs_"), ""
		}
		o.start(it)
	}
	o.text.WriteString(d)
	if o.delta != nil {
		o.delta(len(o.items)-1, *o.cur(), d)
	}
}

func (o *respItems) event(e turn.Event) {
	switch e.Kind {
	case turn.EventReasoning:
		o.write("reasoning", e.Text)
	case turn.EventContent:
		o.write("message", e.Text)
	case turn.EventCallStart:
		f, ok := o.funcs[e.Name]
		if !ok {
			f = respFunc{Name: e.Name}
		}
		empty := ""
		o.start(RespOutItem{Type: "function_call", ID: newID("fc_"), CallID: newID("call_"), Name: f.Name, Namespace: f.Namespace, Arguments: &empty})
	case turn.EventCallArgs:
		if !o.open || o.cur().Type != "function_call" || e.Text == "" {
			return
		}
		args := *o.cur().Arguments + e.Text
		o.cur().Arguments = &args
		if o.delta != nil {
			o.delta(len(o.items)-1, *o.cur(), e.Text)
		}
	case turn.EventCallEnd:
		o.finish("completed")
	}
}

// respStatus is a response's status and incomplete_details for a finish:
// incomplete (max_output_tokens) when the token limit or the context
// ended it, else completed.
func respStatus(f *turn.Finish) (string, *RespIncomplete) {
	if f != nil && (f.Reason == turn.FinishLength || f.Reason == turn.FinishContext) {
		return "incomplete", &RespIncomplete{Reason: "max_output_tokens"}
	}
	return "completed", nil
}

// responsesResponse is what both Responses sinks share.
type responsesResponse struct {
	c      *gin.Context
	obj    RespObject // the echo, with id, model and created_at set
	out    respItems
	finish *turn.Finish
}

// responsesSink is the sink of /v1/responses for j.Gen.Stream or not.
func responsesSink(c *gin.Context, model string, j *respJob) sink {
	obj := j.Echo
	obj.ID, obj.Model, obj.CreatedAt = newID("resp_"), model, time.Now().Unix()
	r := responsesResponse{c: c, obj: obj, out: respItems{funcs: j.Funcs}}
	if j.Gen.Stream {
		return &responsesStream{responsesResponse: r}
	}
	return &responsesJSON{responsesResponse: r}
}

func (r *responsesResponse) step(st turn.Step) {
	for _, e := range st.Events {
		if e.Kind == turn.EventFinish {
			r.finish = e.Finish
			continue
		}
		r.out.event(e)
	}
}

// final is the response object once generation ended: its status, items
// and usage.
func (r *responsesResponse) final(u runner.Usage) RespObject {
	status, inc := respStatus(r.finish)
	itemStatus := "completed"
	if inc != nil {
		itemStatus = "incomplete"
	}
	r.out.finish(itemStatus)
	o := r.obj
	o.Status, o.IncompleteDetails, o.Usage = status, inc, respUsage(u)
	o.Output = r.out.items
	if o.Output == nil {
		o.Output = []RespOutItem{}
	}
	return o
}

// responsesJSON is a response as one JSON body.
type responsesJSON struct {
	responsesResponse
	jsonSink
}

func (b *responsesJSON) open(int) {}

func (b *responsesJSON) close(u runner.Usage) error {
	b.c.JSON(http.StatusOK, b.final(u))
	return nil
}

// responsesStream is a streamed response, in the reference's order:
// response.created and response.in_progress; per output item
// response.output_item.added, its parts and deltas
// (response.content_part.added, response.output_text.delta or
// response.reasoning_text.delta, their .done and response.content_part.done;
// response.function_call_arguments.delta and .done for a call), and
// response.output_item.done; then response.completed, or
// response.incomplete at the token limit, with the whole response. Every
// event is named on an event: line and numbered by sequence_number. A
// failure after the start is response.failed.
type responsesStream struct {
	responsesResponse
	w   *sse
	seq int
}

func (s *responsesStream) gone() bool { return s.w.failed }

func (s *responsesStream) emit(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	s.w.event(typ, fields)
}

// part is the content part of an item of text kind, as its added and done
// events carry it.
func part(it RespOutItem, text string) RespOutPart {
	if it.Type == "reasoning" {
		return RespOutPart{Type: "reasoning_text", Text: text}
	}
	return RespOutPart{Type: "output_text", Text: text}
}

func (s *responsesStream) open(int) {
	s.w = newSSE(s.c)
	obj := s.obj
	obj.Status, obj.Output = "in_progress", []RespOutItem{}
	s.emit("response.created", map[string]any{"response": obj})
	s.emit("response.in_progress", map[string]any{"response": obj})
	s.out.added = func(idx int, it RespOutItem) {
		s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it})
		if it.Type != "function_call" {
			s.emit("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "part": part(it, "")})
		}
	}
	s.out.delta = func(idx int, it RespOutItem, d string) {
		switch it.Type {
		case "message":
			s.emit("response.output_text.delta", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "delta": d, "logprobs": []any{}})
		case "reasoning":
			s.emit("response.reasoning_text.delta", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "delta": d})
		case "function_call":
			s.emit("response.function_call_arguments.delta", map[string]any{"item_id": it.ID, "output_index": idx, "delta": d})
		}
	}
	s.out.done = func(idx int, it RespOutItem) {
		switch it.Type {
		case "message":
			text := it.Content[0].Text
			s.emit("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "text": text, "logprobs": []any{}})
			s.emit("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "part": part(it, text)})
		case "reasoning":
			text := it.Content[0].Text
			s.emit("response.reasoning_text.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "text": text})
			s.emit("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "part": part(it, text)})
		case "function_call":
			s.emit("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": idx, "name": it.Name, "arguments": *it.Arguments})
		}
		s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it})
	}
}

func (s *responsesStream) fail(err error) error {
	ae := s.w.failure(err)
	if ae == nil {
		return nil
	}
	s.out.added, s.out.delta, s.out.done = nil, nil, nil
	obj := s.final(runner.Usage{})
	obj.Status, obj.IncompleteDetails, obj.Usage = "failed", nil, nil
	code := ae.Code
	if code == "" {
		code = "server_error"
	}
	obj.Error = &RespError{Code: code, Message: ae.Msg}
	s.emit("response.failed", map[string]any{"response": obj})
	return nil
}

func (s *responsesStream) close(u runner.Usage) error {
	obj := s.final(u)
	if obj.Status == "incomplete" {
		s.emit("response.incomplete", map[string]any{"response": obj})
	} else {
		s.emit("response.completed", map[string]any{"response": obj})
	}
	return nil
}
