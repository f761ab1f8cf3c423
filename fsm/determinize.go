package fsm

import (
	"slices"
)

// Subset construction.
//
// The NFA's byte ranges induce byte equivalence classes: bytes that no
// range boundary separates behave identically in every state, so the DFA
// is built over classes (a few dozen for JSON) instead of 256 bytes. A DFA
// state is the set of "core" NFA states (byte states and the match state)
// reachable by epsilon moves; sets are kept sorted, hashed with a 64-bit
// mix, and interned in an open-addressing table whose keys live in one
// flat arena, so the hot loop allocates nothing per state. Membership in
// NFA-state sets under construction is a generation-stamped array (O(1)
// clear, insert and membership, 4 bytes per NFA state).
//
// For each DFA state the successors of all its byte states are bucketed by
// class; a class whose bucket equals the previous class's bucket reuses its
// result, which makes wide classes (any UTF-8 continuation byte, say) cost
// one closure instead of one per class.
//
// The NFA is trimmed (byte states that cannot reach the match state are left
// out of every set; the builder guarantees there are none, see
// nfa.liveByConstruction), so every non-empty set can reach acceptance:
// the lazy constraint (lazy.go) relies on that, since it never trims the DFA
// it explores. The same core (subsets) serves both: determinize expands
// every state in order; lazy.go expands a state when a reader first needs
// its row.
//
// The raw DFA determinize produces is complete, has the dead (empty-set)
// state 0; finish trims, minimizes and renumbers it.

// rawDFA is an untrimmed complete DFA with dead state 0.
type rawDFA struct {
	classes [256]uint8
	k       int
	trans   []int32 // len(accept)*k entries
	accept  []bool
	start   int32
}

// stampSet is a set of small non-negative ints with O(1) clear: x is in
// the set when mark[x] equals the current generation. It needs 4 bytes per
// possible element (a lazy constraint keeps two for its NFA's lifetime).
type stampSet struct {
	mark []uint32
	gen  uint32
}

func newStampSet(n int) stampSet { return stampSet{mark: make([]uint32, n), gen: 1} }

func (s *stampSet) has(x int32) bool { return s.mark[x] == s.gen }

func (s *stampSet) add(x int32) { s.mark[x] = s.gen }

func (s *stampSet) clear() {
	if s.gen++; s.gen == 0 {
		clear(s.mark)
		s.gen = 1
	}
}

// setTable interns sorted int32 sets; set i is arena[off[i]:off[i+1]].
type setTable struct {
	arena []int32
	off   []int32
	slots []int32 // set id + 1, or 0 when free
	hash  []uint64
}

func hashSet(set []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range set {
		h ^= uint64(uint32(x))
		h *= 1099511628211
		h ^= h >> 29
	}
	return h
}

func (t *setTable) get(i int32) []int32 { return t.arena[t.off[i]:t.off[i+1]] }

func (t *setTable) len() int { return len(t.off) - 1 }

// intern returns the id of set, adding it if new.
func (t *setTable) intern(set []int32) (id int32, added bool) {
	if 2*(t.len()+1) > len(t.slots) {
		t.grow()
	}
	h := hashSet(set)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			id = int32(t.len())
			t.arena = append(t.arena, set...)
			t.off = append(t.off, int32(len(t.arena)))
			t.hash = append(t.hash, h)
			t.slots[i] = id + 1
			return id, true
		}
		if t.hash[v-1] == h && slices.Equal(t.get(v-1), set) {
			return v - 1, false
		}
	}
}

func (t *setTable) grow() {
	n := max(64, 2*len(t.slots))
	t.slots = make([]int32, n)
	mask := uint64(n - 1)
	for id := range t.len() {
		for i := t.hash[id] & mask; ; i = (i + 1) & mask {
			if t.slots[i] == 0 {
				t.slots[i] = int32(id) + 1
				break
			}
		}
	}
}

// subsets is the subset-construction core: the byte classes of an NFA, the
// interned DFA states (sets of live core NFA states) and the machinery that
// computes one state's row of successors. It is not safe for concurrent use.
type subsets struct {
	m       *nfa
	classes [256]uint8
	rep     [256]byte // each class's least byte
	k       int
	live    []bool // NFA states that can reach the match state (nil: all do)
	t       setTable
	accept  []bool // per DFA state

	maxStates int
	maxBytes  int64
	err       error // the first error of a lazy NFA fragment's build

	// Closure cache: the live core states reachable by epsilon moves from
	// each NFA state, computed once by depth-first search and kept sorted in
	// an arena (capped, so NFAs with long epsilon chains, whose closures sum
	// to quadratic size, fall back to searching each time). The closure of a
	// bucket of states is then the union of cached lists, and the common
	// one-state bucket needs no union and no sort.
	cacheCap           int
	cacheOff, cacheLen []int32
	arena              []int32
	dfs, ss            stampSet
	stack, one, buf    []int32
	buckets            [][]int32
	touched            []int32 // row's classes with a non-empty bucket
	runTried           []int32 // safeRun's continuations tried (scratch)
	runPath, runOffs   []int32 // chainFrom's path and offsets (scratch)
	runMemo            map[int32]runStep
}

// newSubsets prepares the subset construction of m: byte classes, the
// trimming of m (backward reachability from the match state) and the dead
// state 0 (the empty set). Budgets: maxStates DFA states, maxBytes of dense
// transition table (states × classes × 4).
func newSubsets(m *nfa, maxStates int, maxBytes int64) *subsets {
	s := &subsets{m: m, maxStates: maxStates, maxBytes: maxBytes}
	var bound [257]bool
	if m.bounds != nil {
		bound = *m.bounds
	}
	for i := range m.states {
		if st := &m.states[i]; st.kind == nfaByte {
			bound[st.lo] = true
			bound[int(st.hi)+1] = true
		}
	}
	for i := range m.sets {
		m.sets[i].runs(func(lo, hi byte) { bound[lo], bound[int(hi)+1] = true, true })
	}
	cls := -1
	for b := range 256 {
		if b == 0 || bound[b] {
			cls++
			s.rep[cls] = byte(b)
		}
		s.classes[b] = uint8(cls)
	}
	s.k = cls + 1
	ns := len(m.states)
	// The builder creates only states that can reach the match state
	// (fail continuations are pruned as they are built and spliced DFAs
	// are trimmed; TestNFALiveByConstruction checks it), so the trimming
	// pass is needed only for NFAs from elsewhere.
	if !m.liveByConstruction {
		s.live = m.coreachable()
	}
	s.cacheCap = max(1<<20, 8*ns)
	s.cacheOff = make([]int32, ns)
	s.cacheLen = make([]int32, ns)
	for i := range s.cacheOff {
		s.cacheOff[i] = -1
	}
	s.dfs = newStampSet(ns)
	s.ss = newStampSet(ns)
	s.buckets = make([][]int32, s.k)
	s.t.off = []int32{0}
	s.t.intern(nil) // id 0: the empty set, the dead state
	s.accept = []bool{false}
	return s
}

// coreachable marks the states from which the match state can be reached.
func (m *nfa) coreachable() []bool {
	n := len(m.states)
	// Reverse edges in CSR form.
	deg := make([]int32, n+1)
	for i := range m.states {
		st := &m.states[i]
		switch st.kind {
		case nfaByte, nfaSet:
			deg[st.next+1]++
		case nfaEps:
			for _, t := range m.targets(st) {
				deg[t+1]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	pred := make([]int32, deg[n])
	pos := append([]int32(nil), deg[:n]...)
	for i := range m.states {
		st := &m.states[i]
		switch st.kind {
		case nfaByte, nfaSet:
			pred[pos[st.next]] = int32(i)
			pos[st.next]++
		case nfaEps:
			for _, t := range m.targets(st) {
				pred[pos[t]] = int32(i)
				pos[t]++
			}
		}
	}
	live := make([]bool, n)
	live[nfaAccept] = true
	seeds := []int32{nfaAccept}
	for i := range m.states {
		if m.states[i].kind == nfaLazy {
			// A placeholder is live by construction (lazy_nfa.go).
			live[i] = true
			seeds = append(seeds, int32(i))
		}
	}
	reachBack(live, seeds, pred, deg)
	return live
}

// closureOf returns the live core states reachable from NFA state s by
// epsilon moves, sorted. The result may alias internal buffers.
func (s *subsets) closureOf(q int32) []int32 {
	if o := s.cacheOff[q]; o >= 0 {
		return s.arena[o : o+s.cacheLen[q]]
	}
	m := s.m
	s.dfs.clear()
	s.dfs.add(q)
	s.stack = append(s.stack[:0], q)
	s.one = s.one[:0]
	for len(s.stack) > 0 {
		q := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		st := &m.states[q]
		if s.live != nil && !s.live[q] {
			continue
		}
		if st.kind == nfaLazy {
			if s.err == nil {
				s.err = m.b.expand(q)
			}
			if s.err != nil {
				continue
			}
			s.fit()
			st = &m.states[q]
		}
		if st.kind != nfaEps {
			s.one = append(s.one, q)
			continue
		}
		for _, t := range m.targets(st) {
			if !s.dfs.has(t) {
				s.dfs.add(t)
				s.stack = append(s.stack, t)
			}
		}
	}
	slices.Sort(s.one)
	if len(s.arena)+len(s.one) > s.cacheCap {
		return s.one
	}
	s.cacheOff[q], s.cacheLen[q] = int32(len(s.arena)), int32(len(s.one))
	s.arena = append(s.arena, s.one...)
	return s.arena[s.cacheOff[q] : int(s.cacheOff[q])+len(s.one)]
}

// fit grows the per-NFA-state arrays after a lazy fragment was built: on
// the Go heap by doubling or, once large, in reservations (growArray).
func (s *subsets) fit() {
	n := len(s.m.states)
	if n <= len(s.cacheOff) {
		return
	}
	limit := max(s.m.maxStates, n)
	keep := keepUntil(s)
	old := len(s.cacheOff)
	s.cacheOff = extendTo(s.cacheOff, n, limit, keep)
	for i := old; i < n; i++ {
		s.cacheOff[i] = -1
	}
	s.cacheCap = max(s.cacheCap, 8*n) // as newSubsets sizes it
	s.cacheLen = extendTo(s.cacheLen, n, limit, keep)
	s.dfs.mark = extendTo(s.dfs.mark, n, limit, keep)
	s.ss.mark = extendTo(s.ss.mark, n, limit, keep)
}

// extendTo returns a with length n ≥ len(a), zero-extended (growArray's
// capacity may hold old data from a pooled reservation).
func extendTo[T any](a []T, n, limit int, keep func(*reservation)) []T {
	old := len(a)
	a = growArray(a, n-old, limit, keep, false)[:n]
	clear(a[old:])
	return a
}

// closure returns the union of the closures of seeds, sorted. The result
// may alias internal buffers.
func (s *subsets) closure(seeds []int32) []int32 {
	if len(seeds) == 1 {
		return s.closureOf(seeds[0])
	}
	s.ss.clear()
	s.buf = s.buf[:0]
	for _, q := range seeds {
		for _, x := range s.closureOf(q) {
			if !s.ss.has(x) {
				s.ss.add(x)
				s.buf = append(s.buf, x)
			}
		}
	}
	slices.Sort(s.buf)
	return s.buf
}

// numStates returns the number of DFA states created, the dead state
// included.
func (s *subsets) numStates() int { return s.t.len() }

// state interns set as a DFA state, within the budgets.
func (s *subsets) state(set []int32) (int32, error) {
	if s.err != nil {
		return 0, s.err
	}
	id, added := s.t.intern(set)
	if added {
		if s.t.len() > s.maxStates {
			return 0, limitErr(ErrTooManyDFAStates, int64(s.maxStates), int64(s.t.len()))
		}
		if b := int64(s.t.len()) * int64(s.k) * 4; b > s.maxBytes {
			return 0, limitErr(ErrTooManyDFABytes, s.maxBytes, b)
		}
		s.accept = append(s.accept, len(set) > 0 && set[0] == nfaAccept)
	}
	return id, nil
}

// start returns the DFA state of the NFA's start (0 when the language is
// empty).
func (s *subsets) start() (int32, error) {
	return s.state(s.closure([]int32{s.m.start}))
}

// row appends the successors of DFA state d, one per class, to dst, creating
// new states as needed, and returns the amount of work done (set sizes
// touched). For each class the successors of d's byte states are bucketed;
// a class whose bucket equals the previous class's reuses its result, so
// wide classes (any UTF-8 continuation byte, say) cost one closure, not one
// per class.
func (s *subsets) row(d int32, dst []int32) ([]int32, int, error) {
	set := s.t.get(d)
	work := len(set)
	// Only the classes some byte state of d covers are visited (touched):
	// most states (a key's next letter, a digit) move on a few of the
	// classes, and the others are dead.
	touched := s.touched[:0]
	for _, q := range set {
		st := &s.m.states[q]
		var bs *byteSet
		switch st.kind {
		case nfaByte:
		case nfaSet:
			bs = &s.m.sets[st.n]
		default:
			continue
		}
		for cl := int(s.classes[st.lo]); cl <= int(s.classes[st.hi]); cl++ {
			if bs != nil && !bs.has(s.rep[cl]) {
				continue // a class is wholly in the set or out of it
			}
			if len(s.buckets[cl]) == 0 {
				touched = append(touched, int32(cl))
			}
			s.buckets[cl] = append(s.buckets[cl], st.next)
		}
	}
	slices.Sort(touched)
	s.touched = touched
	base := len(dst)
	dst = slices.Grow(dst, s.k)[:base+s.k]
	clear(dst[base:])
	var err error
	for i, cl := range touched {
		b := s.buckets[cl]
		if i > 0 && touched[i-1] == cl-1 && slices.Equal(b, s.buckets[cl-1]) {
			dst[base+int(cl)] = dst[base+int(cl)-1]
			continue
		}
		next := s.closure(b)
		work += len(next) + len(b)
		var id int32
		if id, err = s.state(next); err != nil {
			break
		}
		dst[base+int(cl)] = id
	}
	for _, cl := range touched {
		s.buckets[cl] = s.buckets[cl][:0]
	}
	return dst, work, err
}

// memoryBytes estimates the memory held by the construction.
func (s *subsets) memoryBytes() int64 {
	return int64(cap(s.t.arena)+cap(s.t.off)+cap(s.t.slots)+cap(s.arena)+2*len(s.cacheOff))*4 +
		int64(cap(s.t.hash))*8 + int64(cap(s.accept)) + 2*int64(len(s.live))*8 +
		int64(len(s.runMemo))*24 // a map entry of two int32 words and a key, with its share of buckets
}

func (c *compiler) determinize(m *nfa) (*rawDFA, error) {
	s := newSubsets(m, c.opts.MaxDFAStates, int64(c.opts.MaxDFABytes))
	r := &rawDFA{classes: s.classes, k: s.k}
	var work int64
	addWork := func(n int) error {
		work += int64(n)
		if c.opts.Stats != nil {
			c.opts.Stats.Work += int64(n)
		}
		if work > c.opts.MaxWork {
			return limitErr(ErrTooMuchWork, c.opts.MaxWork, work)
		}
		return c.poll(n)
	}
	// Grammar NFAs determinize to roughly a quarter as many DFA states as
	// NFA states; sizing the table for that avoids most regrowth.
	r.trans = make([]int32, s.k, (len(m.states)/4+16)*s.k)
	start, err := s.start()
	if err != nil {
		return nil, err
	}
	if err := addWork(len(s.t.get(start))); err != nil {
		return nil, err
	}
	r.start = start
	for d := int32(1); int(d) < s.numStates(); d++ {
		var n int
		r.trans, n, err = s.row(d, r.trans)
		if err != nil {
			return nil, err
		}
		if err := addWork(n); err != nil {
			return nil, err
		}
	}
	r.accept = s.accept
	return r, nil
}
