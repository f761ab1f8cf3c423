package fsm

// The token side of package fsm: from a DFA to token masks.
//
//	vocabulary ([][]byte, EOS ids, width) ──NewTokenIndex──▶ *TokenIndex   (once per model)
//	*DFA + *TokenIndex ──NewConstraint──▶ *Constraint                       (once per schema; Cache)
//	*Constraint ──NewMatcher──▶ *Matcher                                    (once per sequence)
//	Matcher: FillMask(dst) → sample → Accept(token) → FillMask …
//
// A token t is allowed in DFA state q iff δ*(q, bytes(t)) is not the dead
// state (the DFA is trimmed, so "not dead" means "can still reach
// acceptance"); EOS ids are allowed iff q is accepting. In a DFA the mask
// depends only on q, so each state's mask is computed once, on first visit,
// by one trie walk (trie.go), and kept for every later visit by any request
// (mask.go: interned, sparse or dense storage, popcount). The start state's
// mask is computed eagerly so the first step never waits. Dense masks inside
// JSON strings would cost a full walk each; the slicer (mask_slicer.go) ORs
// in precomputed masks of string-safe token slices wherever the DFA provably
// allows all of them, and walks only the rest, with an identical result.
//
// Conventions: q and s are states, t a token, ti the TokenIndex, c the
// Constraint, m a Matcher; masks are []uint64 with bit t%64 of word t/64 set
// when t is allowed, sized (width+63)/64 words, padding bits zero.

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultMaxMaskBytes is the default cap on one constraint's stored masks.
// A dense mask is 16 KB at 128k tokens; thanks to interning and sparse
// storage a typical JSON schema stores well under a hundred dense masks, but
// a schema with many bounded strings stores about one dense mask per
// remaining-length step per string (up to the longest token, ~128 chars), so
// 20 such properties reach ~40 MB. 256 MiB leaves room for that and still
// stops a pathological constraint long before it hurts the server.
const DefaultMaxMaskBytes = 256 << 20

// ConstraintOptions configures a Constraint. The zero value means defaults.
type ConstraintOptions struct {
	// MaxMaskBytes caps the memory of the constraint's stored masks; a mask
	// that would exceed it makes FillMask fail with ErrMaskBudget (carrying
	// the limit and the size reached). 0 means DefaultMaxMaskBytes; a
	// negative value means no limit.
	MaxMaskBytes int64
	// NoSlicer disables the slicer (every cold mask is one plain trie walk).
	// Masks are identical either way; tests and benchmarks compare the two.
	NoSlicer bool
	// TrustTrimmed skips the check that every state but 0 can reach
	// acceptance (a reverse reachability pass, about a third of
	// NewConstraint's time on a large DFA). Compile guarantees it; set this
	// only for DFAs that come straight from Compile. The other DFA checks
	// always run.
	TrustTrimmed bool
}

// maskLockShards is the number of locks guarding mask computation. A cold
// state is computed under its shard's lock (so two sequences that reach the
// same cold state walk it once), while different cold states usually fall
// into different shards and are computed in parallel.
const maskLockShards = 64

// Constraint is a compiled DFA paired with a vocabulary: the unit a request
// decodes against. It holds the premultiplied transition table and the
// lazily filled per-state mask store. It is immutable in meaning and safe
// for concurrent use by any number of Matchers: each state's mask is
// computed once (under a per-shard lock, so concurrent sequences do not both
// walk the same cold state) and published atomically.
type Constraint struct {
	dfa     *DFA
	ti      *TokenIndex
	opts    ConstraintOptions
	k       int      // number of byte classes (stride)
	trans   []uint32 // premultiplied: trans[s*k+c] = next*k, dead = 0
	classes [256]uint8
	info    []uint16 // per state: stateLive | stateForced | forced byte
	start   StateID

	slots    []atomic.Pointer[maskEntry]
	locks    [maskLockShards]sync.Mutex
	internMu sync.Mutex
	intern   map[uint64][]*maskEntry
	eosOnly  *maskEntry // the mask of a finished matcher

	maskBytes atomic.Int64
	computed  atomic.Int64 // states whose mask was computed
	distinct  atomic.Int64 // distinct stored masks
	sliced    atomic.Int64 // masks computed with at least one slice applied

	uOnce  sync.Once
	uEdges [utf8SafeStates][]uEdge // (DFA class, next U state) pairs per U state
}

// Per-state flags in Constraint.info.
const (
	stateLive   = 1 << 15 // some byte leads to a live state
	stateForced = 1 << 14 // not accepting, and exactly one byte leads to a live state (low 8 bits)
)

// maskScratch is the per-goroutine scratch of a mask computation, pooled
// per TokenIndex (its size depends only on the vocabulary).
type maskScratch struct {
	stack  trieStack
	bits   []uint64 // words+1 for the sentinel bit
	clean  bool     // bits is all zero (so computeBits need not clear it)
	stamp  []uint32 // sliceBounds' per-layer dedupe, by state*utf8SafeStates+u
	gen    uint32
	cur    []StateID // sliceBounds' layers
	next   []StateID
	stack2 []uNode
}

// NewConstraint pairs d with the vocabulary ti. It checks d's invariants
// (ErrBadDFA), rejects an empty language (ErrEmptyLanguage), and computes the
// start state's mask eagerly so that the first step never waits.
func NewConstraint(d *DFA, ti *TokenIndex, opts ConstraintOptions) (*Constraint, error) {
	if d == nil || ti == nil {
		return nil, tokError(ErrBadDFA, "nil DFA or TokenIndex")
	}
	if err := validateDFA(d); err != nil {
		return nil, err
	}
	if d.Start == DeadState {
		return nil, tokError(ErrEmptyLanguage, "the constraint accepts no string")
	}
	if opts.MaxMaskBytes == 0 {
		opts.MaxMaskBytes = DefaultMaxMaskBytes
	}
	n, k := d.NumStates(), d.NumClasses
	c := &Constraint{
		dfa:     d,
		ti:      ti,
		opts:    opts,
		k:       k,
		trans:   make([]uint32, len(d.Trans)),
		classes: d.Classes,
		info:    make([]uint16, n),
		start:   d.Start,
		slots:   make([]atomic.Pointer[maskEntry], n),
		intern:  make(map[uint64][]*maskEntry),
	}
	// Members per class, and one member, for the forced-byte flags.
	var classCount [256]int
	var classByte [256]uint8
	for b := 255; b >= 0; b-- {
		classCount[d.Classes[b]]++
		classByte[d.Classes[b]] = uint8(b)
	}
	// One pass: range checks, premultiplied table, per-state flags, and
	// in-degrees over live edges for the trimmed check.
	deg := make([]int32, n+1)
	for s := range n {
		row := d.Trans[s*k : s*k+k]
		out := c.trans[s*k : s*k+k]
		live, one := 0, 0
		for cl, t := range row {
			if int(t) >= n {
				return nil, tokError(ErrBadDFA, "DFA transition %d of state %d targets state %d out of range", cl, s, t)
			}
			out[cl] = uint32(t) * uint32(k)
			if t != DeadState {
				live += classCount[cl]
				one = cl
				deg[t+1]++
			}
		}
		if s == 0 && live > 0 {
			return nil, tokError(ErrBadDFA, "DFA dead state 0 has a transition to a live state")
		}
		var f uint16
		if live > 0 {
			f |= stateLive
		}
		if live == 1 && !d.Accept[s] {
			f |= stateForced | uint16(classByte[one])
		}
		c.info[s] = f
	}
	if !opts.TrustTrimmed {
		if err := checkTrimmed(d, deg); err != nil {
			return nil, err
		}
	}
	eos := make([]uint64, ti.words)
	for _, e := range ti.eos {
		eos[e>>6] |= 1 << (uint(e) & 63)
	}
	h, pop := hashWords(eos)
	c.eosOnly = newMaskEntry(eos, ti.numTokens, h, pop)
	if _, err := c.maskFor(d.Start); err != nil {
		return nil, err
	}
	return c, nil
}

// validateDFA verifies the cheap DFA invariants: consistent sizes, classes and
// start in range, state 0 not accepting. NewConstraint checks transitions,
// the dead state's edges and trimming in its pass over the table.
func validateDFA(d *DFA) error {
	n, k := d.NumStates(), d.NumClasses
	switch {
	case n == 0:
		return tokError(ErrBadDFA, "DFA has no states")
	case k < 1 || k > 256:
		return tokError(ErrBadDFA, "DFA has %d byte classes, want 1..256", k)
	case len(d.Trans) != n*k:
		return tokError(ErrBadDFA, "DFA has %d transitions, want %d states × %d classes", len(d.Trans), n, k)
	case int64(n)*int64(k) >= 1<<32:
		return tokLimitError(ErrBadDFA, "DFA transition table", 1<<32-1, int64(n)*int64(k))
	case int(d.Start) >= n:
		return tokError(ErrBadDFA, "DFA start state %d out of range (%d states)", d.Start, n)
	case d.Accept[0]:
		return tokError(ErrBadDFA, "DFA dead state 0 is accepting")
	}
	for b, cl := range d.Classes {
		if int(cl) >= k {
			return tokError(ErrBadDFA, "DFA byte %#02x has class %d, want < %d", b, cl, k)
		}
	}
	return nil
}

// checkTrimmed verifies that every state but 0 reaches an accepting state
// (a mask would otherwise admit tokens that lead into a dead-end pocket, and
// decoding would get stuck there). deg[t+1] holds the number of live edges
// into t; deg is overwritten.
func checkTrimmed(d *DFA, deg []int32) error {
	n, k := d.NumStates(), d.NumClasses
	// Trimmed: backward reachability from the accepting states.
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	pred := make([]StateID, deg[n])
	pos := append([]int32(nil), deg[:n]...)
	for s := 1; s < n; s++ {
		for _, t := range d.Trans[s*k : s*k+k] {
			if t != DeadState {
				pred[pos[t]] = StateID(s)
				pos[t]++
			}
		}
	}
	live := make([]bool, n)
	var queue []StateID
	for s, a := range d.Accept {
		if a {
			live[s] = true
			queue = append(queue, StateID(s))
		}
	}
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range pred[deg[t]:deg[t+1]] {
			if !live[p] {
				live[p] = true
				queue = append(queue, p)
			}
		}
	}
	for s := 1; s < n; s++ {
		if !live[s] {
			return tokError(ErrBadDFA, "DFA is not trimmed: state %d cannot reach an accepting state", s)
		}
	}
	return nil
}

// DFA returns the constraint's automaton.
func (c *Constraint) DFA() *DFA { return c.dfa }

// TokenIndex returns the constraint's vocabulary.
func (c *Constraint) TokenIndex() *TokenIndex { return c.ti }

// NewMatcher returns a Matcher at the start state.
func (c *Constraint) NewMatcher() *Matcher {
	return &Matcher{c: c, state: c.start}
}

// maskFor returns the stored mask of state q, computing it on first use.
func (c *Constraint) maskFor(q StateID) (*maskEntry, error) {
	if e := c.slots[q].Load(); e != nil {
		return e, nil
	}
	mu := &c.locks[int(q)%maskLockShards]
	mu.Lock()
	defer mu.Unlock()
	if e := c.slots[q].Load(); e != nil {
		return e, nil
	}
	sc := c.ti.getScratch()
	defer c.ti.scratch.Put(sc)
	w := c.computeBits(q, sc, !c.opts.NoSlicer)
	e, err := c.internMask(w)
	if err != nil {
		return nil, err
	}
	if e.kind == maskList {
		// Its ids are exactly the set bits: clearing their words leaves the
		// scratch clean without a 16 KB memclr.
		for _, id := range e.ids {
			w[id>>6] = 0
		}
		sc.clean = true
	}
	c.computed.Add(1)
	c.slots[q].Store(e)
	return e, nil
}

// computeBits computes the mask of state q into sc.bits and returns its
// first words words (the sentinel bit cleared). With slicing, string-safe
// slices whose tokens all keep q alive are ORed in whole (sliceBounds) and
// only the others are walked; the result is the same as the plain walk.
func (c *Constraint) computeBits(q StateID, sc *maskScratch, slicing bool) []uint64 {
	ti := c.ti
	w := sc.bits
	if !sc.clean {
		clear(w)
	}
	sc.clean = false
	start := uint32(q) * uint32(c.k)
	safe, dead := 0, noBound
	if slicing && len(ti.slices) > 0 {
		safe, dead = c.sliceBounds(q, sc)
	}
	if len(ti.slices) > 0 && safe >= ti.slices[0].maxChars {
		// Some slice applies: OR in those that all keep q alive (one
		// cumulative mask), skip those that all kill it, walk the others
		// and the rest.
		i := 0
		for i+1 < len(ti.slices) && ti.slices[i+1].maxChars <= safe {
			i++
		}
		copy(w, ti.slices[i].cum)
		for j := i + 1; j < len(ti.slices); j++ {
			if s := &ti.slices[j]; s.minChars < dead {
				s.trie.walk(c.trans, &c.classes, start, w, &sc.stack)
			}
		}
		ti.rest.walk(c.trans, &c.classes, start, w, &sc.stack)
		c.sliced.Add(1)
	} else {
		// No slice applies: one walk of the full trie.
		ti.full.walk(c.trans, &c.classes, start, w, &sc.stack)
	}
	for _, id := range ti.long {
		if c.dfa.Run(q, ti.tokens[id]) != DeadState {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	if c.dfa.Accept[q] {
		for _, id := range ti.eos {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	sent := ti.numTokens
	w[sent>>6] &^= 1 << (uint(sent) & 63)
	return w[:ti.words]
}

// internMask returns the stored entry equal to w, storing a new one (within
// the mask budget) when there is none.
func (c *Constraint) internMask(w []uint64) (*maskEntry, error) {
	h, pop := hashWords(w)
	c.internMu.Lock()
	defer c.internMu.Unlock()
	for _, e := range c.intern[h] {
		if e.equalBits(w, pop) {
			return e, nil
		}
	}
	e := newMaskEntry(w, c.ti.numTokens, h, pop)
	size := c.maskBytes.Load() + e.bytes
	if c.opts.MaxMaskBytes > 0 && size > c.opts.MaxMaskBytes {
		return nil, tokLimitError(ErrMaskBudget, "constraint mask memory (bytes)", c.opts.MaxMaskBytes, size)
	}
	c.intern[h] = append(c.intern[h], e)
	c.maskBytes.Add(e.bytes)
	c.distinct.Add(1)
	return e, nil
}

// ConstraintStats describes a constraint's mask store, for metrics.
type ConstraintStats struct {
	States         int   // DFA states, the dead state included
	MasksComputed  int64 // states whose mask has been computed
	DistinctMasks  int64 // distinct stored masks (after interning)
	SlicedMasks    int64 // computed masks that used at least one slice
	MaskBytes      int64 // memory of the stored masks
	TotalBytes     int64 // MaskBytes plus the transition table and per-state slots
	MaxMaskBytes   int64 // the mask budget (negative: none)
	StartMaskCount int   // tokens allowed at the start state (EOS included)
}

// Stats returns a snapshot of the constraint's counters.
func (c *Constraint) Stats() ConstraintStats {
	st := ConstraintStats{
		States:        len(c.slots),
		MasksComputed: c.computed.Load(),
		DistinctMasks: c.distinct.Load(),
		SlicedMasks:   c.sliced.Load(),
		MaskBytes:     c.maskBytes.Load(),
		MaxMaskBytes:  c.opts.MaxMaskBytes,
	}
	st.TotalBytes = c.MemoryBytes()
	if e := c.slots[c.start].Load(); e != nil {
		st.StartMaskCount = e.pop
	}
	return st
}

// MemoryBytes returns the constraint's current memory, excluding the shared
// TokenIndex: stored masks, the transition tables and per-state slots. It
// grows as masks are filled in.
func (c *Constraint) MemoryBytes() int64 {
	return c.maskBytes.Load() + int64(len(c.trans))*4*2 + int64(len(c.slots))*(8+2+1) + 512
}

// AllowedCount returns the number of tokens allowed in state q (EOS
// included), computing q's mask if needed.
func (c *Constraint) AllowedCount(q StateID) (int, error) {
	if int(q) >= len(c.slots) {
		return 0, tokError(ErrBadDFA, "state %d out of range", q)
	}
	e, err := c.maskFor(q)
	if err != nil {
		return 0, err
	}
	return e.pop, nil
}

// FillMask writes the mask of state q into dst, which must have at least
// TokenIndex().MaskWords() words; every word of dst is overwritten.
func (c *Constraint) FillMask(q StateID, dst []uint64) error {
	if len(dst) < c.ti.MaskWords() {
		return tokError(ErrMaskSize, "mask has %d words, want at least %d", len(dst), c.ti.MaskWords())
	}
	if int(q) >= len(c.slots) {
		return tokError(ErrBadDFA, "state %d out of range", q)
	}
	e, err := c.maskFor(q)
	if err != nil {
		return err
	}
	e.fill(dst, c.ti.numTokens)
	return nil
}

// plainMask computes the mask of q with one plain trie walk and no cache
// (the reference the slicer is tested against). The result has
// TokenIndex.words words.
func (c *Constraint) plainMask(q StateID) []uint64 {
	return c.computeBits(q, c.ti.newScratch(), false)
}

// Warm computes the masks of states reachable from the start, breadth
// first, until maxStates masks are stored (≤ 0: no bound), every reachable
// state is done, or ctx is done. It returns the number of states visited.
// Run it off the request path (a background goroutine after a cache miss,
// say) for constraints expected to stay hot: later requests then never meet
// a cold state. A mask-budget error stops it and is returned.
func (c *Constraint) Warm(ctx context.Context, maxStates int) (int, error) {
	seen := make([]bool, len(c.slots))
	queue := []StateID{c.start}
	seen[c.start] = true
	n := 0
	for len(queue) > 0 && (maxStates <= 0 || n < maxStates) {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		q := queue[0]
		queue = queue[1:]
		if _, err := c.maskFor(q); err != nil {
			return n, err
		}
		n++
		for _, t := range c.dfa.Trans[int(q)*c.k : int(q)*c.k+c.k] {
			if t != DeadState && !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	return n, nil
}
