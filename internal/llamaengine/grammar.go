//go:build cgo

package llamaengine

import (
	"math"
	"math/bits"

	"conform/internal/llama"
	"conform/runner"
)

// GrammarConstraint is llama.cpp's own grammar sampler (a GBNF grammar,
// typically from llama.SchemaToGrammar) seen as a runner.Guide, the
// baseline Conform's masks are measured against. Its mask is llama.cpp's
// verdict over the whole vocabulary (llama_grammar_apply_impl run on every
// token), computed at most once per state: IsTerminated, which the runner
// asks after every token, computes the next mask and FillMask reuses it.
// It never forces tokens (llama.cpp has no jump-forward) and cannot roll
// back. Like every Guide it belongs to one request; errors are
// sticky.
type GrammarConstraint struct {
	g      *llama.Grammar
	gv     *GrammarVocab
	logits []float32
	mask   []uint64
	fresh  bool // mask is the current state's
	err    error
}

var _ runner.Guide = (*GrammarConstraint)(nil)

// NewGrammarConstraint parses gbnf (root rule "root") over gv.
func NewGrammarConstraint(gbnf string, gv *GrammarVocab) (*GrammarConstraint, error) {
	eog := make([]llama.TokenID, len(gv.eog))
	for i, id := range gv.eog {
		eog[i] = llama.TokenID(id)
	}
	g, err := llama.NewGrammar(gbnf, gv.pieces, eog)
	if err != nil {
		return nil, &Error{Code: CodeGrammar, Op: "new grammar", Err: err}
	}
	return &GrammarConstraint{g: g, gv: gv, logits: make([]float32, gv.width), mask: make([]uint64, (gv.width+63)/64)}, nil
}

// refresh computes the current state's mask if it is not fresh.
func (c *GrammarConstraint) refresh() error {
	if c.err != nil || c.fresh {
		return c.err
	}
	clear(c.logits)
	if err := c.g.Apply(c.logits); err != nil {
		c.err = &Error{Code: CodeGrammar, Op: "fill mask", Err: err}
		return c.err
	}
	clear(c.mask)
	for i, l := range c.logits {
		if !math.IsInf(float64(l), -1) {
			c.mask[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	c.fresh = true
	return nil
}

// FillMask sets in dst the bits of the tokens llama.cpp's grammar allows
// next, EOG ids included when the grammar is complete.
func (c *GrammarConstraint) FillMask(dst []uint64) error {
	if err := c.refresh(); err != nil {
		return err
	}
	for i, w := range c.mask[:min(len(dst), len(c.mask))] {
		dst[i] |= w
	}
	return nil
}

// Accept advances the grammar over t; a token the grammar does not allow
// is an error (llama.cpp itself would abort).
func (c *GrammarConstraint) Accept(t runner.TokenID) error {
	if c.err != nil {
		return c.err
	}
	if c.fresh && (t < 0 || int(t) >= c.gv.width || c.mask[t>>6]&(1<<(uint(t)&63)) == 0) {
		c.err = &Error{Code: CodeGrammar, Op: "accept", Msg: "token not allowed by the grammar"}
		return c.err
	}
	if err := c.g.Accept(llama.TokenID(t)); err != nil {
		c.err = &Error{Code: CodeGrammar, Op: "accept", Err: err}
		return c.err
	}
	c.fresh = false
	return nil
}

// IsAccepting reports whether the grammar is complete (EOG is allowed).
func (c *GrammarConstraint) IsAccepting() bool {
	if c.refresh() != nil {
		return false
	}
	for i, w := range c.gv.eogMask {
		if c.mask[i]&w != 0 {
			return true
		}
	}
	return false
}

// IsTerminated reports whether the grammar is complete and allows nothing
// but EOG.
func (c *GrammarConstraint) IsTerminated() bool {
	if c.refresh() != nil {
		return false
	}
	eog := 0
	for i, w := range c.mask {
		if w&^c.gv.eogMask[i] != 0 {
			return false
		}
		eog += bits.OnesCount64(w)
	}
	return eog > 0
}

// Forced returns nil: llama.cpp's grammar sampler has no jump-forward.
func (c *GrammarConstraint) Forced(int) []runner.TokenID { return nil }

// Rollback is not supported by llama.cpp's grammar.
func (c *GrammarConstraint) Rollback(int) error {
	return &Error{Code: CodeGrammar, Op: "rollback", Msg: "llama.cpp's grammar cannot roll back"}
}

// Close frees the grammar; it is idempotent.
func (c *GrammarConstraint) Close() error { return c.g.Close() }
