package fsm

// The slicer, adapted to a DFA (constrained-decoding.md §1.5, after
// llguidance's docs/optimizations.md).
//
// About half of all masks in JSON decoding are ≥85% full: inside a string
// body almost every token is allowed, and a plain walk visits most of the
// trie (1–3 ms at 128k tokens). The TokenIndex sets aside the string-safe
// tokens (complete UTF-8, no '"', '\\' or control characters) in slices by
// length in characters (1–10, 11–30, 31+), each with its own trie and a
// precomputed full mask; all other tokens form the "rest" trie.
//
// For a DFA state q, safe(q) is the largest n such that every string of at
// most n string-safe characters keeps q alive. Every token of a slice whose
// longest token has at most safe(q) characters is then allowed in q, so
// mask(q) = OR of those slices' masks, plus a walk of the other slices'
// tries and of the rest trie. The result is exactly the plain walk's. An
// unbounded string body has safe = ∞ (all slices apply, only the rest trie,
// a few thousand tokens, is walked); a maxLength body with 15 characters left
// has safe = 15; a state outside strings has safe = 0 (nothing applies, and
// the walks prune early anyway).
//
// safe(q) comes from a search over the product of the DFA with U, the small
// UTF-8 automaton of the string-safe class: node (s, u), where u is the
// position inside a UTF-8 character (0 = at a boundary). Reading a byte from
// u = 0 starts a character and costs 1; other bytes cost 0. A byte allowed by
// U that sends s to the dead state "kills" at cost = characters started. The
// smallest kill cost k gives safe(q) = k-1. The search is a layered 0-1 BFS
// from (q, 0) over byte classes (each (DFA class, U successor) pair once), so
// it touches only states reachable by string-safe text: a few nodes for a
// string body, ~9·n for a bounded body with n characters left. It stops as
// soon as the answer is known, once it passes the longest slice token
// (nothing more to gain), or when it runs out of fuel; then it returns a
// smaller, still sound, value.

// utf8SafeStates is the number of states of U.
const utf8SafeStates = 9

// slicerFuel bounds the product nodes one safeChars search expands; past it
// the search returns a sound under-approximation. 20k nodes is ~0.2 ms,
// well under the walk it may save.
const slicerFuel = 20000

// utf8Safe is U: utf8Safe[u][b] is the next U state, or -1 when byte b may
// not follow in state u. State 0 is the character boundary. The accepted
// characters are every Unicode scalar value except '"', '\\', U+0000–U+001F
// and U+007F–U+009F, a superset of stringSafeRune, which only makes safe()
// smaller, so the slices stay sound.
var utf8Safe = func() (t [utf8SafeStates][256]int8) {
	const (
		uC2 = 1 + iota // after C2: A0–BF (U+00A0–U+00BF)
		uT1            // one continuation byte left
		uE0            // after E0: A0–BF, then one more
		uT2            // two continuation bytes left
		uED            // after ED: 80–9F (no surrogates), then one more
		uF0            // after F0: 90–BF, then two more
		uT3            // three continuation bytes left
		uF4            // after F4: 80–8F, then two more
	)
	for u := range t {
		for b := range t[u] {
			t[u][b] = -1
		}
	}
	set := func(u int, lo, hi int, to int8) {
		for b := lo; b <= hi; b++ {
			t[u][b] = to
		}
	}
	set(0, 0x20, 0x7E, 0)
	t[0]['"'] = -1
	t[0]['\\'] = -1
	set(0, 0xC2, 0xC2, uC2)
	set(0, 0xC3, 0xDF, uT1)
	set(0, 0xE0, 0xE0, uE0)
	set(0, 0xE1, 0xEC, uT2)
	set(0, 0xED, 0xED, uED)
	set(0, 0xEE, 0xEF, uT2)
	set(0, 0xF0, 0xF0, uF0)
	set(0, 0xF1, 0xF3, uT3)
	set(0, 0xF4, 0xF4, uF4)
	set(uC2, 0xA0, 0xBF, 0)
	set(uT1, 0x80, 0xBF, 0)
	set(uE0, 0xA0, 0xBF, uT1)
	set(uT2, 0x80, 0xBF, uT1)
	set(uED, 0x80, 0x9F, uT1)
	set(uF0, 0x90, 0xBF, uT2)
	set(uT3, 0x80, 0xBF, uT2)
	set(uF4, 0x80, 0x8F, uT2)
	return t
}()

// uEdge is one (DFA byte class, next U state) pair leaving a U state.
type uEdge struct {
	class uint8
	next  uint8
}

// uNode is a node of the product search.
type uNode struct {
	s StateID
	u uint8
}

// initUEdges computes, per U state, the distinct (class, U successor) pairs.
func (c *Constraint) initUEdges() {
	for u := range utf8SafeStates {
		var seen [256][utf8SafeStates]bool
		for b := range 256 {
			to := utf8Safe[u][b]
			if to < 0 {
				continue
			}
			cl := c.classes[b]
			if !seen[cl][to] {
				seen[cl][to] = true
				c.uEdges[u] = append(c.uEdges[u], uEdge{class: cl, next: uint8(to)})
			}
		}
	}
}

// safeChars returns a sound under-approximation of safe(q) (see the file
// comment), capped at the longest slice token: any value ≥ that cap means
// every slice applies.
func (c *Constraint) safeChars(q StateID, sc *maskScratch) int {
	c.uOnce.Do(c.initUEdges)
	limit := c.ti.maxChars
	if sc.visited == nil || len(sc.visited) > 256 {
		// A fresh map: clearing a map that once grew large costs its
		// capacity on every later call.
		sc.visited = make(map[uint64]int32)
	} else {
		clear(sc.visited)
	}
	key := func(s StateID, u uint8) uint64 { return uint64(s)<<8 | uint64(u) }
	trans, k := c.dfa.Trans, c.k
	best := int(^uint(0) >> 1) // smallest kill cost found
	layer := append(sc.layer[:0], uNode{s: q})
	next := sc.next[:0]
	sc.visited[key(q, 0)] = 0
	fuel := slicerFuel
	for d := 0; ; d++ {
		// Expand layer d; zero-cost successors join it as we go.
		for i := 0; i < len(layer); i++ {
			if fuel--; fuel < 0 {
				sc.layer, sc.next = layer, next
				return min(best, d) - 1
			}
			nd := layer[i]
			cost := d
			if nd.u == 0 {
				cost++
			}
			row := int(nd.s) * k
			for _, e := range c.uEdges[nd.u] {
				t := trans[row+int(e.class)]
				if t == DeadState {
					best = min(best, cost)
					continue
				}
				kk := key(t, e.next)
				if old, ok := sc.visited[kk]; ok && int(old) <= cost {
					continue
				}
				sc.visited[kk] = int32(cost)
				if cost == d {
					layer = append(layer, uNode{s: t, u: e.next})
				} else {
					next = append(next, uNode{s: t, u: e.next})
				}
			}
		}
		// Every kill still to find costs at least d+1.
		if best <= d+1 || len(next) == 0 || d >= limit {
			sc.layer, sc.next = layer, next
			if best > d+1 && len(next) == 0 {
				return limit + d // no string-safe text ever kills q
			}
			return min(best, d+1) - 1
		}
		layer, next = next, layer[:0]
	}
}
