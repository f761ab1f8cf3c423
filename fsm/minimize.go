package fsm

import "slices"

// Trimming, minimization and canonical numbering.
//
// finish turns a complete raw DFA into the package's *DFA:
//
//  1. trim: a reverse breadth-first search from the accepting states marks
//     the live states; every other state is merged into the dead state 0.
//     This is what makes "the token leads to a non-dead state" the exact
//     mask condition.
//  2. minimize the partial DFA of live states with Valmari and Lehtinen's
//     refinable-partition formulation of Hopcroft's algorithm
//     (A. Valmari, "Fast brief practical DFA minimization", Information
//     Processing Letters 112(6), 2012): O(m log n) for m transitions, with
//     blocks of states and "cords" of transitions refined against each
//     other. Partial transition functions are native to it, so the dead
//     state never takes part.
//  3. compress the alphabet again: classes whose columns are identical in
//     the minimized table are merged (minimization often makes distinctions
//     the NFA needed irrelevant).
//  4. renumber canonically: dead = 0, then breadth-first from the start
//     state, successors in class order, classes numbered by their smallest
//     byte. Two equal languages therefore give identical *DFA values, which
//     is what makes DFA dumps usable in table tests.

func (c *compiler) finish(r *rawDFA) (*DFA, error) { return c.finishWith(r, c.opts.NoMinimize) }

// finishWith is finish; with noMinimize the partition refinement is skipped
// (the quotient is the identity), for NoMinimize and for inputs whose live
// states are already pairwise inequivalent (complement).
func (c *compiler) finishWith(r *rawDFA, noMinimize bool) (*DFA, error) {
	n, k := len(r.accept), r.k
	// One pass over the dense table collects the live-target edges; trim,
	// minimization and the quotient then work on edges only, which for
	// JSON automata (dozens of classes, most of them dead in any state) is
	// several times less memory traffic than the dense table.
	e := collectEdges(r)
	live := trim(r, e)
	if !live[r.start] {
		return emptyDFA(), nil
	}
	// Keep the edges between live states; renumber live states densely.
	idx := make([]int32, n)
	nq := int32(0)
	for s := range n {
		idx[s] = -1
		if live[s] {
			idx[s] = nq
			nq++
		}
	}
	w := 0
	for i := range e.src {
		if live[e.src[i]] && live[e.dst[i]] {
			e.src[w], e.dst[w], e.lab[w] = idx[e.src[i]], idx[e.dst[i]], e.lab[i]
			w++
		}
	}
	e.src, e.dst, e.lab = e.src[:w], e.dst[:w], e.lab[:w]
	accept := make([]bool, nq)
	for s := range n {
		if live[s] {
			accept[idx[s]] = r.accept[s]
		}
	}
	block := make([]int32, nq)
	nb := int(nq)
	if noMinimize {
		for i := range block {
			block[i] = int32(i)
		}
	} else {
		nb = minimize(int(nq), e, accept, block)
	}
	// The quotient: block b becomes state b+1; equivalent states write the
	// same entries.
	trans := make([]int32, (nb+1)*k)
	qaccept := make([]bool, nb+1)
	for q := range nq {
		qaccept[block[q]+1] = accept[q]
	}
	for i := range e.src {
		trans[int(block[e.src[i]]+1)*k+int(e.lab[i])] = block[e.dst[i]] + 1
	}
	return canon(r.classes, k, trans, qaccept, block[idx[r.start]]+1), nil
}

// edges is a sparse transition list: src --lab--> dst.
type edges struct {
	src, dst []int32
	lab      []uint8
}

// collectEdges lists the transitions of r that do not go to state 0, in
// source-major order.
func collectEdges(r *rawDFA) edges {
	n, k := len(r.accept), r.k
	est := 2 * n
	e := edges{src: make([]int32, 0, est), dst: make([]int32, 0, est), lab: make([]uint8, 0, est)}
	for s := 1; s < n; s++ {
		for cl, t := range r.trans[s*k : s*k+k] {
			if t != 0 {
				e.src = append(e.src, int32(s))
				e.dst = append(e.dst, t)
				e.lab = append(e.lab, uint8(cl))
			}
		}
	}
	return e
}

func emptyDFA() *DFA {
	return &DFA{NumClasses: 1, Trans: []StateID{0}, Accept: []bool{false}, Start: DeadState}
}

// trim returns which states can reach an accepting state.
func trim(r *rawDFA, e edges) []bool {
	n := len(r.accept)
	// Predecessor lists by counting sort on the target.
	cnt := make([]int32, n+1)
	for _, t := range e.dst {
		cnt[t+1]++
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	preds := make([]int32, len(e.dst))
	pos := slices.Clone(cnt[:n])
	for i, t := range e.dst {
		preds[pos[t]] = e.src[i]
		pos[t]++
	}
	live := make([]bool, n)
	var queue []int32
	for s := 1; s < n; s++ {
		if r.accept[s] {
			live[s] = true
			queue = append(queue, int32(s))
		}
	}
	reachBack(live, queue, preds, cnt)
	return live
}

// reachBack marks in live every state with a path to a state of queue
// (which must already be marked): a depth-first search over predecessor
// lists in CSR form, the predecessors of t being pred[start[t]:start[t+1]].
// Trimming (here), the NFA's coreachability and NewConstraint's check all
// use it.
func reachBack[S ~int32 | ~uint32](live []bool, queue, pred []S, start []int32) {
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range pred[start[t]:start[t+1]] {
			if !live[p] {
				live[p] = true
				queue = append(queue, p)
			}
		}
	}
}

// partition is a refinable partition of {0..n-1} (Valmari's data
// structure): elems holds the elements grouped by set, loc the position of
// each element, set its set, first/past each set's slice of elems; marked
// counts the marked elements at the front of each set, and touched lists
// the sets with marks.
type partition struct {
	z               int32
	elems, loc, set []int32
	first, past     []int32
	marked, touched []int32
	ntouched        int
}

func newPartition(n int) *partition {
	buf := make([]int32, 3*n+4*(n+1))
	p := &partition{
		elems: buf[:n:n], loc: buf[n : 2*n : 2*n], set: buf[2*n : 3*n : 3*n],
		first: buf[3*n : 4*n+1 : 4*n+1], past: buf[4*n+1 : 5*n+2 : 5*n+2],
		marked: buf[5*n+2 : 6*n+3 : 6*n+3], touched: buf[6*n+3:],
	}
	for i := range n {
		p.elems[i], p.loc[i] = int32(i), int32(i)
	}
	if n > 0 {
		p.z = 1
		p.past[0] = int32(n)
	}
	return p
}

func (p *partition) mark(e int32) {
	s, i := p.set[e], p.loc[e]
	j := p.first[s] + p.marked[s]
	p.elems[i] = p.elems[j]
	p.loc[p.elems[i]] = i
	p.elems[j] = e
	p.loc[e] = j
	if p.marked[s] == 0 {
		p.touched[p.ntouched] = s
		p.ntouched++
	}
	p.marked[s]++
}

// split splits every touched set into its marked and unmarked parts; the
// smaller part becomes the new set.
func (p *partition) split() {
	for p.ntouched > 0 {
		p.ntouched--
		s := p.touched[p.ntouched]
		j := p.first[s] + p.marked[s]
		if j == p.past[s] {
			p.marked[s] = 0
			continue
		}
		z := p.z
		if p.marked[s] <= p.past[s]-j {
			p.first[z], p.past[z] = p.first[s], j
			p.first[s] = j
		} else {
			p.past[z], p.first[z] = p.past[s], j
			p.past[s] = j
		}
		for i := p.first[z]; i < p.past[z]; i++ {
			p.set[p.elems[i]] = z
		}
		p.marked[s], p.marked[z] = 0, 0
		p.z++
	}
}

// minimize computes the coarsest partition of the nq states compatible
// with acceptance and the transitions e (all between states 0..nq-1); it
// fills block and returns the number of blocks.
func minimize(nq int, e edges, accept []bool, block []int32) int {
	tail, head, label := e.src, e.dst, e.lab
	m := len(tail)
	blocks := initialBlocks(nq, e, accept)

	cords := newPartition(m)
	if m > 0 {
		var cnt [257]int32
		for _, l := range label {
			cnt[int(l)+1]++
		}
		for i := 1; i <= 256; i++ {
			cnt[i] += cnt[i-1]
		}
		pos := cnt
		for t := range m {
			l := label[t]
			cords.elems[pos[l]] = int32(t)
			cords.loc[t] = pos[l]
			pos[l]++
		}
		cords.z = 0
		for l := range 256 {
			if cnt[l] == cnt[l+1] {
				continue
			}
			z := cords.z
			cords.first[z], cords.past[z] = cnt[l], cnt[l+1]
			for i := cnt[l]; i < cnt[l+1]; i++ {
				cords.set[cords.elems[i]] = z
			}
			cords.z++
		}
	}
	// Incoming transitions of each state.
	adj := make([]int32, nq+1)
	for _, h := range head {
		adj[h+1]++
	}
	for i := 1; i <= nq; i++ {
		adj[i] += adj[i-1]
	}
	in := make([]int32, m)
	pos := slices.Clone(adj[:nq])
	for t, h := range head {
		in[pos[h]] = int32(t)
		pos[h]++
	}

	// The initial cords (all transitions of one label) need no processing:
	// splitting by "has a transition on label l" is exactly what the
	// initial blocks already did. Every block but block 0 is pending.
	b, cd := int32(1), cords.z
	for {
		for b < blocks.z {
			for i := blocks.first[b]; i < blocks.past[b]; i++ {
				q := blocks.elems[i]
				for _, t := range in[adj[q]:adj[q+1]] {
					cords.mark(t)
				}
			}
			cords.split()
			b++
		}
		if cd >= cords.z {
			break
		}
		for i := cords.first[cd]; i < cords.past[cd]; i++ {
			blocks.mark(tail[cords.elems[i]])
		}
		blocks.split()
		cd++
	}
	copy(block, blocks.set)
	return int(blocks.z)
}

// initialBlocks partitions the states by (accepting, set of labels with a
// live transition). Equivalent states of a trimmed DFA always agree on both
// (a live transition on a label means some accepted string starts with
// it), so this is a valid starting point for refinement, and a much finer
// one than {accepting, rejecting}: on JSON automata it separates most
// states at once and leaves Hopcroft little to do. The largest block gets
// index 0, the one block the refinement loop never has to process.
func initialBlocks(nq int, e edges, accept []bool) *partition {
	sigs := make([][5]uint64, nq)
	for q := range nq {
		if accept[q] {
			sigs[q][4] = 1
		}
	}
	for i, q := range e.src {
		l := e.lab[i]
		sigs[q][l>>6] |= 1 << (l & 63)
	}
	ids := make(map[[5]uint64]int32)
	of := make([]int32, nq)
	var sizes []int32
	for q := range nq {
		id, ok := ids[sigs[q]]
		if !ok {
			id = int32(len(sizes))
			ids[sigs[q]] = id
			sizes = append(sizes, 0)
		}
		of[q] = id
		sizes[id]++
	}
	// Put the largest block first.
	big := int32(0)
	for id, sz := range sizes {
		if sz > sizes[big] {
			big = int32(id)
		}
	}
	remap := func(id int32) int32 {
		switch id {
		case big:
			return 0
		case 0:
			return big
		}
		return id
	}
	p := newPartition(nq)
	nb := len(sizes)
	if nq == 0 {
		return p
	}
	p.z = int32(nb)
	start := int32(0)
	for id := range nb {
		b := remap(int32(id))
		p.first[b] = start
		start += sizes[id]
		p.past[b] = start
	}
	pos := make([]int32, nb)
	for b := range nb {
		pos[b] = p.first[b]
	}
	for q := range nq {
		b := remap(of[q])
		p.elems[pos[b]] = int32(q)
		p.loc[q] = pos[b]
		p.set[q] = b
		pos[b]++
	}
	return p
}

// canon merges byte classes with identical columns and renumbers states
// breadth-first from start (dead = 0). trans is complete over k classes
// and may contain states unreachable from start; they are dropped.
func canon(classes [256]uint8, k int, trans []int32, accept []bool, start int32) *DFA {
	n := len(accept)
	// Column hashes, then merge equal columns in order of first byte.
	hs := make([]uint64, k)
	for s := range n {
		row := trans[s*k : s*k+k]
		for cl, t := range row {
			hs[cl] = (hs[cl]^uint64(uint32(t)))*1099511628211 + 7
		}
	}
	sameCol := func(a, b int) bool {
		if hs[a] != hs[b] {
			return false
		}
		for s := range n {
			if trans[s*k+a] != trans[s*k+b] {
				return false
			}
		}
		return true
	}
	newClass := make([]int, k)
	for i := range newClass {
		newClass[i] = -1
	}
	var reps []int // old class representing each new class
	var d DFA
	for bt := range 256 {
		old := int(classes[bt])
		if newClass[old] < 0 {
			for nc, rep := range reps {
				if sameCol(rep, old) {
					newClass[old] = nc
					break
				}
			}
			if newClass[old] < 0 {
				newClass[old] = len(reps)
				reps = append(reps, old)
			}
		}
		d.Classes[bt] = uint8(newClass[old])
	}
	nk := len(reps)
	d.NumClasses = nk
	// Breadth-first renumbering.
	num := make([]int32, n)
	for i := range num {
		num[i] = -1
	}
	num[0] = 0
	order := []int32{0}
	if start != 0 {
		num[start] = 1
		order = append(order, start)
	}
	for i := 1; i < len(order); i++ {
		s := order[i]
		for _, rep := range reps {
			if t := trans[int(s)*k+rep]; num[t] < 0 {
				num[t] = int32(len(order))
				order = append(order, t)
			}
		}
	}
	d.Trans = make([]StateID, len(order)*nk)
	d.Accept = make([]bool, len(order))
	for i, s := range order {
		if i == 0 {
			continue
		}
		d.Accept[i] = accept[s]
		for nc, rep := range reps {
			d.Trans[i*nk+nc] = StateID(num[trans[int(s)*k+rep]])
		}
	}
	d.Start = StateID(num[start])
	return &d
}
