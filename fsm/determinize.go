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
// flat arena, so the hot loop allocates nothing per state. NFA-state sets
// under construction use a Briggs–Torczon sparse set (O(1) clear, insert
// and membership), as RE2 does.
//
// For each DFA state the successors of all its byte states are bucketed by
// class; a class whose bucket equals the previous class's bucket reuses its
// result, which makes wide classes (any UTF-8 continuation byte, say) cost
// one closure instead of one per class.
//
// The raw DFA it produces is complete, has the dead (empty-set) state 0,
// and is not yet trimmed; finish trims, minimizes and renumbers it.

// rawDFA is an untrimmed complete DFA with dead state 0.
type rawDFA struct {
	classes [256]uint8
	k       int
	trans   []int32 // len(accept)*k entries
	accept  []bool
	start   int32
}

// sparseSet is a Briggs–Torczon sparse set of small non-negative ints.
type sparseSet struct {
	dense, sparse []int32
}

func newSparseSet(n int) sparseSet {
	return sparseSet{dense: make([]int32, 0, n), sparse: make([]int32, n)}
}

func (s *sparseSet) has(x int32) bool {
	i := s.sparse[x]
	return int(i) < len(s.dense) && s.dense[i] == x
}

func (s *sparseSet) add(x int32) {
	s.sparse[x] = int32(len(s.dense))
	s.dense = append(s.dense, x)
}

func (s *sparseSet) clear() { s.dense = s.dense[:0] }

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

func (c *compiler) determinize(m *nfa) (*rawDFA, error) {
	r := &rawDFA{}
	var bound [257]bool
	for i := range m.states {
		if s := &m.states[i]; s.kind == nfaByte {
			bound[s.lo] = true
			bound[int(s.hi)+1] = true
		}
	}
	cls := -1
	for b := range 256 {
		if b == 0 || bound[b] {
			cls++
		}
		r.classes[b] = uint8(cls)
	}
	k := cls + 1
	r.k = k

	ns := len(m.states)
	// The epsilon closure of each NFA state is computed once, by depth-first
	// search, and kept (core states only, sorted) in an arena; the closure
	// of a bucket of states is then the union of cached lists, and the
	// common one-state bucket needs no union and no sort at all. The arena
	// is capped so that NFAs with long epsilon chains (whose closures sum
	// to quadratic size) fall back to searching each time.
	cacheCap := max(1<<20, 8*ns)
	cacheOff := make([]int32, ns)
	cacheLen := make([]int32, ns)
	for i := range cacheOff {
		cacheOff[i] = -1
	}
	var arena []int32
	dfs := newSparseSet(ns)
	var stack, one []int32
	closureOf := func(s int32) []int32 {
		if o := cacheOff[s]; o >= 0 {
			return arena[o : o+cacheLen[s]]
		}
		dfs.clear()
		dfs.add(s)
		stack = append(stack[:0], s)
		one = one[:0]
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			st := &m.states[s]
			if st.kind != nfaEps {
				one = append(one, s)
				continue
			}
			for _, t := range m.targets(st) {
				if !dfs.has(t) {
					dfs.add(t)
					stack = append(stack, t)
				}
			}
		}
		slices.Sort(one)
		if len(arena)+len(one) > cacheCap {
			return one
		}
		cacheOff[s], cacheLen[s] = int32(len(arena)), int32(len(one))
		arena = append(arena, one...)
		return arena[cacheOff[s] : int(cacheOff[s])+len(one)]
	}
	ss := newSparseSet(ns)
	var buf []int32
	closure := func(seeds []int32) []int32 {
		if len(seeds) == 1 {
			return closureOf(seeds[0])
		}
		ss.clear()
		buf = buf[:0]
		for _, s := range seeds {
			for _, x := range closureOf(s) {
				if !ss.has(x) {
					ss.add(x)
					buf = append(buf, x)
				}
			}
		}
		slices.Sort(buf)
		return buf
	}

	var t setTable
	t.off = []int32{0}
	t.intern(nil) // id 0: the empty set, the dead state
	// Grammar NFAs determinize to roughly a quarter as many DFA states as
	// NFA states; sizing the table for that avoids most regrowth.
	r.trans = make([]int32, k, (len(m.states)/4+16)*k)
	r.accept = []bool{false}

	var work int64
	addWork := func(n int) error {
		work += int64(n)
		if c.opts.Stats != nil {
			c.opts.Stats.Work += int64(n)
		}
		if work > c.opts.MaxWork {
			return limitErr(ErrTooMuchWork, c.opts.MaxWork, work)
		}
		return c.poll()
	}
	newState := func(set []int32) (int32, error) {
		id, added := t.intern(set)
		if added {
			if t.len() > c.opts.MaxDFAStates {
				return 0, limitErr(ErrTooManyDFAStates, int64(c.opts.MaxDFAStates), int64(t.len()))
			}
			if b := int64(t.len()) * int64(k) * 4; b > int64(c.opts.MaxDFABytes) {
				return 0, limitErr(ErrTooManyDFABytes, int64(c.opts.MaxDFABytes), b)
			}
			r.accept = append(r.accept, len(set) > 0 && set[0] == nfaAccept)
		}
		return id, nil
	}

	start := closure([]int32{m.start})
	if err := addWork(len(start)); err != nil {
		return nil, err
	}
	id, err := newState(start)
	if err != nil {
		return nil, err
	}
	r.start = id

	buckets := make([][]int32, k)
	for d := int32(1); int(d) < t.len(); d++ {
		set := t.get(d)
		if err := addWork(len(set)); err != nil {
			return nil, err
		}
		for _, q := range set {
			st := &m.states[q]
			if st.kind != nfaByte {
				continue
			}
			for cl := int(r.classes[st.lo]); cl <= int(r.classes[st.hi]); cl++ {
				buckets[cl] = append(buckets[cl], st.next)
			}
		}
		for cl := range k {
			switch {
			case len(buckets[cl]) == 0:
				r.trans = append(r.trans, 0)
			case cl > 0 && slices.Equal(buckets[cl], buckets[cl-1]):
				r.trans = append(r.trans, r.trans[len(r.trans)-1])
			default:
				next := closure(buckets[cl])
				if err := addWork(len(next) + len(buckets[cl])); err != nil {
					return nil, err
				}
				id, err := newState(next)
				if err != nil {
					return nil, err
				}
				r.trans = append(r.trans, id)
			}
		}
		for cl := range k {
			buckets[cl] = buckets[cl][:0]
		}
	}
	return r, nil
}
