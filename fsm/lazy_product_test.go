package fsm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// productCases are intersections in the shapes grammar/ emits (a pattern
// under string lengths, a pattern with a negated alternation), and ones
// whose products have many dead pairs or are empty.
func productCases(tb testing.TB) []struct {
	name string
	n    *Node
} {
	str := func(body string) *Node { return Cat(Lit(`"`), mustParse(tb, body), Lit(`"`)) }
	return []struct {
		name string
		n    *Node
	}{
		{"length-pattern", Cat(Lit(`"`), And(mustParse(tb, `[aA][12][^"\\]*[zZ]`), mustParse(tb, `[^"\\]{10,90}`)), Lit(`"`))},
		{"word-count", Cat(Lit("["), And(mustParse(tb, `(?:[a-z]+ ){0,20}[a-z]+`), mustParse(tb, `[a-z ]{0,60}`)), Lit("]"))},
		{"three-operands", And(str(`[a-z]{0,30}`), Not(str(`[a-z]*abc[a-z]*`)), str(`[a-z]*b[a-z]*`))},
		{"dead-pairs", And(mustParse(tb, `(?:ab)*c{0,3}x`), mustParse(tb, `[abc]{5,9}x`))},
		{"empty", Cat(Lit("<"), And(mustParse(tb, `a+b`), mustParse(tb, `[ab]*c`)), Lit(">"))},
		{"in-alternation", Alt(Lit("null"), Cat(Lit(`"`), And(mustParse(tb, `[a-c]*a[a-c]{3}`), mustParse(tb, `[a-c]{2,25}`)), Lit(`"`)))},
		{"repeated", Cat(Lit("["), Repeat(Cat(And(mustParse(tb, `[0-9]*7[0-9]*`), mustParse(tb, `[0-9]{1,12}`)), Lit(",")), 1, 4), Lit("]"))},
	}
}

// TestLazyProductMatchesEager builds every intersection of the cases (and
// of lazyCases) as a lazy product and walks it against the minimized DFA
// built the usual way: the same masks, flags and forced tokens each step.
func TestLazyProductMatchesEager(t *testing.T) {
	ti := tokCl100kIndex(t)
	cases := append(productCases(t), lazyCases(t)...)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := mustCompile(t, tc.n)
			if d.Start == DeadState {
				if _, err := CompileConstraint(context.Background(), tc.n, ti, Options{productMin: 1}, ConstraintOptions{}); err == nil {
					t.Fatalf("CompileConstraint of an empty language succeeded")
				}
				return
			}
			eager, err := NewConstraint(d, ti, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			compareBothPrebuilds(t, ti, eager, tc.n, Options{productMin: 1}, rand.NewPCG(11, uint64(i)))
		})
	}
}

// TestLazyProductBuilt checks that the product cases are built lazily at
// all (productMin 1) and only above the bound by default, and that fully
// expanded their NFAs are live: every reachable state reaches the match
// state, none moves to the fail state.
func TestLazyProductBuilt(t *testing.T) {
	for _, tc := range productCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newCompiler(Options{productMin: 1, NoPrebuild: true}).lazyNFAOf(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			lazy := 0
			if m.b != nil {
				for _, lp := range m.b.prods {
					if lp != nil {
						lazy++
					}
				}
			}
			if tc.name != "empty" && lazy == 0 {
				t.Fatalf("no intersection was built as a lazy product")
			}
			expandAll(t, m)
			checkReachableLive(t, tc.n, m)
			dm, err := newCompiler(Options{NoPrebuild: true}).lazyNFAOf(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if dm.b != nil && tc.name != "length-pattern" {
				for _, lp := range dm.b.prods {
					if lp != nil {
						t.Errorf("a product of %d × %d states was built lazily under the default bound %d", lp.a.NumStates(), lp.b.NumStates(), lazyProductMin)
					}
				}
			}
		})
	}
}

// expandAll expands placeholders until none is left.
func expandAll(t *testing.T, m *nfa) {
	t.Helper()
	for round := 0; ; round++ {
		if round > 1<<16 {
			t.Fatal("expansion does not end")
		}
		found := false
		for q := range m.states {
			if m.states[q].kind == nfaLazy {
				found = true
				if err := m.b.expand(int32(q)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !found {
			return
		}
	}
}

// checkReachableLive fails t when a state of m reachable from its start
// cannot reach the match state or moves to the fail state (placeholders
// count as live: checkNFALive, and expandAll first for a whole NFA).
func checkReachableLive(t *testing.T, n *Node, m *nfa) {
	t.Helper()
	live := m.coreachable()
	seen := make([]bool, len(m.states))
	stack := []int32{m.start}
	seen[m.start] = true
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if q != nfaFail && !live[q] {
			t.Fatalf("%s: state %d is reachable but cannot reach the match state", n, q)
		}
		st := &m.states[q]
		var next []int32
		switch st.kind {
		case nfaByte, nfaSet:
			next = []int32{st.next}
		case nfaEps:
			next = m.targets(st)
		}
		for _, r := range next {
			if r == nfaFail {
				t.Fatalf("%s: state %d has the fail state as a successor", n, q)
			}
			if !seen[r] {
				seen[r] = true
				stack = append(stack, r)
			}
		}
	}
}

// TestLazyProductOverBudget: a product whose sides multiply past
// lazyProductMax × MaxDFAStates is compiled eagerly, so a product that does
// not fit the budget is refused by the compile, with the typed limit error,
// not in the middle of a generation.
func TestLazyProductOverBudget(t *testing.T) {
	ti := tokCl100kIndex(t)
	n := Cat(Lit(`"`), And(mustParse(t, `(?:[a-z]+ ){0,60}[a-z]+`), mustParse(t, `[a-z ]{0,200}`)), Lit(`"`))
	_, err := CompileConstraint(context.Background(), n, ti, Options{MaxDFAStates: 2000}, ConstraintOptions{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != ErrTooManyDFAStates {
		t.Fatalf("CompileConstraint = %v, want %v at compile time", err, ErrTooManyDFAStates)
	}
	// Under the budget the same intersection compiles lazily and serves a
	// long value.
	c, err := CompileConstraint(context.Background(), n, ti, Options{}, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	text := `"` + repeatWords("ab ", 50) + `ab"`
	if err := m.AcceptBytes([]byte(text)); err != nil {
		t.Fatalf("accepting %d bytes: %v", len(text), err)
	}
	if !m.IsAccepting() {
		t.Fatalf("%q not accepted", text)
	}
}

func repeatWords(w string, n int) string {
	s := ""
	for range n {
		s += w
	}
	return s
}

// FuzzLazyProduct: with every intersection of two or more operands a lazy
// product, a lazy constraint decodes what the minimized DFA does.
func FuzzLazyProduct(f *testing.F) {
	fuzzSeeds(f)
	f.Add(`(?:[a-c]*a[a-c]{3})&[a-c]{2,25}`)
	f.Add(`"(?:[a-z]{0,30}&~(?:[a-z]*abc[a-z]*)&[a-z]*b[a-z]*)"`)
	f.Add(`(?:ab)*c{0,3}x&[abc]{5,9}x|y`)
	ti := fuzzWalkVocab(f, "ab", "abc", "xyz")
	f.Fuzz(func(t *testing.T, s string) {
		n, d, ok, err := fuzzCompile(s)
		if !ok || err != nil || d.Start == DeadState {
			return
		}
		eager, err := NewConstraint(d, ti, ConstraintOptions{})
		if err != nil {
			return
		}
		opts := fuzzOptions()
		opts.productMin = 1
		lazy, err := CompileConstraint(context.Background(), n, ti, opts, ConstraintOptions{})
		if err != nil {
			var fe *Error
			if errors.As(err, &fe) && fe.Code.IsLimit() {
				return
			}
			t.Fatalf("CompileConstraint(%s) = %v", n, err)
		}
		rng := rand.New(rand.NewPCG(uint64(len(s)), 5))
		for walk := range 3 {
			compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("%q walk %d", s, walk))
		}
	})
}

// TestLazyProductUpperBounds: the closer's bounds through lazy product
// pairs (their breadth-first short) are sound, U ≥ D against the brute
// force on every state random walks reach, and finite for most of them.
func TestLazyProductUpperBounds(t *testing.T) {
	ti, _ := agentVocab(t)
	for _, tc := range productCases(t) {
		if tc.name == "empty" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			// A top-level intersection compiles to an eager DFA: put it
			// inside something.
			n := Cat(Lit("<"), tc.n, Lit(">"))
			c, err := CompileConstraint(context.Background(), n, ti, Options{productMin: 1}, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, uint64(len(tc.name))))
			dst := make([]uint64, ti.MaskWords())
			for range 8 {
				m := c.NewMatcher()
				for range 40 {
					if err := m.FillMask(dst); err != nil {
						t.Fatal(err)
					}
					ids := tokAllowedIDs(dst)
					if len(ids) == 0 || m.IsTerminated() {
						break
					}
					tok := ids[rng.IntN(len(ids))]
					if ti.isEOS[tok] {
						break
					}
					if err := m.Accept(tok); err != nil {
						t.Fatal(err)
					}
				}
			}
			cl, states, finite := checkUpperSound(t, c, newBruteClose(c))
			if len(cl.ub.pairShort) == 0 {
				t.Errorf("no product pair's short was computed")
			}
			if finite < len(states)/2 {
				t.Errorf("only %d of %d states have a finite bound", finite, len(states))
			}
		})
	}
}
