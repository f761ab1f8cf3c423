//go:build !cgo

package llamaengine

import (
	"conform/internal/llama"
	"conform/runner"
)

// GrammarConstraint is llama.cpp's grammar sampler as a runner.Guide;
// without cgo it cannot be made.
type GrammarConstraint struct{}

var _ runner.Guide = (*GrammarConstraint)(nil)

func unavailable(op string) error {
	return &Error{Code: CodeGrammar, Op: op, Err: llama.ErrUnavailable}
}

// NewGrammarConstraint returns an error wrapping llama.ErrUnavailable.
func NewGrammarConstraint(string, *GrammarVocab) (*GrammarConstraint, error) {
	return nil, unavailable("new grammar")
}

// FillMask returns an error wrapping llama.ErrUnavailable.
func (c *GrammarConstraint) FillMask([]uint64) error { return unavailable("fill mask") }

// Accept returns an error wrapping llama.ErrUnavailable.
func (c *GrammarConstraint) Accept(runner.TokenID) error { return unavailable("accept") }

// IsAccepting returns false.
func (c *GrammarConstraint) IsAccepting() bool { return false }

// IsTerminated returns false.
func (c *GrammarConstraint) IsTerminated() bool { return false }

// Forced returns nil.
func (c *GrammarConstraint) Forced(int) []runner.TokenID { return nil }

// Rollback returns an error wrapping llama.ErrUnavailable.
func (c *GrammarConstraint) Rollback(int) error { return unavailable("rollback") }

// Close does nothing.
func (c *GrammarConstraint) Close() error { return nil }
