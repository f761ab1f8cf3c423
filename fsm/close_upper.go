package fsm

// Upper bounds from NFA paths: the closing fallback of a lazy constraint.
//
// FillMaskWithin's exact searches (close.go) explore a ball of radius about
// D around a state's successors. Where the successors reach into a large
// alternation (the calls of two dozen tools after a call's opening tag),
// that ball holds every alternative's automaton up to the depth D and both
// searches run out of states long before the budget is anywhere near D.
// What is needed then is not D but any sound upper bound U ≥ D: with
// U(s) ≤ b−1 for every successor s the plain mask is the answer, and near
// the end of the budget the tokens whose end state has U ≤ b−1 still close
// the output in time.
//
// U comes from the NFA, whose size is linear in the constraint, instead of
// from a ball of DFA states. Let a usable byte be one of a class that holds
// a one-byte token (closer.byteClass). For an NFA state n, dn(n) is the
// fewest usable bytes on an NFA path from n to the match state: 1 per byte
// or set state moving on a usable class, 0 per epsilon move, and for a
// placeholder not built yet (lazy_nfa.go) the length of a string its
// fragment will certainly match, from the AST (short, below). A DFA state
// of a lazy constraint is a set S of core NFA states (byte, set and match
// states) closed under epsilon moves, and
//
//	U(S) = min over n in S of dn(n).
//
// U(S) ≥ D(S): the path of n reads usable bytes b1..bU; the subset
// construction's successor of S on b1 is the closure of the states S's
// byte states move to on b1, so it contains the path's next core state,
// and by induction the state reached after b1..bU contains the match
// state. Each bi lies in a class with a one-byte token, which leads where
// bi leads, so U tokens close the output. Nothing in a lazy constraint's
// DFA can kill an NFA path: a DFA state is exactly its set (determinize.go;
// the NFA has only byte, set, epsilon, match and placeholder states), and
// what is not plain Thompson construction is resolved before or inside
// the NFA: intersections and complements (and with them the lookaheads and
// inner anchors of patterns, which assert.go rewrites into them, and the
// differences with a few strings of product.go) are DFAs spliced in as
// trimmed NFA fragments of the same language, so their paths are as real
// as any other; a lazy product's pairs (lazy_product.go) get placeholders
// only when they are live, and their short is a breadth-first search of
// the product over usable bytes (unknown past maxShortPairs pairs). A
// placeholder's fragment matches exactly its node's language, so a string
// of that language is a path through it once it is
// built (a Defer of x continuing at k: short(x) then dn(k); a Perm state:
// its missing required members in member order, with separators, then
// dn(k)). The DFA budgets can make an expansion fail, which is an error of
// the call, never a killed path. An eager constraint has no NFA; its byte
// distances are exact (eagerByteDistances) and it needs no fallback.
//
// short(x), the length of a shortest string of x over usable bytes, is
// computed on the AST, memoized per node: literals their length, byte
// classes 1, rune classes the UTF-8 length of a rune whose bytes are
// usable (one candidate per encoding length; none found: unknown),
// concatenations the sum, alternations the least, repeats Min times the
// operand, a Perm its required members with separators, an intersection
// or complement a breadth-first search of its DFA when the compiler has
// built it (unknown otherwise). Unknown is distInf, which is sound: it
// only makes a bound useless.
//
// The bounds only improve as the NFA grows: an expansion replaces a
// placeholder by a fragment whose shortest usable path is at most the
// placeholder's short (the NFA's distances are exact where the AST's are
// estimates), and otherwise only adds states and edges; and a pass that
// does not know the newer NFA states still gives sound bounds (it leaves
// their paths out of the minimum). dn is computed by one Dijkstra pass
// backward from the match state over the whole NFA (linear up to the
// heap's logarithm, no DFA states created); each pass is a version, and
// the per-DFA-state U of one version are kept until the next. The first
// horizon asked for makes the first pass; later ones read the last pass as
// it is until the NFA has grown by a quarter (so the passes cost a
// constant times the NFA's final size), and a horizon asked for after a
// failed byte search, or a mask cut by the bounds (close.go's
// fillByBounds, which takes the least of U and the stored distances),
// makes a fresh pass when the NFA has grown at all. A cut mask uses one
// fresh version for the state and all its successors, which is what the
// induction needs: with
// U(q) ≤ b, q's minimizing path starts with a usable byte into a successor
// s with U(s) ≤ U(q) − 1 ≤ b − 1 (its set holds the path's next state,
// whose distance is one less), so the restricted mask is not empty; and at
// the next step, a later version, U(s) is no larger. A horizon
// Hu(q) = max U over q's successors is an upper bound of H(q) whatever the
// version and is cached per state like H and Hb. None of these values
// enters the exact tables (tok, byt): they are bounds, not distances.
//
// Measured (BenchmarkUpperFallback: the 24-tool turn of the tests over
// Llama-3.1, a 55-token path from free text into a call's arguments, on a
// loaded 2-core machine): one pass over its 26,000 NFA states takes
// about 0.6 ms; with a budget of 19,000 no search runs, and a step costs
// 1.4 µs warm (FillMask: 1.4 µs) and 0.2 ms cold (FillMask: 0.08 ms; the
// rest is the successor walks of dense free-text states, which the byte
// bound needed too); closing the output at the path's end with
// MaxCloseStates 64, so that the searches run out and the cut answers,
// costs 0.3 ms a step cold and 1.4 µs warm.

import (
	"math/bits"
	"sync/atomic"
	"unicode/utf8"
)

// upperBounds holds a lazy constraint's NFA path bounds (see the file
// comment). Every field is under closer.mu.
type upperBounds struct {
	nStates, nEps int    // the NFA's size when dn was computed (nStates 0: never)
	ver           uint32 // the version of dn and at (one per pass)
	dn            []int32
	at            distPages // U per DFA state, of this version

	short map[*Node]int32 // short of AST nodes (see the file comment)
	// pairShort is short of lazy product pairs (the search does not
	// depend on the NFA, so it is kept across passes).
	pairShort map[prodPair]int32
	unknown   bool // some short was unknown for want of a DFA: forget them at the next pass

	// Scratch of a pass: the edges, then reverse edges (CSR) with their
	// weights.
	from, to, wt        []int32
	start, pred, weight []int32
	heap                distHeap
}

// ensureUpper makes U of every state of qs known at the current version.
// With fresh set it first computes dn again when the NFA has grown since
// the last pass, so that the version covers every NFA state of qs.
// Without it, it passes again only when there was no pass yet or the NFA
// has grown by a quarter since the last one (so the passes of a growing
// NFA cost a constant times its final size), and otherwise uses the last
// pass as it is: a stale pass still gives sound bounds, as the NFA states
// it does not know only leave their paths out of the minimum. It takes the
// lazy determinizer's lock (the NFA and its state sets change under it),
// after cl.mu as every path does. Under cl.mu.
func (cl *closer) ensureUpper(c *Constraint, qs []StateID, fresh bool) {
	l := c.lazy
	l.mu.Lock()
	defer l.mu.Unlock()
	ub := &cl.ub
	m := l.s.m
	grown := len(m.states) != ub.nStates || len(m.eps) != ub.nEps
	if ub.ver == 0 || grown && (fresh || len(m.states) >= ub.nStates+ub.nStates/4) {
		cl.nfaPass(c)
	}
	for _, q := range qs {
		if _, ok := ub.at.get(q); ok {
			continue
		}
		u := distInf
		for _, n := range l.s.t.get(int32(q)) {
			if int(n) < len(ub.dn) {
				u = min(u, ub.dn[n])
			}
		}
		ub.at.set(q, u)
	}
}

// nfaPass computes dn over the whole NFA and starts a new version. Under
// cl.mu and the determinizer's lock.
func (cl *closer) nfaPass(c *Constraint) {
	ub := &cl.ub
	s := c.lazy.s
	m := s.m
	n := len(m.states)
	if ub.unknown {
		clear(ub.short)
		ub.unknown = false
	}
	if ub.short == nil {
		ub.short = map[*Node]int32{}
	}
	// The usable classes, and the edges x → y with their weights, listed
	// once (from, to, weight), then sorted by y into reverse CSR form.
	var usable [256]bool
	for b := range 256 {
		usable[b] = cl.byteClass[s.classes[b]]
	}
	from, to, wt := ub.from[:0], ub.to[:0], ub.wt[:0]
	for x := range int32(n) {
		if s.live != nil && !s.live[x] {
			continue
		}
		st := &m.states[x]
		switch st.kind {
		case nfaByte, nfaSet:
			ok := false
			for k := int(s.classes[st.lo]); k <= int(s.classes[st.hi]) && !ok; k++ {
				b := s.rep[k]
				ok = usable[b] && (st.kind == nfaByte || m.sets[st.n].has(b))
			}
			if ok {
				from, to, wt = append(from, x), append(to, st.next), append(wt, 1)
			}
		case nfaEps:
			for _, y := range m.targets(st) {
				from, to, wt = append(from, x), append(to, y), append(wt, 0)
			}
		case nfaLazy:
			it := m.b.lazy[st.next]
			if w := cl.itemShort(c, it); w != distInf {
				from, to, wt = append(from, x), append(to, it.k), append(wt, w)
			}
		}
	}
	start := grow32(ub.start, n+1)
	clear(start)
	for _, y := range to {
		start[y+1]++
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	pred := grow32(ub.pred, len(to))
	weight := grow32(ub.weight, len(to))
	pos := grow32(ub.dn, n) // dn's buffer, before it is filled
	copy(pos, start[:n])
	for e, y := range to {
		pred[pos[y]], weight[pos[y]] = from[e], wt[e]
		pos[y]++
	}
	dn := pos
	for i := range dn {
		dn[i] = distInf
	}
	h := ub.heap[:0]
	dn[nfaAccept] = 0
	h.push(0, nfaAccept)
	for len(h) > 0 {
		d, y := h.pop()
		if d != dn[y] {
			continue
		}
		for e := start[y]; e < start[y+1]; e++ {
			x := pred[e]
			if nd := min(int64(d)+int64(weight[e]), int64(distInf)); nd < int64(dn[x]) {
				dn[x] = int32(nd)
				h.push(int32(nd), x)
			}
		}
	}
	grown := int64(cap(start)-cap(ub.start)+cap(pred)-cap(ub.pred)+cap(weight)-cap(ub.weight)+cap(dn)-cap(ub.dn)) * 4
	grown += int64(cap(from)-cap(ub.from)+cap(to)-cap(ub.to)+cap(wt)-cap(ub.wt)) * 4
	cl.mem.Add(grown + int64(cap(h)-cap(ub.heap))*8)
	ub.start, ub.pred, ub.weight, ub.dn, ub.heap = start, pred, weight, dn, h
	ub.from, ub.to, ub.wt = from, to, wt
	ub.nStates, ub.nEps = n, len(m.eps)
	ub.ver++
	// The last version's bounds go (their pages leave MemoryBytes).
	for i := range ub.at.p {
		if ub.at.p[i].Load() != nil {
			cl.mem.Add(-slotPageSize * 4)
		}
	}
	ub.at = distPages{p: make([]atomic.Pointer[[slotPageSize]atomic.Int32], len(c.pages)), mem: &cl.mem}
}

// grow32 returns a with length n, reallocated when its capacity is short.
func grow32(a []int32, n int) []int32 {
	if cap(a) < n {
		return make([]int32, n, n+n/4)
	}
	return a[:n]
}

// itemShort is the weight of a placeholder's edge to its continuation:
// the usable bytes of a string its fragment certainly matches (distInf:
// unknown).
func (cl *closer) itemShort(c *Constraint, it lazyItem) int32 {
	n := it.n
	if it.prod != nil {
		// A pair of a lazy product (lazy_product.go): a breadth-first
		// search of the product over usable bytes, memoized.
		key := prodPair{it.prod, it.pair}
		if v, ok := cl.ub.pairShort[key]; ok {
			return v
		}
		v := it.prod.shortest(it.pair, func(b byte) bool { return cl.byteClass[c.classes[b]] }, maxShortPairs)
		if cl.ub.pairShort == nil {
			cl.ub.pairShort = map[prodPair]int32{}
		}
		cl.ub.pairShort[key] = v
		return v
	}
	if n.Op == OpDefer {
		return cl.short(c, n.Subs[0])
	}
	// A Perm state: its missing required members, in member order, each
	// after a separator but the first when nothing was written yet.
	var sum int64
	items := int64(0)
	for i, r := range n.Req {
		if r && it.seen&(1<<i) == 0 {
			sum += int64(cl.short(c, n.Subs[2+i]))
			items++
		}
	}
	// A counted Perm short of its minimum: as many more of its cheapest
	// optional item (an unwritten optional member, or an extra).
	if more := int64(n.Min) - int64(bits.OnesCount64(it.seen)) - int64(it.extras) - items; more > 0 {
		cheap := int64(distInf)
		if n.Subs[1].Op != OpNoMatch {
			cheap = int64(cl.short(c, n.Subs[1]))
		}
		for i, r := range n.Req {
			if !r && it.seen&(1<<i) == 0 {
				cheap = min(cheap, int64(cl.short(c, n.Subs[2+i])))
			}
		}
		sum += more * cheap
		items += more
	}
	if items > 0 {
		seps := items - 1
		if it.written {
			seps++
		}
		if seps > 0 {
			sum += seps * int64(cl.short(c, n.Subs[0]))
		}
	}
	return int32(min(sum, int64(distInf)))
}

// short returns the length of a shortest string of n over usable bytes,
// or distInf when it is unknown (see the file comment), memoized.
func (cl *closer) short(c *Constraint, n *Node) int32 {
	ub := &cl.ub
	if v, ok := ub.short[n]; ok {
		return v
	}
	v := int32(min(cl.short1(c, n), int64(distInf)))
	ub.short[n] = v
	return v
}

func (cl *closer) short1(c *Constraint, n *Node) int64 {
	usable := func(b byte) bool { return cl.byteClass[c.classes[b]] }
	inf := int64(distInf)
	switch n.Op {
	case OpEmpty:
		return 0
	case OpLiteral:
		for _, b := range n.Lit {
			if !usable(b) {
				return inf
			}
		}
		return int64(len(n.Lit))
	case OpBytes:
		for _, r := range n.Bytes {
			for b := int(r.Lo); b <= int(r.Hi); b++ {
				if usable(byte(b)) {
					return 1
				}
			}
		}
		return inf
	case OpRunes:
		return runeShort(n.Runes, usable)
	case OpConcat:
		var sum int64
		for _, s := range n.Subs {
			sum = min(sum+int64(cl.short(c, s)), inf)
		}
		return sum
	case OpAlt:
		best := inf
		for _, s := range n.Subs {
			best = min(best, int64(cl.short(c, s)))
		}
		return best
	case OpRepeat:
		if len(n.Subs) != 1 || n.Max >= 0 && n.Max < n.Min {
			return inf
		}
		if n.Min <= 0 {
			return 0
		}
		x := int64(cl.short(c, n.Subs[0]))
		if x == inf || int64(n.Min) >= inf {
			return inf
		}
		return min(x*int64(n.Min), inf)
	case OpDefer:
		if len(n.Subs) != 1 {
			return inf
		}
		return int64(cl.short(c, n.Subs[0]))
	case OpPerm:
		if len(n.Subs) < 2 || len(n.Subs)-2 != len(n.Req) || len(n.Req) > MaxPermMembers {
			return inf
		}
		return int64(cl.itemShort(c, lazyItem{n: n}))
	case OpAnd, OpNot, OpResidue:
		var d *DFA
		if comp := c.lazy.comp; comp != nil {
			d = comp.dfas[n]
		}
		if v, ok := pinnedDFAs.Load(n); d == nil && ok {
			d = v.(*DFA)
		}
		if d == nil {
			ub := &cl.ub
			ub.unknown = true
			return inf
		}
		return dfaShort(d, usable)
	}
	return inf
}

// runeShort returns the UTF-8 length of a rune of rs whose bytes are all
// usable, trying the first and the last rune of each encoding length in
// each range (distInf when none of them is).
func runeShort(rs []RuneRange, usable func(byte) bool) int64 {
	best := int64(distInf)
	var buf [utf8.UTFMax]byte
	try := func(r rune) {
		if !utf8.ValidRune(r) {
			return
		}
		n := utf8.EncodeRune(buf[:], r)
		for _, b := range buf[:n] {
			if !usable(b) {
				return
			}
		}
		best = min(best, int64(n))
	}
	edges := []rune{0, 0x80, 0x800, 0x10000, utf8.MaxRune + 1}
	for _, r := range rs {
		for i := range len(edges) - 1 {
			lo, hi := max(r.Lo, edges[i]), min(r.Hi, edges[i+1]-1)
			if lo > hi {
				continue
			}
			if lo >= 0xD800 && lo <= 0xDFFF {
				lo = 0xE000
			}
			if hi >= 0xD800 && hi <= 0xDFFF {
				hi = 0xD7FF
			}
			if lo <= hi {
				try(lo)
				try(hi)
			}
		}
	}
	return best
}

// dfaShort returns the length of a shortest accepted string of d over
// usable bytes, by breadth-first search (distInf: none).
func dfaShort(d *DFA, usable func(byte) bool) int64 {
	k := d.NumClasses
	var ok [256]bool
	for b := range 256 {
		if usable(byte(b)) {
			ok[d.Classes[b]] = true
		}
	}
	dist := make([]int32, d.NumStates())
	for i := range dist {
		dist[i] = -1
	}
	if d.Start == DeadState {
		return int64(distInf)
	}
	queue := []StateID{d.Start}
	dist[d.Start] = 0
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if d.Accept[q] {
			return int64(dist[q])
		}
		for cls, nx := range d.Trans[int(q)*k : int(q)*k+k] {
			if nx != DeadState && ok[cls] && dist[nx] < 0 {
				dist[nx] = dist[q] + 1
				queue = append(queue, nx)
			}
		}
	}
	return int64(distInf)
}

// upperHorizon returns Hu(q), the largest U over q's token successors (-1
// if there is none; distInf when one is unknown), cached per state.
// Without fresh it returns the cached Hu if there is one, and otherwise
// computes it at the version ensureUpper keeps (which may be stale); with
// fresh it computes it at a version that covers the successors. Every Hu
// ever computed bounds H(q), so the cache keeps the smallest and a reader
// may see any of them. Only lazy constraints have it.
func (cl *closer) upperHorizon(c *Constraint, q StateID, fresh bool) (int32, error) {
	if old, ok := cl.hupp.get(q); ok && !fresh {
		return old, nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	old, ok := cl.hupp.get(q)
	if ok && !fresh {
		return old, nil
	}
	succ, err := cl.tokenSucc(c, q)
	if err != nil {
		return 0, err
	}
	cl.ensureUpper(c, succ, fresh)
	h := int32(-1)
	for _, s := range succ {
		d, _ := cl.ub.at.get(s)
		h = max(h, d)
	}
	if ok {
		h = min(h, old)
	}
	cl.hupp.set(q, h)
	return h, nil
}
