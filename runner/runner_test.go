package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"conform/sampler"
)

const (
	testVocab = 40
	testEOS   = TokenID(39)
)

// start builds a runner over a fresh fake engine and runs it until the
// test ends.
func start(t *testing.T, cfg Config) (*Runner, *fakeEngine) {
	t.Helper()
	eng := newFakeEngine(testVocab)
	if cfg.ContextSize == 0 {
		cfg.ContextSize = 256
	}
	if cfg.EOS == nil {
		cfg.EOS = []TokenID{testEOS}
	}
	r, err := New(eng, cfg)
	if err != nil {
		t.Fatalf("New(%+v) = %v", cfg, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return r, eng
}

// result is a request's stream, collected.
type result struct {
	tokens []TokenID
	forced []bool
	text   string
	final  Event
}

func (r result) String() string {
	return fmt.Sprintf("tokens %v text %q finish %s err %v", r.tokens, r.text, r.final.Finish, r.final.Err)
}

func collect(t *testing.T, ch <-chan Event) result {
	t.Helper()
	var res result
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed before the final event; got %v", res)
			}
			res.text += ev.Text
			if ev.Finish != "" {
				res.final = ev
				return res
			}
			res.tokens = append(res.tokens, ev.Token)
			res.forced = append(res.forced, ev.Forced)
		case <-timeout:
			t.Fatalf("no final event after 20s; got %v", res)
		}
	}
}

func submit(t *testing.T, r *Runner, req Request) <-chan Event {
	t.Helper()
	ch, err := r.Submit(context.Background(), req)
	if err != nil {
		t.Fatalf("Submit(%+v) = %v", req, err)
	}
	return ch
}

func prompt(seed, n int) []TokenID {
	p := make([]TokenID, n)
	for i := range p {
		p[i] = TokenID((seed*7 + i*3) % (testVocab - 1))
	}
	return p
}

// batchRequests are requests of varied shapes for the batching tests.
func batchRequests() []Request {
	var reqs []Request
	for i := range 7 {
		reqs = append(reqs, Request{
			Prompt:    prompt(i, 3+i*5),
			Params:    sampler.Params{Seed: uint64(i), Temperature: sampler.Temp(0.9), TopP: 0.95},
			MaxTokens: 6 + i*2,
		})
	}
	return reqs
}

// TestBatchedEqualsAlone checks continuous batching: requests admitted at
// different times into shared batches give exactly the tokens each gives
// alone, since the fake's logits depend only on a sequence's own history.
func TestBatchedEqualsAlone(t *testing.T) {
	reqs := batchRequests()
	want := make([]result, len(reqs))
	for i, req := range reqs {
		r, _ := start(t, Config{Slots: 1})
		want[i] = collect(t, submit(t, r, req))
		if want[i].final.Finish != FinishLength && want[i].final.Finish != FinishEOS {
			t.Fatalf("alone %d: %v, want a normal finish", i, want[i])
		}
	}

	// Staggered admissions, made deterministic: request 0 is submitted
	// first, and each later one from inside the engine, every second decode.
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", parallel), func(t *testing.T) { testBatched(t, reqs, want, parallel) })
	}
}

func testBatched(t *testing.T, reqs []Request, want []result, parallel bool) {
	r, eng := start(t, Config{Slots: 3, PrefillChunk: 4, BatchSize: 9, ParallelSampling: parallel})
	type sub struct {
		i  int
		ch <-chan Event
	}
	subs := make(chan sub, len(reqs))
	next := 1
	eng.onDecode = func(n int) {
		if n%2 == 0 && next < len(reqs) {
			ch, err := r.Submit(context.Background(), reqs[next])
			if err != nil {
				t.Errorf("Submit #%d = %v", next, err)
				return
			}
			subs <- sub{next, ch}
			next++
		}
	}
	subs <- sub{0, submit(t, r, reqs[0])}
	got := make([]result, len(reqs))
	for range reqs {
		select {
		case s := <-subs:
			got[s.i] = collect(t, s.ch)
		case <-time.After(20 * time.Second):
			t.Fatalf("not every request was submitted (the runner went idle?)")
		}
	}
	for i := range reqs {
		if !slices.Equal(got[i].tokens, want[i].tokens) || got[i].final.Finish != want[i].final.Finish {
			t.Errorf("request %d batched: %v\nwant (alone): %v", i, got[i], want[i])
		}
	}

	batches, _ := eng.snapshot()
	multi, mixed := 0, 0
	for _, b := range batches {
		if b.Len() > 9 {
			t.Errorf("batch of %d tokens, want at most BatchSize 9", b.Len())
		}
		seqs := map[int]int{}
		for _, s := range b.Seq {
			seqs[s]++
		}
		// llama.cpp splits a batch whose sequences are out of order into
		// more ubatches (see step): each sequence's tokens together, in
		// sequence order.
		if !slices.IsSorted(b.Seq) {
			t.Errorf("batch sequences %v, want them in order", b.Seq)
		}
		if len(seqs) > 1 {
			multi++
		}
		hasDecode, hasChunk := false, false
		for _, n := range seqs {
			if n > 4 {
				t.Errorf("one slot put %d tokens in a batch, want at most PrefillChunk 4", n)
			}
			hasDecode = hasDecode || n == 1
			hasChunk = hasChunk || n > 1
		}
		if hasDecode && hasChunk {
			mixed++
		}
	}
	if multi == 0 || mixed == 0 {
		t.Errorf("%d batches: %d with several sequences, %d mixing a prompt chunk with decodes; want both > 0", len(batches), multi, mixed)
	}
	st := r.Stats()
	wantOut := 0
	for _, w := range want {
		wantOut += len(w.tokens)
	}
	if st.Sampled != int64(wantOut) || st.Forced != 0 || st.Requests != int64(len(reqs)) {
		t.Errorf("Stats() = %+v, want %d sampled, 0 forced, %d requests", st, wantOut, len(reqs))
	}
	if st.TokensPerSecond() <= 0 || st.MeanStepTime() <= 0 {
		t.Errorf("Stats: TokensPerSecond %v, MeanStepTime %v, want both > 0", st.TokensPerSecond(), st.MeanStepTime())
	}
}

func TestSeeds(t *testing.T) {
	r, _ := start(t, Config{Slots: 2})
	req := Request{Prompt: prompt(1, 5), Params: sampler.Params{Seed: 5}, MaxTokens: 30}
	a := collect(t, submit(t, r, req))
	b := collect(t, submit(t, r, req))
	req.Params.Seed = 6
	c := collect(t, submit(t, r, req))
	if !slices.Equal(a.tokens, b.tokens) {
		t.Errorf("same seed twice: %v and %v, want equal", a.tokens, b.tokens)
	}
	if slices.Equal(a.tokens, c.tokens) {
		t.Errorf("seeds 5 and 6 both gave %v, want different", a.tokens)
	}
}

func TestMaxTokensAndContext(t *testing.T) {
	r, _ := start(t, Config{Slots: 2, ContextSize: 20})
	// Greedy with EOS banned, so that only the limits can end these.
	p := sampler.Params{Temperature: sampler.Temp(0), LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}
	tests := []struct {
		name   string
		req    Request
		n      int
		finish FinishReason
	}{
		{"max tokens", Request{Prompt: prompt(2, 5), Params: p, MaxTokens: 5}, 5, FinishLength},
		{"max tokens 1", Request{Prompt: prompt(2, 5), Params: p, MaxTokens: 1}, 1, FinishLength},
		{"context end", Request{Prompt: prompt(3, 12), Params: p}, 8, FinishContext},
		{"context before max", Request{Prompt: prompt(3, 12), Params: p, MaxTokens: 50}, 8, FinishContext},
		{"prompt fills all but one", Request{Prompt: prompt(4, 19), Params: p}, 1, FinishContext},
	}
	for _, tt := range tests {
		res := collect(t, submit(t, r, tt.req))
		if len(res.tokens) != tt.n || res.final.Finish != tt.finish {
			t.Errorf("%s: %v, want %d tokens and finish %s", tt.name, res, tt.n, tt.finish)
		}
		if u := res.final.Usage; u == nil || u.CompletionTokens != tt.n || u.PromptTokens != len(tt.req.Prompt) {
			t.Errorf("%s: Usage %+v, want %d completion and %d prompt tokens", tt.name, res.final.Usage, tt.n, len(tt.req.Prompt))
		}
	}
}

func TestEOS(t *testing.T) {
	r, _ := start(t, Config{Slots: 1})
	// A bias that makes EOS the greedy choice at once.
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Params: sampler.Params{Temperature: sampler.Temp(0), LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): 100}}}))
	if len(res.tokens) != 0 || res.final.Finish != FinishEOS || res.final.Finish.OpenAI() != "stop" {
		t.Errorf("EOS-biased request: %v, want no tokens and finish eos", res)
	}
}

func TestStopSequences(t *testing.T) {
	cfg := Config{Slots: 2, Detokenize: letters}
	r, _ := start(t, cfg)
	base := Request{Prompt: prompt(5, 4), Params: sampler.Params{Seed: 3, LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}, MaxTokens: 40}
	ref := collect(t, submit(t, r, base))
	full := ref.text
	if len(full) < 12 {
		t.Fatalf("reference text %q too short", full)
	}
	// Byte offsets of token boundaries, to place stops across them.
	var bounds []int
	n := 0
	for _, tok := range ref.tokens {
		n += len(letters(tok))
		bounds = append(bounds, n)
	}
	for _, k := range []int{2, 5, 9} {
		at := bounds[k] - 1 // the stop starts in token k and runs into token k+1
		stop := full[at : at+3]
		req := base
		req.Stop = []string{"zzzzzz", stop}
		res := collect(t, submit(t, r, req))
		want := full[:strings.Index(full, stop)]
		if res.text != want || res.final.Finish != FinishStop || res.final.StopSequence != stop {
			t.Errorf("Stop %q: text %q finish %s (sequence %q), want %q and stop by %q", stop, res.text, res.final.Finish, res.final.StopSequence, want, stop)
		}
	}
}

func TestTextState(t *testing.T) {
	type step struct {
		piece   string
		release string
		stopped bool
	}
	tests := []struct {
		name  string
		stops []string
		steps []step
		flush string
		match string // the stop sequence matched
	}{
		{"no stops", nil, []step{{"ab", "ab", false}, {"c", "c", false}}, "", ""},
		{"stop inside a piece", []string{"END"}, []step{{"abENDcd", "ab", true}}, "", "END"},
		{"stop across pieces", []string{"END"}, []step{{"abE", "ab", false}, {"N", "", false}, {"Dx", "", true}}, "", "END"},
		{"false start released", []string{"END"}, []step{{"abE", "ab", false}, {"Nx", "ENx", false}}, "", ""},
		{"held at the end is flushed", []string{"END"}, []step{{"abEN", "ab", false}}, "EN", ""},
		{"earliest of two stops", []string{"cd", "bc"}, []step{{"abcd", "a", true}}, "", "bc"},
		{"UTF-8 split", nil, []step{{"a\xc3", "a", false}, {"\xa9b", "\u00e9b", false}}, "", ""},
		{"UTF-8 three bytes", nil, []step{{"\xe2\x82", "", false}, {"\xac", "\u20ac", false}}, "", ""},
		{"invalid byte not held", nil, []step{{"a\xff", "a\xff", false}}, "", ""},
	}
	for _, tt := range tests {
		var ts textState
		ts.reset(tt.stops)
		for i, s := range tt.steps {
			rel, stopped := ts.push([]byte(s.piece))
			if rel != s.release || stopped != s.stopped {
				t.Errorf("%s: push #%d (%q) = %q, %v, want %q, %v", tt.name, i, s.piece, rel, stopped, s.release, s.stopped)
			}
		}
		if ts.matched != tt.match {
			t.Errorf("%s: matched %q, want %q", tt.name, ts.matched, tt.match)
		}
		if got := ts.flush(); got != tt.flush {
			t.Errorf("%s: flush() = %q, want %q", tt.name, got, tt.flush)
		}
	}
}

func TestPromptErrorsLeakNoSlot(t *testing.T) {
	r, _ := start(t, Config{Slots: 1, ContextSize: 10})
	tests := []struct {
		name string
		req  Request
		code ErrorCode
	}{
		{"too long", Request{Prompt: prompt(1, 10)}, CodePromptTooLong},
		{"far too long", Request{Prompt: prompt(1, 100)}, CodePromptTooLong},
		{"empty", Request{}, CodeInvalidRequest},
		{"token outside vocab", Request{Prompt: []TokenID{1, testVocab}}, CodeInvalidRequest},
		{"bad params", Request{Prompt: prompt(1, 2), Params: sampler.Params{TopP: 2}}, CodeInvalidRequest},
		{"negative max tokens", Request{Prompt: prompt(1, 2), MaxTokens: -1}, CodeInvalidRequest},
		{"stop without detokenizer", Request{Prompt: prompt(1, 2), Stop: []string{"x"}}, CodeInvalidRequest},
	}
	for _, tt := range tests {
		ch, err := r.Submit(context.Background(), tt.req)
		if ch != nil || !errors.Is(err, &Error{Code: tt.code}) {
			t.Errorf("%s: Submit = %v, %v, want nil and code %v", tt.name, ch, err, tt.code)
		}
	}
	// The only slot is still free: a valid request completes.
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 9), MaxTokens: 1}))
	if len(res.tokens) != 1 || res.final.Err != nil {
		t.Errorf("valid request after refusals: %v, want one token", res)
	}
}

func TestCancelFreesSlot(t *testing.T) {
	r, eng := start(t, Config{Slots: 1, ContextSize: 100000})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := r.Submit(ctx, Request{Prompt: prompt(1, 4), Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if ev := <-ch; ev.Finish != "" {
			t.Fatalf("unending request finished early: %+v", ev)
		}
	}
	cancel()
	for range ch { // drains, then sees the close
	}
	// The slot is free: another request runs to its end on the single slot.
	res := collect(t, submit(t, r, Request{Prompt: prompt(2, 4), MaxTokens: 3, Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}}))
	if len(res.tokens) != 3 || res.final.Finish != FinishLength {
		t.Fatalf("request after a cancel: %v, want 3 tokens", res)
	}
	_, removed := eng.snapshot()
	if !slices.Contains(removed, [3]int{0, 0, -1}) {
		t.Errorf("RemoveKV calls %v, want the cancelled sequence's cells removed (0, 0, -1)", removed)
	}
	if u := res.final.Usage; u.CachedTokens != 0 {
		t.Errorf("request after a cancel reused %d cached tokens, want 0 (the cache was dropped)", u.CachedTokens)
	}
	if st := r.Stats(); st.Requests != 2 {
		t.Errorf("Stats().Requests = %d, want 2", st.Requests)
	}
}

func TestPrefixReuse(t *testing.T) {
	r, eng := start(t, Config{Slots: 1})
	p := sampler.Params{Seed: 1, LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}
	first := collect(t, submit(t, r, Request{Prompt: prompt(1, 12), Params: p, MaxTokens: 4}))
	// Extend the prompt with a token other than the first one generated.
	ext := append(prompt(1, 12), (first.tokens[0]+1)%testEOS, 2, 3)
	second := collect(t, submit(t, r, Request{Prompt: ext, Params: p, MaxTokens: 5}))
	if u := second.final.Usage; u.CachedTokens != 12 {
		t.Errorf("second request reused %d cached tokens, want 12", u.CachedTokens)
	}
	_, removed := eng.snapshot()
	if !slices.Contains(removed, [3]int{0, 12, -1}) {
		t.Errorf("RemoveKV calls %v, want (0, 12, -1) trimming the old continuation", removed)
	}
	// Same output as on a fresh runner.
	fresh, _ := start(t, Config{Slots: 1})
	want := collect(t, submit(t, fresh, Request{Prompt: ext, Params: p, MaxTokens: 5}))
	if !slices.Equal(second.tokens, want.tokens) {
		t.Errorf("with prefix reuse: %v, on a fresh runner: %v", second.tokens, want.tokens)
	}
	// A repeated prompt reuses all but its last token.
	third := collect(t, submit(t, r, Request{Prompt: ext, Params: p, MaxTokens: 5}))
	if u := third.final.Usage; u.CachedTokens != len(ext)-1 || !slices.Equal(third.tokens, want.tokens) {
		t.Errorf("repeated prompt: cached %d, tokens %v; want %d and %v", u.CachedTokens, third.tokens, len(ext)-1, want.tokens)
	}
	if st := r.Stats(); st.ReusedTokens != int64(12+len(ext)-1) {
		t.Errorf("Stats().ReusedTokens = %d, want %d", st.ReusedTokens, 12+len(ext)-1)
	}
}

func TestForcedTokens(t *testing.T) {
	steps := func() [][]TokenID {
		return [][]TokenID{{5}, {6}, {7}, {1, 2, 3}, {8}, {9}, {1, 2}, {10}}
	}
	for _, maxForced := range []int{32, 2, 1} {
		r, eng := start(t, Config{Slots: 1, MaxForced: maxForced})
		c := newScript(testEOS, true, steps()...)
		res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Params: sampler.Params{Seed: 2}, Guide: c}))
		if res.final.Finish != FinishConstraint || res.final.Finish.OpenAI() != "stop" {
			t.Fatalf("MaxForced %d: %v, want finish constraint", maxForced, res)
		}
		if len(res.tokens) != 8 || res.tokens[0] != 5 || res.tokens[4] != 8 || res.tokens[7] != 10 {
			t.Fatalf("MaxForced %d: tokens %v, want 5 6 7 x 8 9 y 10", maxForced, res.tokens)
		}
		wantForced := []bool{true, true, true, false, true, true, false, true}
		if !slices.Equal(res.forced, wantForced) {
			t.Errorf("MaxForced %d: forced flags %v, want %v", maxForced, res.forced, wantForced)
		}
		if !slices.Equal(c.accepted, res.tokens) {
			t.Errorf("MaxForced %d: constraint accepted %v, output %v", maxForced, c.accepted, res.tokens)
		}
		if u := res.final.Usage; u.ForcedTokens != 6 || u.CompletionTokens != 8 {
			t.Errorf("MaxForced %d: Usage %+v, want 6 forced of 8", maxForced, u)
		}
		st := r.Stats()
		if st.Forced != 6 || st.Sampled != 2 || st.ForcedShare() != 0.75 {
			t.Errorf("MaxForced %d: Stats forced %d sampled %d share %v, want 6, 2, 0.75", maxForced, st.Forced, st.Sampled, st.ForcedShare())
		}
		batches, _ := eng.snapshot()
		if maxForced == 32 {
			// Jump-forward: the prompt and 5 6 7 in one decode, then x 8 9 in one.
			want := [][]TokenID{append(prompt(1, 3), 5, 6, 7), {res.tokens[3], 8, 9}}
			if len(batches) != 2 || !slices.Equal(batches[0].Tokens, want[0]) || !slices.Equal(batches[1].Tokens, want[1]) {
				t.Errorf("decoded batches %v, want %v", batchTokens(batches), want)
			}
			for _, b := range batches {
				if b.NumLogits() != 1 || !b.Logits[b.Len()-1] {
					t.Errorf("batch %v wants logits at %v, want only the last entry", b.Tokens, b.Logits)
				}
			}
		}
	}
}

func batchTokens(bs []Batch) [][]TokenID {
	var out [][]TokenID
	for _, b := range bs {
		out = append(out, b.Tokens)
	}
	return out
}

// TestConstraintHonoured runs random scripts: every output token is one
// the script allowed at its step, and an accepting, non-terminating script
// ends with EOS.
func TestConstraintHonoured(t *testing.T) {
	r, _ := start(t, Config{Slots: 3, ParallelSampling: true})
	var chans []<-chan Event
	var scripts []*scriptGuide
	for i := range 12 {
		var steps [][]TokenID
		for j := range 3 + i%5 {
			set := []TokenID{TokenID((i*5 + j*11) % 30)}
			for k := range (i + j) % 4 {
				set = append(set, TokenID((i*3+j*7+k*13+1)%30))
			}
			steps = append(steps, set)
		}
		c := newScript(testEOS, i%2 == 0, steps...)
		scripts = append(scripts, c)
		chans = append(chans, submit(t, r, Request{Prompt: prompt(i, 2+i), Params: sampler.Params{Seed: uint64(i), TopK: 3}, Guide: c, MaxTokens: 50}))
	}
	for i, ch := range chans {
		res := collect(t, ch)
		c := scripts[i]
		if res.final.Err != nil {
			t.Errorf("script %d: %v", i, res)
			continue
		}
		if len(res.tokens) != len(c.steps) {
			t.Errorf("script %d: %d tokens for %d steps: %v", i, len(res.tokens), len(c.steps), res)
		}
		for j, tok := range res.tokens {
			if j < len(c.steps) && !slices.Contains(c.steps[j], tok) {
				t.Errorf("script %d: token %d at step %d not in %v", i, tok, j, c.steps[j])
			}
		}
		want := FinishEOS
		if c.terminate {
			want = FinishConstraint
		}
		if res.final.Finish != want {
			t.Errorf("script %d: finish %s, want %s", i, res.final.Finish, want)
		}
	}
}

func TestConstraintErrors(t *testing.T) {
	tests := []struct {
		name  string
		c     func() *scriptGuide
		place string
	}{
		{"FillMask fails", func() *scriptGuide {
			c := newScript(testEOS, true, []TokenID{1, 2}, []TokenID{3, 4}, []TokenID{5, 6})
			c.failAt = 1
			return c
		}, "FillMask"},
		{"empty mask", func() *scriptGuide {
			return newScript(testEOS, true, []TokenID{1, 2}, []TokenID{}, []TokenID{5, 6})
		}, "FillMask"},
		{"mask and Accept disagree", func() *scriptGuide {
			c := newScript(testEOS, true, []TokenID{1, 2}, []TokenID{3, 5}, []TokenID{5, 6})
			c.lieAt = 1
			return c
		}, "Accept"},
	}
	for _, tt := range tests {
		r, eng := start(t, Config{Slots: 1})
		res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: tt.c()}))
		var e *Error
		if res.final.Finish != FinishError || !errors.As(res.final.Err, &e) || e.Code != CodeConstraint || e.Place != tt.place {
			t.Errorf("%s: %v, want a %v error at %s", tt.name, res, CodeConstraint, tt.place)
		}
		if len(res.tokens) != 1 {
			t.Errorf("%s: %d tokens before the error, want 1", tt.name, len(res.tokens))
		}
		_, removed := eng.snapshot()
		if !slices.Contains(removed, [3]int{0, 0, -1}) {
			t.Errorf("%s: RemoveKV calls %v, want the failed sequence dropped", tt.name, removed)
		}
		// The slot is free again.
		if res := collect(t, submit(t, r, Request{Prompt: prompt(2, 3), MaxTokens: 2})); len(res.tokens) != 2 {
			t.Errorf("%s: next request: %v, want 2 tokens", tt.name, res)
		}
	}
}

func TestDecodeError(t *testing.T) {
	r, eng := start(t, Config{Slots: 2})
	boom := errors.New("kv cache full")
	eng.mu.Lock()
	calls := 0
	eng.failDecode = func(b Batch) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	}
	eng.mu.Unlock()
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), MaxTokens: 10, Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}}))
	var e *Error
	if res.final.Finish != FinishError || !errors.As(res.final.Err, &e) || e.Code != CodeEngine || !errors.Is(res.final.Err, boom) {
		t.Errorf("request over a failing decode: %v, want an engine error wrapping %v", res, boom)
	}
	if len(res.tokens) != 2 {
		t.Errorf("%d tokens before the failing decode, want 2", len(res.tokens))
	}
}

func TestShutdown(t *testing.T) {
	eng := newFakeEngine(testVocab)
	r, err := New(eng, Config{Slots: 1, ContextSize: 100000, EOS: []TokenID{testEOS}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	forever := Request{Prompt: prompt(1, 3), Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}}
	running := submit(t, r, forever)
	waiting := submit(t, r, forever)
	<-running
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	for _, ch := range []<-chan Event{running, waiting} {
		res := collect(t, ch)
		if !errors.Is(res.final.Err, &Error{Code: CodeClosed}) {
			t.Errorf("request at shutdown: %v, want a CodeClosed error", res)
		}
	}
	if _, err := r.Submit(context.Background(), forever); !errors.Is(err, &Error{Code: CodeClosed}) {
		t.Errorf("Submit after shutdown = %v, want CodeClosed", err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, &Error{Code: CodeClosed}) {
		t.Errorf("second Run = %v, want CodeClosed", err)
	}
}

func TestNewConfig(t *testing.T) {
	eng := newFakeEngine(testVocab)
	for _, cfg := range []Config{{}, {ContextSize: 1}, {ContextSize: 10, Slots: -1}, {ContextSize: 10, BatchSize: -2}} {
		if _, err := New(eng, cfg); !errors.Is(err, &Error{Code: CodeInvalidConfig}) {
			t.Errorf("New(%+v) = %v, want CodeInvalidConfig", cfg, err)
		}
	}
	if _, err := New(nil, Config{ContextSize: 10}); err == nil {
		t.Errorf("New(nil engine) = nil error")
	}
}

func TestLogprobEvents(t *testing.T) {
	r, _ := start(t, Config{Slots: 1})
	c := newScript(testEOS, true, []TokenID{4}, []TokenID{1, 2, 3}, []TokenID{7, 8})
	ch := submit(t, r, Request{Prompt: prompt(1, 3), Params: sampler.Params{TopLogprobs: 3, Seed: 1}, Guide: c})
	var evs []Event
	for ev := range ch {
		evs = append(evs, ev)
	}
	if len(evs) != 4 || evs[3].Finish != FinishConstraint {
		t.Fatalf("events %+v, want 3 tokens and a final constraint finish", evs)
	}
	if !evs[0].Forced || evs[0].Top != nil || evs[0].Logprob != 0 {
		t.Errorf("forced event %+v, want Forced with no logprobs", evs[0])
	}
	for _, ev := range evs[1:3] {
		if ev.Forced || len(ev.Top) == 0 || ev.Logprob >= 0 {
			t.Errorf("sampled event %+v, want logprobs", ev)
		}
		for _, tl := range ev.Top {
			if !slices.Contains([]TokenID{1, 2, 3, 7, 8}, TokenID(tl.ID)) {
				t.Errorf("top logprob token %d was not allowed", tl.ID)
			}
		}
	}
	if len(evs[1].Top) != 3 || len(evs[2].Top) != 2 {
		t.Errorf("top lists %v and %v, want 3 and 2 entries (the allowed sets)", evs[1].Top, evs[2].Top)
	}
}

func TestLogitsError(t *testing.T) {
	r, eng := start(t, Config{Slots: 2})
	boom := errors.New("no logits")
	eng.mu.Lock()
	calls := 0
	eng.failLogits = func(i int) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	}
	eng.mu.Unlock()
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), MaxTokens: 10, Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}}))
	var e *Error
	if res.final.Finish != FinishError || !errors.As(res.final.Err, &e) || e.Code != CodeEngine || e.Place != "Logits" || !errors.Is(res.final.Err, boom) {
		t.Errorf("request over failing logits: %v, want an engine error at Logits wrapping %v", res, boom)
	}
	if len(res.tokens) != 2 {
		t.Errorf("%d tokens before the failing logits, want 2", len(res.tokens))
	}
	// The slot is free and its KV dropped: the next request runs normally.
	if res := collect(t, submit(t, r, Request{Prompt: prompt(2, 3), MaxTokens: 2})); len(res.tokens) != 2 {
		t.Errorf("next request: %v, want 2 tokens", res)
	}
}

// TestParallelFinish checks that a request ending during the parallel
// phase of a step has its KV cells dropped and its slot freed before its
// final event arrives, while its neighbour runs on.
func TestParallelFinish(t *testing.T) {
	r, eng := start(t, Config{Slots: 2, ParallelSampling: true})
	bad := newScript(testEOS, true, []TokenID{1, 2}, []TokenID{3, 4}, []TokenID{5, 6})
	bad.failAt = 2
	good := Request{Prompt: prompt(3, 3), MaxTokens: 12, Params: sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}}
	gch := submit(t, r, good)
	bch := submit(t, r, Request{Prompt: prompt(4, 3), Guide: bad})
	res := collect(t, bch)
	if !errors.Is(res.final.Err, &Error{Code: CodeConstraint}) || len(res.tokens) != 2 {
		t.Fatalf("failing request: %v, want 2 tokens then a constraint error", res)
	}
	_, removed := eng.snapshot()
	if !slices.ContainsFunc(removed, func(x [3]int) bool { return x[1] == 0 && x[2] == -1 }) {
		t.Errorf("RemoveKV calls %v when the final event arrived, want the failed sequence dropped", removed)
	}
	if g := collect(t, gch); len(g.tokens) != 12 || g.final.Finish != FinishLength {
		t.Errorf("neighbour request: %v, want 12 tokens", g)
	}
}

// TestFullyForced: a constraint that admits exactly one output finishes at
// admission, every token forced, without a single decode.
func TestFullyForced(t *testing.T) {
	r, eng := start(t, Config{Slots: 1, Detokenize: letters})
	c := newScript(testEOS, true, []TokenID{7}, []TokenID{4}, []TokenID{11}, []TokenID{11}, []TokenID{14})
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: c}))
	if res.text != "hello" || res.final.Finish != FinishConstraint || !slices.Equal(res.forced, []bool{true, true, true, true, true}) {
		t.Errorf("fully forced request: %v forced %v, want \"hello\", all forced, finish constraint", res, res.forced)
	}
	if batches, _ := eng.snapshot(); len(batches) != 0 {
		t.Errorf("%d decodes for a fully forced output, want 0", len(batches))
	}
	// MaxTokens cuts a forced run like any other.
	c = newScript(testEOS, true, []TokenID{7}, []TokenID{4}, []TokenID{11}, []TokenID{11}, []TokenID{14})
	res = collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: c, MaxTokens: 2}))
	if res.text != "he" || res.final.Finish != FinishLength {
		t.Errorf("forced run with MaxTokens 2: %v, want \"he\" and finish length", res)
	}
}

// TestNoPartialRemoval: with a cache that can only drop whole sequences, a
// prompt sharing a prefix with the slot's cache starts over instead of
// failing, and gives the same tokens.
func TestNoPartialRemoval(t *testing.T) {
	r, eng := start(t, Config{Slots: 1})
	eng.mu.Lock()
	eng.noPartialRemove = true
	eng.mu.Unlock()
	p := sampler.Params{Seed: 1, LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}
	collect(t, submit(t, r, Request{Prompt: prompt(1, 12), Params: p, MaxTokens: 4}))
	ext := append(prompt(1, 12), 30, 2, 3)
	got := collect(t, submit(t, r, Request{Prompt: ext, Params: p, MaxTokens: 5}))
	fresh, _ := start(t, Config{Slots: 1})
	want := collect(t, submit(t, fresh, Request{Prompt: ext, Params: p, MaxTokens: 5}))
	if got.final.Err != nil || !slices.Equal(got.tokens, want.tokens) {
		t.Errorf("after a refused suffix removal: %v, want %v", got, want)
	}
	if u := got.final.Usage; u.CachedTokens != 0 {
		t.Errorf("CachedTokens = %d, want 0 (the sequence started over)", u.CachedTokens)
	}
	if st := r.Stats(); st.ReusedTokens != 0 {
		t.Errorf("Stats().ReusedTokens = %d, want 0", st.ReusedTokens)
	}
}
