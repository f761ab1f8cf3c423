package grammar

import (
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
