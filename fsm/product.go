package fsm

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// Products and complements of DFAs.
//
// Intersection is the classic product construction, explored breadth-first
// from the pair of start states over the joint byte classes (the common
// refinement of both operands' classes); a pair with a dead component is
// dead. A difference a ∧ ¬b is the same product with b complemented on the
// fly: b's dead state is then a live component (nothing b accepts lies
// ahead, so every string is outside b) and a pair accepts when a does and b
// does not; building ¬b as a DFA first would cost a finish of its own.
// Complement swaps accepting and rejecting states of the complete DFA, so
// the old dead state becomes an accepting sink (every string with a prefix
// outside the operand's prefixes is in the complement). Results go through
// finish again, because products create non-minimal and dead pockets; a
// complement of a minimal DFA is minimal (states that differ on some string
// still differ on it, with the answers swapped), so it is only trimmed and
// renumbered.

func (c *compiler) intersect(a, b *DFA) (*DFA, error) { return c.product(a, b, false) }

// difference returns the DFA of L(a) minus L(b).
func (c *compiler) difference(a, b *DFA) (*DFA, error) { return c.product(a, b, true) }

// product explores the product of a and b: their intersection, or with
// negB the difference a ∧ ¬b.
func (c *compiler) product(a, b *DFA, negB bool) (*DFA, error) {
	if a.Start == DeadState || (b.Start == DeadState && !negB) {
		return emptyDFA(), nil
	}
	r := &rawDFA{}
	joint := make(map[[2]uint8]uint8)
	var reps []byte
	for bt := range 256 {
		key := [2]uint8{a.Classes[bt], b.Classes[bt]}
		cl, ok := joint[key]
		if !ok {
			cl = uint8(len(reps))
			joint[key] = cl
			reps = append(reps, byte(bt))
		}
		r.classes[bt] = cl
	}
	k := len(reps)
	r.k = k
	ids := map[uint64]int32{0: 0}
	pairs := [][2]StateID{{0, 0}}
	r.accept = []bool{false}
	intern := func(p, q StateID) (int32, error) {
		if p == DeadState || (q == DeadState && !negB) {
			return 0, nil
		}
		key := uint64(p)<<32 | uint64(q)
		if id, ok := ids[key]; ok {
			return id, nil
		}
		if len(pairs) >= c.opts.MaxDFAStates {
			return 0, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(len(pairs)+1))
		}
		if b := int64(len(pairs)+1) * int64(k) * 4; b > int64(c.opts.MaxDFABytes) {
			return 0, limitErr(ErrTooManyDFABytes, int64(c.opts.MaxDFABytes), b)
		}
		id := int32(len(pairs))
		ids[key] = id
		pairs = append(pairs, [2]StateID{p, q})
		r.accept = append(r.accept, a.Accept[p] && b.Accept[q] != negB)
		return id, nil
	}
	start, err := intern(a.Start, b.Start)
	if err != nil {
		return nil, err
	}
	r.start = start
	r.trans = make([]int32, k, 64*k)
	for i := 1; i < len(pairs); i++ {
		if err := c.poll(k); err != nil {
			return nil, err
		}
		p, q := pairs[i][0], pairs[i][1]
		for _, bt := range reps {
			t, err := intern(a.Next(p, bt), b.Next(q, bt))
			if err != nil {
				return nil, err
			}
			r.trans = append(r.trans, t)
		}
	}
	return c.finish(r)
}

func (c *compiler) complement(d *DFA) (*DFA, error) {
	r := &rawDFA{classes: d.Classes, k: d.NumClasses, start: int32(d.Start)}
	// The complement's raw numbering must keep state 0 as "dead" for
	// finish, but the operand's dead state becomes an accepting sink: give
	// every operand state s the raw id s+1 and keep raw 0 as an unused
	// dead state.
	n := d.NumStates()
	r.trans = make([]int32, (n+1)*r.k)
	r.accept = make([]bool, n+1)
	for s := range n {
		r.accept[s+1] = !d.Accept[s]
		for cl := range r.k {
			r.trans[(s+1)*r.k+cl] = int32(d.Trans[s*r.k+cl]) + 1
		}
	}
	r.start = int32(d.Start) + 1
	// d is minimal (it came from finish), so the complement is: only trim
	// and renumber it. The complement of a loose d is as loose.
	nd, err := c.finishWith(r, true)
	if err == nil && d.loose {
		nd.loose = true
	}
	return nd, err
}

// raw returns a copy of d as a raw DFA for finish (d may be shared: Pin).
func (d *DFA) raw() *rawDFA {
	r := &rawDFA{classes: d.Classes, k: d.NumClasses, trans: make([]int32, len(d.Trans)), accept: slices.Clone(d.Accept), start: int32(d.Start)}
	for i, t := range d.Trans {
		r.trans[i] = int32(t)
	}
	return r
}

// productAccepts reports whether a and b accept a common string, exploring
// their product depth-first (which reaches long witnesses without first
// enumerating every shorter pair) and stopping at the first pair of
// accepting states, under the same state budget as intersect.
func (c *compiler) productAccepts(a, b *DFA) (bool, error) {
	if a.Start == DeadState || b.Start == DeadState {
		return false, nil
	}
	var reps []byte
	seen := make(map[[2]uint8]bool)
	for bt := range 256 {
		key := [2]uint8{a.Classes[bt], b.Classes[bt]}
		if !seen[key] {
			seen[key] = true
			reps = append(reps, byte(bt))
		}
	}
	visited := map[uint64]bool{uint64(a.Start)<<32 | uint64(b.Start): true}
	stack := [][2]StateID{{a.Start, b.Start}}
	for len(stack) > 0 {
		p, q := stack[len(stack)-1][0], stack[len(stack)-1][1]
		stack = stack[:len(stack)-1]
		if a.Accept[p] && b.Accept[q] {
			return true, nil
		}
		if err := c.poll(len(reps)); err != nil {
			return false, err
		}
		for i := len(reps) - 1; i >= 0; i-- {
			p2, q2 := a.Next(p, reps[i]), b.Next(q, reps[i])
			if p2 == DeadState || q2 == DeadState {
				continue
			}
			key := uint64(p2)<<32 | uint64(q2)
			if visited[key] {
				continue
			}
			if len(visited) >= c.opts.MaxDFAStates {
				return false, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(len(visited)+1))
			}
			visited[key] = true
			stack = append(stack, [2]StateID{p2, q2})
		}
	}
	return false, nil
}

// tupleAccepts is productAccepts for any number of DFAs: whether they
// accept a common string, by a depth-first search of their product that
// stops at the first tuple of accepting states, under the same budget.
func (c *compiler) tupleAccepts(ds []*DFA) (bool, error) {
	if len(ds) == 2 {
		return c.productAccepts(ds[0], ds[1])
	}
	for _, d := range ds {
		if d.Start == DeadState {
			return false, nil
		}
	}
	// One byte of each joint class of all the operands.
	var reps []byte
	seen := make(map[string]bool)
	key := make([]byte, len(ds))
	for bt := range 256 {
		for i, d := range ds {
			key[i] = d.Classes[bt]
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			reps = append(reps, byte(bt))
		}
	}
	n := len(ds)
	enc := func(t []StateID) string {
		b := make([]byte, 0, 4*n)
		for _, s := range t {
			b = binary.LittleEndian.AppendUint32(b, uint32(s))
		}
		return string(b)
	}
	start := make([]StateID, n)
	for i, d := range ds {
		start[i] = d.Start
	}
	visited := map[string]bool{enc(start): true}
	stack := [][]StateID{start}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		all := true
		for i, d := range ds {
			if !d.Accept[t[i]] {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
		if err := c.poll(len(reps) * n); err != nil {
			return false, err
		}
	next:
		for r := len(reps) - 1; r >= 0; r-- {
			u := make([]StateID, n)
			for i, d := range ds {
				if u[i] = d.Next(t[i], reps[r]); u[i] == DeadState {
					continue next
				}
			}
			k := enc(u)
			if visited[k] {
				continue
			}
			if len(visited) >= c.opts.MaxDFAStates {
				return false, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(len(visited)+1))
			}
			visited[k] = true
			stack = append(stack, u)
		}
	}
	return false, nil
}

// Differences with a finite set of strings.
//
// The key of an extra object property is "any JSON string but the declared
// names": a difference whose subtrahend is a handful of literals. The
// general product compiles the literals into a DFA and minimizes twice
// (~250 µs for five names, most of it fixed cost); subtractStrings walks a
// trie of the literals alongside a instead. A trie node is reached by one
// string only, so it pairs with exactly one state of a: the result is a's
// states plus one state per trie node, leaving the trie for a's own state
// as soon as the text leaves every literal. Each literal byte gets a class
// of its own, so a trie edge is one class. The result is loose (see DFA):
// trimmed and reachable, its states minimal but for rare cases (below), its
// classes not merged and its numbering not canonical.

// maxFiniteStrings and maxFiniteBytes bound the literal sets
// subtractStrings takes; larger ones go through the general product.
const (
	maxFiniteStrings = 1024
	maxFiniteBytes   = 1 << 16
)

// finiteStrings returns the strings of n when n is built from literals,
// ε, concatenation, alternation and small byte and rune sets, and its
// language has at most maxFiniteStrings strings of maxFiniteBytes bytes in
// all; ok is false otherwise (the caller then takes the general path).
func finiteStrings(n *Node) (strs [][]byte, ok bool) {
	var total int
	var rec func(n *Node, depth int) ([][]byte, bool)
	rec = func(n *Node, depth int) ([][]byte, bool) {
		if depth > 64 {
			return nil, false
		}
		switch n.Op {
		case OpEmpty:
			return [][]byte{{}}, true
		case OpLiteral:
			total += len(n.Lit)
			return [][]byte{n.Lit}, total <= maxFiniteBytes
		case OpBytes:
			var out [][]byte
			for _, r := range n.Bytes {
				for b := int(r.Lo); b <= int(r.Hi); b++ {
					if out = append(out, []byte{byte(b)}); len(out) > maxFiniteStrings {
						return nil, false
					}
				}
			}
			total += len(out)
			return out, total <= maxFiniteBytes
		case OpRunes:
			var out [][]byte
			for _, r := range n.Runes {
				if int(r.Hi)-int(r.Lo) >= maxFiniteStrings {
					return nil, false
				}
				for c := r.Lo; c <= r.Hi; c++ {
					if !utf8.ValidRune(c) {
						continue // surrogates never match
					}
					if out = append(out, utf8.AppendRune(nil, c)); len(out) > maxFiniteStrings {
						return nil, false
					}
					total += len(out[len(out)-1])
				}
			}
			return out, total <= maxFiniteBytes
		case OpAlt:
			var out [][]byte
			for _, s := range n.Subs {
				xs, ok := rec(s, depth+1)
				if !ok {
					return nil, false
				}
				if out = append(out, xs...); len(out) > maxFiniteStrings {
					return nil, false
				}
			}
			return out, true
		case OpConcat:
			out := [][]byte{{}}
			for _, s := range n.Subs {
				xs, ok := rec(s, depth+1)
				if !ok || len(out)*len(xs) > maxFiniteStrings {
					return nil, false
				}
				next := make([][]byte, 0, len(out)*len(xs))
				for _, a := range out {
					for _, b := range xs {
						if total += len(a) + len(b); total > maxFiniteBytes {
							return nil, false
						}
						next = append(next, append(append(make([]byte, 0, len(a)+len(b)), a...), b...))
					}
				}
				out = next
			}
			return out, true
		}
		return nil, false
	}
	return rec(n, 0)
}

// subtractStrings returns the DFA of L(a) minus strs (see above).
func (c *compiler) subtractStrings(a *DFA, strs [][]byte) (*DFA, error) {
	if a.Start == DeadState {
		return a, nil
	}
	// The trie: node 0 is the root, a child comes after its parent.
	type edge struct {
		b    byte
		node int32
	}
	child := [][]edge{nil}
	final := []bool{false}
	var bound [257]bool
	for _, s := range strs {
		t := int32(0)
		for _, b := range s {
			next := int32(-1)
			for _, e := range child[t] {
				if e.b == b {
					next = e.node
					break
				}
			}
			if next < 0 {
				next = int32(len(child))
				child = append(child, nil)
				final = append(final, false)
				child[t] = append(child[t], edge{b, next})
				bound[b], bound[int(b)+1] = true, true
			}
			t = next
		}
		final[t] = true
	}
	// Joint classes: a's, with every literal byte in a class of its own.
	var classes [256]uint8
	var reps []byte
	for b := range 256 {
		if b == 0 || bound[b] || a.Classes[b] != a.Classes[b-1] {
			reps = append(reps, byte(b))
		}
		classes[b] = uint8(len(reps) - 1)
	}
	k := len(reps)
	// run[t]: a's state after trie node t's string.
	run := make([]StateID, len(child))
	run[0] = a.Start
	for t := range child {
		for _, e := range child[t] {
			if run[t] != DeadState {
				run[e.node] = a.Next(run[t], e.b)
			}
		}
	}
	// Bottom up (children come after their parents), each trie node gets
	// the state that stands for it: a's own state when no string a accepts
	// from there is removed; else dead when nothing is left (the pair
	// accepts nothing and leads nowhere live); else a pair state, one per
	// distinct row and accepting flag (trie suffixes shared by several
	// strings share their states). A pair state's row is a's row for its
	// state of a but for the trie edges that lead elsewhere, so it is kept,
	// and compared, as those overrides. a being minimal and trimmed, the
	// result is then minimal too but for pair states that happen to equal
	// states of a (L(s) and L(s′) differing by removed strings only) and
	// is trimmed.
	type override struct {
		class uint8
		to    StateID
	}
	type pairState struct {
		s      StateID
		accept bool
		over   []override
	}
	na := a.NumStates()
	id := make([]StateID, len(child))
	var pairs []pairState
	sig := make(map[string]StateID)
	var key []byte
	for t := len(child) - 1; t >= 0; t-- {
		s := run[t]
		if s == DeadState {
			continue // id 0
		}
		var over []override
		for _, e := range child[t] {
			if id[e.node] != run[e.node] {
				over = append(over, override{classes[e.b], id[e.node]})
			}
		}
		removes := final[t] && a.Accept[s]
		if !removes && len(over) == 0 {
			id[t] = s
			continue
		}
		p := pairState{s: s, accept: a.Accept[s] && !final[t], over: over}
		if !p.accept {
			live := false // some transition leads to a live state
			for cl, b := range reps {
				to := a.Next(s, b)
				for _, o := range over {
					if o.class == uint8(cl) {
						to = o.to
					}
				}
				if live = to != DeadState; live {
					break
				}
			}
			if !live {
				continue // dead: id 0
			}
		}
		slices.SortFunc(over, func(x, y override) int { return int(x.class) - int(y.class) })
		key = binary.LittleEndian.AppendUint32(key[:0], uint32(s))
		if p.accept {
			key = append(key, 1)
		} else {
			key = append(key, 0)
		}
		for _, o := range over {
			key = binary.LittleEndian.AppendUint32(append(key, o.class), uint32(o.to))
		}
		if q, ok := sig[string(key)]; ok {
			id[t] = q
			continue
		}
		q := StateID(na + len(pairs))
		if int(q)+1 > c.opts.MaxDFAStates {
			return nil, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(q)+1)
		}
		if b := (int64(q) + 1) * int64(k) * 4; b > int64(c.opts.MaxDFABytes) {
			return nil, limitErr(ErrTooManyDFABytes, int64(c.opts.MaxDFABytes), b)
		}
		sig[string(key)] = q
		id[t] = q
		pairs = append(pairs, p)
	}
	if id[0] == DeadState {
		return emptyDFA(), nil
	}
	// Number the states reachable from the start, breadth first, and fill
	// their rows.
	num := make([]StateID, na+len(pairs))
	order := []StateID{DeadState, id[0]}
	num[id[0]] = 1
	var trans []StateID
	accept := []bool{false}
	zero := make([]StateID, k)
	trans = append(trans, zero...)
	for i := 1; i < len(order); i++ {
		s, acc := order[i], false
		var over []override
		if int(s) >= na {
			p := &pairs[int(s)-na]
			s, acc, over = p.s, p.accept, p.over
		} else {
			acc = a.Accept[s]
		}
		accept = append(accept, acc)
		row := len(trans)
		trans = append(trans, zero...)
		for cl, b := range reps {
			trans[row+cl] = a.Next(s, b)
		}
		for _, o := range over {
			trans[row+int(o.class)] = o.to
		}
		for _, x := range trans[row : row+k] {
			if x != DeadState && num[x] == 0 {
				num[x] = StateID(len(order))
				order = append(order, x)
			}
		}
	}
	// Renumber the targets, now that every state has its number.
	for i, x := range trans {
		trans[i] = num[x]
	}
	d := &DFA{Classes: classes, NumClasses: k, Trans: trans, Accept: accept, Start: 1, loose: true}
	return d, c.poll(len(trans))
}
