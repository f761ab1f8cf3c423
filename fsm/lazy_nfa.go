package fsm

import "math/bits"

// Lazy NFA fragments.
//
// An OpDefer node and every subset state of an OpPerm node are built as a
// placeholder state (nfaLazy) that records what to build and with which
// continuation. The subset construction's closure meets placeholders while
// it follows epsilon moves and expands them then (subsets.closureOf calls
// builder.expand), so a fragment is built the first time a DFA state
// reaches it, in Compile (which reaches everything) and in a lazy
// constraint (which reaches what generations visit) alike.
//
// Two things keep the lazily grown NFA correct:
//   - Byte classes are computed once, before most of the NFA exists, so the
//     builder collects the byte boundaries of every deferred node from its
//     AST up front (collectBounds; nfa.bounds).
//   - The determinizer relies on every NFA state being able to reach the
//     match state. A Defer whose operand has an empty language is built as
//     the fail state (nonEmpty decides it, compiling the intersections and
//     complements inside, which the build would compile anyway); a Perm
//     whose required member is empty is ∅; every other Perm subset state
//     can still write its missing required members and close.

// lazyState returns the placeholder for it, creating it once.
func (b *builder) lazyState(it lazyItem) (int32, error) {
	if b.lazyMemo == nil {
		b.lazyMemo = make(map[lazyItem]int32)
	}
	if s, ok := b.lazyMemo[it]; ok {
		return s, nil
	}
	s, err := b.add(nfaState{kind: nfaLazy, next: int32(len(b.lazy))})
	if err != nil {
		return 0, err
	}
	b.lazy = append(b.lazy, it)
	b.lazyMemo[it] = s
	b.m.b = b
	return s, nil
}

// expand builds the fragment of placeholder q and turns q into an epsilon
// state leading to it (or to nothing, when the fragment is ∅).
func (b *builder) expand(q int32) error {
	it := b.lazy[b.m.states[q].next]
	var s int32
	var err error
	if it.prod != nil {
		s, err = b.productState(it.n, it.prod, it.pair, it.k)
	} else if it.n.Op == OpDefer {
		// A deferred value is expanded once per continuation (per subset
		// state of an enclosing Perm, per array position).
		s, err = b.stamped(it.n.Subs[0], it.k)
	} else {
		s, err = b.perm(it.n, it.seen, it.written, it.extras, it.k)
	}
	if err != nil {
		return err
	}
	b.m.states[q] = nfaState{kind: nfaEps}
	if s != nfaFail {
		b.setTargets(q, []int32{s})
	}
	return nil
}

// permCap is the cap on the extras a state of the counted Perm n tracks:
// past max(Min, Max) items more extras change nothing (and with a Max none
// can be written), so a plain Perm tracks none.
func permCap(n *Node) int {
	return max(n.Min, n.Max, 0)
}

// permStart builds Perm node n continuing at k: its state before any item.
func (b *builder) permStart(n *Node, k int32) (int32, error) {
	if len(n.Subs) < 2 || len(n.Subs)-2 != len(n.Req) || len(n.Req) > MaxPermMembers {
		return 0, &Error{Code: ErrInvalidNode, Expr: "perm needs a separator, an extra and at most 64 members", Pos: -1}
	}
	// A required member that is ∅ (or two required ones and a separator
	// that is ∅) makes the Perm ∅; otherwise every subset state can
	// complete.
	if ok, err := b.nonEmpty(n); err != nil || !ok {
		return nfaFail, err
	}
	return b.perm(n, 0, false, 0, k)
}

// perm builds the state of Perm node n after the members in seen were
// written (written: whether anything was) and continuing at k: close (when
// every required member is in seen), or write a member not in seen and move
// to that subset's state (a placeholder), or write an extra item and stay.
//
// A counted Perm (PermCount) also bounds the items written, members and
// extras together, to [n.Min, n.Max]: its states carry the extras written
// (capped at permCap, past which more extras change nothing), so that the
// count is popcount(seen) + extras.
func (b *builder) perm(n *Node, seen uint64, written bool, extras int32, k int32) (int32, error) {
	key := lazyItem{n: n, seen: seen, written: written, extras: extras, k: k}
	if b.permMemo == nil {
		b.permMemo = make(map[lazyItem]int32)
	}
	if s, ok := b.permMemo[key]; ok {
		return s, nil
	}
	s, err := b.add(nfaState{kind: nfaEps})
	if err != nil {
		return 0, err
	}
	b.permMemo[key] = s
	sep, extra := n.Subs[0], n.Subs[1]
	var reqMask uint64
	for i, r := range n.Req {
		if r {
			reqMask |= 1 << i
		}
	}
	total := bits.OnesCount64(seen) + int(extras)
	// An item may be written when the required members still missing fit
	// after it: every state must be able to complete (the lazy
	// determinizer counts on it), so an optional item that would leave
	// no room for them is not offered.
	missing := bits.OnesCount64(reqMask &^ seen)
	sepOK, err := b.nonEmpty(sep)
	if err != nil {
		return 0, err
	}
	// live reports whether the state after one more item (req: a
	// required member) can still complete: the missing members fit under
	// Max, and when the separator is ∅ nothing may follow it.
	live := func(req bool) bool {
		miss := missing
		if req {
			miss--
		}
		return (n.Max < 0 || total+1+miss <= n.Max) && (sepOK || miss == 0 && total+1 >= n.Min)
	}
	// The items, each continuing at its subset's state, behind one shared
	// separator.
	var items []int32
	for i, r := range n.Req {
		if seen&(1<<i) != 0 || !live(r) {
			continue
		}
		cont, err := b.lazyState(lazyItem{n: n, seen: seen | 1<<i, written: true, extras: extras, k: k})
		if err != nil {
			return 0, err
		}
		// Every subset state builds the items it has left: after the
		// first build of an item, each is a stamped copy.
		t, err := b.stamped(n.Subs[2+i], cont)
		if err != nil {
			return 0, err
		}
		items = append(items, t)
	}
	if extra.Op != OpNoMatch && live(false) {
		cont := s
		next := min(extras+1, int32(permCap(n)))
		if !written || next != extras {
			if cont, err = b.lazyState(lazyItem{n: n, seen: seen, written: true, extras: next, k: k}); err != nil {
				return 0, err
			}
		}
		t, err := b.stamped(extra, cont)
		if err != nil {
			return 0, err
		}
		items = append(items, t)
	}
	first, err := b.split(items)
	if err == nil && written {
		first, err = b.build(sep, first)
	}
	if err != nil {
		return 0, err
	}
	var targets []int32
	if seen&reqMask == reqMask && total >= n.Min {
		targets = append(targets, k)
	}
	if first != nfaFail {
		targets = append(targets, first)
	}
	b.setTargets(s, targets)
	return s, nil
}

// nonEmpty reports whether n matches some string, memoized. Without
// intersections and complements the constructors leave only ∅ itself
// empty; an intersection or complement is compiled (and the DFA kept for
// the build) to find out.
func (b *builder) nonEmpty(n *Node) (bool, error) {
	if ok, known := b.emptyMemo[n]; known {
		return ok, nil
	}
	if err := b.c.enter(); err != nil {
		return false, err
	}
	ok, err := b.nonEmpty1(n)
	b.c.depth--
	if err != nil {
		return false, err
	}
	if b.emptyMemo == nil {
		b.emptyMemo = make(map[*Node]bool)
	}
	b.emptyMemo[n] = ok
	return ok, nil
}

func (b *builder) nonEmpty1(n *Node) (bool, error) {
	switch n.Op {
	case OpNoMatch:
		return false, nil
	case OpEmpty, OpLiteral, OpRunes, OpBytes, OpResidue:
		return true, nil
	case OpConcat, OpDefer:
		for _, s := range n.Subs {
			if ok, err := b.nonEmpty(s); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case OpAlt:
		for _, s := range n.Subs {
			if ok, err := b.nonEmpty(s); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case OpRepeat:
		if n.Min == 0 {
			return true, nil
		}
		return b.nonEmpty(n.Subs[0])
	case OpPerm:
		nreq := 0
		for i, r := range n.Req {
			if r {
				nreq++
				if ok, err := b.nonEmpty(n.Subs[2+i]); err != nil || !ok {
					return false, err
				}
			}
		}
		if n.Max >= 0 && nreq > n.Max {
			return false, nil
		}
		if n.Min > nreq {
			// Enough items: the optional members that are not ∅, then
			// extras if there are any.
			have := nreq
			for i, r := range n.Req {
				if !r && have < n.Min {
					if ok, err := b.nonEmpty(n.Subs[2+i]); err != nil {
						return false, err
					} else if ok {
						have++
					}
				}
			}
			if have < n.Min {
				if ok, err := b.nonEmpty(n.Subs[1]); err != nil || !ok {
					return false, err
				}
			}
		}
		if nreq > 1 || n.Min > 1 {
			return b.nonEmpty(n.Subs[0])
		}
		return true, nil
	case OpAnd, OpNot:
		if n.Op == OpAnd {
			lp, err := b.productOf(n)
			if err != nil {
				return false, err
			}
			if lp != nil {
				return b.c.productLive(lp, lp.a.Start, lp.b.Start)
			}
		}
		d, err := b.c.dfaOf(n)
		if err != nil {
			return false, err
		}
		return d.Start != DeadState, nil
	}
	return false, &Error{Code: ErrInvalidNode, Expr: "unknown op", Pos: -1}
}

// collectBounds records in m.bounds the byte-class boundaries of every
// node under the deferred ones (a boundary at b: b starts a class). The
// fragments built later are made of these nodes' bytes, so the classes
// stay a valid partition. Intersections and complements are spliced from
// DFAs whose byte runs split only where their operands' ranges do.
func (b *builder) collectBounds() {
	if len(b.lazy) == 0 {
		return
	}
	bound := new([257]bool)
	// A node with one parent is reached once per visit of its parent, so
	// only shared nodes and the lazy items' own nodes (Defer and Perm
	// nodes, which can be items and descendants of items at once) need
	// the seen set.
	seen := make(map[*Node]bool)
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.shared() || n.Op == OpDefer || n.Op == OpPerm {
			if seen[n] {
				return
			}
			seen[n] = true
		}
		switch n.Op {
		case OpLiteral:
			for _, c := range n.Lit {
				bound[c], bound[int(c)+1] = true, true
			}
		case OpBytes:
			for _, r := range n.Bytes {
				bound[r.Lo], bound[int(r.Hi)+1] = true, true
			}
		case OpRunes:
			for _, s := range cachedRuneTemplate(n.Runes).states {
				bound[s.lo], bound[int(s.hi)+1] = true, true
			}
		case OpResidue:
			for c := '0'; c <= '9'+1; c++ {
				bound[c] = true // a class per digit
			}
		}
		for _, s := range n.Subs {
			walk(s)
		}
	}
	for _, it := range b.lazy {
		walk(it.n)
	}
	b.m.bounds = bound
}

// The NFA prebuild may grow to: prebuildFactor times the states built
// eagerly plus prebuildExtra, at most prebuildStates. Prebuilding moves
// work from the masks into the time to the first mask, and much of it is
// for operands no generation reaches (optional properties left out), so
// the budget grows with the schema's top level. On MaskBench (bench/README)
// it took TBM p99 from ~225 to ~190 µs for TTFM p50 from ~560 to ~790 µs;
// factors 1 and 2 gave less for nearly the same TTFM.
const (
	prebuildFactor = 4
	prebuildExtra  = 512
	prebuildStates = 1 << 15
)

// prebuild builds the first instance of deferred operands before
// determinization starts, shallowest first (the placeholders in the order
// they were made), while the NFA has fewer than limit states. The first
// build of an operand (a nested object's member keys, its extra keys'
// difference automaton, spliced format and pattern DFAs) costs several
// times a stamped copy, and a generation meets it in the middle of a mask;
// built here it is paid once, in the compile, and every place that reaches
// the operand stamps a copy (stamped). The instances built here continue
// at ∅: nothing reaches them but the stamps. Operands past the budget are
// built the first time a generation reaches them, as before.
//
// Optional members' values are prebuilt too, though an output skips most
// of them: leaving them out kept a third of the gain for half the cost
// (MaskBench, bench/README).
//
// An error leaves the builder half way through a fragment (memo entries
// pointing at states without their targets), so the caller must drop the
// builder.
func (b *builder) prebuild(limit int) error {
	for i := 0; i < len(b.lazy) && len(b.m.states) < limit; i++ {
		it := b.lazy[i]
		if it.n.Op != OpDefer {
			continue
		}
		x := it.n.Subs[0]
		if _, ok := b.frags[x]; ok {
			continue
		}
		f, err := b.instance(nfaFail, func(exit int32) (int32, error) { return b.build(x, exit) })
		if err != nil {
			return err
		}
		b.frags[x] = f
	}
	return nil
}
