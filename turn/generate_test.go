package turn

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"conform/runner"
	"conform/sampler"
)

// randEngine is a runner.Engine with random logits favouring lowercase
// letters and the vocabulary's words, and EOS likely enough that free text
// ends: under a constraint its output is a random member of the language.
type randEngine struct {
	mu    sync.Mutex
	width int
	eos   int
	rng   *rand.Rand
}

func (e *randEngine) NumVocab() int                    { return e.width }
func (e *randEngine) Decode(runner.Batch) error        { return nil }
func (e *randEngine) RemoveKV(seq, from, to int) error { return nil }

func (e *randEngine) Logits(int) ([]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	row := make([]float32, e.width)
	for t := range row {
		row[t] = float32(e.rng.NormFloat64())
		if t >= 'a' && t <= 'z' || t >= 256 && t < 265 {
			row[t] += 3
		}
	}
	row[e.eos] += 2
	return row, nil
}

// fixture is a runner over randEngine with the test vocabulary, and a
// Compiler for it.
type fixture struct {
	c      *Compiler
	runner *runner.Runner
}

func newFixture(t *testing.T, f Format) *fixture {
	t.Helper()
	c := newCompiler(t, f)
	v := c.Vocab()
	eos := TokenID(v.Len() - 1)
	r, err := runner.New(&randEngine{width: v.Len() + 4, eos: int(eos), rng: rand.New(rand.NewPCG(1, 2))},
		runner.Config{Slots: 2, ContextSize: 512, EOS: []TokenID{eos}, Detokenize: v.Detokenizer(f)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{c: c, runner: r}
}

// observer counts what a Driver reports.
type observer struct {
	first, next, finished, panics, compiled atomic.Int64
	panicOnFirst                            atomic.Bool
}

func (o *observer) Compiled(time.Duration) { o.compiled.Add(1) }
func (o *observer) FirstToken(time.Duration) {
	o.first.Add(1)
	if o.panicOnFirst.Load() {
		panic("injected observer panic")
	}
}
func (o *observer) NextToken(time.Duration) { o.next.Add(1) }
func (o *observer) Finished(runner.Usage)   { o.finished.Add(1) }
func (o *observer) Panicked()               { o.panics.Add(1) }

// admission is a bounded Acquire/Release pair that records what is held.
type admission struct {
	mu         sync.Mutex
	held, most int
	limit      int
}

func (a *admission) acquire(n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held+n > a.limit {
		return errors.New("queue full")
	}
	a.held += n
	a.most = max(a.most, a.held)
	return nil
}

func (a *admission) release(n int) {
	a.mu.Lock()
	a.held -= n
	a.mu.Unlock()
}

func (a *admission) heldNow() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held
}

// waitReleased waits until every admission is given back.
func waitReleased(t *testing.T, a *admission) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); a.heldNow() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d admissions still held", a.heldNow())
		}
	}
}

func bytePrompt(s string) []TokenID {
	out := make([]TokenID, len(s))
	for i := range s {
		out[i] = TokenID(s[i])
	}
	return out
}

// TestGenerateCalls runs two prompts × two choices of a required-calls
// turn and checks the stream: every choice ends once with a finish, its
// calls parse and their arguments are JSON objects of the named tools, the
// steps of a choice arrive in order, logprobs come one per token, the usage
// counts each prompt once, and every admission is given back.
func TestGenerateCalls(t *testing.T) {
	fx := newFixture(t, FormatHermes)
	tn, err := fx.c.Compile(context.Background(), Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: false})
	if err != nil {
		t.Fatal(err)
	}
	obs := &observer{}
	adm := &admission{limit: 8}
	wrapped := atomic.Int64{}
	d := &Driver{Runner: fx.runner, Context: 512, Acquire: adm.acquire, Release: adm.release, Observer: obs,
		WrapGuide: func(g runner.Guide) runner.Guide { wrapped.Add(1); return g }}
	prompts := [][]TokenID{bytePrompt("weather?"), bytePrompt("time please")}
	st, err := d.Generate(context.Background(), Request{Turn: tn, Prompts: prompts, N: 2, Sampling: sampler.Params{Seed: 3, Logprobs: true}, Seeded: true, MaxTokens: 200, Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Choices() != 4 || wrapped.Load() != 4 || adm.heldNow() != 4 {
		t.Fatalf("choices %d, wrapped guides %d, admissions %d; want 4 each", st.Choices(), wrapped.Load(), adm.heldNow())
	}
	msgs := make([]Message, 4)
	tokens := make([]int, 4)
	for {
		step, ok := st.Next()
		if !ok {
			break
		}
		if msgs[step.Choice].Finish != nil {
			t.Fatalf("choice %d: a step after its finish: %+v", step.Choice, step)
		}
		for i, e := range step.Events {
			if e.Kind == EventFinish && i != len(step.Events)-1 {
				t.Errorf("choice %d: finish not last in its step: %+v", step.Choice, step.Events)
			}
			msgs[step.Choice].Add(e)
		}
		tokens[step.Choice] += len(step.Logprobs)
	}
	var sum runner.Usage
	called := 0
	for i, m := range msgs {
		if m.Finish == nil || m.Finish.Err != nil {
			t.Fatalf("choice %d: finish %+v", i, m.Finish)
		}
		if m.Finish.Usage.PromptTokens != len(prompts[i/2]) {
			t.Errorf("choice %d: %d prompt tokens, want %d", i, m.Finish.Usage.PromptTokens, len(prompts[i/2]))
		}
		if tokens[i] != m.Finish.Usage.CompletionTokens {
			t.Errorf("choice %d: %d logprobs for %d tokens", i, tokens[i], m.Finish.Usage.CompletionTokens)
		}
		sum.CompletionTokens += m.Finish.Usage.CompletionTokens
		if m.Finish.Reason == FinishLength {
			continue
		}
		if m.Finish.Reason != FinishToolCalls || len(m.Calls) != 1 || m.Content() != "" {
			t.Errorf("choice %d: reason %q, %d calls, content %q; want one call only", i, m.Finish.Reason, len(m.Calls), m.Content())
			continue
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(m.Calls[0].Arguments), &args); err != nil || (m.Calls[0].Name != "get_weather" && m.Calls[0].Name != "get_time") {
			t.Errorf("choice %d: call %+v: %v", i, m.Calls[0], err)
		}
		called++
	}
	if called == 0 {
		t.Errorf("no choice of 4 completed its call within 200 tokens")
	}
	u := st.Usage()
	if want := len(prompts[0]) + len(prompts[1]); u.PromptTokens != want || u.CompletionTokens != sum.CompletionTokens {
		t.Errorf("Usage() = %+v, want %d prompt and %d completion tokens", u, want, sum.CompletionTokens)
	}
	if obs.finished.Load() != 4 || obs.first.Load() != 4 || obs.panics.Load() != 0 {
		t.Errorf("observer: %d finished, %d first tokens, %d panics; want 4, 4, 0", obs.finished.Load(), obs.first.Load(), obs.panics.Load())
	}
	waitReleased(t, adm)
	if adm.most != 4 {
		t.Errorf("most admissions held at once = %d, want 4", adm.most)
	}
}

// TestGenerateRefusals: a budget too small, a full admission, and a
// runner refusal (a prompt too long) fail Generate itself, holding nothing.
func TestGenerateRefusals(t *testing.T) {
	fx := newFixture(t, FormatHermes)
	tn, err := fx.c.Compile(context.Background(), Spec{Output: Output{Kind: OutputRegex, Regex: "[0-9]{6}"}})
	if err != nil {
		t.Fatal(err)
	}
	adm := &admission{limit: 3}
	d := &Driver{Runner: fx.runner, Context: 512, Acquire: adm.acquire, Release: adm.release}
	var e *Error
	_, err = d.Generate(context.Background(), Request{Turn: tn, Prompts: [][]TokenID{{1}}, MaxTokens: 5, MaxTokensParam: "max_tokens"})
	if !errors.As(err, &e) || e.Code != CodeMaxTokensTooSmall || e.Param != "max_tokens" {
		t.Errorf("max tokens below the minimum: %v, want CodeMaxTokensTooSmall at max_tokens", err)
	}
	if _, err := d.Generate(context.Background(), Request{Turn: tn, Prompts: [][]TokenID{{1}}, N: 4}); err == nil || err.Error() != "queue full" {
		t.Errorf("4 choices over an admission of 3: %v, want the Acquire error", err)
	}
	// The second prompt is refused by the runner after the first was
	// submitted: both admissions come back.
	_, err = d.Generate(context.Background(), Request{Turn: tn, Prompts: [][]TokenID{{1}, make([]TokenID, 600)}})
	var re *runner.Error
	if !errors.As(err, &re) || re.Code != runner.CodePromptTooLong {
		t.Errorf("a prompt over the context: %v, want runner.CodePromptTooLong", err)
	}
	waitReleased(t, adm)
	if _, err := d.Generate(context.Background(), Request{Prompts: [][]TokenID{{1}}}); !errors.As(err, &e) || e.Code != CodeInternal {
		t.Errorf("Generate without a turn: %v, want CodeInternal", err)
	}
}

// TestGenerateCancelAndPanic: closing a stream early ends its choices and
// gives their admissions back; a panic while following a choice fails that
// choice with runner.CodePanic, counted by the observer.
func TestGenerateCancelAndPanic(t *testing.T) {
	fx := newFixture(t, FormatHermes)
	free, err := fx.c.Compile(context.Background(), Spec{})
	if err != nil {
		t.Fatal(err)
	}
	adm := &admission{limit: 4}
	obs := &observer{}
	d := &Driver{Runner: fx.runner, Context: 512, Acquire: adm.acquire, Release: adm.release, Observer: obs}
	eos := TokenID(fx.c.Vocab().Len() - 1)
	noEOS := sampler.Params{LogitBias: map[TokenID]float64{eos: -100}}
	st, err := d.Generate(context.Background(), Request{Turn: free, Prompts: [][]TokenID{{1, 2}}, N: 2, Sampling: noEOS})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Next(); !ok {
		t.Fatal("no first step")
	}
	st.Close()
	st.Close() // idempotent
	waitReleased(t, adm)

	obs.panicOnFirst.Store(true)
	st, err = d.Generate(context.Background(), Request{Turn: free, Prompts: [][]TokenID{{1, 2}}, MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var failure error
	for {
		step, ok := st.Next()
		if !ok {
			break
		}
		if err := step.Err(); err != nil {
			failure = err
		}
	}
	var re *runner.Error
	if !errors.As(failure, &re) || re.Code != runner.CodePanic || !strings.Contains(re.Stack, "goroutine") || obs.panics.Load() != 1 {
		t.Errorf("panic in follow: failure %v, %d panics counted; want runner.CodePanic with a stack, 1", failure, obs.panics.Load())
	}
	waitReleased(t, adm)
}

// drain reads st to its end, closes it, and folds each of its n choices'
// events into a message.
func drain(st *Stream, n int) []Message {
	msgs := make([]Message, n)
	for step, ok := st.Next(); ok; step, ok = st.Next() {
		msgs[step.Choice].Add(step.Events...)
	}
	st.Close()
	return msgs
}
