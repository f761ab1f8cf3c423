package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// chat is POST /v1/chat/completions.
func (s *Server) chat(c *gin.Context) error {
	t0 := time.Now()
	var req ChatRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromChatRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	tn, err := m.turns.Compile(ctx, j.Spec)
	if err != nil {
		return err
	}
	if len(tn.Unenforced()) > 0 {
		c.Header("X-Conform-Unenforced", UnenforcedHeader(tn.Unenforced()))
	}
	prompt, err := chatPrompt(m.Model, j, s.cfg.Limits())
	if err != nil {
		return err
	}
	stream, err := s.driver(m.Model).Generate(ctx, j.Gen.request(tn, [][]runner.TokenID{prompt}, t0, chatMaxParam(&req), "messages"))
	if err != nil {
		return err
	}
	defer stream.Close()
	id := newID("chatcmpl-")
	created := time.Now().Unix()
	if j.Gen.Stream {
		return s.streamChat(c, stream, id, created, m.Model, j.Gen, ToUnenforced(tn.Unenforced()))
	}
	type acc struct {
		msg      turn.Message
		logprobs []TokenLogprob
	}
	accs := make([]acc, stream.Choices())
	for {
		st, ok := stream.Next()
		if !ok {
			break
		}
		if err := st.Err(); err != nil {
			return err
		}
		a := &accs[st.Choice]
		for _, e := range st.Events {
			a.msg.Add(e)
		}
		a.logprobs = append(a.logprobs, toLogprobs(st.Logprobs)...)
	}
	resp := ChatResponse{ID: id, Object: "chat.completion", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m.Model),
		Unenforced: ToUnenforced(tn.Unenforced())}
	for i := range accs {
		a := &accs[i]
		content, calls := a.msg.Content(), a.msg.Calls
		ids := make([]string, len(calls))
		for k := range ids {
			ids[k] = newID("call_")
		}
		msg := ResponseMessage{Role: "assistant", ToolCalls: ToChatCalls(calls, ids)}
		if content != "" || len(calls) == 0 {
			msg.Content = &content
		}
		ch := ChatChoice{Index: i, Message: msg, FinishReason: openAIFinish(a.msg.Finish)}
		if j.Gen.Params.Logprobs {
			ch.Logprobs = &Logprobs{Content: a.logprobs}
			if ch.Logprobs.Content == nil {
				ch.Logprobs.Content = []TokenLogprob{}
			}
		}
		resp.Choices = append(resp.Choices, ch)
	}
	resp.Usage = ToUsage(stream.Usage())
	c.JSON(http.StatusOK, resp)
	return nil
}

// fingerprint is the system_fingerprint: it changes with the model and the
// server build.
func fingerprint(m *Model) string {
	return fmt.Sprintf("fp_conform_%x", m.Tokens.Fingerprint().String()[:10])
}

// sse writes server-sent events.
type sse struct {
	c      *gin.Context
	failed bool
}

func newSSE(c *gin.Context) *sse {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	return &sse{c: c}
}

func (w *sse) data(v any) bool {
	if w.failed {
		return false
	}
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			w.failed = true
			return false
		}
	}
	if _, err := fmt.Fprintf(w.c.Writer, "data: %s\n\n", b); err != nil {
		w.failed = true
		return false
	}
	w.c.Writer.Flush()
	return true
}

// fail logs a generation that failed after the stream began and writes its
// error envelope as an event (the caller then writes [DONE]): the status is
// already 200, so the event is how the client learns of it.
func (w *sse) fail(err error) {
	if w.c.Request.Context().Err() != nil {
		// The client went away: nothing failed on our side and nobody is
		// reading the event.
		requestLogger(w.c).Info("client went away mid-stream", "err", err)
		w.failed = true
		return
	}
	ae := toAPIError(err)
	requestLogger(w.c).Error("generation failed mid-stream", append([]any{"status", ae.Status, "code", ae.Code, "err", err}, panicStack(err)...)...)
	w.data(envelope(ae))
}

// streamChat writes the chunks of a streaming chat completion: a role delta
// per choice, content and tool_calls deltas as the parser releases them, a
// final chunk with finish_reason per choice, the usage chunk when asked, and
// [DONE]. A client that goes away cancels the generations.
func (s *Server) streamChat(c *gin.Context, stream *turn.Stream, id string, created int64, m *Model, g genParams, unenforced []UnenforcedKw) error {
	w := newSSE(c)
	chunk := func(choices ...ChunkChoice) ChatChunk {
		return ChatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m), Choices: choices}
	}
	empty := ""
	for i := range stream.Choices() {
		ck := chunk(ChunkChoice{Index: i, Delta: Delta{Role: "assistant", Content: &empty}})
		if i == 0 {
			ck.Unenforced = unenforced
		}
		w.data(ck)
	}
	callIDs := make([]map[int]string, stream.Choices())
	for {
		st, ok := stream.Next()
		if !ok {
			break
		}
		if w.failed {
			stream.Close()
			return nil
		}
		if err := st.Err(); err != nil {
			stream.Close()
			w.fail(err)
			w.data("[DONE]")
			return nil
		}
		var lp *Logprobs
		if len(st.Logprobs) > 0 {
			lp = &Logprobs{Content: toLogprobs(st.Logprobs)}
		}
		for _, e := range st.Events {
			var d Delta
			switch e.Kind {
			case turn.EventContent:
				t := e.Text
				d.Content = &t
			case turn.EventCallStart:
				if callIDs[st.Choice] == nil {
					callIDs[st.Choice] = map[int]string{}
				}
				cid := newID("call_")
				callIDs[st.Choice][e.Index] = cid
				k := e.Index
				d.ToolCalls = []ToolCall{{Index: &k, ID: cid, Type: "function", Function: FunctionCall{Name: e.Name, Arguments: ""}}}
			case turn.EventCallArgs:
				k := e.Index
				d.ToolCalls = []ToolCall{{Index: &k, Function: FunctionCall{Arguments: e.Text}}}
			default:
				continue
			}
			w.data(chunk(ChunkChoice{Index: st.Choice, Delta: d, Logprobs: lp}))
			lp = nil
		}
		if lp != nil {
			w.data(chunk(ChunkChoice{Index: st.Choice, Logprobs: lp}))
		}
		if fin := st.Finish(); fin != nil {
			f := openAIFinish(fin)
			w.data(chunk(ChunkChoice{Index: st.Choice, FinishReason: &f}))
		}
	}
	if g.IncludeUsage {
		ck := chunk()
		ck.Choices = []ChunkChoice{}
		ck.Usage = ToUsage(stream.Usage())
		w.data(ck)
	}
	w.data("[DONE]")
	return nil
}
