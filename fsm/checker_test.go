package fsm

import "testing"

// TestCheckerIsEmpty: a Checker's answers match the minimized DFA's, for
// intersections of two, three and nested operands, empty and not, asked
// again on the same Checker (its kept DFAs must not change an answer).
func TestCheckerIsEmpty(t *testing.T) {
	tests := []struct {
		re    string
		empty bool
	}{
		{`a+&b+`, true},
		{`[a-z]*x[a-z]*&[a-z]{3}`, false},
		{`[a-z]*x[a-z]*&[a-z]{3}&~(?:[a-z]*x[a-z]*)`, true},
		{`(?:[a-c]*a[a-c]*)&(?:[a-c]*b[a-c]*)&(?:[a-c]*c[a-c]*)&[a-c]{3}`, false},
		{`(?:[a-c]*a[a-c]*)&(?:[a-c]*b[a-c]*)&(?:[a-c]*c[a-c]*)&[a-c]{2}`, true},
		{`x(?:a|b)&x[bc]&x[b-d]`, false},
		{`~(?:.*)&a`, true},
		{`abc`, false},
	}
	k := NewChecker(Options{})
	for round := range 2 {
		for _, tt := range tests {
			n := mustParse(t, tt.re)
			d := mustCompile(t, n)
			if want := d.Start == DeadState; want != tt.empty {
				t.Fatalf("%s: the DFA says empty %v, the table %v", tt.re, want, tt.empty)
			}
			got, err := k.IsEmpty(n)
			if err != nil {
				t.Fatalf("round %d: IsEmpty(%s) = %v", round, tt.re, err)
			}
			if got != tt.empty {
				t.Errorf("round %d: IsEmpty(%s) = %v, want %v", round, tt.re, got, tt.empty)
			}
			// A nested intersection is flattened to the same tuple.
			if n.Op == OpAnd && len(n.Subs) >= 3 {
				nested := And(n.Subs[0], And(n.Subs[1:]...))
				if got, err := k.IsEmpty(nested); err != nil || got != tt.empty {
					t.Errorf("IsEmpty(nested %s) = %v, %v; want %v", tt.re, got, err, tt.empty)
				}
			}
		}
	}
	if len(k.c.dfas) == 0 {
		t.Errorf("the Checker kept no DFAs")
	}
}
