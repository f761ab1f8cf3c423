package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"conform/sampler"
)

// Defaults for the zero fields of Config.
const (
	// DefaultSlots is the number of parallel sequences: enough to batch
	// decodes, small enough for a consumer GPU's KV cache.
	DefaultSlots = 4
	// DefaultBatchSize is llama.cpp's default n_batch.
	DefaultBatchSize = 512
	// DefaultPrefillChunk bounds one slot's tokens per step, so that a long
	// prompt does not stall the running decodes for a whole prefill.
	DefaultPrefillChunk = 256
	// DefaultMaxForced bounds one jump-forward; schemas rarely force more
	// than a key name and its punctuation at once.
	DefaultMaxForced = 32
)

// Config sets up a Runner. The zero value of every field but ContextSize
// means its default.
type Config struct {
	// Slots is the number of sequences decoded together; slot i uses KV
	// sequence id i.
	Slots int
	// ContextSize is the most tokens (prompt plus output) one sequence may
	// hold. A prompt must be shorter, to leave room for one output token.
	ContextSize int
	// BatchSize is the most tokens in one Decode.
	BatchSize int
	// PrefillChunk is the most tokens one slot puts in one Decode.
	PrefillChunk int
	// MaxForced is the most forced tokens taken in one jump-forward.
	MaxForced int
	// NoJumpForward turns jump-forward off: a token the guide forces is
	// sampled from a one-token mask in a step of its own, like any other.
	// It is for measuring what jump-forward saves (bench/e2e -no-jump).
	NoJumpForward bool
	// EOS lists the end-of-sequence tokens (a model may have several).
	EOS []TokenID
	// Detokenize returns the raw bytes of a token, for text events and stop
	// sequences. nil means no text (and no stop sequences). With
	// ParallelSampling it must be safe for concurrent use.
	Detokenize func(TokenID) []byte
	// ParallelSampling handles the slots' logits (mask, sample, accept)
	// concurrently, one goroutine per slot, instead of one after the other
	// in the loop goroutine. It uses the same CPU time (BenchmarkGenerate:
	// 2.0 s user either way) and can only shorten a step on a machine with
	// idle cores; on the shared 2-core development machine it measured
	// slower in wall time, so it is off by default. Guides and
	// Detokenize must then be safe to use beside other requests' (fsm
	// matchers of one fsm.Constraint are).
	ParallelSampling bool
	// OverlapMasks fills each constrained slot's next mask on another
	// goroutine while the engine decodes the batch (the mask of a step
	// depends only on the tokens accepted before it, never on the
	// logits), so a step costs max(decode, masks) + sampling instead of
	// their sum. The mask is applied when the logits arrive; a slot whose
	// guide has forced tokens waiting (jump-forward) or whose budget was
	// never checked gets its mask after the decode, as without overlap.
	// The guides must allow that one goroutine (fsm matchers do).
	OverlapMasks bool
}

// Request is one generation.
type Request struct {
	// Prompt is the tokenized prompt; it must not be empty.
	Prompt []TokenID
	// Params are the sampling controls (validated by Submit).
	Params sampler.Params
	// MaxTokens bounds the output tokens; 0 means until the context is full.
	MaxTokens int
	// Stop lists stop sequences, matched on the detokenized output text;
	// the stop sequence itself is not streamed.
	Stop []string
	// Guide, when set, restricts every output token.
	Guide Guide
}

// Runner is the generation loop. Submit may be called from any goroutine;
// Run must be called once, and owns the Engine until it returns.
type Runner struct {
	eng   Engine
	cfg   Config
	vocab int

	mu      sync.Mutex
	pending []*request
	closed  bool
	stats   Stats
	wake    chan struct{}
	running bool

	slots []*slot
	batch Batch
	rr    int // round-robin start for fairness between slots
	// parallel is set while slots handle their logits concurrently; finish
	// then defers its engine call and final event to the loop.
	parallel bool
}

// request is a submitted Request with its delivery state.
type request struct {
	Request
	ctx       context.Context
	out       *outbox
	submitted time.Time
	// closing is set once a step's mask was restricted by the budget
	// (BudgetGuide): the output then ends with FinishLength, however
	// it ends.
	closing bool
	// roomChecked is set once the shortest output was checked against the
	// budget (jumpForward's first call, before any token).
	roomChecked bool
}

// slot is one sequence of the engine context.
type slot struct {
	seq   int
	req   *request
	cache []TokenID // tokens in the KV cache, positions 0..len-1
	queue []TokenID // tokens to decode next
	// prefilling is true from admission until the prompt's logits arrive.
	prefilling bool
	samp       *sampler.Sampler
	mask       []uint64
	text       textState
	usage      Usage
	// Per step: tokens of queue in the batch, and the batch entry whose
	// logits it gets (-1 if none).
	inBatch  int
	logitIdx int
	row      []float32
	// pre is the mask filled during the decode (Config.OverlapMasks).
	pre preMask
	// final is the final event of a request that ended during the
	// parallel phase of a step; the loop sends it (after dropping the KV
	// cells when dropKV is set) once the phase is over.
	final    *Event
	finalOut *outbox
	dropKV   bool
}

// New returns a Runner over eng.
func New(eng Engine, cfg Config) (*Runner, error) {
	if cfg.Slots == 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.PrefillChunk == 0 {
		cfg.PrefillChunk = DefaultPrefillChunk
	}
	if cfg.MaxForced == 0 {
		cfg.MaxForced = DefaultMaxForced
	}
	switch {
	case eng == nil:
		return nil, errorf(CodeInvalidConfig, "engine", nil, "nil engine")
	case eng.NumVocab() <= 0:
		return nil, errorf(CodeInvalidConfig, "engine", nil, "vocabulary of %d tokens", eng.NumVocab())
	case cfg.Slots < 0, cfg.BatchSize < 0, cfg.PrefillChunk < 0, cfg.MaxForced < 0:
		return nil, errorf(CodeInvalidConfig, "", nil, "negative size in %+v", cfg)
	case cfg.ContextSize < 2:
		return nil, errorf(CodeInvalidConfig, "ContextSize", nil, "%d, want at least 2", cfg.ContextSize)
	}
	r := &Runner{eng: eng, cfg: cfg, vocab: eng.NumVocab(), wake: make(chan struct{}, 1)}
	for i := range cfg.Slots {
		r.slots = append(r.slots, &slot{seq: i, mask: make([]uint64, sampler.MaskWords(r.vocab))})
	}
	return r, nil
}

// Submit queues req and returns the channel its events arrive on. Requests
// the runner cannot serve (an empty or too long prompt, bad parameters) are
// refused here with an *Error, before taking a slot. Cancelling ctx ends the
// request at the next step boundary and frees its slot and KV cells; the
// channel is then closed, possibly without a final event. A reader that stops
// reading must cancel ctx.
func (r *Runner) Submit(ctx context.Context, req Request) (<-chan Event, error) {
	if err := r.validate(&req); err != nil {
		return nil, err
	}
	rq := &request{Request: req, ctx: ctx, out: newOutbox(), submitted: time.Now()}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errorf(CodeClosed, "", nil, "runner has stopped")
	}
	r.pending = append(r.pending, rq)
	r.mu.Unlock()
	r.signal()
	ch := make(chan Event)
	go rq.out.forward(ctx, ch)
	return ch, nil
}

func (r *Runner) validate(req *Request) error {
	switch {
	case len(req.Prompt) == 0:
		return errorf(CodeInvalidRequest, "prompt", nil, "empty prompt")
	case len(req.Prompt) >= r.cfg.ContextSize:
		return errorf(CodePromptTooLong, "prompt", nil, "%d tokens leave no room in a context of %d", len(req.Prompt), r.cfg.ContextSize)
	case req.MaxTokens < 0:
		return errorf(CodeInvalidRequest, "max_tokens", nil, "%d is negative", req.MaxTokens)
	case len(req.Stop) > 0 && r.cfg.Detokenize == nil:
		return errorf(CodeInvalidRequest, "stop", nil, "stop sequences need Config.Detokenize")
	}
	for i, t := range req.Prompt {
		if t < 0 || int(t) >= r.vocab {
			return errorf(CodeInvalidRequest, "prompt", nil, "token %d at %d is outside the vocabulary of %d", t, i, r.vocab)
		}
	}
	if err := req.Params.Validate(r.vocab); err != nil {
		return errorf(CodeInvalidRequest, "params", err, "")
	}
	return nil
}

func (r *Runner) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot of the runner-wide counters.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Run is the loop. It returns when ctx is done (after ending every request
// still running or waiting with CodeClosed) or when called a second time.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.running || r.closed {
		r.mu.Unlock()
		return errorf(CodeClosed, "Run", nil, "already running or stopped")
	}
	r.running = true
	r.mu.Unlock()
	defer r.shutdown()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.reap()
		r.admit()
		if !r.busy() {
			select {
			case <-r.wake:
			case <-ctx.Done():
			}
			continue
		}
		r.guardStep()
	}
}

// shutdown ends every request and refuses new ones.
func (r *Runner) shutdown() {
	r.mu.Lock()
	r.closed = true
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	closed := errorf(CodeClosed, "", nil, "runner stopped")
	for _, s := range r.slots {
		if s.req != nil {
			r.finish(s, FinishError, closed, true)
		}
	}
	for _, rq := range pending {
		rq.out.put(Event{Token: -1, Finish: FinishError, Err: closed, Usage: &Usage{PromptTokens: len(rq.Prompt)}})
	}
}

func (r *Runner) busy() bool {
	for _, s := range r.slots {
		if s.req != nil {
			return true
		}
	}
	return false
}

// reap frees the slots of cancelled requests.
func (r *Runner) reap() {
	for _, s := range r.slots {
		if s.req != nil && s.req.ctx.Err() != nil {
			r.finish(s, FinishCancelled, s.req.ctx.Err(), true)
		}
	}
}

// admit moves waiting requests into free slots, choosing for each the free
// slot whose KV cache shares the longest prefix with its prompt.
func (r *Runner) admit() {
	for {
		free := false
		for _, s := range r.slots {
			free = free || s.req == nil
		}
		if !free {
			return
		}
		r.mu.Lock()
		if len(r.pending) == 0 {
			r.mu.Unlock()
			return
		}
		rq := r.pending[0]
		r.pending = slices.Delete(r.pending, 0, 1)
		r.mu.Unlock()
		if err := rq.ctx.Err(); err != nil {
			rq.out.put(Event{Token: -1, Finish: FinishCancelled, Err: err, Usage: &Usage{PromptTokens: len(rq.Prompt)}})
			continue
		}
		var best *slot
		bestN := -1
		for _, s := range r.slots {
			if s.req != nil {
				continue
			}
			if n := commonPrefix(s.cache, rq.Prompt); n > bestN {
				best, bestN = s, n
			}
		}
		r.start(best, rq, bestN)
	}
}

func commonPrefix(a, b []TokenID) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// start puts rq into s, keeping the first reuse tokens of its KV cache.
func (r *Runner) start(s *slot, rq *request, reuse int) {
	// At least one prompt token must be decoded to get logits.
	reuse = min(reuse, len(rq.Prompt)-1)
	s.req = rq
	s.usage = Usage{PromptTokens: len(rq.Prompt), CachedTokens: reuse}
	s.text.reset(rq.Stop)
	s.prefilling = true
	if len(s.cache) > reuse {
		// Some caches (recurrent models) cannot drop a suffix: then start
		// the sequence over instead of failing the request.
		if err := r.eng.RemoveKV(s.seq, reuse, -1); err != nil {
			reuse = 0
			if err := r.eng.RemoveKV(s.seq, 0, -1); err != nil {
				s.usage.CachedTokens = 0
				r.finish(s, FinishError, errorf(CodeEngine, "RemoveKV", err, "slot %d", s.seq), true)
				return
			}
		}
		s.cache = s.cache[:reuse]
		s.usage.CachedTokens = reuse
	}
	s.queue = append(s.queue[:0], rq.Prompt[reuse:]...)
	if s.samp == nil {
		samp, err := sampler.New(r.vocab, rq.Params)
		if err != nil {
			r.finish(s, FinishError, errorf(CodeSampler, "params", err, ""), false)
			return
		}
		s.samp = samp
	} else if err := s.samp.Reset(rq.Params); err != nil {
		r.finish(s, FinishError, errorf(CodeSampler, "params", err, ""), false)
		return
	}
	r.mu.Lock()
	r.stats.ReusedTokens += int64(reuse)
	r.mu.Unlock()
	// Tokens forced from the very start go out with the prompt.
	if rq.Guide != nil {
		r.guard(s, "jumpForward", func() { r.jumpForward(s) })
	}
}

// step builds one batch, decodes it and handles the logits.
func (r *Runner) step() {
	t0 := time.Now()
	b := &r.batch
	b.reset()
	budget := r.cfg.BatchSize
	n := len(r.slots)
	for _, s := range r.slots {
		s.inBatch, s.logitIdx = 0, -1
	}
	// What goes in: generating slots first (one token each, plus forced
	// ones), then prompt chunks, starting from a rotating slot for
	// fairness when the batch budget runs out.
	for _, prefill := range []bool{false, true} {
		for i := range n {
			s := r.slots[(r.rr+i)%n]
			if s.req == nil || len(s.queue) == 0 || s.prefilling != prefill {
				continue
			}
			take := min(len(s.queue), budget, r.cfg.PrefillChunk)
			s.inBatch = take
			budget -= take
		}
	}
	// In what order: by sequence. llama.cpp splits a batch for a
	// per-sequence KV cache into ubatches of sequences in order, and a
	// batch whose sequences come rotated (1, 2, 3, 0) decoded in more
	// ubatches: 111 ms a step of 4 tokens against 52 ms in seq order
	// (BenchmarkStep, qwen2.5-0.5b synthetic, 2 threads).
	for _, s := range r.slots {
		if s.inBatch == 0 {
			continue
		}
		last := s.inBatch == len(s.queue)
		for j := range s.inBatch {
			if last && j == s.inBatch-1 {
				s.logitIdx = b.Len()
			}
			b.add(s.queue[j], len(s.cache)+j, s.seq, last && j == s.inBatch-1)
		}
	}
	r.rr = (r.rr + 1) % n
	if b.Len() == 0 {
		return
	}

	td := time.Now()
	premasked := r.startMasks()
	err := r.eng.Decode(*b)
	decodeTime := time.Since(td)
	// The rows are read before waiting for the masks: with a GPU backend
	// llama_decode returns once the graph is queued and reading the first
	// row waits for the device, so the masks fill while the GPU computes.
	// Reading touches only the engine (this goroutine's); what the rows
	// mean for the slots is decided after the masks are in.
	type fetched struct {
		row []float32
		err error
	}
	var rows []fetched
	var logitsTime time.Duration
	if err == nil {
		tl := time.Now()
		rows = make([]fetched, len(r.slots))
		for i, s := range r.slots {
			if s.logitIdx < 0 || s.req == nil {
				continue
			}
			rows[i].row, rows[i].err = r.eng.Logits(s.logitIdx)
		}
		logitsTime = time.Since(tl)
	}
	if premasked != nil {
		<-premasked
	}
	if err != nil {
		e := errorf(CodeEngine, "Decode", err, "batch of %d tokens", b.Len())
		for _, s := range r.slots {
			if s.inBatch > 0 {
				r.finish(s, FinishError, e, true)
			}
		}
		r.addStepStats(t0, decodeTime, 0)
		return
	}
	prompt := 0
	for _, s := range r.slots {
		if s.inBatch == 0 {
			continue
		}
		if s.prefilling {
			prompt += s.inBatch
		}
		s.cache = append(s.cache, s.queue[:s.inBatch]...)
		s.queue = append(s.queue[:0], s.queue[s.inBatch:]...)
	}
	// Rows are fetched here, in the loop goroutine (the only caller of the
	// engine); masking, sampling and accepting may then run concurrently
	// (Config.ParallelSampling), since each slot owns its sampler and
	// constraint.
	var work []*slot
	for i, s := range r.slots {
		if s.logitIdx < 0 || s.req == nil {
			continue
		}
		s.prefilling = false
		row, err := rows[i].row, rows[i].err
		if err == nil && len(row) != r.vocab {
			err = fmt.Errorf("row of %d logits, want %d", len(row), r.vocab)
		}
		if err != nil {
			r.finish(s, FinishError, errorf(CodeEngine, "Logits", err, "batch entry %d", s.logitIdx), true)
			continue
		}
		s.row = row
		work = append(work, s)
	}
	r.nextAll(work)
	r.addStepStats(t0, decodeTime, prompt)
	r.mu.Lock()
	r.stats.BatchTokens += int64(b.Len())
	r.stats.LogitsTime += logitsTime
	r.mu.Unlock()
}

func (r *Runner) addStepStats(t0 time.Time, decode time.Duration, prompt int) {
	d := time.Since(t0)
	r.mu.Lock()
	r.stats.Steps++
	r.stats.StepTime += d
	r.stats.DecodeTime += decode
	r.stats.PromptTokens += int64(prompt)
	r.stats.MaxStepTime = max(r.stats.MaxStepTime, d)
	r.mu.Unlock()
}

// nextAll runs next for every slot in work, concurrently when asked and
// there are several, then sends the final events deferred meanwhile.
func (r *Runner) nextAll(work []*slot) {
	if len(work) <= 1 || !r.cfg.ParallelSampling {
		for _, s := range work {
			r.guard(s, "next", func() { r.next(s, s.row) })
			s.row = nil
		}
		return
	}
	r.parallel = true
	var wg sync.WaitGroup
	for _, s := range work[1:] {
		wg.Go(func() { r.guard(s, "next", func() { r.next(s, s.row) }) })
	}
	r.guard(work[0], "next", func() { r.next(work[0], work[0].row) })
	wg.Wait()
	r.parallel = false
	for _, s := range work {
		s.row = nil
		r.flushFinal(s)
	}
}

// next handles the logits of slot s: mask, sample, accept, jump forward.
func (r *Runner) next(s *slot, logits []float32) {
	c := s.req.Guide
	var mask []uint64
	allowed := 0
	if c != nil {
		// A forced continuation longer than MaxForced goes on here, without
		// sampling (the constraint allows nothing else); a mask filled
		// during the decode means there was none.
		pre := s.pre
		s.pre = preMask{}
		s.usage.ConstraintTime += pre.took
		if pre.ok {
			r.mu.Lock()
			r.stats.Overlapped++
			r.mu.Unlock()
		} else {
			if r.jumpForward(s) {
				return
			}
			pre = r.fillMask(s, r.remaining(s))
			s.usage.ConstraintTime += pre.took
		}
		if pre.panic != nil {
			r.panicked([]*slot{s}, "mask", pre.panic, pre.stack)
			return
		}
		s.req.closing = s.req.closing || pre.restricted
		if pre.err != nil {
			r.finish(s, FinishError, errorf(CodeConstraint, pre.place, pre.err, "slot %d", s.seq), true)
			return
		}
		mask, allowed = s.mask, pre.allowed
		if allowed == 0 {
			r.finish(s, FinishError, errorf(CodeConstraint, pre.place, nil, "no token is allowed"), true)
			return
		}
	}
	ts := time.Now()
	res, err := s.samp.Sample(logits, mask, allowed)
	tok := res.ID
	r.mu.Lock()
	r.stats.SampleTime += time.Since(ts)
	r.mu.Unlock()
	if err != nil {
		r.finish(s, FinishError, errorf(CodeSampler, "Sample", err, "slot %d", s.seq), true)
		return
	}
	if r.isEOS(tok) {
		r.finish(s, r.endReason(s, FinishEOS), nil, false)
		return
	}
	if c != nil {
		t0 := time.Now()
		err := c.Accept(tok)
		s.usage.ConstraintTime += time.Since(t0)
		if err != nil {
			r.finish(s, FinishError, errorf(CodeConstraint, "Accept", err, "token %d", tok), true)
			return
		}
	}
	ev := Event{Token: tok, Logprob: res.Logprob}
	if len(res.Top) > 0 {
		ev.Top = slices.Clone(res.Top)
	}
	if r.emit(s, ev) {
		return
	}
	if c != nil {
		r.jumpForward(s)
	}
}

// remaining returns how many more tokens the request in s may produce: what
// MaxTokens leaves, and what the context leaves after the prompt.
func (r *Runner) remaining(s *slot) int {
	n := r.cfg.ContextSize - len(s.req.Prompt) - s.usage.CompletionTokens
	if s.req.MaxTokens > 0 {
		n = min(n, s.req.MaxTokens-s.usage.CompletionTokens)
	}
	return n
}

// endReason is why the request in s ends when its output is complete (EOS,
// a terminated constraint): that reason, or FinishLength when the budget
// restricted some step's mask, since the budget, not the model, closed the
// output then.
func (r *Runner) endReason(s *slot, why FinishReason) FinishReason {
	if s.req.closing {
		return FinishLength
	}
	return why
}

// refuseNoRoom ends the request in s, before its first token, when its
// constraint's shortest output needs more tokens than the budget leaves:
// no output could then be complete (a server refuses such requests
// earlier, with the minimum in its message). It reports whether it did.
func (r *Runner) refuseNoRoom(s *slot) bool {
	bc, ok := s.req.Guide.(BudgetGuide)
	if !ok {
		return false
	}
	t0 := time.Now()
	need, err := bc.MinTokens()
	s.usage.ConstraintTime += time.Since(t0)
	if left := r.remaining(s); err == nil && need > left {
		r.finish(s, FinishError, errorf(CodeConstraint, "MinTokens", nil, "the shortest complete output needs %d tokens, the budget leaves %d", need, left), true)
		return true
	}
	return false
}

// jumpForward accepts and queues the constraint's forced tokens, at most
// MaxForced and within the request's remaining budget, and ends the request
// if it is complete. It reports whether it took any token (or ended the
// request).
func (r *Runner) jumpForward(s *slot) bool {
	c := s.req.Guide
	if !s.req.roomChecked {
		s.req.roomChecked = true
		if r.refuseNoRoom(s) {
			return true
		}
	}
	room := r.forcedRoom(s)
	if room <= 0 {
		return false
	}
	t0 := time.Now()
	forced := c.Forced(room)
	s.usage.ConstraintTime += time.Since(t0)
	for _, t := range forced[:min(len(forced), room)] {
		if r.isEOS(t) {
			r.finish(s, r.endReason(s, FinishEOS), nil, false)
			return true
		}
		t0 := time.Now()
		err := c.Accept(t)
		s.usage.ConstraintTime += time.Since(t0)
		if err != nil {
			r.finish(s, FinishError, errorf(CodeConstraint, "Accept", err, "forced token %d", t), true)
			return true
		}
		s.samp.Observe(t)
		s.usage.ForcedTokens++
		if r.emit(s, Event{Token: t, Forced: true}) {
			return true
		}
	}
	return len(forced) > 0
}

// forcedRoom is how many forced tokens jumpForward may take for s now.
func (r *Runner) forcedRoom(s *slot) int {
	if r.cfg.NoJumpForward {
		return 0
	}
	return min(r.cfg.MaxForced, r.remaining(s))
}

// emit counts and streams one output token and queues it for decoding. It
// reports whether the request has finished (and then finishes it).
func (r *Runner) emit(s *slot, ev Event) bool {
	s.usage.CompletionTokens++
	r.mu.Lock()
	if ev.Forced {
		r.stats.Forced++
	} else {
		r.stats.Sampled++
	}
	r.mu.Unlock()
	s.queue = append(s.queue, ev.Token)
	var stopped bool
	if r.cfg.Detokenize != nil {
		ev.Text, stopped = s.text.push(r.cfg.Detokenize(ev.Token))
	}
	s.req.out.put(ev)
	c := s.req.Guide
	total := len(s.req.Prompt) + s.usage.CompletionTokens
	switch {
	case stopped:
		r.finish(s, FinishStop, nil, false)
	case c != nil && c.IsTerminated():
		r.finish(s, r.endReason(s, FinishConstraint), nil, false)
	case s.req.MaxTokens > 0 && s.usage.CompletionTokens >= s.req.MaxTokens:
		r.finish(s, FinishLength, nil, false)
	case total >= r.cfg.ContextSize:
		r.finish(s, FinishContext, nil, false)
	default:
		return false
	}
	return true
}

func (r *Runner) isEOS(t TokenID) bool { return slices.Contains(r.cfg.EOS, t) }

// finish ends the request in s with the final event and frees the slot.
// dropKV removes the slot's KV cells (after errors and cancellation, whose
// cache state is not trusted); otherwise they stay for prefix reuse. The
// slot is freed, its KV cells dropped and the stats counted before the
// final event goes out, so that a reader who sees it sees all that done;
// during the parallel phase of a step this waits for the phase's end.
func (r *Runner) finish(s *slot, why FinishReason, err error, dropKV bool) {
	rq := s.req
	if rq == nil {
		return
	}
	ev := Event{Token: -1, Finish: why, Err: err}
	if why != FinishStop {
		ev.Text = s.text.flush()
	} else {
		ev.StopSequence = s.text.matched
	}
	u := s.usage
	u.Elapsed = time.Since(rq.submitted)
	ev.Usage = &u
	s.final, s.dropKV = &ev, dropKV
	s.finalOut = rq.out
	s.req = nil
	s.queue = s.queue[:0]
	s.prefilling = false
	if dropKV {
		s.cache = s.cache[:0]
	}
	r.mu.Lock()
	r.stats.Requests++
	r.stats.ConstraintTime += u.ConstraintTime
	r.mu.Unlock()
	if !r.parallel {
		r.flushFinal(s)
	}
}

// flushFinal drops the KV cells of a finished request if asked, then sends
// its final event. Only the loop goroutine calls it.
func (r *Runner) flushFinal(s *slot) {
	if s.final == nil {
		return
	}
	if s.dropKV {
		_ = r.eng.RemoveKV(s.seq, 0, -1)
	}
	s.finalOut.put(*s.final)
	s.final, s.finalOut, s.dropKV = nil, nil, false
}
