package fsm

import (
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
// Both are read off the product of the DFA and U, the small UTF-8
// automaton of the string-safe class, whose nodes are (DFA state, U state);
// a byte that U allows but the DFA sends to dead from a node is a "kill".
// safe(q) is n when the nearest kill from (q, 0) is met while reading
// character n+1: a breadth-first search by characters read that visits
// each node once. It stops at the first kill (at once for every state
// outside a string body, which must be cheap: safe = 0, no slice applies,
// dead is not needed), when every node is visited with no kill (nothing
// ever dies: safe = dead = ∞; the unbounded body stops after one
// character), past searchLimit characters (the longest tokens are walked
// instead), or when its fuel runs out; each exit returns sound values (safe
// never too high, dead never too low). Only after a kill does dead matter:
// it is one more than the longest string that stays alive, a depth-first
// search with the longest remaining length memoized per node (a cycle, or
// a string longer than searchLimit characters, makes it ∞).
//
// In a lazy constraint most dense states answer without any search: their
// NFA set proves that nothing ever dies (safe.go), which the state's flags
// record when its row is computed.

// utf8SafeStates is the number of states of U.
const utf8SafeStates = 9

// slicerFuel bounds the edges one sliceBounds search examines (each is a
// table lookup and a stamp check, a few ns); past it the search returns
// sound values. 60k edges is ~200 µs at most, well under the walk it may
// save (measured with the earlier layer-by-layer search, which revisited
// nodes: against 20k, the MaskBench every-5th sample's TBM p99 went from
// 490–500 to 435–453 µs; 250k gave no further gain).
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

// initUEdges computes the constraint's U edges (uEdgesOf).
func (c *Constraint) initUEdges() { c.uEdges = uEdgesOf(&c.classes) }

// uEdgesOf returns, per U state, the distinct (byte class, U successor)
// pairs of U's bytes under a DFA's byte classes.
func uEdgesOf(classes *[256]uint8) (edges [utf8SafeStates][]uEdge) {
	for u := range utf8SafeStates {
		var seen [256][utf8SafeStates]bool
		for b := range 256 {
			to := utf8Safe[u][b]
			if to < 0 {
				continue
			}
			cl := classes[b]
			if !seen[cl][to] {
				seen[cl][to] = true
				edges[u] = append(edges[u], uEdge{class: cl, next: uint8(to)})
			}
		}
	}
	return edges
}

// noBound stands for ∞ in sliceBounds' results.
const noBound = int(^uint(0) >> 1)

// sliceBounds returns sound approximations of safe(q) and dead(q) (see the
// file comment): every string of at most safe string-safe characters keeps q
// alive, and every string of dead or more kills it (noBound: unknown or ∞).
// The search is the file comment's; a state flagged safe-universal (safe.go)
// answers ∞, ∞ at once.
func (c *Constraint) sliceBounds(q StateID, sc *maskScratch) (safe, dead int, err error) {
	info := atomic.LoadUint32(&c.tab.Load().info[q])
	if info&stateSafeUniversal != 0 {
		return noBound, noBound, nil // safe.go: the state's NFA set proves it
	}
	if info&stateSafeDeep != 0 {
		// safe.go: the set proves that every slice applies, without
		// creating the states the search and the walk would pass.
		return c.ti.maxChars, noBound, nil
	}
	limit := searchLimit(c.ti)
	c.uOnce.Do(c.initUEdges)
	b := boundsSearch{c: c, sc: sc, tab: c.tab.Load(), fuel: slicerFuel, out: sc.edges[:0]}
	b.reset()
	// cur: the nodes (s, 0) first reached after n characters.
	cur, next, stack := append(sc.cur[:0], q), sc.next[:0], sc.stack2[:0]
	defer func() { sc.cur, sc.next, sc.stack2, sc.edges = cur, next, stack, b.out }()
	b.mark(uNode{s: q})
	for n := 0; ; n++ {
		next = next[:0]
		killed := false
	layer:
		for _, s0 := range cur {
			stack = append(stack[:0], uNode{s: s0})
			for len(stack) > 0 {
				nd := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				edges, ok := b.edges(nd)
				if !ok {
					if b.err != nil {
						return 0, 0, b.err
					}
					// Out of fuel: no kill within n characters.
					return n, noBound, nil
				}
				for _, e := range edges {
					if e.s == DeadState {
						killed = true
						break layer
					}
					to := uNode{s: e.s, u: e.u}
					if b.seen(to) {
						continue
					}
					b.mark(to)
					if to.u == 0 {
						next = append(next, to.s)
					} else {
						stack = append(stack, to)
					}
				}
			}
		}
		switch {
		case killed && n == 0:
			// safe = 0: no slice applies, and the caller walks the full
			// trie without needing dead (every state outside a string
			// body ends here, after one character).
			return 0, noBound, nil
		case killed:
			// Some string of n+1 characters kills q, none shorter.
			dead := b.longestAlive(q, limit)
			return n, dead, b.err
		case len(next) == 0:
			// Every node is visited and none kills: no string ever dies.
			return noBound, noBound, nil
		case n+1 > limit:
			// Deeper only decides the last slice, which is walked.
			return n + 1, noBound, nil
		}
		cur, next = next, cur
	}
}

// searchLimit is how many characters deep sliceBounds looks: the longest
// token of the last slice but one. Past it, knowing more decides only
// whether the last slice, the few longest tokens (129 tokens of 49 to 128
// characters in Llama-3), is ORed in or walked, and walking it costs a few
// thousand trie nodes where the search would read 80 more characters of
// every state it reaches (a long maxLength string body searched 128
// characters ahead at every cold mask).
func searchLimit(ti *TokenIndex) int {
	if n := len(ti.slices); n >= 2 {
		return ti.slices[n-2].maxChars
	}
	return ti.maxChars
}

// boundsSearch is the state of one sliceBounds search: the constraint's
// table (refreshed as a lazy constraint expands states), the fuel left, and
// generation-stamped marks over (state, U state) nodes in sc.
type boundsSearch struct {
	c    *Constraint
	sc   *maskScratch
	tab  *table
	fuel int
	err  error
	out  []uEdgeTo // edges' scratch
}

// uEdgeTo is one step of the product: the DFA state reached (DeadState: a
// kill) and the U state.
type uEdgeTo struct {
	s StateID
	u uint8
}

// reset starts a new generation of marks, sized for the states so far.
func (b *boundsSearch) reset() {
	sc := b.sc
	if need := b.c.numStates() * utf8SafeStates; len(sc.stamp) < need {
		sc.stamp = make([]uint32, 2*need) // doubling: a lazy constraint keeps growing
		sc.gen = 0
	}
	b.next()
}

// next starts a new generation of marks.
func (b *boundsSearch) next() {
	sc := b.sc
	if sc.gen++; sc.gen == 0 {
		clear(sc.stamp)
		sc.gen = 1
	}
}

// key returns nd's index in the marks, growing them when a lazy constraint
// created states on the way.
func (b *boundsSearch) key(nd uNode) int {
	sc := b.sc
	key := int(nd.s)*utf8SafeStates + int(nd.u)
	if key >= len(sc.stamp) {
		sc.stamp = append(sc.stamp, make([]uint32, max(key+utf8SafeStates, 2*len(sc.stamp))-len(sc.stamp))...)
		if len(sc.val) > 0 {
			sc.val = append(sc.val, make([]int32, len(sc.stamp)-len(sc.val))...)
		}
	}
	return key
}

func (b *boundsSearch) seen(nd uNode) bool { return b.sc.stamp[b.key(nd)] == b.sc.gen }

func (b *boundsSearch) mark(nd uNode) { b.sc.stamp[b.key(nd)] = b.sc.gen }

// edges returns the steps from nd over U's bytes (expanding nd's state in a
// lazy constraint), or false when the fuel ran out or an expansion failed
// (b.err). The result is valid until the next call.
func (b *boundsSearch) edges(nd uNode) ([]uEdgeTo, bool) {
	c := b.c
	edges := c.uEdges[nd.u]
	if b.fuel -= len(edges); b.fuel < 0 {
		return nil, false
	}
	row := int(nd.s) * c.k
	out := b.out[:0]
	for _, e := range edges {
		v := atomic.LoadUint32(&b.tab.trans[row+int(e.class)])
		if v == unknownState {
			if b.tab, b.err = c.lazy.expand(c, nd.s); b.err != nil {
				return nil, false
			}
			v = atomic.LoadUint32(&b.tab.trans[row+int(e.class)])
		}
		out = append(out, uEdgeTo{s: StateID(v / uint32(c.k)), u: e.next})
	}
	b.out = out
	return out, true
}

// longestAlive returns one more than the most characters a string can have
// while keeping q alive (dead(q)), or noBound when that exceeds limit (then
// only the last slice is concerned, and it is walked) or is unknown (a
// cycle, or the fuel ran out). It is a
// depth-first search over the live product nodes with the longest remaining
// length memoized per node; a node met again while on the search path is
// a cycle, so strings of every length stay alive.
func (b *boundsSearch) longestAlive(q StateID, limit int) int {
	b.next()
	sc := b.sc
	if len(sc.val) < len(sc.stamp) {
		sc.val = make([]int32, len(sc.stamp))
	}
	const onPath = -1
	// A frame is a node on the search path: the characters read to reach
	// it, its edges not yet followed (arena[next:end]) and the most
	// characters readable from it found so far.
	type frame struct {
		nd        uNode
		depth     int
		next, end int
		best      int32
	}
	var stack []frame
	arena := sc.arena[:0]
	defer func() { sc.arena = arena }()
	push := func(nd uNode, depth int) bool {
		edges, ok := b.edges(nd)
		if !ok {
			return false
		}
		b.mark(nd)
		sc.val[b.key(nd)] = onPath
		lo := len(arena)
		arena = append(arena, edges...)
		stack = append(stack, frame{nd: nd, depth: depth, next: lo, end: len(arena)})
		return true
	}
	if !push(uNode{s: q}, 0) {
		return noBound
	}
	for {
		f := &stack[len(stack)-1]
		if f.next == f.end {
			// Every edge of f.nd is followed: f.best is final.
			best := f.best
			sc.val[b.key(f.nd)] = best
			arena = arena[:f.end-len(b.c.uEdges[f.nd.u])]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return int(best) + 1
			}
			p := &stack[len(stack)-1]
			p.best = max(p.best, best+int32(boolInt(f.nd.u == 0)))
			continue
		}
		e := arena[f.next]
		f.next++
		if e.s == DeadState {
			continue
		}
		to := uNode{s: e.s, u: e.u}
		w := boolInt(e.u == 0) // the step completes a character
		depth := f.depth + w
		if depth > limit {
			return noBound // an alive string longer than any token
		}
		if b.seen(to) {
			v := sc.val[b.key(to)]
			if v == onPath {
				return noBound // a cycle: strings of every length stay alive
			}
			if depth+int(v) > limit {
				return noBound
			}
			f.best = max(f.best, v+int32(w))
			continue
		}
		if !push(to, depth) {
			return noBound
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
