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

func (c *compiler) finish(r *rawDFA) (*DFA, error) {
	n, k := len(r.accept), r.k
	live := trim(r)
	if !live[r.start] {
		return emptyDFA(), nil
	}
	// Dense indices of the live states.
	idx := make([]int32, n)
	var states []int32
	for s := range n {
		idx[s] = -1
		if live[s] {
			idx[s] = int32(len(states))
			states = append(states, int32(s))
		}
	}
	block := make([]int32, len(states)) // live state index → block
	nb := len(states)
	if c.opts.NoMinimize {
		for i := range block {
			block[i] = int32(i)
		}
	} else {
		nb = minimize(r, live, idx, states, block)
	}
	// Build the quotient: block b becomes state b+1.
	trans := make([]int32, (nb+1)*k)
	accept := make([]bool, nb+1)
	done := make([]bool, nb)
	for i, s := range states {
		b := block[i]
		if done[b] {
			continue
		}
		done[b] = true
		accept[b+1] = r.accept[s]
		row := r.trans[int(s)*k : int(s)*k+k]
		for cl, t := range row {
			if t != 0 && live[t] {
				trans[int(b+1)*k+cl] = block[idx[t]] + 1
			}
		}
	}
	return canon(r.classes, k, trans, accept, block[idx[r.start]]+1), nil
}

func emptyDFA() *DFA {
	return &DFA{NumClasses: 1, Trans: []StateID{0}, Accept: []bool{false}, Start: DeadState}
}

// trim returns which states can reach an accepting state.
func trim(r *rawDFA) []bool {
	n, k := len(r.accept), r.k
	// Predecessor lists by counting sort on the target.
	cnt := make([]int32, n+1)
	for s := 1; s < n; s++ {
		for _, t := range r.trans[s*k : s*k+k] {
			if t != 0 {
				cnt[t+1]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	preds := make([]int32, cnt[n])
	pos := slices.Clone(cnt[:n])
	for s := 1; s < n; s++ {
		for _, t := range r.trans[s*k : s*k+k] {
			if t != 0 {
				preds[pos[t]] = int32(s)
				pos[t]++
			}
		}
	}
	live := make([]bool, n)
	var queue []int32
	for s := 1; s < n; s++ {
		if r.accept[s] {
			live[s] = true
			queue = append(queue, int32(s))
		}
	}
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range preds[cnt[t]:cnt[t+1]] {
			if !live[p] {
				live[p] = true
				queue = append(queue, p)
			}
		}
	}
	return live
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
	p := &partition{
		elems: make([]int32, n), loc: make([]int32, n), set: make([]int32, n),
		first: make([]int32, n+1), past: make([]int32, n+1),
		marked: make([]int32, n+1), touched: make([]int32, n+1),
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

// minimize computes the coarsest partition of the live states compatible
// with acceptance and transitions; it fills block (by dense index) and
// returns the number of blocks.
func minimize(r *rawDFA, live []bool, idx, states []int32, block []int32) int {
	k := r.k
	nq := len(states)
	// Transitions among live states, grouped by label (counting sort).
	m := 0
	for _, s := range states {
		for _, t := range r.trans[int(s)*k : int(s)*k+k] {
			if t != 0 && live[t] {
				m++
			}
		}
	}
	tail, head, label := make([]int32, 0, m), make([]int32, 0, m), make([]uint8, 0, m)
	for i, s := range states {
		for cl, t := range r.trans[int(s)*k : int(s)*k+k] {
			if t != 0 && live[t] {
				tail = append(tail, int32(i))
				head = append(head, idx[t])
				label = append(label, uint8(cl))
			}
		}
	}
	blocks := newPartition(nq)
	for i, s := range states {
		if r.accept[s] {
			blocks.mark(int32(i))
		}
	}
	blocks.split()

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

	b, cd := int32(1), int32(0)
	for cd < cords.z {
		for i := cords.first[cd]; i < cords.past[cd]; i++ {
			blocks.mark(tail[cords.elems[i]])
		}
		blocks.split()
		cd++
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
	}
	copy(block, blocks.set)
	return int(blocks.z)
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
