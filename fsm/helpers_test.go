package fsm

import (
	"errors"
	"testing"
)

// mustCompile compiles n with default options or fails the test.
func mustCompile(t testing.TB, n *Node) *DFA {
	t.Helper()
	d, err := Compile(n, Options{})
	if err != nil {
		t.Fatalf("Compile(%s) error: %v", n, err)
	}
	checkDFA(t, d)
	return d
}

func mustParse(t testing.TB, s string) *Node {
	t.Helper()
	n, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q) error: %v", s, err)
	}
	return n
}

// checkDFA verifies the documented invariants of a *DFA: the dead state 0
// rejects and loops, the table has NumStates*NumClasses entries, classes
// are in range, every state other than 0 is reachable from Start and can
// reach acceptance, and no two states are equivalent (checked by naive
// Moore refinement, independent of the Valmari code under test).
func checkDFA(t testing.TB, d *DFA) {
	t.Helper()
	n, k := d.NumStates(), d.NumClasses
	if n < 1 || len(d.Trans) != n*k {
		t.Fatalf("DFA has %d states, %d classes, %d transitions; want states ≥ 1 and states*classes transitions", n, k, len(d.Trans))
	}
	for b := range 256 {
		if int(d.Classes[b]) >= k {
			t.Fatalf("Classes[%#x] = %d, want < NumClasses %d", b, d.Classes[b], k)
		}
	}
	if d.Accept[0] {
		t.Fatalf("dead state 0 is accepting")
	}
	for c := range k {
		if d.Trans[c] != 0 {
			t.Fatalf("dead state 0 moves to %d on class %d", d.Trans[c], c)
		}
	}
	if d.Start == DeadState {
		if n != 1 {
			t.Fatalf("empty-language DFA has %d states, want 1", n)
		}
		return
	}
	dist := d.distToAccept()
	seen := make([]bool, n)
	seen[d.Start] = true
	queue := []StateID{d.Start}
	for i := 0; i < len(queue); i++ {
		for c := range k {
			t2 := d.Trans[int(queue[i])*k+c]
			if int(t2) >= n {
				t.Fatalf("transition to %d out of range", t2)
			}
			if !seen[t2] {
				seen[t2] = true
				queue = append(queue, t2)
			}
		}
	}
	for s := 1; s < n; s++ {
		if !seen[s] {
			t.Fatalf("state %d unreachable from start", s)
		}
		if dist[s] < 0 {
			t.Fatalf("state %d cannot reach acceptance (not trimmed)", s)
		}
	}
	if n <= 3000 {
		if m := mooreCount(d); m != n {
			t.Fatalf("DFA with %d states is not minimal: Moore refinement finds %d classes\n%s", n, m, d)
		}
	}
}

// mooreCount returns the number of Myhill–Nerode classes of d's states by
// naive iterated refinement (O(n² k) at worst; for small DFAs only).
func mooreCount(d *DFA) int {
	n, k := d.NumStates(), d.NumClasses
	block := make([]int, n)
	for s := range n {
		if d.Accept[s] {
			block[s] = 1
		}
	}
	count := 0
	for {
		sig := map[string]int{}
		next := make([]int, n)
		for s := range n {
			key := make([]byte, 0, 4*(k+1))
			for _, v := range append([]int{block[s]}, func() []int {
				out := make([]int, k)
				for c := range k {
					out[c] = block[d.Trans[s*k+c]]
				}
				return out
			}()...) {
				key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			}
			id, ok := sig[string(key)]
			if !ok {
				id = len(sig)
				sig[string(key)] = id
			}
			next[s] = id
		}
		block = next
		if len(sig) == count {
			return count
		}
		count = len(sig)
	}
}

func errCode(err error) (ErrorCode, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}
