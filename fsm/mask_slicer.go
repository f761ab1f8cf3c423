package fsm

import (
	"slices"
	"sync/atomic"
)

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
// For a DFA state q, two numbers decide what a slice costs:
//
//   - safe(q): the largest n such that every string of at most n
//     string-safe characters keeps q alive. Every token of a slice whose
//     longest token has at most safe(q) characters is allowed in q, so those
//     slices are ORed in (one OR of a precomputed cumulative mask).
//   - dead(q): the smallest n such that every string of n string-safe
//     characters kills q. No token of a slice whose shortest token has at
//     least dead(q) characters is allowed, so those slices are skipped.
//
// The slices in between are walked, and so is the rest trie. The result is
// exactly the plain walk's. An unbounded string body has safe = dead = ∞
// (all slices apply; only the rest trie, a few thousand tokens, is walked);
// a maxLength body with r characters left has safe = r and dead = r+1, so
// with one slice per short length nothing but the rest trie is walked; a
// state outside strings has safe = 0 (nothing applies, and the code falls
// back to one walk of the full trie, which prunes early there anyway).
//
// Both come from the exact-length reachable sets R_n: the states reachable
// from q by exactly n string-safe characters, each character read through
// U, the small UTF-8 automaton of the string-safe class (a byte read from a
// node (s, u) that U allows but the DFA sends to dead is a "kill"). safe(q)
// is n when the first kill happens while reading character n+1; dead(q) is
// n when R_n is empty. The layers stop as soon as the first character can
// kill q (safe = 0: no slice applies and dead is not needed; this is every
// state outside a string body, so it must be cheap), at a fixed point
// (R_{n+1} = R_n, so
// nothing new can happen: the unbounded body stops after one character),
// past the longest slice token (nothing more to gain), or when the work
// budget runs out; each exit returns sound values (safe never too high,
// dead never too low).

// utf8SafeStates is the number of states of U.
const utf8SafeStates = 9

// slicerFuel bounds the edges one sliceBounds search examines (each is a
// table lookup and a stamp check, a few ns); past it the search returns
// sound values. 60k edges is ~200 µs at most, well under the walk it may
// save: against 20k, the MaskBench every-5th sample's TBM p99 went from
// 490–500 to 435–453 µs (any-order objects and the long key names of
// large schemas need several layers before the fixed point); 250k gave
// no further gain.
const slicerFuel = 60000

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

// uNode is a node of the product search: a DFA state inside a character.
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

// noBound stands for ∞ in sliceBounds' results.
const noBound = int(^uint(0) >> 1)

// sliceBounds returns sound approximations of safe(q) and dead(q) (see the
// file comment): every string of at most safe string-safe characters keeps q
// alive, and every string of dead or more kills it (noBound: unknown or ∞).
func (c *Constraint) sliceBounds(q StateID, sc *maskScratch) (safe, dead int, err error) {
	c.uOnce.Do(c.initUEdges)
	limit := c.ti.maxChars
	tab, k := c.tab.Load(), c.k
	cur := append(sc.cur[:0], q) // R_n, sorted, no duplicates
	next := sc.next[:0]
	stack := sc.stack2[:0]
	defer func() { sc.cur, sc.next, sc.stack2 = cur, next, stack }()
	safe = -1 // set at the first kill
	fuel := slicerFuel
	// Dedupe per layer with generation stamps over (state, U state).
	if need := c.numStates() * utf8SafeStates; len(sc.stamp) < need {
		sc.stamp = make([]uint32, 2*need) // doubling: a lazy constraint keeps growing
		sc.gen = 0
	}
	for n := 0; ; n++ {
		// Read one more character from every state of R_n.
		if sc.gen++; sc.gen == 0 {
			clear(sc.stamp)
			sc.gen = 1
		}
		gen := sc.gen
		next = next[:0]
		killed := false
		for _, s0 := range cur {
			stack = append(stack[:0], uNode{s: s0})
			for len(stack) > 0 {
				nd := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				row := int(nd.s) * k
				edges := c.uEdges[nd.u]
				if fuel -= len(edges); fuel < 0 {
					// R_n is known and no kill happened within n characters.
					if safe < 0 {
						safe = n
					}
					return safe, noBound, nil
				}
				for _, e := range edges {
					v := atomic.LoadUint32(&tab.trans[row+int(e.class)])
					if v == unknownState {
						if tab, err = c.lazy.expand(c, nd.s); err != nil {
							return 0, 0, err
						}
						v = atomic.LoadUint32(&tab.trans[row+int(e.class)])
					}
					t := StateID(v / uint32(k))
					if t == DeadState {
						if n == 0 {
							// safe = 0: no slice applies, and the caller
							// walks the full trie without needing dead.
							return 0, noBound, nil
						}
						killed = true
						continue
					}
					key := int(t)*utf8SafeStates + int(e.next)
					if key >= len(sc.stamp) {
						// A lazy constraint created states on the way.
						sc.stamp = append(sc.stamp, make([]uint32, max(key+utf8SafeStates, 2*len(sc.stamp))-len(sc.stamp))...)
					}
					if sc.stamp[key] == gen {
						continue
					}
					sc.stamp[key] = gen
					if e.next == 0 {
						next = append(next, t)
					} else {
						stack = append(stack, uNode{s: t, u: e.next})
					}
				}
			}
		}
		if killed && safe < 0 {
			safe = n // some string of n+1 characters kills q, none shorter
		}
		if len(next) == 0 {
			return max(safe, 0), n + 1, nil // every string of n+1 characters kills q
		}
		slices.Sort(next)
		switch {
		case slices.Equal(next, cur):
			// A fixed point: every later layer is the same set, so the
			// kill status of every later character is this one's.
			if safe < 0 {
				safe = noBound
			}
			return safe, noBound, nil
		case n+1 > limit:
			// No token is longer than limit characters: nothing to gain.
			if safe < 0 {
				safe = n + 1
			}
			return safe, noBound, nil
		}
		cur, next = next, cur
	}
}
