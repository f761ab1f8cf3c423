package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"conform/fsm"
	"conform/grammar"
	"conform/runner"
	"conform/templates"
	"conform/turn"
)

// piece is one step of one choice's generation, as its goroutine reports it.
type piece struct {
	choice   int
	events   []turn.Event
	logprobs []TokenLogprob
	finish   string // the last piece only
	done     bool   // the last piece of its choice
	usage    *runner.Usage
	err      error
}

// job is one request's generations after validation: one prompt per choice.
type job struct {
	model    *Model
	prompts  [][]runner.TokenID // per choice
	gen      genParams
	cons     *fsm.Constraint // nil: unconstrained
	calls    bool            // parse tool calls
	logprobs bool
	start    time.Time
}

// constraintFor builds (or finds in the cache) the constraint of spec for m.
func (s *Server) constraintFor(ctx context.Context, m *Model, spec turn.Spec) (*fsm.Constraint, *turn.Result, error) {
	spec.Format = m.Format
	spec.IsSpecial = m.IsSpecial
	opts := turn.Options{MaxTools: s.cfg.MaxTools} // FromChatRequest checked it first, naming --max-tools
	if s.cfg.PropertyOrder == "any" {
		opts.Grammar.PropertyOrder = grammar.OrderAny
	}
	res, err := turn.Build(spec, opts)
	if err != nil {
		return nil, nil, err
	}
	if res.Node == nil {
		return nil, res, nil
	}
	key := fsm.CacheKey{Constraint: res.Key, Options: res.Options, Vocab: m.Index.Fingerprint()}
	c, err := s.cache.Get(ctx, key, func() (*fsm.Constraint, error) {
		t0 := time.Now()
		// Lazy determinization: the first mask needs only the states
		// its tokens reach; the rest are built as decoding reaches them.
		// ctx bounds this compile only: the cached constraint keeps no
		// context, so it outlives this request.
		c, err := fsm.CompileConstraint(ctx, res.Node, m.Index, fsm.Options{}, fsm.ConstraintOptions{})
		s.metrics.compile.Observe(time.Since(t0).Seconds())
		return c, err
	})
	if err != nil {
		return nil, nil, err
	}
	return c, res, nil
}

// chatPrompt renders and tokenizes the conversation, within lim: the
// template's output is capped at --max-prompt-bytes while it renders, and
// a rendered prompt that cannot fit the context is refused before it is
// tokenized (see promptFits).
func chatPrompt(m *Model, j *chatJob, lim Limits) ([]runner.TokenID, error) {
	lim = lim.withDefaults()
	msgs, err := templates.DecodeJSON(j.Messages)
	if err != nil {
		return nil, err
	}
	var tools templates.Value
	if j.Tools != nil {
		if tools, err = templates.DecodeJSON(j.Tools); err != nil {
			return nil, err
		}
	}
	text, err := m.Template.Render(templates.Vars{Messages: msgs, Tools: tools, AddGenerationPrompt: true, BosToken: m.BOS, EosToken: m.EOS,
		Limits: templates.Limits{MaxOutput: lim.MaxPromptBytes}})
	if err != nil {
		var te *templates.Error
		if errors.As(err, &te) && te.Output {
			return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "prompt_too_large", Param: "messages",
				Msg: fmt.Sprintf("the rendered prompt would be larger than %d bytes (--max-prompt-bytes, %s): %s", lim.MaxPromptBytes, envName("max-prompt-bytes"), te.Msg),
				Err: err}
		}
		return nil, err
	}
	if len(text) > lim.MaxPromptBytes {
		return nil, overLimit("messages", "prompt_too_large", fmt.Sprintf("the rendered prompt is %d bytes", len(text)), lim.MaxPromptBytes, "max-prompt-bytes")
	}
	if err := promptFits(m, len(text), "messages"); err != nil {
		return nil, err
	}
	return m.Tokenize(text)
}

// promptFits refuses a prompt of n bytes that cannot fit the context
// whatever its tokens: it takes at least n/MaxTokenBytes of them. This
// keeps tokenizing (llama.cpp's is superlinear in the special tokens of a
// text) bounded by MaxTokenBytes × the context; a prompt that passes and is
// still too long is refused by the runner once tokenized.
func promptFits(m *Model, n int, param string) error {
	if m.MaxTokenBytes <= 0 || m.Context <= 0 {
		return nil
	}
	if least := (n + m.MaxTokenBytes - 1) / m.MaxTokenBytes; least > m.Context {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: param,
			Msg: fmt.Sprintf("the prompt is %d bytes, at least %d tokens, longer than the context of %d tokens per slot (--ctx-size / --parallel)", n, least, m.Context)}
	}
	return nil
}

// start submits every choice and returns the channel their pieces arrive on
// (closed when all are done). ctx must be cancelled by the caller when it
// stops reading.
func (s *Server) start(ctx context.Context, j *job) (<-chan piece, error) {
	n := len(j.prompts)
	if err := s.acquire(n); err != nil {
		return nil, err
	}
	chans := make([]<-chan runner.Event, n)
	for i := range j.prompts {
		p := j.gen.Params
		if j.gen.SeedSet {
			p.Seed += uint64(i)
		} else {
			var b [8]byte
			_, _ = rand.Read(b[:])
			for _, x := range b {
				p.Seed = p.Seed<<8 | uint64(x)
			}
		}
		req := runner.Request{Prompt: j.prompts[i], Params: p, MaxTokens: j.gen.MaxTokens, Stop: j.gen.Stop}
		if j.cons != nil {
			req.Guide = j.cons.NewMatcher()
			if s.wrapGuide != nil {
				req.Guide = s.wrapGuide(req.Guide)
			}
		}
		ch, err := j.model.Runner.Submit(ctx, req)
		if err != nil {
			s.release(n - i) // the ones not started; started ones release in their goroutine
			for k := 0; k < i; k++ {
				go drain(chans[k], s)
			}
			return nil, err
		}
		chans[i] = ch
	}
	out := make(chan piece, 4*n)
	left := make(chan struct{}, n)
	for i, ch := range chans {
		go func() {
			defer func() { s.release(1); left <- struct{}{} }()
			defer func() {
				if p := recover(); p != nil {
					// A bug in the parser or the event cleaning: this
					// choice fails, the runner's request is cancelled by
					// the caller, and the server goes on.
					s.metrics.panics.Inc()
					err := &runner.Error{Code: runner.CodePanic, Place: "runChoice", Msg: fmt.Sprint(p), Stack: string(debug.Stack())}
					select {
					case out <- piece{choice: i, done: true, err: err}:
					case <-ctx.Done():
					}
					for range ch {
					}
				}
			}()
			s.runChoice(ctx, j, i, ch, out)
		}()
	}
	go func() {
		for range n {
			<-left
		}
		close(out)
	}()
	return out, nil
}

// drain reads a submitted request's events to its end (its context is
// cancelled by the caller) and frees its admission.
func drain(ch <-chan runner.Event, s *Server) {
	for range ch {
	}
	s.release(1)
}

// runChoice follows one generation: text through the tool-call parser,
// metrics, and pieces to out.
func (s *Server) runChoice(ctx context.Context, j *job, idx int, ch <-chan runner.Event, out chan<- piece) {
	m := j.model
	var p *turn.Parser
	if j.calls {
		p, _ = turn.NewParser(m.Format, m.IsSpecial)
	}
	feed := func(text string) []turn.Event {
		if p != nil {
			return cleanEvents(p.Feed(text), m.Format)
		}
		if text == "" {
			return nil
		}
		return cleanEvents([]turn.Event{{Kind: turn.EventContent, Text: text}}, m.Format)
	}
	send := func(pc piece) bool {
		select {
		case out <- pc:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var last time.Time
	for ev := range ch {
		if ev.Finish == "" {
			now := time.Now()
			if last.IsZero() {
				s.metrics.ttft.Observe(now.Sub(j.start).Seconds())
			} else {
				s.metrics.itl.Observe(now.Sub(last).Seconds())
			}
			last = now
			pc := piece{choice: idx, events: feed(ev.Text)}
			if j.logprobs {
				pc.logprobs = []TokenLogprob{tokenLogprob(m, ev)}
			}
			if len(pc.events) > 0 || len(pc.logprobs) > 0 {
				if !send(pc) {
					return
				}
			}
			continue
		}
		evs := feed(ev.Text)
		calls := 0
		if p != nil {
			evs = append(evs, cleanEvents(p.Close(), m.Format)...)
			calls = p.Calls()
		}
		pc := piece{choice: idx, events: evs, done: true, usage: ev.Usage, finish: finishReason(ev.Finish, calls)}
		switch ev.Finish {
		case runner.FinishError:
			pc.err = ev.Err
		case runner.FinishCancelled:
			pc.err = context.Canceled
			if ev.Err != nil {
				pc.err = ev.Err
			}
		}
		if ev.Usage != nil {
			s.metrics.usage(ev.Usage.PromptTokens, ev.Usage.CompletionTokens, ev.Usage.ForcedTokens)
		}
		send(pc)
		return
	}
	send(piece{choice: idx, done: true, err: context.Canceled})
}

// cleanEvents drops special-token markers and stray non-UTF-8 bytes from
// content (they can appear only in unconstrained output).
func cleanEvents(evs []turn.Event, f turn.Format) []turn.Event {
	out := evs[:0]
	for _, e := range evs {
		if e.Kind == turn.EventContent && strings.IndexByte(e.Text, 0xFF) >= 0 {
			for _, mk := range f.Markers() {
				e.Text = strings.ReplaceAll(e.Text, "\xff"+mk, "")
			}
			e.Text = strings.ToValidUTF8(e.Text, "")
			if e.Text == "" {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

func tokenLogprob(m *Model, ev runner.Event) TokenLogprob {
	tok, b := m.TokenString(ev.Token)
	tl := TokenLogprob{Token: tok, Logprob: float64(ev.Logprob), Bytes: b, TopLogprobs: []TopLogprob{}}
	for _, t := range ev.Top {
		ts, tb := m.TokenString(runner.TokenID(t.ID))
		tl.TopLogprobs = append(tl.TopLogprobs, TopLogprob{Token: ts, Logprob: float64(t.Logprob), Bytes: tb})
	}
	return tl
}

// newID returns an id with a prefix and 24 random alphanumerics.
func newID(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b[:])
}
