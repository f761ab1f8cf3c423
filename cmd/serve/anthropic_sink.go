package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// anthropicStop is a Messages stop_reason and stop_sequence for a finish:
// tool_use, max_tokens (the token limit or the context), stop_sequence
// (naming the sequence that matched), end_turn.
func anthropicStop(f *turn.Finish) (reason string, seq *string) {
	if f == nil {
		return "end_turn", nil
	}
	switch f.Reason {
	case turn.FinishToolCalls:
		return "tool_use", nil
	case turn.FinishLength, turn.FinishContext:
		return "max_tokens", nil
	case turn.FinishStopSequence:
		s := f.StopSequence
		return "stop_sequence", &s
	}
	return "end_turn", nil
}

// callInput is a call's arguments as a tool_use input: the generated JSON
// object, or {} for a call without arguments.
func callInput(args string) json.RawMessage {
	if args == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// anthropicResponse is what both Messages sinks share: the message id,
// the model name answered, the prompt's token count (message_start reports
// it before generation ends) and how the request asked.
type anthropicResponse struct {
	c      *gin.Context
	id     string
	model  string
	prompt int
	gen    genParams
}

// anthropicSink is the sink of /v1/messages for g.Stream or not.
func anthropicSink(c *gin.Context, model string, prompt int, g genParams) sink {
	r := anthropicResponse{c: c, id: newID("msg_"), model: model, prompt: prompt, gen: g}
	if g.Stream {
		return &anthropicStream{anthropicResponse: r}
	}
	return &anthropicJSON{anthropicResponse: r}
}

func anthUsage(u runner.Usage) AnthUsage {
	return AnthUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadInputTokens: u.CachedTokens}
}

// thinkingBlock is a thinking block of text (unsigned: the signature is
// empty).
func thinkingBlock(text string) AnthOutBlock {
	sig := ""
	return AnthOutBlock{Type: "thinking", Thinking: &text, Signature: &sig}
}

// anthropicJSON is a message as one JSON body: a thinking block when the
// model reasoned, a text block when there is content, then a tool_use
// block per call.
type anthropicJSON struct {
	anthropicResponse
	jsonSink
	messages
}

func (b *anthropicJSON) close(u runner.Usage) error {
	m := &b.msgs[0]
	resp := AnthResponse{ID: b.id, Type: "message", Role: "assistant", Model: b.model, Content: []AnthOutBlock{}, Usage: anthUsage(u)}
	if th := m.Reasoning(); th != "" {
		resp.Content = append(resp.Content, thinkingBlock(th))
	}
	if text := m.Content(); text != "" {
		resp.Content = append(resp.Content, AnthOutBlock{Type: "text", Text: &text})
	}
	for _, call := range m.Calls {
		resp.Content = append(resp.Content, AnthOutBlock{Type: "tool_use", ID: newID("toolu_"), Name: call.Name, Input: callInput(call.Arguments)})
	}
	reason, seq := anthropicStop(m.Finish)
	resp.StopReason, resp.StopSequence = &reason, seq
	b.c.JSON(http.StatusOK, resp)
	return nil
}

// anthropicStream is a streamed message, in the reference's order:
// message_start, ping, then per content block content_block_start, its
// deltas (thinking_delta, text_delta, or input_json_delta whose
// partial_json fragments concatenate to the tool_use input) and
// content_block_stop, then
// message_delta (stop_reason, usage.output_tokens) and message_stop. A
// failure after the start is an error event.
type anthropicStream struct {
	anthropicResponse
	w     *sse
	index int    // the open block's index, or the next block's when none is open
	cur   string // the open block's type: "", "thinking", "text" or "tool_use"
	args  bool   // the open tool_use block has received argument fragments
	done  bool   // message_delta was written
}

func (s *anthropicStream) gone() bool { return s.w.failed }

func (s *anthropicStream) open(int) {
	s.w = newSSE(s.c)
	s.w.event("message_start", map[string]any{"type": "message_start", "message": AnthResponse{ID: s.id, Type: "message", Role: "assistant", Model: s.model,
		Content: []AnthOutBlock{}, Usage: AnthUsage{InputTokens: s.prompt}}})
	s.w.event("ping", map[string]any{"type": "ping"})
}

// start opens a block of typ (closing the open one).
func (s *anthropicStream) start(block AnthOutBlock) {
	s.stop()
	s.cur = block.Type
	s.args = false
	s.w.event("content_block_start", map[string]any{"type": "content_block_start", "index": s.index, "content_block": block})
}

// stop closes the open block, if any. A tool_use block that received no
// fragment gets "{}" as its one, so that the fragments always spell the
// input.
func (s *anthropicStream) stop() {
	if s.cur == "" {
		return
	}
	if s.cur == "tool_use" && !s.args {
		s.delta(map[string]any{"type": "input_json_delta", "partial_json": "{}"})
	}
	s.w.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": s.index})
	s.cur = ""
	s.index++
}

func (s *anthropicStream) delta(d map[string]any) {
	s.w.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": s.index, "delta": d})
}

func (s *anthropicStream) step(st turn.Step) {
	for _, e := range st.Events {
		switch e.Kind {
		case turn.EventReasoning:
			if e.Text == "" {
				continue
			}
			if s.cur != "thinking" {
				s.start(thinkingBlock(""))
			}
			s.delta(map[string]any{"type": "thinking_delta", "thinking": e.Text})
		case turn.EventContent:
			if e.Text == "" {
				continue
			}
			if s.cur != "text" {
				empty := ""
				s.start(AnthOutBlock{Type: "text", Text: &empty})
			}
			s.delta(map[string]any{"type": "text_delta", "text": e.Text})
		case turn.EventCallStart:
			s.start(AnthOutBlock{Type: "tool_use", ID: newID("toolu_"), Name: e.Name, Input: json.RawMessage("{}")})
		case turn.EventCallArgs:
			if s.cur != "tool_use" || e.Text == "" {
				continue
			}
			s.args = true
			s.delta(map[string]any{"type": "input_json_delta", "partial_json": e.Text})
		case turn.EventCallEnd:
			s.stop()
		case turn.EventFinish:
			s.stop()
			reason, seq := anthropicStop(e.Finish)
			s.w.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
				"usage": map[string]any{"output_tokens": e.Finish.Usage.CompletionTokens}})
			s.done = true
		}
	}
}

func (s *anthropicStream) fail(err error) error {
	if ae := s.w.failure(err); ae != nil {
		s.w.event("error", anthropicEnvelope(ae))
	}
	return nil
}

func (s *anthropicStream) close(runner.Usage) error {
	if !s.done {
		s.stop()
		s.w.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 0}})
	}
	s.w.event("message_stop", map[string]any{"type": "message_stop"})
	return nil
}

// event writes one named server-sent event (Anthropic's streams name each
// event on an event: line before its data). After a failed write it
// writes nothing more.
func (w *sse) event(name string, v any) bool {
	if w.failed {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.failed = true
		return false
	}
	if _, err := fmt.Fprintf(w.c.Writer, "event: %s\ndata: %s\n\n", name, b); err != nil {
		w.failed = true
		return false
	}
	w.c.Writer.Flush()
	return true
}
