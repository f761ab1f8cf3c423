package grammar

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"conform/fsm"
)

func TestLengthBounds(t *testing.T) {
	a := fsm.AnyRune()
	tests := []struct {
		name   string
		n      *fsm.Node
		lo, hi int
	}{
		{"lit", fsm.Lit("héllo"), 5, 5},
		{"class", a, 1, 1},
		{"cat", fsm.Cat(fsm.Lit("ab"), a), 3, 3},
		{"alt", fsm.Alt(fsm.Lit("a"), fsm.Lit("abc")), 1, 3},
		{"repeat", fsm.Repeat(a, 2, 4), 2, 4},
		{"star", fsm.Star(a), 0, -1},
		{"and", fsm.And(fsm.Star(a), fsm.Repeat(a, 1, 3)), 1, 3},
		{"not", fsm.Not(a), 0, -1},
	}
	for _, tt := range tests {
		lo, hi := lengthBounds(tt.n)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("lengthBounds(%s) = %d, %d; want %d, %d", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
	email, err := formatNode("email")
	if err != nil {
		t.Fatal(err)
	}
	if _, hi := lengthBounds(email); hi < 0 || hi > 254 {
		t.Errorf("lengthBounds(email) hi = %d, want ≤ 254", hi)
	}
}

func TestLengthAlphabet(t *testing.T) {
	az := fsm.RuneClass(fsm.RuneRange{Lo: 'a', Hi: 'z'})
	digit := fsm.RuneClass(fsm.RuneRange{Lo: '0', Hi: '9'})
	tests := []struct {
		name  string
		parts []*fsm.Node
		want  *fsm.Node
	}{
		{"class", []*fsm.Node{fsm.Plus(az)}, az},
		{"cat", []*fsm.Node{fsm.Plus(fsm.Cat(az, digit))}, fsm.RuneClass(fsm.RuneRange{Lo: '0', Hi: '9'}, fsm.RuneRange{Lo: 'a', Hi: 'z'})},
		{"literal", []*fsm.Node{fsm.Alt(fsm.Lit("né"), fsm.Lit("b"))}, fsm.RuneClass(fsm.RuneRange{Lo: 'b', Hi: 'b'}, fsm.RuneRange{Lo: 'n', Hi: 'n'}, fsm.RuneRange{Lo: 'é', Hi: 'é'})},
		{"smallest", []*fsm.Node{fsm.Star(fsm.AnyRune()), fsm.Plus(digit)}, digit},
		{"not", []*fsm.Node{fsm.Not(fsm.Lit("a"))}, fsm.AnyRune()},
		{"bytes", []*fsm.Node{fsm.ByteClass(fsm.ByteRange{Lo: 'a', Hi: 'b'})}, fsm.AnyRune()},
		{"none", nil, fsm.AnyRune()},
	}
	for _, tt := range tests {
		if got := lengthAlphabet(tt.parts); got.String() != tt.want.String() {
			t.Errorf("lengthAlphabet(%s) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestLengthOverNarrowAlphabet: a long minLength over a pattern written in
// a few ASCII letters counts single bytes, not UTF-8 sequences (MaskBench
// Handwritten string1: 410k NFA states before).
func TestLengthOverNarrowAlphabet(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type": "string", "pattern": "^([a-z][0-9])+$", "minLength": 10000}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var st fsm.Stats
	if _, err := fsm.Compile(res.Node, fsm.Options{Stats: &st}); err != nil {
		t.Fatal(err)
	}
	if st.NFAStates > 60000 {
		t.Errorf("NFA of minLength 10000 over ([a-z][0-9])+ has %d states, want ≤ 60000 (one per counted character and a few)", st.NFAStates)
	}
}

// TestLongPlainString: a plain string's maxLength is counted exactly (up
// to maxPlainStringLength) in deferred chunks, for every split of the bound
// into chunks; with a pattern it is still lowered to MaxStringLength.
func TestLongPlainString(t *testing.T) {
	for _, tt := range []struct{ min, max, chunk int }{
		{0, 1000, 256}, {5, 1000, 256}, {0, 300, 256}, {3, 512, 256}, {0, 513, 256}, {1, 90, 16}, {0, 47, 16}, {16, 80, 16},
		{0, 31, 256}, {0, 32, 256}, {0, 48, 256}, {0, 95, 256}, {2, 97, 256}, {0, 1, 256}, {7, 7, 256}, {0, 100, 4},
	} {
		schema := []byte(fmt.Sprintf(`{"type": "string", "minLength": %d, "maxLength": %d}`, tt.min, tt.max))
		res, err := CompileSchema(schema, Options{MaxStringLength: tt.chunk})
		if err != nil {
			t.Fatal(err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for n := max(tt.min-2, 0); n <= tt.max+2; n++ {
			s := `"` + strings.Repeat("é", n/2) + strings.Repeat("a", n-n/2) + `"`
			q := d.Run(d.Start, []byte(s))
			if got, want := d.Accept[q], n >= tt.min && n <= tt.max; got != want {
				t.Fatalf("min %d max %d chunk %d: a string of %d characters accepted %v, want %v", tt.min, tt.max, tt.chunk, n, got, want)
			}
		}
	}
	// An empty range stays empty (a merged minLength 9 and maxLength 8).
	c := newCompiler(Options{}.withDefaults(), nil)
	for _, r := range [][2]int{{9, 8}, {600, 500}, {9, 1000}} {
		if n := c.lengthRepeat(fsm.AnyRune(), r[0], r[1]); (n.Op == fsm.OpNoMatch) != (r[1] < r[0]) {
			t.Errorf("lengthRepeat(%d, %d) = %s", r[0], r[1], n)
		}
	}
	// In a lazy constraint nothing past the first chunks is built up front.
	res, err := CompileSchema([]byte(`{"type": "string", "maxLength": 32767}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	toks := [][]byte{[]byte(`"`), []byte("a"), []byte("ab"), {fsm.SpecialPrefix, 'E'}}
	ti, err := fsm.NewTokenIndex(toks, []fsm.TokenID{3}, len(toks))
	if err != nil {
		t.Fatal(err)
	}
	var st fsm.Stats
	if _, err := fsm.CompileConstraint(context.Background(), res.Node, ti, fsm.Options{Stats: &st}, fsm.ConstraintOptions{}); err != nil {
		t.Fatal(err)
	}
	if st.NFAStates > 100_000 {
		t.Errorf("maxLength 32767: %d NFA states built before the first mask", st.NFAStates)
	}
	// A pattern keeps the old bound: maxLength lowered to MaxStringLength.
	res, err = CompileSchema([]byte(`{"type": "string", "pattern": "^a+$", "maxLength": 1000}`), Options{MaxStringLength: 16})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]bool{16: true, 17: false} {
		if q := d.Run(d.Start, []byte(`"`+strings.Repeat("a", n)+`"`)); d.Accept[q] != want {
			t.Errorf("pattern, MaxStringLength 16: %d characters accepted %v, want %v", n, !want, want)
		}
	}
}
