package fsm

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
		if err := c.poll(); err != nil {
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
	// and renumber it.
	return c.finishWith(r, true)
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
		if err := c.poll(); err != nil {
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
