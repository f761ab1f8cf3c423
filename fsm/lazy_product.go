package fsm

import "math"

// Lazy products.
//
// An intersection whose operands are each small but whose product is large
// (a pattern of ~200 states under a maxLength of 300, or a pattern, a
// length counter of 10–90 and a negated alternation at once) costs its
// whole product up front when it is compiled to a DFA and spliced: the
// reachable pairs explored, then minimized, before the first mask, though a
// generation visits one pair a character. Such an And is built instead as a
// placeholder for its start pair (nfaLazy, like a Defer), and each pair the
// determinizer reaches is expanded into one epsilon state: a byte state per
// run of bytes leading to the same successor pair, each continuing at that
// pair's placeholder, and the continuation when both operands accept.
//
// The determinizer needs every NFA state to be able to reach the match
// state, so a successor pair gets a placeholder only when it is live: both
// operands accept some common string from it. productLive decides that by a
// depth-first search in the product, which stops at the first accepting
// pair; a search that succeeds marks the pairs on its path live, one that
// fails marks every pair it saw dead (nothing reachable from them accepts).
// Each search is bounded by MaxDFAStates pairs and polls the expansion's
// work budget and deadline.

// lazyProductMin is the bound on the product of the operands' state counts
// under which an intersection is compiled eagerly (a minimal DFA, spliced),
// as before: small products are cheap, and minimal DFAs make fewer lazy DFA
// states.
const lazyProductMin = 1 << 14

// lazyProductMax bounds, in multiples of MaxDFAStates, the product of the
// two sides' state counts a lazy product may have. A larger one is compiled
// eagerly, as before: its reachable part may still be small and then it
// is served, and otherwise it is refused at compile time, where a lazy one
// could run into the constraint's budgets in the middle of a generation
// instead (MaskBench's word-count patterns under maxLength 300, products
// of 1141 × 3330 states: refused before; lazily, the NFA and table budgets
// ran out in valid instances after 28–77 tokens).
const lazyProductMax = 4

// lazyProduct is the product of two DFAs built pair by pair.
type lazyProduct struct {
	a, b *DFA
	// runs are the maximal byte ranges on which both operands' classes
	// are constant, in byte order, with those classes.
	runs []productRun
	// reps holds one byte of each joint class (for the liveness search).
	reps []byte
	// live records decided pairs: 1 live, -1 dead.
	live map[uint64]int8
}

type productRun struct {
	lo, hi byte
	ca, cb uint8
}

func pairKey(p, q StateID) uint64 { return uint64(p)<<32 | uint64(q) }

func newLazyProduct(a, b *DFA) *lazyProduct {
	lp := &lazyProduct{a: a, b: b, live: make(map[uint64]int8)}
	seen := make(map[[2]uint8]bool)
	for c := 0; c < 256; {
		ca, cb := a.Classes[c], b.Classes[c]
		e := c
		for e+1 < 256 && a.Classes[e+1] == ca && b.Classes[e+1] == cb {
			e++
		}
		lp.runs = append(lp.runs, productRun{byte(c), byte(e), ca, cb})
		if !seen[[2]uint8{ca, cb}] {
			seen[[2]uint8{ca, cb}] = true
			lp.reps = append(lp.reps, byte(c))
		}
		c = e + 1
	}
	return lp
}

// productLive reports whether pair (p, q) of lp can reach a pair where both
// operands accept.
func (c *compiler) productLive(lp *lazyProduct, p, q StateID) (bool, error) {
	if p == DeadState || q == DeadState {
		return false, nil
	}
	start := pairKey(p, q)
	if v := lp.live[start]; v != 0 {
		return v > 0, nil
	}
	a, b := lp.a, lp.b
	type frame struct {
		p, q StateID
		next int // index into lp.reps of the next successor to try
	}
	visited := map[uint64]bool{start: true}
	stack := []frame{{p, q, 0}}
	found := false
	for len(stack) > 0 && !found {
		top := &stack[len(stack)-1]
		if top.next == 0 {
			if a.Accept[top.p] && b.Accept[top.q] {
				found = true
				break
			}
			if err := c.poll(len(lp.reps)); err != nil {
				return false, err
			}
		}
		if top.next == len(lp.reps) {
			stack = stack[:len(stack)-1]
			continue
		}
		r := lp.reps[top.next]
		top.next++
		p2, q2 := a.Next(top.p, r), b.Next(top.q, r)
		if p2 == DeadState || q2 == DeadState {
			continue
		}
		key := pairKey(p2, q2)
		if v := lp.live[key]; v > 0 {
			found = true
			break
		} else if v < 0 || visited[key] {
			continue
		}
		if len(visited) >= c.opts.MaxDFAStates {
			return false, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(len(visited)+1))
		}
		visited[key] = true
		stack = append(stack, frame{p2, q2, 0})
	}
	if found {
		for _, f := range stack {
			lp.live[pairKey(f.p, f.q)] = 1
		}
		return true, nil
	}
	for key := range visited {
		lp.live[key] = -1
	}
	return false, nil
}

// productOf returns the lazy product n (an OpAnd) is built as, or nil when
// it is compiled to a DFA and spliced as usual: when its operands' product
// is at most lazyProductMin states. The largest operand is one side, the
// intersection of the others (compiled eagerly, as dfaOf would) the other.
// The decision is made once per node.
func (b *builder) productOf(n *Node) (*lazyProduct, error) {
	if lp, ok := b.prods[n]; ok {
		return lp, nil
	}
	lp, err := b.productOf1(n)
	if err != nil {
		return nil, err
	}
	if b.prods == nil {
		b.prods = make(map[*Node]*lazyProduct)
	}
	b.prods[n] = lp
	return lp, nil
}

func (b *builder) productOf1(n *Node) (*lazyProduct, error) {
	if !b.products || len(n.Subs) < 2 {
		return nil, nil
	}
	if _, done := b.c.dfas[n]; done {
		return nil, nil
	}
	big, bigSize, est := 0, 0, 1
	for i, sub := range n.Subs {
		x := sub
		if sub.Op == OpNot && len(sub.Subs) == 1 {
			if _, finite := finiteStrings(sub.Subs[0]); finite {
				continue // a subtraction of a few strings adds little
			}
			x = sub.Subs[0]
		}
		d, err := b.c.dfaOf(x)
		if err != nil {
			return nil, err
		}
		if d.Start == DeadState && x == sub {
			return nil, nil // ∅: the DFA is one state
		}
		est = min(est*d.NumStates(), math.MaxInt32)
		if d.NumStates() > bigSize {
			big, bigSize = i, d.NumStates()
		}
	}
	pmin := lazyProductMin
	if b.c.opts.productMin > 0 {
		pmin = b.c.opts.productMin
	}
	if est <= pmin {
		return nil, nil
	}
	rest := make([]*Node, 0, len(n.Subs)-1)
	rest = append(rest, n.Subs[:big]...)
	rest = append(rest, n.Subs[big+1:]...)
	other := rest[0]
	if len(rest) > 1 {
		other = And(rest...)
	}
	da, err := b.c.dfaOf(other)
	if err != nil {
		return nil, err
	}
	db, err := b.c.dfaOf(n.Subs[big])
	if err != nil {
		return nil, err
	}
	bound := da.NumStates() * db.NumStates()
	if bound > lazyProductMax*b.c.opts.MaxDFAStates {
		// Larger than the product budget allows: compiled eagerly, as
		// before, so a product that does not fit is refused at compile
		// time rather than in the middle of a generation.
		return nil, nil
	}
	if bound <= pmin {
		d, err := b.c.intersect(da, db)
		if err != nil {
			return nil, err
		}
		b.c.dfas[n] = d
		return nil, nil
	}
	return newLazyProduct(da, db), nil
}

// lazyProductStart builds the lazy product lp of n continuing at k: the
// placeholder of its start pair, or the fail state when the product is
// empty.
func (b *builder) lazyProductStart(n *Node, lp *lazyProduct, k int32) (int32, error) {
	p, q := lp.a.Start, lp.b.Start
	live, err := b.c.productLive(lp, p, q)
	if err != nil || !live {
		return nfaFail, err
	}
	return b.lazyState(lazyItem{n: n, prod: lp, pair: pairKey(p, q), k: k})
}

// productState builds pair of lp continuing at k: an epsilon state to a
// byte state per run of bytes with the same live successor pair (each
// continuing at that pair's placeholder), and to k when both accept.
func (b *builder) productState(n *Node, lp *lazyProduct, pair uint64, k int32) (int32, error) {
	p, q := StateID(pair>>32), StateID(uint32(pair))
	a, d := lp.a, lp.b
	rowA := a.Trans[int(p)*a.NumClasses : (int(p)+1)*a.NumClasses]
	rowB := d.Trans[int(q)*d.NumClasses : (int(q)+1)*d.NumClasses]
	var targets []int32
	for i := 0; i < len(lp.runs); {
		p2, q2 := rowA[lp.runs[i].ca], rowB[lp.runs[i].cb]
		j := i
		for j+1 < len(lp.runs) && rowA[lp.runs[j+1].ca] == p2 && rowB[lp.runs[j+1].cb] == q2 {
			j++
		}
		lo, hi := lp.runs[i].lo, lp.runs[j].hi
		i = j + 1
		live, err := b.c.productLive(lp, p2, q2)
		if err != nil {
			return 0, err
		}
		if !live {
			continue
		}
		t, err := b.lazyState(lazyItem{n: n, prod: lp, pair: pairKey(p2, q2), k: k})
		if err != nil {
			return 0, err
		}
		bs, err := b.byteState(lo, hi, t)
		if err != nil {
			return 0, err
		}
		targets = append(targets, bs)
	}
	if a.Accept[p] && d.Accept[q] {
		targets = append(targets, k)
	}
	if len(targets) == 0 {
		return nfaFail, nil
	}
	s, err := b.add(nfaState{kind: nfaEps})
	if err != nil {
		return 0, err
	}
	b.setTargets(s, targets)
	return s, nil
}

// prodPair names one pair of a lazy product (the closer's memo key).
type prodPair struct {
	lp   *lazyProduct
	pair uint64
}

// maxShortPairs bounds the pairs one shortest search visits.
const maxShortPairs = 1 << 12

// shortest returns the length of a shortest string over usable bytes
// that takes pair to a pair where both operands accept (every pair on the
// way is then live), by a breadth-first search of at most limit pairs;
// distInf when none is found within it. It reads only the operands, which
// never change.
func (lp *lazyProduct) shortest(pair uint64, usable func(byte) bool, limit int) int32 {
	a, b := lp.a, lp.b
	type joint struct{ ca, cb uint8 }
	var js []joint
	have := make(map[joint]bool)
	for _, r := range lp.runs {
		j := joint{r.ca, r.cb}
		if have[j] {
			continue
		}
		for x := int(r.lo); x <= int(r.hi); x++ {
			if usable(byte(x)) {
				have[j] = true
				js = append(js, j)
				break
			}
		}
	}
	dist := map[uint64]int32{pair: 0}
	queue := []uint64{pair}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		p, q := StateID(x>>32), StateID(uint32(x))
		if a.Accept[p] && b.Accept[q] {
			return dist[x]
		}
		for _, j := range js {
			p2 := a.Trans[int(p)*a.NumClasses+int(j.ca)]
			q2 := b.Trans[int(q)*b.NumClasses+int(j.cb)]
			if p2 == DeadState || q2 == DeadState {
				continue
			}
			y := pairKey(p2, q2)
			if _, ok := dist[y]; ok {
				continue
			}
			if len(dist) >= limit {
				return distInf
			}
			dist[y] = dist[x] + 1
			queue = append(queue, y)
		}
	}
	return distInf
}
