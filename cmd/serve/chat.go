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
	cons, res, err := s.constraintFor(ctx, m, j.Spec)
	if err != nil {
		return err
	}
	if len(res.Unenforced) > 0 {
		c.Header("X-Conform-Unenforced", UnenforcedHeader(res.Unenforced))
	}
	prompt, err := chatPrompt(m, j, s.cfg.Limits())
	if err != nil {
		return err
	}
	jb := &job{model: m, gen: j.Gen, cons: cons, calls: res.Calls, logprobs: j.Gen.Params.Logprobs, start: t0}
	for range j.Gen.N {
		jb.prompts = append(jb.prompts, prompt)
	}
	if err := checkBudget(jb, chatMaxParam(&req), "messages"); err != nil {
		return err
	}
	pieces, err := s.start(ctx, jb)
	if err != nil {
		return err
	}
	id := newID("chatcmpl-")
	created := time.Now().Unix()
	if j.Gen.Stream {
		return s.streamChat(c, cancel, pieces, id, created, m, j.Gen, ToUnenforced(res.Unenforced))
	}
	type acc struct {
		events   []turn.Event
		logprobs []TokenLogprob
		finish   string
		usage    *runner.Usage
	}
	accs := make([]acc, j.Gen.N)
	for pc := range pieces {
		if pc.err != nil {
			cancel()
			for range pieces {
			}
			return pc.err
		}
		a := &accs[pc.choice]
		a.events = append(a.events, pc.events...)
		a.logprobs = append(a.logprobs, pc.logprobs...)
		if pc.done {
			a.finish, a.usage = pc.finish, pc.usage
		}
	}
	resp := ChatResponse{ID: id, Object: "chat.completion", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m),
		Unenforced: ToUnenforced(res.Unenforced)}
	var us []*runner.Usage
	for i, a := range accs {
		content, calls := turn.Merge(a.events)
		ids := make([]string, len(calls))
		for k := range ids {
			ids[k] = newID("call_")
		}
		msg := ResponseMessage{Role: "assistant", ToolCalls: ToChatCalls(calls, ids)}
		if content != "" || len(calls) == 0 {
			msg.Content = &content
		}
		ch := ChatChoice{Index: i, Message: msg, FinishReason: a.finish}
		if j.Gen.Params.Logprobs {
			ch.Logprobs = &Logprobs{Content: a.logprobs}
			if ch.Logprobs.Content == nil {
				ch.Logprobs.Content = []TokenLogprob{}
			}
		}
		resp.Choices = append(resp.Choices, ch)
		us = append(us, a.usage)
	}
	resp.Usage = ToUsage(us)
	c.JSON(http.StatusOK, resp)
	return nil
}

// fingerprint is the system_fingerprint: it changes with the model and the
// server build.
func fingerprint(m *Model) string {
	return fmt.Sprintf("fp_conform_%x", m.Index.Fingerprint().String()[:10])
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
func (s *Server) streamChat(c *gin.Context, cancel context.CancelFunc, pieces <-chan piece, id string, created int64, m *Model, g genParams, unenforced []UnenforcedKw) error {
	w := newSSE(c)
	chunk := func(choices ...ChunkChoice) ChatChunk {
		return ChatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m), Choices: choices}
	}
	empty := ""
	for i := range g.N {
		ck := chunk(ChunkChoice{Index: i, Delta: Delta{Role: "assistant", Content: &empty}})
		if i == 0 {
			ck.Unenforced = unenforced
		}
		w.data(ck)
	}
	callIDs := make([]map[int]string, g.N)
	us := make([]*runner.Usage, g.N)
	var failure error
	for pc := range pieces {
		if w.failed {
			cancel()
			continue
		}
		if pc.err != nil {
			if failure == nil {
				failure = pc.err
				cancel()
			}
			continue
		}
		var lp *Logprobs
		if len(pc.logprobs) > 0 {
			lp = &Logprobs{Content: pc.logprobs}
		}
		for _, e := range pc.events {
			var d Delta
			switch e.Kind {
			case turn.EventContent:
				t := e.Text
				d.Content = &t
			case turn.EventCallStart:
				if callIDs[pc.choice] == nil {
					callIDs[pc.choice] = map[int]string{}
				}
				cid := newID("call_")
				callIDs[pc.choice][e.Index] = cid
				k := e.Index
				d.ToolCalls = []ToolCall{{Index: &k, ID: cid, Type: "function", Function: FunctionCall{Name: e.Name, Arguments: ""}}}
			case turn.EventCallArgs:
				k := e.Index
				d.ToolCalls = []ToolCall{{Index: &k, Function: FunctionCall{Arguments: e.Text}}}
			default:
				continue
			}
			w.data(chunk(ChunkChoice{Index: pc.choice, Delta: d, Logprobs: lp}))
			lp = nil
		}
		if lp != nil {
			w.data(chunk(ChunkChoice{Index: pc.choice, Logprobs: lp}))
		}
		if pc.done {
			f := pc.finish
			w.data(chunk(ChunkChoice{Index: pc.choice, FinishReason: &f}))
			us[pc.choice] = pc.usage
		}
	}
	if failure != nil && !w.failed {
		w.fail(failure)
		w.data("[DONE]")
		return nil
	}
	if g.IncludeUsage {
		ck := chunk()
		ck.Choices = []ChunkChoice{}
		ck.Usage = ToUsage(us)
		w.data(ck)
	}
	w.data("[DONE]")
	return nil
}
