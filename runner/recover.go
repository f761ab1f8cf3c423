package runner

import (
	"fmt"
	"runtime/debug"
)

// Panics are recovered at the edge of one sequence's work: a panic while
// masking, sampling, accepting or jumping forward for a slot (a bug in a
// constraint, the sampler or the runner) ends that slot's request with a
// CodePanic error that carries the stack, frees the slot and drops its KV
// cells, and the loop goes on serving the other slots. A panic in the
// batch-wide part of a step (building the batch, the engine's Decode or
// Logits) ends every request in that step's batch the same way. Nothing is
// retried: the request's output so far is not trusted.

// guard runs f, the work of slot s named op, and turns a panic in it into
// the end of s's request.
func (r *Runner) guard(s *slot, op string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked([]*slot{s}, op, p, debug.Stack())
		}
	}()
	f()
}

// guardStep runs one step and turns a panic in it into the end of every
// request the step was working on.
func (r *Runner) guardStep() {
	defer func() {
		if p := recover(); p != nil {
			stack := debug.Stack()
			r.parallel = false // a panic in the parallel phase's own goroutine
			var hit []*slot
			for _, s := range r.slots {
				if s.req != nil && (s.inBatch > 0 || s.logitIdx >= 0 || s.row != nil) {
					hit = append(hit, s)
				}
				s.row = nil
			}
			r.panicked(hit, "step", p, stack)
			for _, s := range r.slots {
				r.flushFinal(s)
			}
		}
	}()
	r.step()
}

// panicked counts a recovered panic and ends the requests of slots with a
// CodePanic error.
func (r *Runner) panicked(slots []*slot, op string, p any, stack []byte) {
	r.mu.Lock()
	r.stats.Panics++
	r.mu.Unlock()
	for _, s := range slots {
		if s.req == nil {
			continue
		}
		err := &Error{Code: CodePanic, Place: fmt.Sprintf("%s, slot %d", op, s.seq), Msg: fmt.Sprint(p), Stack: string(stack)}
		r.finish(s, FinishError, err, true)
	}
}
