package fsm

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkMask measures mask computation on the cl100k_base vocabulary
// (100k tokens; the Llama-3.1 targets are for 128k): a cold dense
// string-body state with and without the slicer, a cold bounded-string state
// (only some slices apply), a cold sparse state, and a cached state (what
// every revisit costs: one copy into the caller's bitset).
//
// Budgets (brief F2, Llama-3.1, one thread): per token p50 ≤ 10 µs, p99 ≤
// 250 µs, max ≤ 50 ms. A cached FillMask should be ~1 µs; a cold dense
// sliced mask well under 250 µs; an unsliced one is the 1–3 ms that the
// slicer exists to avoid.
func BenchmarkMask(b *testing.B) {
	ti := tokCl100kIndex(b)
	str := tokStringDFA(-1)
	body := str.Run(str.Start, []byte(`"`))
	bounded := tokStringDFA(64)
	bbody := bounded.Run(bounded.Start, []byte(`"abcdefghijklmnopqrstuvwxyz0123456789`))                         // 27 chars left
	bbody5 := bounded.Run(bounded.Start, []byte(`"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvw`)) // 5 chars left
	obj := tokJSONObjectDFA()
	objStart := obj.Start
	cold := func(b *testing.B, d *DFA, q StateID, slicing bool) {
		c := tokMustConstraint(b, d, ti, ConstraintOptions{})
		sc := ti.newScratch()
		var pop int
		for b.Loop() {
			w, err := c.computeBits(q, sc, slicing)
			if err != nil {
				b.Fatal(err)
			}
			_, pop = hashWords(w)
		}
		b.ReportMetric(float64(pop), "allowed")
	}
	b.Run("cold/string-body/sliced", func(b *testing.B) { cold(b, str, body, true) })
	b.Run("cold/string-body/plain", func(b *testing.B) { cold(b, str, body, false) })
	b.Run("cold/bounded-27-left/sliced", func(b *testing.B) { cold(b, bounded, bbody, true) })
	b.Run("cold/bounded-27-left/plain", func(b *testing.B) { cold(b, bounded, bbody, false) })
	b.Run("cold/bounded-5-left/sliced", func(b *testing.B) { cold(b, bounded, bbody5, true) })
	b.Run("cold/bounded-5-left/plain", func(b *testing.B) { cold(b, bounded, bbody5, false) })
	b.Run("cold/sparse-object-start/sliced", func(b *testing.B) { cold(b, obj, objStart, true) })
	b.Run("cold/sparse-object-start/plain", func(b *testing.B) { cold(b, obj, objStart, false) })
	b.Run("cached/string-body", func(b *testing.B) {
		c := tokMustConstraint(b, str, ti, ConstraintOptions{})
		w := make([]uint64, ti.MaskWords())
		if err := c.FillMask(body, w); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			_ = c.FillMask(body, w)
		}
	})
	b.Run("cached/sparse", func(b *testing.B) {
		c := tokMustConstraint(b, obj, ti, ConstraintOptions{})
		w := make([]uint64, ti.MaskWords())
		for b.Loop() {
			_ = c.FillMask(objStart, w)
		}
	})
}

// BenchmarkTokenStep measures FillMask+Accept per token over a JSON object
// (tokenized with random non-canonical splits), after a first pass filled
// the cache: the steady state of a schema served many times.
func BenchmarkTokenStep(b *testing.B) {
	ti := tokCl100kIndex(b)
	c := tokMustConstraint(b, tokJSONObjectDFA(), ti, ConstraintOptions{})
	text := []byte(`{"name":"Ada Lovelace, Countess of Lovelace","code":"X1-42","age":36,"tags":["math", "poetry", "analytical engine"]}`)
	toks := tokGreedyTokenize(tokLookup(ti), text, rand.New(rand.NewPCG(1, 1)))
	m := c.NewMatcher()
	w := make([]uint64, ti.MaskWords())
	run := func() {
		m.Reset()
		for _, t := range toks {
			if err := m.FillMask(w); err != nil {
				b.Fatal(err)
			}
			if err := m.Accept(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	run()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
}

// BenchmarkTimeToFirstMask measures NewConstraint (DFA checks, premultiplied
// table, start mask) for a small JSON object DFA; the DFA build itself is
// BenchmarkCompile's.
func BenchmarkTimeToFirstMask(b *testing.B) {
	ti := tokCl100kIndex(b)
	d := tokJSONObjectDFA()
	b.ReportMetric(float64(d.NumStates()), "states")
	for b.Loop() {
		if _, err := NewConstraint(d, ti, ConstraintOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewTokenIndex measures building the index of a 100k vocabulary
// (once per model load).
func BenchmarkNewTokenIndex(b *testing.B) {
	toks, eos, width := tokCl100k(b)
	for b.Loop() {
		if _, err := NewTokenIndex(toks, eos, width); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileConstraint measures the time to first mask from a node:
// the lazy path (CompileConstraint: NFA, start state, first mask) against
// the eager one (Compile's minimized DFA, then NewConstraint).
func BenchmarkCompileConstraint(b *testing.B) {
	ti := tokCl100kIndex(b)
	cases := []struct {
		name string
		n    *Node
	}{
		{"object10", objectNode(b, 10)},
		{"object50", objectNode(b, 50)},
		{"enum1000", enumNode(b, 1000)},
		{"string256", mustParse(b, boundedRe)},
	}
	for _, tc := range cases {
		b.Run(tc.name+"/lazy", func(b *testing.B) {
			for b.Loop() {
				if _, err := CompileConstraint(context.Background(), tc.n, ti, Options{}, ConstraintOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/eager", func(b *testing.B) {
			for b.Loop() {
				d, err := Compile(tc.n, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := NewConstraint(d, ti, ConstraintOptions{TrustTrimmed: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
