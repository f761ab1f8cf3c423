package runner

import (
	"context"
	"sync"
	"time"

	"conform/sampler"
)

// FinishReason says why a request ended.
type FinishReason string

// Finish reasons. OpenAI maps them to its two values.
const (
	FinishEOS        FinishReason = "eos"        // the model produced an end-of-sequence token
	FinishStop       FinishReason = "stop"       // a stop sequence appeared in the text
	FinishConstraint FinishReason = "constraint" // the constraint was terminated: the output is complete
	FinishLength     FinishReason = "length"     // Request.MaxTokens were produced
	FinishContext    FinishReason = "context"    // the sequence filled the context
	FinishCancelled  FinishReason = "cancelled"  // the request's context was cancelled
	FinishError      FinishReason = "error"      // Event.Err says what failed
)

// OpenAI returns the OpenAI finish_reason: "stop" for EOS, stop sequences
// and a terminated constraint, "length" for max tokens and a full context,
// and "" for cancellation and errors (which are not a normal finish).
func (f FinishReason) OpenAI() string {
	switch f {
	case FinishEOS, FinishStop, FinishConstraint:
		return "stop"
	case FinishLength, FinishContext:
		return "length"
	}
	return ""
}

// Event is one step of a request's stream. Every output token gives one
// event (Finish empty); the last event has Finish set, carries no token
// (Token is -1) and may carry the rest of the text.
type Event struct {
	// Token is the output token, or -1 in the final event.
	Token TokenID
	// Text is the text released by this event: it may be empty (held back
	// while it could still begin a stop sequence or a UTF-8 character) or
	// hold the text of earlier tokens.
	Text string
	// Forced reports that the constraint forced this token (not sampled).
	Forced bool
	// Logprob is the token's logprob when logprobs were asked for (0 for a
	// forced token, whose probability under the constraint is 1).
	Logprob float32
	// Top holds the most likely alternatives when top_logprobs were asked
	// for (nil for forced tokens).
	Top []sampler.TokenLogprob
	// Finish is set in the final event only.
	Finish FinishReason
	// StopSequence is the stop sequence that ended the request, in the
	// final event of a FinishStop.
	StopSequence string
	// Err is the failure when Finish is FinishError or FinishCancelled.
	Err error
	// Usage is set in the final event only.
	Usage *Usage
}

// Usage counts one request's tokens and time.
type Usage struct {
	PromptTokens     int           // tokens of the prompt
	CachedTokens     int           // prompt tokens reused from a slot's KV cache
	CompletionTokens int           // output tokens (sampled + forced)
	ReasoningTokens  int           // of CompletionTokens, those inside a reasoning block
	ForcedTokens     int           // output tokens forced by the constraint
	ConstraintTime   time.Duration // time in FillMask, Accept and Forced
	Elapsed          time.Duration // from Submit to the final event
}

// outbox decouples the loop from a slow reader: the loop appends events
// without blocking and a per-request goroutine forwards them to the
// request's channel. The channel is closed after the final event, or as
// soon as the request's context is done.
type outbox struct {
	mu    sync.Mutex
	q     []Event
	final bool
	wake  chan struct{}
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

// put queues ev; it never blocks.
func (o *outbox) put(ev Event) {
	o.mu.Lock()
	if o.final {
		o.mu.Unlock()
		return
	}
	o.q = append(o.q, ev)
	if ev.Finish != "" {
		o.final = true
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// forward sends queued events to ch until the final one, then closes ch.
func (o *outbox) forward(ctx context.Context, ch chan<- Event) {
	defer close(ch)
	var batch []Event
	for {
		select {
		case <-o.wake:
		case <-ctx.Done():
			return
		}
		o.mu.Lock()
		batch, o.q = o.q, batch[:0]
		o.mu.Unlock()
		for _, ev := range batch {
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Finish != "" {
				return
			}
		}
	}
}
