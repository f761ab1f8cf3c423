package fsm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

func TestCoversSafeChars(t *testing.T) {
	tests := []struct {
		name string
		rs   []RuneRange
		want bool
	}{
		{"every character", []RuneRange{{0, 0x10FFFF}}, true},
		{"JSON string body", []RuneRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}}, true},
		{"unsorted, overlapping", []RuneRange{{0x5D, 0x10FFFF}, {0x30, 0x5B}, {0x00, 0x40}}, true},
		{"without C1 controls", []RuneRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7E}, {0xA0, 0x10FFFF}}, true},
		{"without astral", []RuneRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0xFFFF}}, false},
		{"without z", []RuneRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x79}, {0x7B, 0x10FFFF}}, false},
		{"without space", []RuneRange{{0x21, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}}, false},
		{"ASCII letters", []RuneRange{{'a', 'z'}, {'A', 'Z'}}, false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		if got := coversSafeChars(tt.rs); got != tt.want {
			t.Errorf("%s: coversSafeChars = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// safeKillReachable reports, by exploring every node of the product of
// the constraint's DFA and U from (q, 0) without limits, whether some
// string of safe characters kills q.
func safeKillReachable(t *testing.T, c *Constraint, q StateID) bool {
	t.Helper()
	c.uOnce.Do(c.initUEdges)
	b := boundsSearch{c: c, sc: c.ti.newScratch(), tab: c.tab.Load(), fuel: math.MaxInt}
	b.reset()
	stack := []uNode{{s: q}}
	b.mark(stack[0])
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		edges, ok := b.edges(nd)
		if !ok {
			t.Fatalf("exploring state %d: %v", q, b.err)
		}
		for _, e := range edges {
			if e.s == DeadState {
				return true
			}
			if to := (uNode{s: e.s, u: e.u}); !b.seen(to) {
				b.mark(to)
				stack = append(stack, to)
			}
		}
	}
	return false
}

// walkFlagged makes walks random walks of up to steps tokens over c and
// checks every visited state that has flag with check (a non-empty answer
// says what is wrong), returning how many were flagged.
func walkFlagged(t *testing.T, c *Constraint, rng *rand.Rand, walks, steps int, flag uint32, check func(StateID) string) int {
	t.Helper()
	ti := c.ti
	w := make([]uint64, ti.MaskWords())
	flagged := 0
	for walk := range walks {
		m := c.NewMatcher()
		for step := range steps {
			if err := m.FillMask(w); err != nil {
				t.Fatal(err)
			}
			if atomic.LoadUint32(&c.tab.Load().info[m.state])&flag != 0 {
				flagged++
				if why := check(m.state); why != "" {
					t.Fatalf("walk %d step %d: state %d is flagged %#x, but %s", walk, step, m.state, flag, why)
				}
			}
			ids := tokAllowedIDs(w)
			tok := ids[rng.IntN(len(ids))]
			if ti.isEOS[tok] {
				break
			}
			if err := m.Accept(tok); err != nil {
				t.Fatal(fmt.Errorf("walk %d step %d: %w", walk, step, err))
			}
		}
	}
	return flagged
}

// TestSafeUniversalStates checks the spliced-DFA analysis against the
// exhaustive search on every state of DFAs with and without such states.
func TestSafeUniversalStates(t *testing.T) {
	ti := tokCl100kIndex(t)
	tests := []struct {
		name    string
		d       *DFA
		anyUniv bool
	}{
		{"string", tokStringDFA(-1), true},
		{"bounded string", tokStringDFA(6), false},
		{"pattern body", mustCompile(t, mustParse(t, `"[^"\\\x{0}-\x{1F}]*abc[^"\\\x{0}-\x{1F}]*"`)), true},
		{"extra key", mustCompile(t, Cat(Lit(`"`), And(mustParse(t, `[^"\\\x{0}-\x{1F}]*`), Not(mustParse(t, `name|namespace|id`))), Lit(`":1`))), true},
		{"ASCII body", mustCompile(t, mustParse(t, `"[ -~]*"`)), false},
		{"object (string bodies inside)", tokJSONObjectDFA(), true},
		{"digits", tokDigitsDFA(), false},
	}
	for _, tt := range tests {
		univ := safeUniversalStates(tt.d)
		c := tokMustConstraint(t, tt.d, ti, ConstraintOptions{})
		found := false
		for s := 1; s < tt.d.NumStates(); s++ {
			want := !safeKillReachable(t, c, StateID(s))
			if univ[s] != want {
				t.Errorf("%s: state %d: safeUniversalStates = %v, exhaustive search %v", tt.name, s, univ[s], want)
			}
			found = found || univ[s]
		}
		if found != tt.anyUniv {
			t.Errorf("%s: some state universal = %v, want %v", tt.name, found, tt.anyUniv)
		}
	}
}

// TestSafeUniversalFlags walks lazy constraints and checks every state
// flagged stateSafeUniversal against the exhaustive search, that the flag
// is set where the NFA proves it (string bodies, loops of any character,
// extra keys in any-order objects) and nowhere in a bounded string.
func TestSafeUniversalFlags(t *testing.T) {
	ti := tokCl100kIndex(t)
	body := `[^"\\\x{0}-\x{1F}]`
	tests := []struct {
		name     string
		n        *Node
		wantFlag bool
	}{
		{"string", mustParse(t, jsonString), true},
		{"pattern body", mustParse(t, `"`+body+`*abc`+body+`*"`), true},
		{"extra key", Cat(Lit(`{"`), And(mustParse(t, body+`*`), Not(mustParse(t, `name|namespace|id`))), Lit(`":1}`)), true},
		{"perm with extras", mustParse(t, `\{(?perm(,)("(?:`+body+`*&~(?:a|b))":0)("a":"`+body+`*")!("b":[0-9]))\}`), true},
		{"deferred strings", Cat(Lit("["), Defer(mustParse(t, jsonString)), Repeat(Cat(Lit(","), Defer(mustParse(t, jsonString))), 0, 3), Lit("]")), true},
		{"bounded string", mustParse(t, `"`+body+`{0,12}"`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := CompileConstraint(context.Background(), tt.n, ti, Options{}, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			flagged := walkFlagged(t, c, rand.New(rand.NewPCG(7, uint64(len(tt.name)))), 8, 40, stateSafeUniversal, func(q StateID) string {
				if safeKillReachable(t, c, q) {
					return "a safe string kills it"
				}
				return ""
			})
			if (flagged > 0) != tt.wantFlag {
				t.Errorf("%d visited states flagged safe-universal; want some = %v", flagged, tt.wantFlag)
			}
		})
	}
}

// safeKillWithin reports whether some string of at most n safe characters
// kills q (a breadth-first search over the product with U by characters).
func safeKillWithin(t *testing.T, c *Constraint, q StateID, n int) bool {
	t.Helper()
	c.uOnce.Do(c.initUEdges)
	b := boundsSearch{c: c, sc: c.ti.newScratch(), tab: c.tab.Load(), fuel: math.MaxInt}
	depth := map[uNode]int{{s: q}: 0}
	queue := []uNode{{s: q}}
	for len(queue) > 0 {
		nd := queue[0]
		queue = queue[1:]
		d := depth[nd]
		edges, ok := b.edges(nd)
		if !ok {
			t.Fatalf("exploring state %d: %v", q, b.err)
		}
		for _, e := range edges {
			if e.s == DeadState {
				return true // within the (d+1)th character, d < n
			}
			to, dd := uNode{s: e.s, u: e.u}, d
			if e.u == 0 {
				dd++ // a character completed
			}
			if _, seen := depth[to]; seen || dd >= n {
				continue
			}
			depth[to] = dd
			queue = append(queue, to)
		}
	}
	return false
}

// TestSafeDeepFlags walks lazy constraints over bounded strings and checks
// every state flagged stateSafeDeep against the bounded search (no string
// of maxChars safe characters kills it), and that long enough bodies, in
// one repeat or in deferred chunks, are flagged and short ones not.
func TestSafeDeepFlags(t *testing.T) {
	ti := tokCl100kIndex(t)
	body := mustParse(t, `[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt]`)
	q := Lit(`"`)
	tests := []struct {
		name     string
		n        *Node
		wantFlag bool
	}{
		{"maxLength 300", Cat(q, Repeat(body, 0, 300), q), true},
		{"chunks", Cat(q, Alt(Repeat(body, 0, 63), Cat(Repeat(body, 64, 64), Defer(Repeat(body, 0, 200)))), q), true},
		{"in an array", Cat(Lit("["), Repeat(Cat(q, Repeat(body, 1, 255), q, Lit(",")), 0, 3), Lit("1]")), true},
		{"maxLength 12", Cat(q, Repeat(body, 0, 12), q), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := CompileConstraint(context.Background(), tt.n, ti, Options{}, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			flagged := walkFlagged(t, c, rand.New(rand.NewPCG(9, uint64(len(tt.name)))), 6, 60, stateSafeDeep, func(q StateID) string {
				if safeKillWithin(t, c, q, ti.maxChars) {
					return fmt.Sprintf("a string of %d safe characters kills it", ti.maxChars)
				}
				return ""
			})
			if (flagged > 0) != tt.wantFlag {
				t.Errorf("%d visited states flagged safe-deep; want some = %v", flagged, tt.wantFlag)
			}
		})
	}
}
