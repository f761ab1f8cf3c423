package fsm

import "testing"

// TestChainAlt: x{0,n-1}|x{n}T, in either order, is built as one chain of
// n copies of x (builder.chain) with the language of the alternation
// built plainly (a third, repeated alternative keeps the builder from
// matching it), and with fewer NFA states.
func TestChainAlt(t *testing.T) {
	a, b := Lit("a"), Lit("b")
	any := AnyRune()
	for _, tt := range []struct {
		name string
		x    *Node
		n    int
		tail []*Node
	}{
		{"a2 then a{0,3}", a, 2, []*Node{Repeat(a, 0, 3)}},
		{"a5 then b", a, 5, []*Node{b}},
		{"a9 then b a*", a, 9, []*Node{b, Repeat(a, 0, -1)}},
		{"any9 then deferred any{0,20}", any, 9, []*Node{Defer(Repeat(any, 0, 20))}},
		{"any16 then b|empty", any, 16, []*Node{Alt(b, Empty())}},
		{"a3 then nothing", a, 3, []*Node{NoMatch()}},
	} {
		short := Repeat(tt.x, 0, tt.n-1)
		long := Cat(append([]*Node{Repeat(tt.x, tt.n, tt.n)}, tt.tail...)...)
		plain := Alt(short, long, short)
		var plainSt Stats
		want, err := Compile(plain, Options{Stats: &plainSt})
		if err != nil {
			t.Fatal(err)
		}
		for i, alt := range []*Node{Alt(short, long), Alt(long, short)} {
			if long.Op == OpConcat {
				if _, _, _, ok := chainAlt(alt); !ok {
					t.Fatalf("%s: chainAlt does not match %s", tt.name, alt)
				}
			}
			var st Stats
			got, err := Compile(alt, Options{Stats: &st})
			if err != nil {
				t.Fatal(err)
			}
			checkDFA(t, got)
			if got.String() != want.String() {
				t.Errorf("%s (order %d): the chain's DFA differs from the alternation's:\n%s\nwant\n%s", tt.name, i, got, want)
			}
			if long.Op == OpConcat && tt.n >= 5 && st.NFAStates >= plainSt.NFAStates {
				t.Errorf("%s (order %d): %d NFA states, the plain alternation %d: want fewer", tt.name, i, st.NFAStates, plainSt.NFAStates)
			}
		}
	}
	// Shapes that are not the chain's.
	for _, alt := range []*Node{
		Alt(Repeat(a, 0, 2), Cat(Repeat(a, 2, 2), b)), // x{2} after x{0,2}: n-1 ≠ 2
		Alt(Repeat(a, 0, 2), Cat(Repeat(b, 3, 3), b)), // another x
		Alt(Repeat(a, 1, 2), Cat(Repeat(a, 3, 3), b)), // a minimum
		Alt(Repeat(a, 0, 2), Cat(Repeat(a, 3, 4), b)), // not exactly n
	} {
		if _, _, _, ok := chainAlt(alt); ok {
			t.Errorf("chainAlt matches %s", alt)
		}
	}
}

// FuzzChainAlt: for any tail T (a dialect regex) and count n, the chain
// build of x{0,n-1}|x{n}T has the plain alternation's language.
func FuzzChainAlt(f *testing.F) {
	for _, s := range []string{"b", "a*", "(?:)|b", "[a-c]{2,5}", "~(a)", "a&b*"} {
		f.Add(s, uint8(3), false)
		f.Add(s, uint8(9), true)
	}
	f.Fuzz(func(t *testing.T, tail string, n uint8, multibyte bool) {
		T, err := Parse(tail)
		if err != nil || len(tail) > 40 {
			return
		}
		x := Lit("a")
		if multibyte {
			x = RuneClass(RuneRange{'a', 'b'}, RuneRange{0x400, 0x4FF})
		}
		cnt := int(n%12) + 2
		short, long := Repeat(x, 0, cnt-1), Cat(Repeat(x, cnt, cnt), T)
		opts := Options{MaxDFAStates: 5000, MaxNFAStates: 20000}
		want, err := Compile(Alt(short, long, short), opts)
		if err != nil {
			return // a budget: nothing to compare
		}
		got, err := Compile(Alt(long, short), opts)
		if err != nil {
			t.Fatalf("chain of %q, n %d: %v (the alternation compiled)", tail, cnt, err)
		}
		if got.String() != want.String() {
			t.Fatalf("chain of %q, n %d: the DFA differs from the alternation's", tail, cnt)
		}
	})
}
