package turn

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"conform/runner"
	"conform/sampler"
)

// Submitter is the part of *runner.Runner a Driver uses.
type Submitter interface {
	Submit(ctx context.Context, req runner.Request) (<-chan runner.Event, error)
}

// Driver runs the choices of Requests on one model's runner and reads their
// text back through each Turn's parser. It is a plain value: the server
// makes one per model, with its admission and its metrics.
type Driver struct {
	// Runner generates (required).
	Runner Submitter
	// Context is how many tokens one sequence holds, for the budget check.
	Context int
	// Acquire, when set, admits n generations before they are submitted
	// (a server's bounded queue); an error refuses the request as it is.
	// Release gives back admissions, one per choice as it ends.
	Acquire func(n int) error
	Release func(n int)
	// Observer, when set, is told of tokens, finished choices and panics.
	Observer Observer
	// WrapGuide, when set (tests only), wraps every choice's guide: fault
	// injection through a constraint.
	WrapGuide func(runner.Guide) runner.Guide
}

// Request is one API-neutral generation request: a compiled turn, the
// prompts, how many choices of each, the sampling and the limits. Choice i
// generates prompt i/N, so a request of P prompts has P×N choices.
type Request struct {
	// Turn is the compiled turn every choice is generated under.
	Turn *Turn
	// Prompts are the tokenized prompts (at least one, none empty).
	Prompts [][]TokenID
	// N is the number of choices per prompt; 0 means 1.
	N int
	// Sampling are the sampling controls of every choice. Logprobs and
	// TopLogprobs also say what Step.Logprobs carries.
	Sampling sampler.Params
	// Seeded says Sampling.Seed was given: choice i samples with Seed+i,
	// so a request repeats. Otherwise every choice gets a random seed.
	Seeded bool
	// MaxTokens bounds each choice's output tokens; 0 means until the
	// context is full.
	MaxTokens int
	// Stop lists stop sequences.
	Stop []string
	// Start is when the request arrived, for the first-token latency.
	Start time.Time
	// MaxTokensParam and PromptParam name the request fields behind
	// MaxTokens and Prompts, for the budget errors.
	MaxTokensParam, PromptParam string
}

// choices returns the number of choices and of choices per prompt.
func (r *Request) choices() (total, per int) {
	per = max(r.N, 1)
	return len(r.Prompts) * per, per
}

// Step is what one runner event of one choice added to it: the events its
// text made certain (possibly none), the token's logprobs when asked for,
// and, as the choice's last step, its EventFinish last.
type Step struct {
	Choice   int
	Events   []Event
	Logprobs []Logprob
}

// Finish returns the step's finish, or nil when the choice goes on.
func (st Step) Finish() *Finish {
	if n := len(st.Events); n > 0 && st.Events[n-1].Kind == EventFinish {
		return st.Events[n-1].Finish
	}
	return nil
}

// Err returns the error a failed or cancelled choice ended with, else nil.
func (st Step) Err() error {
	if f := st.Finish(); f != nil {
		return f.Err
	}
	return nil
}

// Stream is a request's generation in progress: the steps of all its
// choices, interleaved, in the order each choice made them. Next, Usage and
// Close are for one reader goroutine.
type Stream struct {
	steps  <-chan Step
	cancel context.CancelFunc
	per    int
	usage  []*runner.Usage
}

// Next returns the next step of any choice, and false once every choice
// has ended.
func (s *Stream) Next() (Step, bool) {
	st, ok := <-s.steps
	if f := st.Finish(); ok && f != nil {
		u := f.Usage
		s.usage[st.Choice] = &u
	}
	return st, ok
}

// Choices returns the number of choices.
func (s *Stream) Choices() int { return len(s.usage) }

// Usage returns the request's usage over the choices that finished so far
// (SumUsage).
func (s *Stream) Usage() runner.Usage { return SumUsage(s.usage, s.per) }

// Close cancels the choices still running and waits until they are gone
// (their slots and admissions given back). It is idempotent, and needed
// only when the reader stops before Next returns false.
func (s *Stream) Close() {
	s.cancel()
	for range s.steps {
	}
}

// SumUsage adds up the usage of a request's choices, choice i being a
// generation of prompt i/perPrompt: the prompt and cached tokens of each
// prompt count once (from its first choice that reported), the completion
// and forced tokens and the times of every choice. A nil entry is a choice
// that reported none.
func SumUsage(us []*runner.Usage, perPrompt int) runner.Usage {
	perPrompt = max(perPrompt, 1)
	var sum runner.Usage
	counted := -1 // the prompt last counted
	for i, u := range us {
		if u == nil {
			continue
		}
		if p := i / perPrompt; p != counted {
			counted = p
			sum.PromptTokens += u.PromptTokens
			sum.CachedTokens += u.CachedTokens
		}
		sum.CompletionTokens += u.CompletionTokens
		sum.ForcedTokens += u.ForcedTokens
		sum.ReasoningTokens += u.ReasoningTokens
		sum.ConstraintTime += u.ConstraintTime
		sum.Elapsed = max(sum.Elapsed, u.Elapsed)
	}
	return sum
}

// Generate checks req against its budget (Turn.CheckBudget), admits and
// submits every choice, and returns their stream. Errors before the first
// choice runs are returned as they are: a budget *Error, the Acquire
// error, or the runner's *runner.Error (a prompt too long for the
// context, a bad parameter). Cancelling ctx ends every choice; a reader
// that stops early must Close the stream.
func (d *Driver) Generate(ctx context.Context, req Request) (*Stream, error) {
	if req.Turn == nil || len(req.Prompts) == 0 || d.Runner == nil {
		return nil, &Error{Code: CodeInternal, Msg: "Generate needs a turn, a prompt and a runner"}
	}
	longest := 0
	for _, p := range req.Prompts {
		longest = max(longest, len(p))
	}
	if err := req.Turn.CheckBudget(Budget{MaxTokens: req.MaxTokens, Prompt: longest, Context: d.Context,
		MaxTokensParam: req.MaxTokensParam, PromptParam: req.PromptParam}); err != nil {
		return nil, err
	}
	n, per := req.choices()
	if d.Acquire != nil {
		if err := d.Acquire(n); err != nil {
			return nil, err
		}
	}
	release := func(k int) {
		if d.Release != nil && k > 0 {
			d.Release(k)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	chans := make([]<-chan runner.Event, n)
	guides := make([]runner.Guide, n) // as the turn made them, for the reasoning count
	for i := range n {
		p := req.Sampling
		if req.Seeded {
			p.Seed += uint64(i)
		} else {
			var b [8]byte
			_, _ = rand.Read(b[:])
			p.Seed = binary.BigEndian.Uint64(b[:])
		}
		rr := runner.Request{Prompt: req.Prompts[i/per], Params: p, MaxTokens: req.MaxTokens, Stop: req.Stop}
		if g := req.Turn.NewMatcher(); g != nil {
			rr.Guide, guides[i] = g, g
			if d.WrapGuide != nil {
				rr.Guide = d.WrapGuide(rr.Guide)
			}
		}
		ch, err := d.Runner.Submit(ctx, rr)
		if err != nil {
			cancel()
			release(n - i) // the ones not started; started ones release as they drain
			for k := range i {
				go func() {
					for range chans[k] {
					}
					release(1)
				}()
			}
			return nil, err
		}
		chans[i] = ch
	}
	out := make(chan Step, 4*n)
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Go(func() {
			defer release(1)
			d.follow(ctx, &req, i, ch, guides[i], out)
		})
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return &Stream{steps: out, cancel: cancel, per: per, usage: make([]*runner.Usage, n)}, nil
}

// follow reads one choice's runner events to its end: text through the
// turn's parser, logprobs when asked for, measurements to the observer,
// steps to out. A panic here (a bug in the parser) fails this choice only.
func (d *Driver) follow(ctx context.Context, req *Request, idx int, ch <-chan runner.Event, guide runner.Guide, out chan<- Step) {
	send := func(st Step) bool {
		select {
		case out <- st:
			return true
		case <-ctx.Done():
			return false
		}
	}
	finish := func(f Finish) Step {
		return Step{Choice: idx, Events: []Event{{Kind: EventFinish, Finish: &f}}}
	}
	defer func() {
		if p := recover(); p != nil {
			if d.Observer != nil {
				d.Observer.Panicked()
			}
			send(finish(Finish{Err: &runner.Error{Code: runner.CodePanic, Place: "turn.follow", Msg: fmt.Sprint(p), Stack: string(debug.Stack())}}))
			for range ch {
			}
		}
	}()
	vocab := req.Turn.c.vocab
	p := req.Turn.NewParser()
	var last time.Time
	for ev := range ch {
		if ev.Finish == "" {
			if d.Observer != nil {
				now := time.Now()
				if last.IsZero() {
					d.Observer.FirstToken(now.Sub(req.Start))
				} else {
					d.Observer.NextToken(now.Sub(last))
				}
				last = now
			}
			st := Step{Choice: idx, Events: p.Feed(ev.Text)}
			if req.Sampling.Logprobs {
				st.Logprobs = []Logprob{vocab.logprob(ev.Token, ev.Logprob, ev.Top)}
			}
			if len(st.Events) > 0 || len(st.Logprobs) > 0 {
				if !send(st) {
					return
				}
			}
			continue
		}
		evs := append(p.Feed(ev.Text), p.Close()...)
		f := Finish{Reason: ReasonOf(ev.Finish, p.Calls()), Calls: p.Calls(), StopSequence: ev.StopSequence}
		if ev.Usage != nil {
			ev.Usage.ReasoningTokens = reasoningTokens(guide)
			f.Usage = *ev.Usage
			if d.Observer != nil {
				d.Observer.Finished(*ev.Usage)
			}
		}
		switch ev.Finish {
		case runner.FinishError:
			f.Err = ev.Err
			if f.Err == nil {
				f.Err = &runner.Error{Code: runner.CodeEngine, Msg: "the generation failed"}
			}
		case runner.FinishCancelled:
			f.Err = context.Canceled
			if ev.Err != nil {
				f.Err = ev.Err
			}
		}
		send(Step{Choice: idx, Events: append(evs, finish(f).Events...)})
		return
	}
	// The runner closed the channel without a final event: ctx is done.
	send(finish(Finish{Err: context.Canceled}))
}
