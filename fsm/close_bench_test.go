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
		budget := need + 40
		rng := rand.New(rand.NewPCG(1, 2))
		dst := make([]uint64, ti.MaskWords())
		var path []TokenID
		for left := budget; left > 0; left-- {
			if _, err := m.FillMaskWithin(dst, left); err != nil {
				b.Fatal(err)
			}
			ids := tokAllowedIDs(dst)
			tok := ids[rng.IntN(len(ids))]
			if ti.IsEOS(tok) {
				break
			}
			if err := m.Accept(tok); err != nil {
				b.Fatal(err)
			}
			path = append(path, tok)
		}
		modes := []struct {
			name string
			mask func(m *Matcher, left int) error
		}{
			{"FillMask", func(m *Matcher, _ int) error { return m.FillMask(dst) }},
			{"Within-large", func(m *Matcher, _ int) error { _, err := m.FillMaskWithin(dst, 1<<20); return err }},
			{"Within-closing", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, left); return err }},
		}
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
			b.Run(tc.name+"/cold/"+md.name, func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					c := compile()
					b.StartTimer()
					walk(b, c, md.mask)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
			})
			b.Run(tc.name+"/warm/"+md.name, func(b *testing.B) {
				c := compile()
				walk(b, c, md.mask)
				for b.Loop() {
					walk(b, c, md.mask)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
			})
		}
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
	m := c.NewMatcher()
	am := &agentModel{ti: ti, rng: rand.New(rand.NewPCG(3, 4)), script: agentScripts[4]}
	dst := make([]uint64, ti.MaskWords())
	var path []TokenID
	for left := budget; left > 0; left-- {
		if _, err := m.FillMaskWithin(dst, left); err != nil {
			b.Fatal(err)
		}
		tok := am.pick(tokAllowedIDs(dst))
		if ti.IsEOS(tok) {
			break
		}
		if err := m.Accept(tok); err != nil {
			b.Fatal(err)
		}
		path = append(path, tok)
	}
	modes := []struct {
		name string
		mask func(m *Matcher, left int) error
	}{
		{"FillMask", func(m *Matcher, _ int) error { return m.FillMask(dst) }},
		{"Within-19000", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, 19000-len(path)+left); return err }},
		{"Within-closing", func(m *Matcher, left int) error { _, err := m.FillMaskWithin(dst, left); return err }},
	}
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
		b.Run("cold/"+md.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				c := compile()
				b.StartTimer()
				walk(b, c, md.mask)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
		})
		b.Run("warm/"+md.name, func(b *testing.B) {
			c := compile()
			walk(b, c, md.mask)
			for b.Loop() {
				walk(b, c, md.mask)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(path)), "ns/step")
		})
	}
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
