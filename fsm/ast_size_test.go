package fsm

import "testing"

func TestNodeSize(t *testing.T) {
	a := Lit("a")
	shared := Alt(Lit("x"), Lit("y")) // 3 nodes
	deep := a
	for range 100000 {
		deep = &Node{Op: OpRepeat, Subs: []*Node{deep}, Min: 0, Max: 1}
	}
	for _, tt := range []struct {
		name string
		n    *Node
		want int
	}{
		{"nil", nil, 0},
		{"leaf", a, 1},
		{"shared", Cat(shared, Lit("-"), shared), 5}, // cat, alt, x, y, -
		{"deep", deep, 100001},
	} {
		if got := tt.n.Size(); got != tt.want {
			t.Errorf("%s: Size() = %d, want %d", tt.name, got, tt.want)
		}
	}
}
