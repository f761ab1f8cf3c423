package fsm

import "slices"

// Safe-universal state sets.
//
// The slicer (mask_slicer.go) ORs in a whole slice of string-safe tokens
// when it can show that no string of that many safe characters kills the
// state; it shows it by exploring the DFA, which in a lazy constraint means
// creating every state the exploration reaches. Inside an unbounded JSON
// string body, or an any-key string with the declared keys excluded (an
// object's extra keys), the exploration proves "nothing ever dies", and in
// an object whose keys are written in any order each subset of written
// keys has its own copy of these states: exploring them cost hundreds of
// new states per cold mask.
//
// A lazy constraint knows each state's NFA set, and some NFA states prove
// the answer by themselves. A set that holds one of them can never die on
// safe characters, so its state gets stateSafeUniversal and the slicer
// answers at once (safe = dead = ∞):
//
//   - nfaSafeUniversal marks the byte states of a spliced DFA state from
//     which no string of safe characters dies (safeUniversalStates). A set
//     that holds one of them holds all of that DFA state's byte states
//     (they are reached only through its epsilon state), so it follows the
//     DFA on every safe character into another such state.
//   - nfaSafeLoop marks the one-byte states of a character class that holds
//     every safe character (coversSafeChars). A set that holds one holds
//     the whole class (reached only through the class's split); when the
//     class's continuation leads back to the class (x ∈ closure(x.next):
//     the class is the body of a loop, as in a string body c*), every safe
//     character, of any length, ends at the continuation, whose closure
//     holds the class again.
//
// Both are structural facts that stamped copies keep (flags are copied with
// the states and next is relocated), so every copy proves itself.
//
// A bounded string body (c{0,n}, a chain of copies of the class) has no
// loop, but a shorter proof: when the closure of a class's continuation
// holds a state of another such class, every safe character leads from
// the first class to a set holding the second, so a chain of r classes
// keeps the set alive through any r safe characters (safeRun). A state
// whose set holds such a chain as long as the longest safe token gets
// stateSafeDeep: every slice applies, and only the rest trie is walked.
// Without it the search (searchLimit characters deep) and the walk of the
// last slice (the longest tokens) created a state per character and
// partial character of those tokens inside a maxLength string at every
// cold mask (~1,050 states at the start of each copy of a maxLength 255
// value in an array of objects, MaskBench o9925).

// nfaState flags.
const (
	nfaSafeUniversal = 1 << iota // a spliced DFA state's byte state; the state never dies on safe characters
	nfaSafeLoop                  // a one-byte state of a class holding every safe character
)

// safeCharRanges are the characters U (utf8Safe) reads: every Unicode
// scalar value except '"', '\\', U+0000–U+001F and U+007F–U+009F.
var safeCharRanges = []RuneRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7E}, {0xA0, 0xD7FF}, {0xE000, 0x10FFFF}}

// coversSafeChars reports whether the union of rs holds every character U
// reads: no character missing from rs is one U reads.
func coversSafeChars(rs []RuneRange) bool {
	for _, m := range complementRunes(rs) {
		for _, w := range safeCharRanges {
			if m.Lo <= w.Hi && w.Lo <= m.Hi {
				return false
			}
		}
	}
	return true
}

// safeUniversalStates returns, per state of d, whether no string of safe
// characters (as U reads them) leads it to the dead state: the states that
// cannot reach a kill (a safe character's byte that d sends to dead) in the
// product of d and U. DFAs over maxSafeUniversalStates states get no marks.
func safeUniversalStates(d *DFA) []bool {
	n, k := d.NumStates(), d.NumClasses
	univ := make([]bool, n)
	if n > maxSafeUniversalStates {
		return univ
	}
	edges := uEdgesOf(&d.Classes)
	// Product nodes s*U+u; bad = can reach a kill. Reverse edges in CSR
	// form, then a backward search from the nodes with a kill edge.
	node := func(s StateID, u uint8) int { return int(s)*utf8SafeStates + int(u) }
	nn := n * utf8SafeStates
	deg := make([]int32, nn+1)
	bad := make([]bool, nn)
	var queue []int32
	for s := StateID(1); int(s) < n; s++ {
		for u := range uint8(utf8SafeStates) {
			for _, e := range edges[u] {
				if t := d.Trans[int(s)*k+int(e.class)]; t == DeadState {
					if !bad[node(s, u)] {
						bad[node(s, u)] = true
						queue = append(queue, int32(node(s, u)))
					}
				} else {
					deg[node(t, e.next)+1]++
				}
			}
		}
	}
	for i := 1; i <= nn; i++ {
		deg[i] += deg[i-1]
	}
	pred := make([]int32, deg[nn])
	pos := slices.Clone(deg[:nn])
	for s := StateID(1); int(s) < n; s++ {
		for u := range uint8(utf8SafeStates) {
			for _, e := range edges[u] {
				if t := d.Trans[int(s)*k+int(e.class)]; t != DeadState {
					v := node(t, e.next)
					pred[pos[v]] = int32(node(s, u))
					pos[v]++
				}
			}
		}
	}
	reachBack(bad, queue, pred, deg)
	for s := 1; s < n; s++ {
		univ[s] = !bad[node(StateID(s), 0)]
	}
	return univ
}

// maxSafeUniversalStates bounds the DFAs safeUniversalStates analyses
// (its arrays take ~100 words per state).
const maxSafeUniversalStates = 1 << 16

// safeRun reports whether set holds a chain of n classes that hold every
// safe character, each in the closure of the one before's continuation
// (see the file comment): then no string of at most n safe characters
// kills the set. It may build lazy fragments (closureOf).
func (s *subsets) safeRun(set []int32, n int) bool {
	tried := s.runTried[:0]
	defer func() { s.runTried = tried }()
outer:
	for _, x := range set {
		st := &s.m.states[x]
		if st.flags&nfaSafeLoop == 0 {
			continue
		}
		// The one-byte states of a class share their continuation: one
		// answer serves them all.
		for _, t := range tried {
			if t == st.next {
				continue outer
			}
		}
		tried = append(tried, st.next)
		if s.chainFrom(x, n) >= n {
			return true
		}
	}
	return false
}

// runStep is a memo entry of chainFrom: from a class state, a chain of n
// classes is known, and next is the class state after them (-1: the
// chain ends there).
type runStep struct{ n, next int32 }

// chainFrom returns the length of the chain of safe classes that starts
// at class state x, or at least n when it is that long. Consecutive DFA
// states inside a string ask about consecutive positions of one chain, so
// every state it passes is memoized with the chain known from it (path
// compression): an answer costs a few lookups, not n closure scans.
func (s *subsets) chainFrom(x int32, n int) int {
	if s.runMemo == nil {
		s.runMemo = make(map[int32]runStep)
	}
	path, offs := s.runPath[:0], s.runOffs[:0]
	total, cur := 0, x
	for total < n && cur >= 0 {
		path, offs = append(path, cur), append(offs, int32(total))
		if m, ok := s.runMemo[cur]; ok {
			total, cur = total+int(m.n), m.next
			continue
		}
		next := int32(-1)
		for _, y := range s.closureOf(s.m.states[cur].next) {
			if s.m.states[y].flags&nfaSafeLoop != 0 {
				next = y
				break
			}
		}
		total, cur = total+1, next
	}
	for i, p := range path {
		s.runMemo[p] = runStep{n: int32(total) - offs[i], next: cur}
	}
	s.runPath, s.runOffs = path, offs
	return total
}

// safeUniversal reports whether set (a DFA state's NFA states) holds a
// state that proves it never dies on safe characters (see the file
// comment). It may build lazy fragments (closureOf).
func (s *subsets) safeUniversal(set []int32) bool {
	for _, x := range set {
		st := s.m.states[x]
		switch {
		case st.flags&nfaSafeUniversal != 0:
			return true
		case st.flags&nfaSafeLoop != 0:
			if _, ok := slices.BinarySearch(s.closureOf(st.next), x); ok {
				return true
			}
		}
	}
	return false
}
