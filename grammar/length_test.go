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
