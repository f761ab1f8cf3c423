package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Outcome is how one request ended, from the client's side.
type Outcome int

// The outcomes. OutcomeComplete and OutcomeLengthValid are answers that
// validated; OutcomeCut is a constrained answer that stopped at max_tokens
// before its value was complete (the server does not yet keep the budget to
// close it); the rest are failures, counted as errors.
const (
	OutcomeComplete    Outcome = iota // finished (stop or tool_calls), validated
	OutcomeLengthValid                // finish_reason "length" with an output that validates (text: any output)
	OutcomeCut                        // finish_reason "length" with an output that does not validate
	OutcomeDisconnect                 // the client went away after the first chunk, as planned
	OutcomeHTTPError                  // a status other than 200
	OutcomeStreamError                // an error event, a malformed or truncated stream, a transport error
	OutcomeInvalid                    // a complete constrained output that does not validate
	OutcomeTimeout                    // the request ran past Config.RequestTimeout
)

func (o Outcome) String() string {
	switch o {
	case OutcomeComplete:
		return "complete"
	case OutcomeLengthValid:
		return "length_valid"
	case OutcomeCut:
		return "cut_by_length"
	case OutcomeDisconnect:
		return "disconnect"
	case OutcomeHTTPError:
		return "http_error"
	case OutcomeStreamError:
		return "stream_error"
	case OutcomeInvalid:
		return "invalid"
	case OutcomeTimeout:
		return "timeout"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// failed reports whether o counts as an error of the run.
func (o Outcome) failed() bool { return o >= OutcomeHTTPError }

// result is one request's outcome, its time to first token (zero when no
// token arrived) and, for failures and cut outputs, what happened.
type result struct {
	kind    Kind
	outcome Outcome
	ttft    time.Duration
	detail  string
}

// disconnectAt says when a disconnecting request cancels: after the first
// chunk of the stream (the role delta, written once the generation is
// admitted: the cancel lands during prefill) or after the first chunk that
// carries output (the cancel lands mid-decode).
type disconnectAt int

const (
	stayConnected disconnectAt = iota
	afterFirstChunk
	afterFirstToken
)

// maxSSELine bounds one line of the stream; a longer line is a stream
// error, not an unbounded read. 1 MiB is far above any chunk of a
// max_tokens ≤ a few thousand answer.
const maxSSELine = 1 << 20

// chunk is the part of a chat.completion.chunk (or of an error event) the
// client reads.
type chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// call is one tool call assembled from its deltas.
type call struct {
	id, name string
	args     strings.Builder
}

// answer accumulates one streamed choice.
type answer struct {
	content    strings.Builder
	calls      map[int]*call
	finish     string
	usage      bool
	completion int
	done       bool // [DONE] seen
}

// runRequest sends one streaming chat completion and classifies its end.
// ctx bounds the request (its deadline is the request timeout); a
// cancellation of ctx itself is reported by the caller, not here.
func (w *workload) runRequest(ctx context.Context, hc *http.Client, cfg *Config, b body, disc disconnectAt) result {
	r := result{kind: b.kind}
	fail := func(o Outcome, format string, args ...any) result {
		r.outcome, r.detail = o, fmt.Sprintf(format, args...)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.outcome, r.detail = OutcomeTimeout, fmt.Sprintf("no end within %s: %s", cfg.RequestTimeout, r.detail)
		}
		return r
	}
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, cfg.BaseURL+"/v1/chat/completions", bytes.NewReader(b.json))
	if err != nil {
		return fail(OutcomeHTTPError, "build request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return fail(OutcomeHTTPError, "POST: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fail(OutcomeHTTPError, "status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fail(OutcomeStreamError, "Content-Type %q, want text/event-stream", ct)
	}
	var a answer
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	chunks := 0
	for !a.done {
		data, err := readEvent(rd)
		if err != nil {
			if err == io.EOF {
				return fail(OutcomeStreamError, "stream ended after %d chunks without [DONE]", chunks)
			}
			return fail(OutcomeStreamError, "after %d chunks: %v", chunks, err)
		}
		if data == "[DONE]" {
			a.done = true
			break
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return fail(OutcomeStreamError, "chunk %d is not JSON: %v: %.200q", chunks, err, data)
		}
		if c.Error != nil {
			code := ""
			if c.Error.Code != nil {
				code = *c.Error.Code
			}
			return fail(OutcomeStreamError, "error event after %d chunks: %s %s: %s", chunks, c.Error.Type, code, c.Error.Message)
		}
		if err := a.add(&c); err != nil {
			return fail(OutcomeStreamError, "chunk %d: %v", chunks, err)
		}
		chunks++
		if r.ttft == 0 && carriesOutput(&c) {
			r.ttft = time.Since(start)
		}
		if disc == afterFirstChunk || (disc == afterFirstToken && r.ttft > 0) {
			cancel()
			r.outcome = OutcomeDisconnect
			return r
		}
	}
	if disc != stayConnected {
		// The answer ended before the planned disconnect point (an empty
		// answer): it is checked like any other.
		r.detail = "ended before the disconnect point"
	}
	return w.check(r, b, cfg, &a)
}

// readEvent returns the data of the next server-sent event (data lines
// joined with "\n"), skipping comments and events without data.
func readEvent(rd *bufio.Reader) (string, error) {
	var data []string
	for {
		line, err := rd.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			var long []byte
			long = append(long, line...)
			for err == bufio.ErrBufferFull && len(long) <= maxSSELine {
				line, err = rd.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > maxSSELine {
				return "", fmt.Errorf("an event line over %d bytes", maxSSELine)
			}
			line = long
		}
		if err != nil {
			if err == io.EOF && len(line) == 0 && len(data) == 0 {
				return "", io.EOF
			}
			if err == io.EOF {
				return "", errors.New("stream ended inside an event")
			}
			return "", err
		}
		s := strings.TrimRight(string(line), "\r\n")
		switch {
		case s == "":
			if len(data) > 0 {
				return strings.Join(data, "\n"), nil
			}
		case strings.HasPrefix(s, ":"):
		case strings.HasPrefix(s, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(s, "data:"), " "))
		}
	}
}

// carriesOutput reports whether c holds generated text or a tool call.
func carriesOutput(c *chunk) bool {
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil && *ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// add folds one chunk into the answer, checking the stream's shape: one
// choice (index 0), tool-call deltas with an index, an id and a name on a
// call's first delta, nothing after the finish but the usage chunk.
func (a *answer) add(c *chunk) error {
	if c.Object != "chat.completion.chunk" {
		return fmt.Errorf("object %q, want chat.completion.chunk", c.Object)
	}
	if c.Usage != nil {
		if a.usage {
			return errors.New("a second usage chunk")
		}
		a.usage, a.completion = true, c.Usage.CompletionTokens
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			return fmt.Errorf("choice index %d, want 0 (n=1)", ch.Index)
		}
		if a.finish != "" {
			return fmt.Errorf("a delta after finish_reason %q", a.finish)
		}
		if ch.Delta.Content != nil {
			a.content.WriteString(*ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index == nil {
				return errors.New("a tool_calls delta without an index")
			}
			if a.calls == nil {
				a.calls = map[int]*call{}
			}
			cl := a.calls[*tc.Index]
			if cl == nil {
				if tc.ID == "" || tc.Function.Name == "" {
					return fmt.Errorf("tool call %d starts without an id or a name", *tc.Index)
				}
				cl = &call{id: tc.ID, name: tc.Function.Name}
				a.calls[*tc.Index] = cl
			}
			cl.args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != nil {
			a.finish = *ch.FinishReason
		}
	}
	return nil
}

// check classifies a stream that reached [DONE]: its shape, then its
// output against the request's schema or tools.
func (w *workload) check(r result, b body, cfg *Config, a *answer) result {
	fail := func(o Outcome, format string, args ...any) result {
		r.outcome, r.detail = o, fmt.Sprintf(format, args...)
		return r
	}
	if !a.usage {
		return fail(OutcomeStreamError, "no usage chunk (stream_options.include_usage was set)")
	}
	if a.completion > cfg.MaxTokens {
		return fail(OutcomeStreamError, "usage.completion_tokens %d above max_tokens %d", a.completion, cfg.MaxTokens)
	}
	var complete bool
	switch a.finish {
	case "stop", "tool_calls":
		complete = true
	case "length":
	case "":
		return fail(OutcomeStreamError, "[DONE] without a finish_reason")
	default:
		return fail(OutcomeStreamError, "finish_reason %q", a.finish)
	}
	var bad error
	switch b.kind {
	case KindJSONSchema:
		if len(a.calls) > 0 {
			bad = fmt.Errorf("%d tool calls in a json_schema answer", len(a.calls))
		} else if err := validateJSON(w.schemas[b.schema], a.content.String()); err != nil {
			bad = fmt.Errorf("content %.300q against schema %d: %v", a.content.String(), b.schema, err)
		}
	case KindTool:
		bad = w.checkCalls(a)
	case KindText:
		if len(a.calls) > 0 {
			bad = fmt.Errorf("%d tool calls in an answer without tools", len(a.calls))
		}
	}
	switch {
	case bad == nil && complete:
		r.outcome = OutcomeComplete
	case bad == nil:
		r.outcome = OutcomeLengthValid
	case complete:
		return fail(OutcomeInvalid, "finish_reason %q: %v", a.finish, bad)
	default:
		return fail(OutcomeCut, "%v", bad)
	}
	return r
}

// checkCalls validates a tool_choice "required" answer: at least one call,
// each to a declared tool, with arguments its parameters accept.
func (w *workload) checkCalls(a *answer) error {
	if len(a.calls) == 0 {
		return fmt.Errorf("no tool call (tool_choice required); content %.200q", a.content.String())
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		cl := a.calls[i]
		sch := w.tools[cl.name]
		if sch == nil {
			return fmt.Errorf("call %d to an undeclared tool %q", i, cl.name)
		}
		if err := validateJSON(sch, cl.args.String()); err != nil {
			return fmt.Errorf("call %d %s arguments %.300q: %v", i, cl.name, cl.args.String(), err)
		}
	}
	return nil
}
