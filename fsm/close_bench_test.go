package fsm

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkFillMaskWithin follows one token path through a lazy constraint
// over cl100k with FillMask, with FillMaskWithin under a budget no token
// can break, and with a budget that closes the output (the path's length),
// on a fresh constraint each time (cold: every state's mask, successors
// and distances are computed) and on a used one (warm). It reports the
// time per step.
func BenchmarkFillMaskWithin(b *testing.B) {
	ti := tokCl100kIndex(b)
	for _, tc := range []struct {
		name string
		n    *Node
	}{
		{"object15", objectNode(b, 15)},
		{"string", mustParse(b, jsonString)},
	} {
		compile := func() *Constraint {
			c, err := CompileConstraint(context.Background(), tc.n, ti, Options{}, ConstraintOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return c
		}
		// A path that ends accepting within its own length as the budget.
		c := compile()
		m := c.NewMatcher()
		need, err := m.MinTokens()
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		dst := make([]uint64, ti.MaskWords())
		path := budgetPath(b, m, ti, dst, need+40, func(ids []TokenID) TokenID { return ids[rng.IntN(len(ids))] })
		benchPath(b, tc.name+"/", compile, path, []maskMode{
			{"FillMask", func(m *Matcher, _ int) error { return m.FillMask(dst) }},
			{"Within-large", func(m *Matcher, _ int) error { _, err := m.FillMaskWithin(dst, 1<<20); return err }},
			{"Within-closing", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, left); return err }},
		})
	}
}

// maskMode is one way of filling the mask at each step of a path; left is
// the steps still to go, this one included.
type maskMode struct {
	name string
	mask func(m *Matcher, left int) error
}

// budgetPath steps m with FillMaskWithin(dst, left) from budget down,
// taking pick's token among the allowed ones, until EOS or the budget: a
// path that ends accepting within its own length as the budget.
func budgetPath(b *testing.B, m *Matcher, ti *TokenIndex, dst []uint64, budget int, pick func([]TokenID) TokenID) []TokenID {
	var path []TokenID
	for left := budget; left > 0; left-- {
		if _, err := m.FillMaskWithin(dst, left); err != nil {
			b.Fatal(err)
		}
		tok := pick(tokAllowedIDs(dst))
		if ti.IsEOS(tok) {
			break
		}
		if err := m.Accept(tok); err != nil {
			b.Fatal(err)
		}
		path = append(path, tok)
	}
	return path
}

// benchPath walks path with each mode's masks, on a fresh constraint each
// time (cold: every state's mask, successors and distances are computed)
// and on a used one (warm), and reports the time per step.
func benchPath(b *testing.B, prefix string, compile func() *Constraint, path []TokenID, modes []maskMode) {
	walk := func(b *testing.B, c *Constraint, mask func(*Matcher, int) error) {
		m := c.NewMatcher()
		for i, tok := range path {
			if err := mask(m, len(path)-i); err != nil {
				b.Fatal(err)
			}
			if err := m.Accept(tok); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, md := range modes {
		b.Run(prefix+"cold/"+md.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				c := compile()
				b.StartTimer()
				walk(b, c, md.mask)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
		})
		b.Run(prefix+"warm/"+md.name, func(b *testing.B) {
			c := compile()
			walk(b, c, md.mask)
			for b.Loop() {
				walk(b, c, md.mask)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
		})
	}
}

// BenchmarkUpperFallback measures the NFA-path bounds (close_upper.go) on
// the 24-tool turn of TestWithinUpperFallback over the Llama-3.1
// vocabulary (skipped when ../shared is absent): a path from free text
// into a call's arguments, stepped with a budget of 19,000 (the bounds
// answer every step, no search runs) and with a budget that closes the
// output at the path's end under a MaxCloseStates of 64 (the searches
// run out near the end and the bounds cut the masks), cold and warm, per
// step; and one NFA pass (a version of the bounds) per op, with the NFA's
// size.
func BenchmarkUpperFallback(b *testing.B) {
	ti := tokLlama31(b)
	n := agentTurn(24)
	copts := ConstraintOptions{MaxCloseStates: 64}
	compile := func() *Constraint {
		c, err := CompileConstraint(context.Background(), n, ti, Options{}, copts)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	// A path that ends accepting within its own length as the budget.
	const budget = 60
	c := compile()
	am := &agentModel{ti: ti, rng: rand.New(rand.NewPCG(3, 4)), script: agentScripts[4]}
	dst := make([]uint64, ti.MaskWords())
	path := budgetPath(b, c.NewMatcher(), ti, dst, budget, am.pick)
	benchPath(b, "", compile, path, []maskMode{
		{"FillMask", func(m *Matcher, _ int) error { return m.FillMask(dst) }},
		{"Within-19000", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, 19000-len(path)+left); return err }},
		{"Within-closing", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, left); return err }},
	})
	b.Run("pass", func(b *testing.B) {
		cl := c.closer()
		cl.mu.Lock()
		defer cl.mu.Unlock()
		c.lazy.mu.Lock()
		defer c.lazy.mu.Unlock()
		for b.Loop() {
			cl.nfaPass(c)
		}
		b.ReportMetric(float64(len(c.lazy.s.m.states)), "nfa-states")
	})
}
