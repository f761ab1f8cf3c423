package turn

// The reasoning budget. A turn with a reasoning block gives each choice a
// thinkGuide: the whole turn's *fsm.Matcher, wrapped. The matcher alone
// keeps the output in the turn's language, and its FillMaskWithin keeps
// room for the shortest answer within max_tokens (fsm/close.go); the
// wrapper adds the budget of the block's text.
//
// Design: the guide follows the bytes of every accepted token through the
// block with a thinkScan (reasoning.go) rather than reading the DFA state:
// the phase (writing the open marker, inside, after the close), the length
// of the close marker's prefix that ends the text (a KMP match, since the
// marker may be split over tokens), and the UTF-8 continuation bytes the
// text still owes. count is the tokens that began inside the block. Once
// count reaches the budget the mask is the matcher's mask intersected
// with the tokens that make progress towards the close:
//
//   - with no character owed: a token whose bytes are a prefix of the rest
//     of the close marker, or start with all of it (what follows it, the
//     separator and the answer, the matcher checks);
//   - with a character owed (the budget cut it): a token of continuation
//     bytes only, or of the owed ones followed by a token as above.
//
// Each such token shortens what is left of the marker (or of the
// character), so the close is written within len(close)+3 more tokens and
// no reasoning text is added after the budget except the rest of a cut
// character. Budget 0 never reaches a guide: Build leaves the block out.
//
// The tokens that go on writing the close from k of its bytes depend only
// on the vocabulary, the marker and k, so they are a bitset computed once
// per model and k (Vocab.closers) and intersected word by word; only a
// character owed, which is rare, reads the allowed tokens one by one.
//
// When the intersection is empty the matcher's mask stands: the token
// budget (FillMaskWithin) has taken the tokens of the close away, or the
// vocabulary has no token to go on with; closing within max_tokens then
// wins over the reasoning budget, which is the guarantee the server gives.
// Measured (BenchmarkReasoningForcedMask, Qwen3's 151k tokens): a spent
// budget's mask takes 3 µs against the matcher's 1.2 µs once the bitset
// is built (4 ms, once per model and k; reading every allowed token on
// each step took 4 ms a step).

import (
	"math/bits"

	"conform/fsm"
	"conform/runner"
)

// thinkGuide is the guide of one choice of a turn with a reasoning block.
// It is runner.BudgetGuide, not safe for concurrent use.
type thinkGuide struct {
	m     *fsm.Matcher
	lay   *thinkLayout
	vocab *Vocab
	toks  [][]byte // the vocabulary's token bytes
	scan  thinkScan
	count int // tokens that began inside the block
	block int // tokens that began before the block was closed
	hist  []thinkMark
}

// thinkMark is the guide's state before an accepted token, for Rollback.
type thinkMark struct {
	scan         thinkScan
	count, block int
}

var _ runner.BudgetGuide = (*thinkGuide)(nil)

// guide returns the guide of one choice over matcher m: m itself for a
// turn without a reasoning block, else m wrapped by a thinkGuide.
func (t *Turn) guide(m *fsm.Matcher) runner.Guide {
	if t.res.think == nil {
		return m
	}
	return &thinkGuide{m: m, lay: t.res.think, vocab: t.c.vocab, toks: t.c.vocab.tokens, scan: newThinkScan(t.res.think)}
}

// ReasoningTokens returns the tokens of the reasoning block so far: every
// token that began before the block was closed, markers included (what
// the block costs of max_tokens).
func (g *thinkGuide) ReasoningTokens() int { return g.block }

// forcing reports whether the budget is spent and the block still open.
func (g *thinkGuide) forcing() bool {
	return g.scan.phase == thinkInside && g.lay.text && g.lay.budget >= 0 && g.count >= g.lay.budget
}

// FillMask is the matcher's mask, restricted to the close once the budget
// is spent.
func (g *thinkGuide) FillMask(dst []uint64) error {
	if err := g.m.FillMask(dst); err != nil {
		return err
	}
	g.restrict(dst)
	return nil
}

// FillMaskWithin is the matcher's FillMaskWithin, restricted to the close
// once the budget is spent. restricted reports the token budget's doing
// only (the runner then calls the finish a length finish); the reasoning
// budget's restriction is not reported.
func (g *thinkGuide) FillMaskWithin(dst []uint64, budget int) (bool, error) {
	restricted, err := g.m.FillMaskWithin(dst, budget)
	if err != nil {
		return restricted, err
	}
	g.restrict(dst)
	return restricted, nil
}

// restrict intersects dst with the tokens that make progress towards the
// close, when forcing and when the intersection is not empty.
func (g *thinkGuide) restrict(dst []uint64) {
	if !g.forcing() {
		return
	}
	if g.scan.need == 0 {
		set := g.closers(len(dst))
		any := false
		for w := range dst {
			if dst[w]&set[w] != 0 {
				any = true
				break
			}
		}
		if any {
			for w := range dst {
				dst[w] &= set[w]
			}
		}
		return
	}
	any := false
	var keep []uint64
	for w, word := range dst {
		for word != 0 {
			b := word & -word
			word ^= b
			t := w*64 + bits.TrailingZeros64(b)
			if t < len(g.toks) && g.progress(g.toks[t]) {
				if keep == nil {
					keep = make([]uint64, len(dst))
				}
				keep[w] |= b
				any = true
			}
		}
	}
	if any {
		copy(dst, keep)
	}
}

// closeKey names a set of Vocab.closers: the tokens that go on writing
// close from k of its bytes, no character owed.
type closeKey struct {
	close string
	k     int
}

// closers returns the tokens that make progress from the guide's k (no
// character owed) as a mask of words words, computed once per vocabulary.
func (g *thinkGuide) closers(words int) []uint64 {
	key := closeKey{g.lay.close, g.scan.k}
	if s, ok := g.vocab.closers.Load(key); ok {
		return s.([]uint64)
	}
	set := make([]uint64, words)
	for t, tok := range g.toks {
		if t/64 < words && g.progress(tok) {
			set[t/64] |= 1 << (t % 64)
		}
	}
	s, _ := g.vocab.closers.LoadOrStore(key, set)
	return s.([]uint64)
}

// progress reports whether token bytes tok move the text towards the
// close (see the file comment).
func (g *thinkGuide) progress(tok []byte) bool {
	if len(tok) == 0 {
		return false // EOS or an unused id: never inside an open block
	}
	need := g.scan.need
	i := 0
	for ; i < len(tok) && i < need; i++ {
		if tok[i]&0xC0 != 0x80 {
			return false
		}
	}
	rest := tok[i:]
	if len(rest) == 0 {
		return true
	}
	left := g.lay.close[g.scan.k:]
	if len(rest) <= len(left) {
		return string(rest) == left[:len(rest)]
	}
	return string(rest[:len(left)]) == left
}

// Accept advances the matcher over t, then the block's scan over t's
// bytes, counting t when it began inside the block.
func (g *thinkGuide) Accept(t TokenID) error {
	if err := g.m.Accept(t); err != nil {
		return err
	}
	g.hist = append(g.hist, thinkMark{scan: g.scan, count: g.count, block: g.block})
	if !g.scan.closed() {
		g.block++
		if g.scan.phase == thinkInside {
			g.count++
		}
	}
	if int(t) < len(g.toks) {
		for _, c := range g.toks[t] {
			if g.scan.phase == thinkAfter {
				break
			}
			g.scan.step(g.lay, c)
		}
	}
	return nil
}

// IsAccepting is the matcher's.
func (g *thinkGuide) IsAccepting() bool { return g.m.IsAccepting() }

// IsTerminated is the matcher's.
func (g *thinkGuide) IsTerminated() bool { return g.m.IsTerminated() }

// Forced is the matcher's: inside the block the text is free, so the
// matcher forces nothing there, and a forced token elsewhere is the only
// way on whatever the budget.
func (g *thinkGuide) Forced(max int) []TokenID {
	if g.forcing() {
		return nil
	}
	return g.m.Forced(max)
}

// Rollback undoes the last n tokens of the matcher and of the scan.
func (g *thinkGuide) Rollback(n int) error {
	if err := g.m.Rollback(n); err != nil {
		return err
	}
	// The matcher counts an accepted EOS, which the guide never sees.
	if n > len(g.hist) {
		n = len(g.hist)
	}
	if n > 0 {
		mk := g.hist[len(g.hist)-n]
		g.scan, g.count, g.block = mk.scan, mk.count, mk.block
		g.hist = g.hist[:len(g.hist)-n]
	}
	return nil
}

// MinTokens is the matcher's: the shortest completion closes the block at
// once, which the budget never forbids.
func (g *thinkGuide) MinTokens() (int, error) { return g.m.MinTokens() }

// reasoningTokens returns the reasoning tokens a choice's guide counted,
// 0 for a guide without a block.
func reasoningTokens(g runner.Guide) int {
	if tg, ok := g.(*thinkGuide); ok {
		return tg.ReasoningTokens()
	}
	return 0
}
