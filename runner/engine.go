package runner

import (
	"conform/fsm"
	"conform/token"
)

// TokenID names a token. It is token.ID, the id type fsm, sampler,
// tokenizer and internal/llama share, so that *fsm.Matcher is a Guide as
// it stands and ids cross the sampler and the engine without conversion.
type TokenID = token.ID

// *fsm.Matcher is the production Guide, and closes within a budget.
var (
	_ Guide       = (*fsm.Matcher)(nil)
	_ BudgetGuide = (*fsm.Matcher)(nil)
)

// Engine is the inference engine the runner drives: one context holding the
// KV cache of several sequences. It is implemented by an adapter over
// internal/llama (cgo); tests use a fake. Only the runner's loop goroutine
// calls it.
type Engine interface {
	// NumVocab returns the width of a logits row.
	NumVocab() int
	// Decode runs the model over batch, appending its tokens to the KV cache
	// of their sequences. The engine must not keep batch's slices after
	// Decode returns: the runner reuses them.
	Decode(batch Batch) error
	// Logits returns the logits after entry i of the last decoded batch
	// (i indexes the whole batch, as llama.cpp's llama_get_logits_ith does;
	// that entry asked for logits). The row may be a view into the engine's
	// memory, valid until the next Decode; the runner may overwrite entries
	// of it (disallowed tokens with -Inf) and does not keep it past the step.
	// An error ends the requests of that entry's sequence.
	Logits(i int) ([]float32, error)
	// RemoveKV removes the positions [from, to) of sequence seq from the KV
	// cache; to < 0 means to the end.
	RemoveKV(seq int, from, to int) error
}

// Batch is one decode's input: entry j is token Tokens[j] at position
// Pos[j] of sequence Seq[j], and Logits[j] says whether its logits are
// wanted. Within a batch the entries of one sequence have consecutive
// positions, in order.
type Batch struct {
	Tokens []TokenID
	Pos    []int
	Seq    []int
	Logits []bool
}

// Len returns the number of entries.
func (b *Batch) Len() int { return len(b.Tokens) }

// NumLogits returns the number of entries that want logits.
func (b *Batch) NumLogits() int {
	n := 0
	for _, w := range b.Logits {
		if w {
			n++
		}
	}
	return n
}

func (b *Batch) reset() {
	b.Tokens, b.Pos, b.Seq, b.Logits = b.Tokens[:0], b.Pos[:0], b.Seq[:0], b.Logits[:0]
}

func (b *Batch) add(t TokenID, pos, seq int, logits bool) {
	b.Tokens = append(b.Tokens, t)
	b.Pos = append(b.Pos, pos)
	b.Seq = append(b.Seq, seq)
	b.Logits = append(b.Logits, logits)
}

// Guide restricts which tokens a request may produce: it is the runner's
// view of the request's output constraint, one walker over it per request.
// *fsm.Matcher implements it (the name is not fsm.Constraint's, which is the
// shared compiled automaton a Guide walks). A Guide belongs to one request.
// After its first error every later call returns that error (sticky). The
// runner never passes EOS to Accept: it ends the request when the sampler
// picks an EOS the mask allowed.
type Guide interface {
	// FillMask sets in dst (MaskWords(NumVocab) words, zeroed by the runner)
	// the bit of every token allowed next, EOS included when accepting.
	FillMask(dst []uint64) error
	// Accept advances over t; it fails if t is not allowed.
	Accept(t TokenID) error
	// IsAccepting reports whether the output so far is complete.
	IsAccepting() bool
	// IsTerminated reports whether it is accepting and nothing but EOS can
	// follow.
	IsTerminated() bool
	// Forced returns up to max tokens that are the only way forward from the
	// current state (possibly none). They are not yet accepted.
	Forced(max int) []TokenID
	// Rollback undoes the last n accepted tokens. The runner does not call
	// it today; it is part of the contract for speculative use.
	Rollback(n int) error
}

// BudgetGuide is a Guide that can keep room to complete its output within
// a token budget; *fsm.Matcher implements it. When a request's Guide does,
// the runner ends the request with an error before its first token if even
// the shortest output does not fit, and masks each step with FillMaskWithin
// and the remaining budget (the lesser of what MaxTokens and the context
// leave), so an output cut by the budget is still complete. It is a
// separate interface so that guides without the notion (test fakes,
// llama.cpp's grammar) need not implement it; they get FillMask and no such
// guarantee.
type BudgetGuide interface {
	Guide
	// MinTokens returns the fewest tokens (EOS not counted) that complete
	// the output from the current state. An error means it is not known;
	// the runner then goes on and leaves it to FillMaskWithin.
	MinTokens() (int, error)
	// FillMaskWithin is FillMask restricted to the tokens after which the
	// output can still be completed in budget-1 more tokens (EOS allowed
	// iff accepting). It reports whether the budget removed any token a
	// larger budget would have kept.
	FillMaskWithin(dst []uint64, budget int) (restricted bool, err error)
}
