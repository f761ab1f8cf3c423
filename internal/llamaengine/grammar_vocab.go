package llamaengine

import (
	"conform/runner"
	"conform/tokenizer"
)

// GrammarVocab is a vocabulary in the form llama.cpp's grammar sampler
// takes it: one text piece per token id and the end-of-generation ids. It
// is built once per model and shared (read-only) by every
// GrammarConstraint.
type GrammarVocab struct {
	pieces  []string
	eog     []int32
	eogMask []uint64
	width   int
}

// NewGrammarVocab builds the grammar vocabulary of v: the raw bytes of
// each text token as its piece, and an empty piece (never allowed by
// llama.cpp's grammar) for special tokens and holes, the same tokens
// Conform's token index leaves out. eog lists the end-of-generation ids,
// allowed exactly when the grammar is complete.
func NewGrammarVocab(v *tokenizer.Vocabulary, eog []runner.TokenID) *GrammarVocab {
	gv := &GrammarVocab{pieces: make([]string, v.Width), width: v.Width, eogMask: make([]uint64, (v.Width+63)/64)}
	for id, b := range v.Tokens {
		if !v.Special[id] {
			gv.pieces[id] = string(b)
		}
	}
	for _, id := range eog {
		if id >= 0 && int(id) < v.Width {
			gv.eog = append(gv.eog, int32(id))
			gv.eogMask[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	return gv
}

// Width is the number of token ids (the logit width).
func (gv *GrammarVocab) Width() int { return gv.width }

// GrammarVocab returns the grammar vocabulary of e's model, for the
// llama.cpp grammar baseline (built on each call: keep it).
func (e *Engine) GrammarVocab() *GrammarVocab { return NewGrammarVocab(e.vocab, e.eos) }
