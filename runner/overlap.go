package runner

// Masks overlapped with the forward pass (Config.OverlapMasks). The mask
// a slot samples from at step t is a function of the tokens its guide has
// accepted, all of which were accepted before step t's batch was built;
// the logits play no part. So while the loop goroutine is inside
// Engine.Decode and then Engine.Logits (cgo, the CPU cores busy with the
// forward pass; with a GPU backend llama_decode only queues the graph and
// the first row read waits for the device), one goroutine fills the masks
// of the slots whose logits this batch will produce, and next applies
// them once the rows are read. Exactly the mask next would have filled itself: the same
// FillMaskWithin and the same budget (remaining reads only the request
// and its usage, which the decode does not change), and skipped (filled
// after the decode as before) where next would first jump forward: a
// guide with forced tokens waiting, or a request whose shortest output
// was not yet checked against its budget.
//
// One goroutine for all slots rather than one each: on a CPU host the
// forward pass already uses the cores, and the masks are microseconds at
// the median; what the overlap buys is hiding their tail (a first visit
// to a DFA state, a budget search) behind the decode. A panic in a guide
// is caught on that goroutine and re-raised by next on the loop
// goroutine, where guard ends that request alone.

import (
	"math/bits"
	"runtime/debug"
	"time"
)

// preMask is a slot's mask filled before its logits were read: s.mask
// holds it when ok.
type preMask struct {
	ok         bool
	allowed    int  // the mask's popcount
	restricted bool // the token budget removed tokens (BudgetGuide)
	place      string
	err        error
	panic      any    // a recovered panic of the guide
	stack      []byte // and where it was
	took       time.Duration
}

// fillMask fills s.mask from s's guide within budget tokens.
func (r *Runner) fillMask(s *slot, budget int) (p preMask) {
	c := s.req.Guide
	t0 := time.Now()
	defer func() { p.took += time.Since(t0) }()
	clear(s.mask)
	p.place = "FillMask"
	if bc, ok := c.(BudgetGuide); ok {
		p.place = "FillMaskWithin"
		p.restricted, p.err = bc.FillMaskWithin(s.mask, budget)
	} else {
		p.err = c.FillMask(s.mask)
	}
	if p.err == nil {
		for _, w := range s.mask {
			p.allowed += bits.OnesCount64(w)
		}
	}
	p.ok = true
	return p
}

// startMasks starts filling, on one goroutine, the masks of the slots
// whose logits the batch being decoded will produce, and returns a
// channel closed when they are done (nil when there is nothing to do).
// The loop goroutine must not touch those slots' guides or masks before
// it is closed.
func (r *Runner) startMasks() <-chan struct{} {
	if !r.cfg.OverlapMasks {
		return nil
	}
	type job struct {
		s      *slot
		budget int
		room   int
	}
	var jobs []job
	for _, s := range r.slots {
		s.pre = preMask{}
		if s.logitIdx < 0 || s.req == nil || s.req.Guide == nil || !s.req.roomChecked {
			continue
		}
		jobs = append(jobs, job{s, r.remaining(s), r.forcedRoom(s)})
	}
	if len(jobs) == 0 {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, j := range jobs {
			j.s.pre = r.preFill(j.s, j.budget, j.room)
		}
	}()
	return done
}

// preFill is fillMask for the overlap: nothing when jumpForward would
// take forced tokens first (room > 0 and the guide forces some), and a
// panic caught into the result.
func (r *Runner) preFill(s *slot, budget, room int) (p preMask) {
	t0 := time.Now()
	defer func() {
		if v := recover(); v != nil {
			p = preMask{ok: true, panic: v, stack: debug.Stack(), took: time.Since(t0)}
		}
	}()
	if room > 0 && len(s.req.Guide.Forced(room)) > 0 {
		return preMask{took: time.Since(t0)}
	}
	return r.fillMask(s, budget)
}
