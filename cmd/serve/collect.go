package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// sink writes a request's turn steps in one API's shape: aggregated into
// one JSON body at the end, or streamed as server-sent events as they
// come. collect drives every sink the same way, so the endpoints differ
// only in their wire shapes.
type sink interface {
	// open starts the response once generation has begun, for choices
	// choices (a stream's status and first events).
	open(choices int)
	// step takes one step of one choice.
	step(st turn.Step)
	// gone reports that the response can no longer be written (a stream
	// whose client went away).
	gone() bool
	// fail ends the response after a choice failed: a stream writes the
	// error as its last event and returns nil; a body returns err, which
	// the handler's renderer turns into the status and envelope.
	fail(err error) error
	// close ends the response once every choice finished, with the
	// request's usage (turn.SumUsage over the choices).
	close(u runner.Usage) error
}

// collect is the one loop of every endpoint: it hands the stream's steps
// to sk until every choice has ended, a choice failed (the others are then
// cancelled), or the client went away. The stream is closed when it
// returns, so no generation outlives its response.
func collect(stream *turn.Stream, sk sink) error {
	defer stream.Close()
	sk.open(stream.Choices())
	for {
		st, ok := stream.Next()
		if !ok {
			return sk.close(stream.Usage())
		}
		if sk.gone() {
			return nil
		}
		if err := st.Err(); err != nil {
			stream.Close()
			return sk.fail(err)
		}
		sk.step(st)
	}
}

// compile compiles spec for m, and lists the schema keywords it does not
// enforce in the X-Conform-Unenforced header.
func (s *Server) compile(ctx context.Context, c *gin.Context, m *served, spec turn.Spec) (*turn.Turn, error) {
	t, err := m.turns.Compile(ctx, spec)
	if err != nil {
		return nil, err
	}
	if u := t.Unenforced(); len(u) > 0 {
		c.Header("X-Conform-Unenforced", UnenforcedHeader(u))
	}
	return t, nil
}

// generate runs req on m's runner and writes its steps through sk.
func (s *Server) generate(ctx context.Context, m *served, req turn.Request, sk sink) error {
	stream, err := s.driver(m.Model).Generate(ctx, req)
	if err != nil {
		return err
	}
	return collect(stream, sk)
}

// jsonSink is the part of every aggregated sink that is the same: a
// client that cannot be gone, a failure returned as it is (the renderer
// writes its status and envelope).
type jsonSink struct{}

func (jsonSink) gone() bool           { return false }
func (jsonSink) fail(err error) error { return err }

// streamSink is the part of every streaming sink that is the same: the
// writer, and a failure written as an error event before [DONE].
type streamSink struct {
	w *sse
}

func (s streamSink) gone() bool { return s.w.failed }

func (s streamSink) fail(err error) error {
	s.w.fail(err)
	s.w.data("[DONE]")
	return nil
}

// sse writes server-sent events.
type sse struct {
	c      *gin.Context
	failed bool
}

// newSSE starts an event stream: its headers and the 200 status.
func newSSE(c *gin.Context) *sse {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	return &sse{c: c}
}

// data writes one data event: v as JSON, or a string as it is. After a
// failed write (the client went away) it writes nothing more.
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
	if ae := w.failure(err); ae != nil {
		w.data(envelope(ae))
	}
}

// failure logs a generation that failed after the stream began and returns
// the error for the stream's last event, in whichever API's shape; nil when
// the client went away (nothing failed on our side and nobody is reading).
func (w *sse) failure(err error) *apiError {
	if w.c.Request.Context().Err() != nil {
		requestLogger(w.c).Info("client went away mid-stream", "err", err)
		w.failed = true
		return nil
	}
	ae := toAPIError(err)
	requestLogger(w.c).Error("generation failed mid-stream", append([]any{"status", ae.Status, "code", ae.Code, "err", err}, panicStack(err)...)...)
	return ae
}
