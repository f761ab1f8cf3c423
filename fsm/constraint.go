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
	// MaxCloseStates bounds the states one closing-distance computation
	// explores (MinTokens, FillMaskWithin; close.go); past it MinTokens
	// fails with ErrCloseBudget, and FillMaskWithin falls back on sound
	// upper bounds (byte distances, NFA paths), failing only when none of
	// them fits the budget. 0 means DefaultMaxCloseStates; a negative
	// value means no limit.
	MaxCloseStates int
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
	dfa     *DFA     // the eager DFA (nil for a lazy constraint)
	lazy    *lazyDet // the on-demand determinizer (nil for an eager constraint)
	tab     atomic.Pointer[table]
	ti      *TokenIndex
	opts    ConstraintOptions
	k       int // number of byte classes (stride)
	classes [256]uint8
	start   StateID

	classCount [256]int   // bytes per class
	classByte  [256]uint8 // the lowest byte of each class

	pages    []atomic.Pointer[slotPage] // per-state mask slots, slotPageSize states a page
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

	cl atomic.Pointer[closer] // closing distances (close.go), made on first use
}

// table is the transition table a Constraint reads: complete for an eager
// constraint; for a lazy one, the states created so far, with the rows of
// states not yet expanded set to unknownState. Readers load it atomically
// and read entries with atomic loads; a lazy constraint's writer (under its
// lock) fills rows in place and, when the table is full, publishes a larger
// copy. A reader holding an older copy sees unknownState where the newer one
// has a row, asks for the expansion and gets the newer copy.
type table struct {
	trans  []uint32 // premultiplied: trans[s*k+c] = next*k; dead = 0
	info   []uint32 // per state: stateKnown | stateLive | stateForced | forced byte
	accept []bool   // per state; written before any transition to the state is published
}

// unknownState marks a transition not computed yet (lazy constraints).
const unknownState = ^uint32(0)

// slotPage holds the mask slots of slotPageSize consecutive states.
type slotPage [slotPageSize]atomic.Pointer[maskEntry]

const (
	slotPageShift = 10
	slotPageSize  = 1 << slotPageShift
)

// Per-state flags in Constraint.info.
const (
	stateSafeUniversal = 1 << 17 // no string of safe characters kills the state (lazy constraints, safe.go)
	stateSafeDeep      = 1 << 18 // no string of as many safe characters as the longest safe token kills it (lazy constraints, safe.go)
	stateKnown         = 1 << 16 // the row is computed (always, in an eager constraint)
	stateLive          = 1 << 15 // some byte leads to a live state
	stateForced        = 1 << 14 // not accepting, and exactly one byte leads to a live state (low 8 bits)
)

// maskScratch is the per-goroutine scratch of a mask computation, pooled
// per TokenIndex (its size depends only on the vocabulary).
type maskScratch struct {
	stack  trieStack
	bits   []uint64 // words+1 for the sentinel bit
	clean  bool     // bits is all zero (so computeBits need not clear it)
	stamp  []uint32 // sliceBounds' marks, by state*utf8SafeStates+u
	gen    uint32
	val    []int32   // longestAlive's memo, indexed like stamp
	cur    []StateID // sliceBounds' layers
	next   []StateID
	stack2 []uNode
	edges  []uEdgeTo // sliceBounds' edges of one node
	arena  []uEdgeTo // longestAlive's edges of the nodes on its path
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
	c := newConstraint(ti, opts, d.Classes, k, d.Start, n)
	c.dfa = d
	t := &table{trans: make([]uint32, len(d.Trans)), info: make([]uint32, n), accept: d.Accept}
	// One pass: range checks, premultiplied table, per-state flags, and
	// in-degrees over live edges for the trimmed check.
	deg := make([]int32, n+1)
	for s := range n {
		row := d.Trans[s*k : s*k+k]
		out := t.trans[s*k : s*k+k]
		for cl, nx := range row {
			if int(nx) >= n {
				return nil, tokError(ErrBadDFA, "DFA transition %d of state %d targets state %d out of range", cl, s, nx)
			}
			out[cl] = uint32(nx) * uint32(k)
			if nx != DeadState {
				deg[nx+1]++
			}
		}
		t.info[s] = c.rowInfo(out, d.Accept[s])
		if s == 0 && t.info[s]&stateLive != 0 {
			return nil, tokError(ErrBadDFA, "DFA dead state 0 has a transition to a live state")
		}
	}
	if !opts.TrustTrimmed {
		if err := checkTrimmed(d, deg); err != nil {
			return nil, err
		}
	}
	c.tab.Store(t)
	if _, err := c.maskFor(d.Start); err != nil {
		return nil, err
	}
	return c, nil
}

// newConstraint sets up what eager and lazy constraints share: options,
// classes, slot pages for up to maxStates states, the EOS-only mask.
func newConstraint(ti *TokenIndex, opts ConstraintOptions, classes [256]uint8, k int, start StateID, maxStates int) *Constraint {
	if opts.MaxMaskBytes == 0 {
		opts.MaxMaskBytes = DefaultMaxMaskBytes
	}
	c := &Constraint{
		ti:      ti,
		opts:    opts,
		k:       k,
		classes: classes,
		start:   start,
		pages:   make([]atomic.Pointer[slotPage], (maxStates+slotPageSize-1)/slotPageSize),
		intern:  make(map[uint64][]*maskEntry),
	}
	for b := 255; b >= 0; b-- {
		c.classCount[classes[b]]++
		c.classByte[classes[b]] = uint8(b)
	}
	eos := make([]uint64, ti.words)
	for _, e := range ti.eos {
		eos[e>>6] |= 1 << (uint(e) & 63)
	}
	h, pop := hashWords(eos)
	c.eosOnly = newMaskEntry(eos, ti.numTokens, h, pop)
	return c
}

// rowInfo computes a state's flags from its premultiplied row.
func (c *Constraint) rowInfo(row []uint32, accept bool) uint32 {
	live, one := 0, 0
	for cl, nx := range row {
		if nx != 0 {
			live += c.classCount[cl]
			one = cl
		}
	}
	f := uint32(stateKnown)
	if live > 0 {
		f |= stateLive
	}
	if live == 1 && !accept {
		f |= stateForced | uint32(c.classByte[one])
	}
	return f
}

// slot returns the mask slot of state q.
func (c *Constraint) slot(q StateID) *atomic.Pointer[maskEntry] {
	pg := &c.pages[q>>slotPageShift]
	p := pg.Load()
	if p == nil {
		pg.CompareAndSwap(nil, new(slotPage))
		p = pg.Load()
	}
	return &p[q&(slotPageSize-1)]
}

// expand returns the current table with state q's row computed. For an
// eager constraint every row is known; a lazy one determinizes q now (see
// lazy.go) unless another reader already did.
func (c *Constraint) expand(q StateID) (*table, error) {
	t := c.tab.Load()
	if c.lazy == nil || atomic.LoadUint32(&t.info[q])&stateKnown != 0 {
		return t, nil
	}
	return c.lazy.expand(c, q)
}

// run returns the state reached from q over bs (DeadState as soon as it
// dies), expanding states on the way.
func (c *Constraint) run(q StateID, bs []byte) (StateID, error) {
	t := c.tab.Load()
	k := uint32(c.k)
	p := uint32(q) * k
	for _, b := range bs {
		if p == 0 {
			return DeadState, nil
		}
		i := p + uint32(c.classes[b])
		v := atomic.LoadUint32(&t.trans[i])
		if v == unknownState {
			var err error
			if t, err = c.lazy.expand(c, StateID(p/k)); err != nil {
				return DeadState, err
			}
			v = atomic.LoadUint32(&t.trans[i])
		}
		p = v
	}
	return StateID(p / k), nil
}

// accepting reports whether q is accepting. q must have been reached
// through the table (or be the start).
func (c *Constraint) accepting(q StateID) bool { return c.tab.Load().accept[q] }

// infoOf returns q's flags, expanding q if needed.
func (c *Constraint) infoOf(q StateID) (uint32, error) {
	t, err := c.expand(q)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32(&t.info[q]), nil
}

// numStates returns the number of states created so far (all of them for
// an eager constraint).
func (c *Constraint) numStates() int {
	if c.lazy != nil {
		return int(c.lazy.states.Load())
	}
	return c.dfa.NumStates()
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
	reachBack(live, queue, pred, deg)
	for s := 1; s < n; s++ {
		if !live[s] {
			return tokError(ErrBadDFA, "DFA is not trimmed: state %d cannot reach an accepting state", s)
		}
	}
	return nil
}

// DFA returns the constraint's automaton: the minimized DFA it was built
// from, or nil for a lazy constraint (CompileConstraint), whose states are
// created as they are reached.
func (c *Constraint) DFA() *DFA { return c.dfa }

// TokenIndex returns the constraint's vocabulary.
func (c *Constraint) TokenIndex() *TokenIndex { return c.ti }

// NewMatcher returns a Matcher at the start state.
func (c *Constraint) NewMatcher() *Matcher {
	return &Matcher{c: c, state: c.start}
}

// maskFor returns the stored mask of state q, computing it on first use.
func (c *Constraint) maskFor(q StateID) (*maskEntry, error) {
	sl := c.slot(q)
	if e := sl.Load(); e != nil {
		return e, nil
	}
	mu := &c.locks[int(q)%maskLockShards]
	mu.Lock()
	defer mu.Unlock()
	if e := sl.Load(); e != nil {
		return e, nil
	}
	sc := c.ti.getScratch()
	defer c.ti.scratch.Put(sc)
	w, err := c.computeBits(q, sc, !c.opts.NoSlicer)
	if err != nil {
		sc.clean = false
		return nil, err
	}
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
	sl.Store(e)
	return e, nil
}

// computeBits computes the mask of state q into sc.bits and returns its
// first words words (the sentinel bit cleared). With slicing, string-safe
// slices whose tokens all keep q alive are ORed in whole (sliceBounds) and
// only the others are walked; the result is the same as the plain walk.
func (c *Constraint) computeBits(q StateID, sc *maskScratch, slicing bool) ([]uint64, error) {
	ti := c.ti
	w := sc.bits
	if !sc.clean {
		clear(w)
	}
	sc.clean = false
	t, err := c.expand(q)
	if err != nil {
		return nil, err
	}
	wk := walker{c: c, t: t}
	start := uint32(q) * uint32(c.k)
	safe, dead := 0, noBound
	if slicing && len(ti.slices) > 0 {
		if safe, dead, err = c.sliceBounds(q, sc); err != nil {
			return nil, err
		}
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
				s.trie.walk(&wk, start, w, &sc.stack)
			}
		}
		ti.rest.walk(&wk, start, w, &sc.stack)
		c.sliced.Add(1)
	} else {
		// No slice applies: one walk of the full trie.
		ti.full.walk(&wk, start, w, &sc.stack)
	}
	if wk.err != nil {
		return nil, wk.err
	}
	for _, id := range ti.long {
		s, err := c.run(q, ti.tokens[id])
		if err != nil {
			return nil, err
		}
		if s != DeadState {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	if t.accept[q] {
		for _, id := range ti.eos {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	sent := ti.numTokens
	w[sent>>6] &^= 1 << (uint(sent) & 63)
	return w[:ti.words], nil
}

// walker is what a trie walk reads transitions from: the constraint's table,
// refreshed when a lazy constraint expands a state on the way; err records
// an expansion that failed (a budget), which ends the walk.
type walker struct {
	c   *Constraint
	t   *table
	err error
}

// expand expands the state whose premultiplied index is p and returns the
// table to continue with (nil after an error).
func (wk *walker) expand(p uint32) []uint32 {
	t, err := wk.c.lazy.expand(wk.c, StateID(p/uint32(wk.c.k)))
	if err != nil {
		wk.err = err
		return nil
	}
	wk.t = t
	return t.trans
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
		States:        c.numStates(),
		MasksComputed: c.computed.Load(),
		DistinctMasks: c.distinct.Load(),
		SlicedMasks:   c.sliced.Load(),
		MaskBytes:     c.maskBytes.Load(),
		MaxMaskBytes:  c.opts.MaxMaskBytes,
	}
	st.TotalBytes = c.MemoryBytes()
	if e := c.slot(c.start).Load(); e != nil {
		st.StartMaskCount = e.pop
	}
	return st
}

// MemoryBytes returns the constraint's current memory, excluding the shared
// TokenIndex: stored masks, the transition tables and per-state slots. It
// grows as masks are filled in.
func (c *Constraint) MemoryBytes() int64 {
	t := c.tab.Load()
	rows := int64(len(t.info))
	if c.lazy != nil && c.lazy.reserved.Load() {
		rows = int64(c.numStates()) // the reserved rows past them are not touched
	}
	b := c.maskBytes.Load() + rows*(int64(c.k)*4+4+1) + 512
	for i := range c.pages {
		if c.pages[i].Load() != nil {
			b += slotPageSize * 8
		}
	}
	if c.dfa != nil {
		b += int64(len(c.dfa.Trans)) * 4
	}
	if c.lazy != nil {
		b += c.lazy.mem.Load()
	}
	if cl := c.cl.Load(); cl != nil {
		b += cl.mem.Load()
	}
	return b
}

// AllowedCount returns the number of tokens allowed in state q (EOS
// included), computing q's mask if needed.
func (c *Constraint) AllowedCount(q StateID) (int, error) {
	if int(q) >= c.numStates() {
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
	if int(q) >= c.numStates() {
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
func (c *Constraint) plainMask(q StateID) ([]uint64, error) {
	return c.computeBits(q, c.ti.newScratch(), false)
}

// Warm computes the masks of states reachable from the start, breadth
// first, until maxStates masks are stored (≤ 0: no bound), every reachable
// state is done, or ctx is done. It returns the number of states visited.
// Run it off the request path (a background goroutine after a cache miss,
// say) for constraints expected to stay hot: later requests then never meet
// a cold state. A mask-budget error stops it and is returned.
func (c *Constraint) Warm(ctx context.Context, maxStates int) (int, error) {
	seen := map[StateID]bool{c.start: true}
	queue := []StateID{c.start}
	n := 0
	k := uint32(c.k)
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
		t, err := c.expand(q)
		if err != nil {
			return n, err
		}
		for cl := range c.k {
			nx := StateID(atomic.LoadUint32(&t.trans[int(q)*c.k+cl]) / k)
			if nx != DeadState && !seen[nx] {
				seen[nx] = true
				queue = append(queue, nx)
			}
		}
	}
	return n, nil
}
