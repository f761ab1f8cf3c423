package fsm

import (
	"strconv"
	"strings"
	"testing"
)

// TestMultiple checks Multiple(k) against arithmetic on every number below
// 3,000, with and without leading zeros, alone, inside a concatenation
// (spliced into the NFA) and intersected with another multiple (a product).
func TestMultiple(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 12, 13, 25, 429, 1000} {
		alone, err := Compile(Multiple(k), Options{})
		if err != nil {
			t.Fatalf("Multiple(%d): %v", k, err)
		}
		spliced, err := Compile(Cat(Lit("-"), Multiple(k), Lit(";")), Options{})
		if err != nil {
			t.Fatalf("Cat(Multiple(%d)): %v", k, err)
		}
		both, err := Compile(And(Multiple(k), Multiple(3)), Options{})
		if err != nil {
			t.Fatalf("And(Multiple(%d), Multiple(3)): %v", k, err)
		}
		for v := 0; v < 3000; v++ {
			for _, s := range []string{strconv.Itoa(v), "00" + strconv.Itoa(v)} {
				want := v%k == 0
				if got := Matches(alone, []byte(s)); got != want {
					t.Errorf("Multiple(%d) on %q = %v, want %v", k, s, got, want)
				}
				if got := Matches(spliced, []byte("-"+s+";")); got != want {
					t.Errorf("-Multiple(%d); on %q = %v, want %v", k, s, got, want)
				}
				if got := Matches(both, []byte(s)); got != (want && v%3 == 0) {
					t.Errorf("Multiple(%d)&Multiple(3) on %q = %v, want %v", k, s, got, want && v%3 == 0)
				}
			}
		}
		for _, s := range []string{"", "-", "1a", "+0", " 0", "0 ", "1.0"} {
			if Matches(alone, []byte(s)) {
				t.Errorf("Multiple(%d) matches %q", k, s)
			}
		}
	}
}

func TestMultipleStates(t *testing.T) {
	// Divisibility by 7 needs a state per remainder; by 4, the last two
	// digits only: the start and remainder 2 merge, and so do 1 and 3.
	for _, tt := range []struct{ k, states int }{{7, 9}, {4, 4}} {
		d, err := Compile(Multiple(tt.k), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.NumStates() != tt.states {
			t.Errorf("Multiple(%d): %d states, want %d", tt.k, d.NumStates(), tt.states)
		}
	}
}

func TestMultipleBad(t *testing.T) {
	for _, k := range []int{0, -3, MaxModulus + 1} {
		_, err := Compile(Multiple(k), Options{})
		if err == nil || !strings.Contains(err.Error(), "residues modulo") {
			t.Errorf("Multiple(%d): err %v, want an invalid-node error", k, err)
		}
	}
	for _, src := range []string{"(?mod{0:0})", "(?mod{})", "(?mod{x:0})", "(?mod{7:0}", "(?mod{99999999:0})", "(?mod{7:8})", "(?mod{7:3-1})", "(?mod{7})"} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) succeeded", src)
		}
	}
}

func TestMultipleRoundTrip(t *testing.T) {
	for _, n := range []*Node{Multiple(7), Cat(Lit("a"), Multiple(12), Lit("b")), Alt(Multiple(3), Multiple(429)), Residues(10, []bool{true, false, true, true, true, false, false, false, false, true})} {
		s := n.String()
		m, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if m.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, m.String())
		}
	}
}

// TestResidues checks a set of remainders against arithmetic, and its
// printed form.
func TestResidues(t *testing.T) {
	accept := make([]bool, 12)
	for _, r := range []int{1, 5, 6, 7, 11} {
		accept[r] = true
	}
	n := Residues(12, accept)
	if got, want := n.String(), "(?mod{12:1,5-7,11})"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	d, err := Compile(n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for v := 0; v < 2000; v++ {
		if got, want := Matches(d, []byte(strconv.Itoa(v))), accept[v%12]; got != want {
			t.Errorf("%d: %v, want %v", v, got, want)
		}
	}
	if n := Residues(3, []bool{false, false, false}); n.Op != OpNoMatch {
		t.Errorf("no remainder: %v, want ∅", n)
	}
	if n := Residues(3, []bool{true, true, true}); n.String() != `\y{30-39}+` {
		t.Errorf("every remainder: %v, want a digit string", n)
	}
}
