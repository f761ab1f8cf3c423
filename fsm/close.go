package fsm

// Closing within a budget: output that is complete when max_tokens cuts it.
//
// A request with a constraint and a token budget (max_tokens, or the room
// left in the context) must not spend the budget on a prefix that cannot be
// completed in what is left. From each DFA state q the constraint knows
//
//	D(q) = the fewest tokens (EOS not counted) that lead from q to an
//	       accepting state; D(q) = 0 iff q is accepting.
//
// With b tokens left, a token t keeps the output closable iff
// D(δ(q,t)) ≤ b−1. If D(q) ≤ b holds before a step, some token (or EOS)
// satisfies it, and after the step D(q') ≤ b−1 holds for the smaller
// budget: by induction every step has a non-empty mask and the output is
// accepting when the budget runs out. The base case is the server's check
// before generation (MinTokens of the start state ≤ max_tokens). Forced
// tokens (jump-forward) are the only tokens of their states' masks, so they
// lie on every path and D already counts them.
//
// FillMaskWithin(dst, b) is that mask. Most steps are far from the end of
// the budget, where no token can break the bound, and there it must cost
// what FillMask costs. The horizon of q,
//
//	H(q) = max over tokens t allowed in q (EOS aside) of D(δ(q,t)),
//
// decides it: b−1 ≥ H(q) means the plain mask is the answer. H(q) is cached
// per state, so a warm state pays a few atomic loads. Computing H exactly
// needs D of every successor, and D needs a search over tokens (below),
// which is the expensive part; so cheaper sound bounds come first:
//
//   - NFA paths (lazy constraints; close_upper.go). U(q), the fewest
//     one-byte-token bytes on a path of the NFA from q's NFA set to the
//     match state, bounds D(q); Hu(q), the largest U over q's token
//     successors, bounds H(q). It needs the successors and a few NFA sets
//     per successor, read against one pass over the NFA (amortized over
//     its growth), and no DFA state is created.
//   - Byte distances. When a byte is itself a token (every byte is, in
//     byte-level BPE and in SentencePiece with byte fallback; the classes
//     holding such a byte are found at the trie's root), a path of B such
//     bytes is a path of B tokens, so D(q) ≤ B'(q), the byte distance over
//     those classes. Hb(q), the largest B' over q's token successors, bounds
//     H(q) from above and needs only the successors (one trie walk of q,
//     recording where each token ends) and a search over DFA rows, no trie
//     walk per explored state.
//   - For an eager constraint (the whole DFA at hand), one backward pass
//     gives B' of every state; its largest value G bounds every H, and a
//     budget above G needs no per-state work at all.
//
// Only when b−1 < Hu(q) is Hb(q) computed (for a lazy constraint; Hu may
// come from a stale pass, see close_upper.go, and is computed again at a
// fresh one when the byte search fails), only when b−1 is below both is
// H(q) computed, and only when b−1 < H(q) is the mask restricted: one trie
// walk keeping the tokens whose end state has D ≤ b−1, interned like every
// mask and cached per (state, threshold).
//
// The successor walk is the one cost a cold state adds to its mask. A
// state that every string-safe character leads back to (an unbounded JSON
// string body; absorbsSafe checks it over mask_slicer.go's UTF-8
// automaton) sends every token of the slices to itself, so its walks skip
// them and cover only the rest trie, as the slicer does for its mask.
// Measured (BenchmarkFillMaskWithin, cl100k, a 15-property object, 120
// steps): FillMaskWithin with a budget that cannot bind costs what
// FillMask costs on warm states (155 ns a step) and about twice on a cold
// constraint (15 µs against 7 µs a step).
//
// # The search
//
// D of a set of states S is found by a breadth-first search from S over the
// successor graph (token successors for D, byte successors for B'), where a
// state whose distance is already known, or that is accepting, is a sink
// (not expanded; its distance is exact). After the levels 0..R−1 are
// expanded, a backward pass (Dijkstra over the explored edges, starting
// from the sinks at their distances) gives every explored state s a
// distance d(s) that some real path achieves. It is exact when
//
//	level(s) + d(s) ≤ R + 1:
//
// a shorter path from s, of d(s)−1 steps at most, reaches its first sink
// through states of level ≤ level(s) + d(s) − 2 < R, all expanded, so the
// backward pass would have found it. (The pass waits until R+1 reaches the
// least level+D of the sinks found, below which no state of S can be
// certified.) The search stops when every state of S is certified this
// way, or when nothing is left to expand (then every explored distance is
// exact, unreachable ones included). Every certified state, not only S,
// keeps its distance, so the searches of later steps (whose states lie
// near the earlier ones) mostly meet sinks at once. A state from which
// acceptance cannot be reached (a vocabulary without the tokens it needs)
// has distance distInf. H counts it as infinite, so a state with such a
// successor always gets the restricted mask, which leaves out the tokens
// into it (they would strand the output whatever the budget; removing only
// them does not count as restricting), and MinTokens reports it
// (ErrUnclosable). Vocabularies with every byte as a token have no such
// states.
//
// Each token search explores at most ConstraintOptions.MaxCloseStates
// states, a byte search byteSearchFactor times as many, and a search of a
// lazy constraint may grow its NFA and its DFA by at most an eighth of the
// room their budgets leave (searchGrowthShare; ErrCloseBudget otherwise).
// A failed byte search only makes its bound unknown (the exact one is
// computed instead).
//
// Both searches can run out of states far from the end of the budget: the
// ball of radius about D around the successors of free text whose next
// token may open a tool call holds every tool's argument automaton up to
// that depth, thousands of states, while the budget is thousands of
// tokens. (Before the NFA bounds, that failed the generation at once.) A
// lazy constraint's U ≥ D, read against one pass over the NFA instead of
// a ball of DFA states (close_upper.go, which argues its soundness: a lazy
// DFA state is exactly its NFA set, and intersections, complements and
// pattern assertions are spliced in as trimmed fragments, so no NFA path
// is ever killed), answers there: Hu(q) ≤ b−1 gives the plain mask without
// any search. Below it the exact searches are tried (the token search once
// per state: a state whose token search ran out is not searched again).
//
// When the token search fails, a sound mask is still at hand
// (fillByBounds): the tokens whose end state has some known bound within
// b−1, the least of its D or B' where a search stored them and its U. The
// induction goes through because every step leaves the current state with
// one such bound within the budget (the exact mask and H leave D, Hb and
// G leave B', Hu and the cut leave U), and each bound comes with a
// successor one token closer: a stored D or B' was certified with the
// next state of its shortest path (that state's level plus distance is
// no larger, so the same backward pass certifies it), a one-byte token
// lowers B' by one, and U(q)'s NFA path starts with a one-byte token
// (close_upper.go: the cut reads U at a version that covers the
// successors, and versions only lower U). So while a bound of q fits the
// budget the mask is not empty, with fewer choices than the exact mask,
// the same guarantee; only when none fits does FillMaskWithin fail with
// the search's error. Mixing matters: close to the end of a budget a
// state reached by the exact mask may have U above the budget while its
// stored D fits. Lazy states reached by a search are created as a mask
// would create them, under the constraint's DFA budgets and the search's
// share of them.
//
// Searches run under the closer's mutex (one at a time per constraint);
// the distances and horizons they publish are read with atomic loads, and
// they never change once stored (they are exact), so any number of
// matchers share them. The NFA bounds are never stored as distances: Hu
// only ever shrinks to another sound bound, and U is kept per version.

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultMaxCloseStates is the default bound on the states one token
// search explores. A token search expands each state with one trie walk
// (microseconds for the sparse states of JSON structure, up to a
// millisecond for a dense one over a 128k vocabulary). The largest search
// is the start state's MinTokens, a ball around the shortest instance: for
// a 50-property object over cl100k (shortest instance 275 tokens) it
// explores 2,200 states in 20 ms. 4096 leaves room for such schemas and
// bounds a pathological call to a few seconds; past it the byte fallback
// (see the file comment) or an error takes over.
const DefaultMaxCloseStates = 4096

// byteSearchFactor scales MaxCloseStates for byte searches, whose steps
// read one DFA row instead of walking the trie: a JSON text's byte
// distance is several times its token distance, and so is the ball a
// search explores. The states a search reaches are created (lazily) as a
// mask would create them and count against the constraint's DFA budgets,
// which is why the factor stays small: 8 × 4096 is a sixth of
// DefaultMaxDFAStates.
const byteSearchFactor = 8

// distInf is the distance of a state from which acceptance cannot be
// reached (with the steps of the search's layer).
const distInf int32 = math.MaxInt32 - 2

// distPages holds one int32 per state, stored +2 so that the zero value
// means "unknown" (the values are -1, for a horizon without successors,
// up to distInf). Pages are allocated on first write.
type distPages struct {
	p   []atomic.Pointer[[slotPageSize]atomic.Int32]
	mem *atomic.Int64
}

func (d *distPages) get(q StateID) (int32, bool) {
	pg := d.p[q>>slotPageShift].Load()
	if pg == nil {
		return 0, false
	}
	v := pg[q&(slotPageSize-1)].Load()
	return v - 2, v != 0
}

func (d *distPages) set(q StateID, v int32) {
	pp := &d.p[q>>slotPageShift]
	pg := pp.Load()
	if pg == nil {
		if pp.CompareAndSwap(nil, new([slotPageSize]atomic.Int32)) {
			d.mem.Add(slotPageSize * 4)
		}
		pg = pp.Load()
	}
	pg[q&(slotPageSize-1)].Store(v + 2)
}

// closer holds a constraint's closing distances (see the file comment).
type closer struct {
	mu        sync.Mutex
	maxStates int // 0: no limit

	tok, byt   distPages // exact token (D) and byte (B') distances
	htok, hbyt distPages // per state: H and Hb (-1: no successors; distInf: some successor cannot close)
	hfin       distPages // per state: the largest finite D of a token successor (-1: none)
	hupp       distPages // per state: Hu, the largest NFA-path bound U of a successor (close_upper.go)

	byteClass [256]bool // classes that hold a byte which is a one-byte token

	globalOnce sync.Once
	global     int32 // eager constraints: the largest B' of any state (-1: none known)

	// Under mu.
	succ       map[StateID][]StateID      // token successors, sorted
	absorbs    map[StateID]bool           // states that every string-safe token leads back to
	restricted map[restrictKey]*maskEntry // restricted masks
	tokFailed  map[StateID]error          // states whose token horizon search ran out of states
	ub         upperBounds                // NFA-path bounds of a lazy constraint (close_upper.go)
	mark       []uint32                   // successor dedupe stamps, by state
	gen        uint32
	bits       []uint64 // restricted-mask scratch (TokenIndex.words+1 words)

	mem atomic.Int64 // memory, for MemoryBytes
}

// restrictKey names a restricted mask: the state, the largest successor
// distance it admits, and which distances: exact ones, or the bounds of
// the fallback (ver is the NFA-path bounds' version).
type restrictKey struct {
	q    StateID
	thr  int32
	kind closeKind
	ver  uint32
}

// closeKind names the distances a restricted mask is cut by.
type closeKind uint8

const (
	closeExact  closeKind = iota // D, the exact token distances
	closeBounds                  // the least of the known D, B' and U (fillByBounds)
)

// closer returns c's closer, creating it on first use.
func (c *Constraint) closer() *closer {
	if cl := c.cl.Load(); cl != nil {
		return cl
	}
	cl := &closer{
		succ:       map[StateID][]StateID{},
		absorbs:    map[StateID]bool{},
		restricted: map[restrictKey]*maskEntry{},
		tokFailed:  map[StateID]error{},
		global:     -1,
	}
	switch m := c.opts.MaxCloseStates; {
	case m == 0:
		cl.maxStates = DefaultMaxCloseStates
	case m > 0:
		cl.maxStates = m
	}
	for _, d := range []*distPages{&cl.tok, &cl.byt, &cl.htok, &cl.hbyt, &cl.hfin, &cl.hupp, &cl.ub.at} {
		d.p = make([]atomic.Pointer[[slotPageSize]atomic.Int32], len(c.pages))
		d.mem = &cl.mem
	}
	// The one-byte tokens are the token nodes among the trie root's
	// children, which are a subtree apart.
	nodes, sentinel := c.ti.full.nodes, uint32(c.ti.numTokens)
	for p := 0; p < len(nodes); p += int(nodes[p].w1 >> 10) {
		if n := nodes[p]; n.w0>>8 != sentinel {
			cl.byteClass[c.classes[uint8(n.w0)]] = true
		}
	}
	cl.mem.Store(int64(len(c.pages)) * 7 * 8)
	if c.cl.CompareAndSwap(nil, cl) {
		return cl
	}
	return c.cl.Load()
}

// MinTokens returns the fewest tokens (EOS not counted) that complete the
// output from the current state: 0 when it is accepting, and what a
// max_tokens must at least be for the output to be valid. A server checks
// it at the start state before generating, which is the base of the
// guarantee FillMaskWithin keeps (see close.go). It fails with
// ErrUnclosable when no token sequence of the vocabulary completes the
// output, and with ErrCloseBudget when the search needs more than
// ConstraintOptions.MaxCloseStates states. Neither error is sticky: the
// matcher's state is unchanged and its other methods work on.
func (m *Matcher) MinTokens() (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.finished {
		return 0, nil
	}
	d, err := m.c.closer().minTokens(m.c, m.state)
	if err != nil {
		return 0, err
	}
	if d == distInf {
		return 0, tokError(ErrUnclosable, "no sequence of the vocabulary's tokens completes the output from state %d", m.state)
	}
	return int(d), nil
}

// FillMaskWithin writes into dst the mask of the current state restricted
// to what can still be completed within budget tokens (this one included):
// a token t is allowed iff it is allowed by FillMask and an accepting state
// is reachable within budget-1 tokens after it; EOS iff the state is
// accepting, as always. It reports whether the budget removed a token that
// a larger budget would have kept, which is when the budget, not the
// model, is closing the output. Tokens after which no token sequence
// completes the output at all are never allowed here (FillMask allows
// them); vocabularies with every byte as a token have none.
//
// When the budget is large enough that no allowed token can break it, this
// is FillMask (at a cached state, plus a few atomic loads); see close.go
// for the bounds it checks first. If the current state itself needs more
// than budget tokens, it fails with ErrNoRoom (the caller should have
// checked MinTokens, or a larger budget was spent elsewhere), or with
// ErrUnclosable when no budget would do. ErrCloseBudget means that neither
// the exact search nor a fallback (byte distances, NFA-path bounds) fit
// the budget. Errors of the
// current state's mask are sticky as in FillMask; the closing errors are
// not.
func (m *Matcher) FillMaskWithin(dst []uint64, budget int) (restricted bool, err error) {
	if m.err != nil {
		return false, m.err
	}
	c := m.c
	if len(dst) < c.ti.MaskWords() {
		return false, tokError(ErrMaskSize, "mask has %d words, want at least %d", len(dst), c.ti.MaskWords())
	}
	if m.finished {
		return false, m.FillMask(dst)
	}
	thr := int32(min(max(int64(budget)-1, -1), int64(distInf)-1))
	cl := c.closer()
	if g := cl.globalBound(c); g >= 0 && thr >= g {
		return false, m.FillMask(dst)
	}
	h, ok := cl.htok.get(m.state)
	var hb int32
	if !ok {
		lazy := c.lazy != nil
		if lazy {
			// The NFA-path bounds first: one pass over the NFA
			// (amortized) and a few NFA sets per successor, where the
			// byte search explores a ball of DFA states, creating them.
			hu, err := cl.upperHorizon(c, m.state, false)
			if err != nil {
				return false, err
			}
			if thr >= hu {
				return false, m.FillMask(dst)
			}
		}
		var err error
		if hb, err = cl.byteHorizon(c, m.state); err != nil {
			return false, err
		}
		if thr >= hb {
			return false, m.FillMask(dst)
		}
		// The byte search ran out of states (or some successor has no
		// byte path): a lazy constraint's NFA paths bound D too.
		upper := hb == distInf && lazy
		if upper {
			hu, err := cl.upperHorizon(c, m.state, true)
			if err != nil {
				return false, err
			}
			if thr >= hu {
				return false, m.FillMask(dst)
			}
		}
		if h, err = cl.tokHorizon(c, m.state); err != nil {
			if isCode(err, ErrCloseBudget) {
				return cl.fillByBounds(c, m.state, thr, dst, err)
			}
			return false, err
		}
	}
	if thr >= h {
		return false, m.FillMask(dst)
	}
	e, err := cl.restrictedMask(c, m.state, thr, closeExact)
	if err != nil {
		return false, err
	}
	if e.pop == 0 {
		need, err := cl.minTokens(c, m.state)
		switch {
		case err != nil:
			return false, err
		case need == distInf:
			return false, tokError(ErrUnclosable, "no sequence of the vocabulary's tokens completes the output from state %d", m.state)
		}
		return false, tokError(ErrNoRoom, "the output needs at least %d more tokens, the budget is %d", need, budget)
	}
	e.fill(dst, c.ti.numTokens)
	hf, _ := cl.hfin.get(m.state)
	return thr < hf, nil
}

// fillByBounds is FillMaskWithin's fallback when the exact token search
// ran out (searchErr, ErrCloseBudget): the mask keeps the tokens whose end
// state has some known upper bound of D within thr, the least of its exact
// D and B' where a search has stored them and, for a lazy constraint, its
// NFA-path bound U at a fresh version. Whatever kept the previous step's
// token within its budget (the exact mask, a horizon, this cut) left the
// current state with one of these bounds within the budget b, and each
// comes with a successor one token closer: a stored D or B' was certified
// together with the next state of its shortest path (see the search), and
// U with the next byte of its NFA path (close_upper.go). So while one of
// them fits, this mask is not empty and the output still closes in time,
// with fewer choices than the exact mask would leave. When none fits,
// nothing sound is left and the search error is returned. Every token it
// removes counts as restricted.
func (cl *closer) fillByBounds(c *Constraint, q StateID, thr int32, dst []uint64, searchErr error) (bool, error) {
	e, err := cl.restrictedMask(c, q, thr, closeBounds)
	if err != nil {
		return false, err
	}
	if e.pop == 0 {
		return false, searchErr
	}
	e.fill(dst, c.ti.numTokens)
	return true, nil
}

// minTokens returns D(q).
func (cl *closer) minTokens(c *Constraint, q StateID) (int32, error) {
	if d, ok := cl.tok.get(q); ok {
		return d, nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if err := cl.solve(c, cl.tokLayer(c), []StateID{q}); err != nil {
		return 0, err
	}
	d, _ := cl.tok.get(q)
	return d, nil
}

// tokHorizon returns H(q): the largest D over q's token successors (-1 if
// there is none, distInf if one cannot close), and stores the largest finite
// one too (hfin).
func (cl *closer) tokHorizon(c *Constraint, q StateID) (int32, error) {
	if h, ok := cl.htok.get(q); ok {
		return h, nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if h, ok := cl.htok.get(q); ok {
		return h, nil
	}
	if err := cl.tokFailed[q]; err != nil {
		return 0, err
	}
	succ, err := cl.tokenSucc(c, q)
	if err != nil {
		return 0, err
	}
	if err := cl.solve(c, cl.tokLayer(c), succ); err != nil {
		if isCode(err, ErrCloseBudget) {
			// Not tried again: the fallbacks answer for q from now on.
			cl.tokFailed[q] = err
			cl.mem.Add(32)
		}
		return 0, err
	}
	h, hf := int32(-1), int32(-1)
	for _, s := range succ {
		d, _ := cl.tok.get(s)
		h = max(h, d)
		if d != distInf {
			hf = max(hf, d)
		}
	}
	cl.hfin.set(q, hf)
	cl.htok.set(q, h) // after hfin: a reader that sees htok finds hfin
	return h, nil
}

// byteHorizon returns Hb(q): the largest B' over q's token successors (-1
// if there is none), distInf when some successor has none or the byte
// search ran out of budget (the bound is then unknown).
func (cl *closer) byteHorizon(c *Constraint, q StateID) (int32, error) {
	if h, ok := cl.hbyt.get(q); ok {
		return h, nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if h, ok := cl.hbyt.get(q); ok {
		return h, nil
	}
	succ, err := cl.tokenSucc(c, q)
	if err != nil {
		return 0, err
	}
	h := int32(-1)
	if err := cl.solve(c, cl.byteLayer(c), succ); err != nil {
		if !isCode(err, ErrCloseBudget) {
			return 0, err
		}
		h = distInf
	} else {
		for _, s := range succ {
			d, _ := cl.byt.get(s)
			h = max(h, d)
		}
	}
	cl.hbyt.set(q, h)
	return h, nil
}

// isCode reports whether err is an *Error with the given code.
func isCode(err error, code ErrorCode) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}

// restrictedMask returns the mask of q's tokens whose end state has
// D ≤ thr (closeExact: every successor's D is known, tokHorizon ran), or
// some known bound ≤ thr (closeBounds: fillByBounds; U at a fresh version
// is made known here), EOS iff q is accepting. Thresholds between two
// successor distances give the same mask, so the cache key is the largest
// successor distance ≤ thr. The bounds of closeBounds only grow more
// numerous (searches store more distances), so a mask cached for them may
// keep fewer tokens than a new walk would, which is sound; an empty one is
// not cached.
func (cl *closer) restrictedMask(c *Constraint, q StateID, thr int32, kind closeKind) (*maskEntry, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	succ, err := cl.tokenSucc(c, q)
	if err != nil {
		return nil, err
	}
	key := restrictKey{q: q, thr: -1, kind: kind}
	bound := cl.tok.get
	if kind == closeBounds {
		lazy := c.lazy != nil
		if lazy {
			cl.ensureUpper(c, succ, true)
			key.ver = cl.ub.ver
		}
		bound = func(s StateID) (int32, bool) {
			d, ok := cl.tok.get(s)
			if !ok {
				d = distInf
			}
			if b, known := cl.byt.get(s); known {
				d, ok = min(d, b), true
			}
			if u, known := cl.ub.at.get(s); lazy && known {
				d, ok = min(d, u), true
			}
			return d, ok
		}
	}
	for _, s := range succ {
		if d, ok := bound(s); ok && d <= thr {
			key.thr = max(key.thr, d)
		}
	}
	if e := cl.restricted[key]; e != nil {
		return e, nil
	}
	ti := c.ti
	if cl.bits == nil {
		cl.bits = make([]uint64, ti.words+1)
	}
	w := cl.bits
	clear(w)
	t, err := c.expand(q)
	if err != nil {
		return nil, err
	}
	k := uint32(c.k)
	var last uint32
	ok := false
	keep := func(tok, s uint32) {
		if s != last {
			last = s
			d, known := bound(StateID(s / k))
			ok = known && d <= key.thr
		}
		if ok {
			w[tok>>6] |= 1 << (tok & 63)
		}
	}
	all := &ti.full
	if cl.absorbs[q] {
		// Every string-safe token ends in q (tokenSucc).
		if d, known := bound(q); known && d <= key.thr {
			copy(w, ti.slices[len(ti.slices)-1].cum)
		}
		all = &ti.rest
	}
	wk := walker{c: c, t: t}
	all.walkEnds(&wk, uint32(q)*k, uint32(ti.numTokens), keep)
	if wk.err != nil {
		return nil, wk.err
	}
	for _, id := range ti.long {
		s, err := c.run(q, ti.tokens[id])
		if err != nil {
			return nil, err
		}
		if s != DeadState {
			keep(uint32(id), uint32(s)*k)
		}
	}
	if c.accepting(q) {
		for _, id := range ti.eos {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	e, err := c.internMask(w[:ti.words])
	if err != nil {
		return nil, err
	}
	if kind == closeExact || e.pop > 0 {
		cl.restricted[key] = e
		cl.mem.Add(64)
	}
	return e, nil
}

// globalBound returns, for an eager constraint, the largest B' of any state
// (computing every state's B' on first use), or -1 when there is none: a
// lazy constraint, or some state without a one-byte-token path.
func (cl *closer) globalBound(c *Constraint) int32 {
	cl.globalOnce.Do(func() {
		if c.dfa != nil {
			cl.global = cl.eagerByteDistances(c)
		}
	})
	return cl.global
}

// eagerByteDistances computes B' of every state of an eager constraint by
// one backward breadth-first pass from the accepting states, stores them,
// and returns the largest (-1 if some live state has none).
func (cl *closer) eagerByteDistances(c *Constraint) int32 {
	d := c.dfa
	n, k := d.NumStates(), d.NumClasses
	// Distinct successors over usable classes, as reverse edges (CSR).
	var from, to []int32
	seen := make([]int32, n)
	for i := range seen {
		seen[i] = -1
	}
	for s := 1; s < n; s++ {
		for cl2, nx := range d.Trans[s*k : s*k+k] {
			if nx == DeadState || !cl.byteClass[cl2] || seen[nx] == int32(s) {
				continue
			}
			seen[nx] = int32(s)
			from = append(from, int32(s))
			to = append(to, int32(nx))
		}
	}
	start := make([]int32, n+1)
	for _, t := range to {
		start[t+1]++
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	pred := make([]int32, len(to))
	pos := slices.Clone(start[:n])
	for i, t := range to {
		pred[pos[t]] = from[i]
		pos[t]++
	}
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = distInf
	}
	var queue []int32
	for s := 1; s < n; s++ {
		if d.Accept[s] {
			dist[s] = 0
			queue = append(queue, int32(s))
		}
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, s := range pred[start[t]:start[t+1]] {
			if dist[s] == distInf {
				dist[s] = dist[t] + 1
				queue = append(queue, s)
			}
		}
	}
	g := int32(0)
	for s := 1; s < n; s++ {
		cl.byt.set(StateID(s), dist[s])
		if dist[s] == distInf {
			g = -1
		} else if g >= 0 {
			g = max(g, dist[s])
		}
	}
	return g
}

// layer is what a search walks: a distance store and the distinct live
// successors of a state (a slice the search reads before the next call).
type layer struct {
	dist  *distPages
	succ  func(q StateID) ([]StateID, error)
	limit int // the most states one search explores (0: no limit)
}

func (cl *closer) tokLayer(c *Constraint) layer {
	return layer{dist: &cl.tok, limit: cl.maxStates, succ: func(q StateID) ([]StateID, error) { return cl.tokenSucc(c, q) }}
}

func (cl *closer) byteLayer(c *Constraint) layer {
	var buf []StateID
	return layer{dist: &cl.byt, limit: cl.maxStates * byteSearchFactor, succ: func(q StateID) ([]StateID, error) {
		t, err := c.expand(q)
		if err != nil {
			return nil, err
		}
		k := c.k
		buf = buf[:0]
		row := t.trans[int(q)*k : int(q)*k+k]
		for cls := range row {
			nx := atomic.LoadUint32(&row[cls])
			if nx == 0 || !cl.byteClass[cls] {
				continue
			}
			if s := StateID(nx / uint32(k)); !slices.Contains(buf, s) {
				buf = append(buf, s)
			}
		}
		return buf, nil
	}}
}

// tokenSucc returns the distinct states q's tokens (EOS aside) lead to, by
// one trie walk that records where each token ends. Under cl.mu.
func (cl *closer) tokenSucc(c *Constraint, q StateID) ([]StateID, error) {
	if s, ok := cl.succ[q]; ok {
		return s, nil
	}
	t, err := c.expand(q)
	if err != nil {
		return nil, err
	}
	cl.gen++
	if cl.gen == 0 {
		clear(cl.mark)
		cl.gen = 1
	}
	k := uint32(c.k)
	var out []StateID
	var last uint32
	add := func(_, s uint32) {
		if s == last {
			return
		}
		last = s
		id := s / k
		if int(id) >= len(cl.mark) {
			grown := make([]uint32, max(2*len(cl.mark), int(id)+1, c.numStates()))
			copy(grown, cl.mark)
			cl.mem.Add(int64(len(grown)-len(cl.mark)) * 4)
			cl.mark = grown
		}
		if cl.mark[id] != cl.gen {
			cl.mark[id] = cl.gen
			out = append(out, StateID(id))
		}
	}
	ti := c.ti
	absorbs, err := c.absorbsSafe(q)
	if err != nil {
		return nil, err
	}
	all := &ti.full
	if absorbs {
		// Every string-safe token ends in q: walk the others only.
		cl.absorbs[q] = true
		add(0, uint32(q)*k)
		all = &ti.rest
	}
	wk := walker{c: c, t: t}
	all.walkEnds(&wk, uint32(q)*k, uint32(ti.numTokens), add)
	if wk.err != nil {
		return nil, wk.err
	}
	for _, id := range ti.long {
		s, err := c.run(q, ti.tokens[id])
		if err != nil {
			return nil, err
		}
		if s != DeadState {
			add(uint32(id), uint32(s)*k)
		}
	}
	slices.Sort(out)
	cl.succ[q] = out
	cl.mem.Add(int64(len(out))*4 + 64)
	return out, nil
}

// absorbMaxNodes bounds absorbsSafe's search: a string body's characters
// pass through at most a handful of states (one per continuation byte
// left), so a state that needs more is simply not treated as absorbing.
const absorbMaxNodes = 64

// absorbsSafe reports whether every string-safe character (a superset:
// mask_slicer.go's U) leads from q back to q, so that every string-safe
// token, the slices' tokens, ends in q. An unbounded JSON string body is
// such a state; finding it spares the successor and restricted-mask walks
// the dense part of the vocabulary.
func (c *Constraint) absorbsSafe(q StateID) (bool, error) {
	if len(c.ti.slices) == 0 {
		return false, nil
	}
	c.uOnce.Do(c.initUEdges)
	k := uint32(c.k)
	stack := []uNode{{s: q}}
	seen := map[uNode]bool{{s: q}: true}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t, err := c.expand(n.s)
		if err != nil {
			return false, err
		}
		for _, e := range c.uEdges[n.u] {
			nx := StateID(atomic.LoadUint32(&t.trans[uint32(n.s)*k+uint32(e.class)]) / k)
			switch {
			case e.next == 0:
				if nx != q {
					return false, nil
				}
			case nx == DeadState:
				return false, nil
			case !seen[uNode{nx, e.next}]:
				if len(seen) == absorbMaxNodes {
					return false, nil
				}
				seen[uNode{nx, e.next}] = true
				stack = append(stack, uNode{nx, e.next})
			}
		}
	}
	return true, nil
}

// walkEnds walks t like trie.walk, from the premultiplied state start, and
// calls visit with every token whose bytes keep the state alive and the
// premultiplied state it ends in. sentinel is the id of non-token nodes.
// It repeats trie.walk's loop instead of sharing it through a callback:
// that loop computes every cold mask, and a call per allowed token there
// would slow the mask path to serve this rarer one.
func (t *trie) walkEnds(wk *walker, start, sentinel uint32, visit func(tok, s uint32)) {
	var stack trieStack
	stack[0] = start
	nodes := t.nodes
	trans, classes := wk.t.trans, &wk.c.classes
	for p := 0; p < len(nodes); {
		n := nodes[p]
		d := n.w1 & trieMaxDepth
		from := stack[(d-1)&trieMaxDepth]
		i := from + uint32(classes[uint8(n.w0)])
		s := atomic.LoadUint32(&trans[i])
		if s == unknownState {
			if trans = wk.expand(from); trans == nil {
				return
			}
			s = atomic.LoadUint32(&trans[i])
		}
		if s == 0 {
			p += int(n.w1 >> 10)
			continue
		}
		stack[d] = s
		if tok := n.w0 >> 8; tok != sentinel {
			visit(tok, s)
		}
		p++
	}
}

// solve makes the distance of every state of sources known in ly (see the
// file comment for the search and its certificate). Under cl.mu.
func (cl *closer) solve(c *Constraint, ly layer, sources []StateID) error {
	var (
		ids   []StateID
		index = map[StateID]int32{}
		lvl   []int32
		fixed []int32   // the exact distance, or -1 while unknown
		rev   [][]int32 // rev[j]: the expanded states with an edge to j
	)
	add := func(s StateID, l int32) int32 {
		if i, ok := index[s]; ok {
			return i
		}
		i := int32(len(ids))
		index[s] = i
		ids = append(ids, s)
		lvl = append(lvl, l)
		rev = append(rev, nil)
		d, ok := ly.dist.get(s)
		switch {
		case ok:
		case c.accepting(s):
			d = 0
			ly.dist.set(s, 0)
		default:
			d = -1
		}
		fixed = append(fixed, d)
		return i
	}
	pending := 0
	for _, s := range sources {
		if i := add(s, 0); fixed[i] < 0 && int(i) == len(ids)-1 {
			pending++
		}
	}
	// reach is the least lvl+D over the sinks found: no source's distance
	// is below it, so no source can be certified while R+1 < reach, and
	// the backward pass waits until then (what it would certify earlier it
	// certifies then, as d only shrinks and R only grows).
	reach := int64(math.MaxInt64)
	for i, f := range fixed {
		if f >= 0 && f != distInf {
			reach = min(reach, int64(lvl[i])+int64(f))
		}
	}
	lo := 0
	var h distHeap
	var dist []int32
	grown := c.growthGuard()
	for r := int32(0); pending > 0; r++ {
		hi := len(ids)
		for i := lo; i < hi; i++ {
			if fixed[i] >= 0 {
				continue
			}
			succ, err := ly.succ(ids[i])
			if err != nil {
				return err
			}
			if err := grown(); err != nil {
				return err
			}
			for _, s := range succ {
				n := len(ids)
				j := add(s, r+1)
				rev[j] = append(rev[j], int32(i))
				if int(j) == n && fixed[j] >= 0 && fixed[j] != distInf {
					reach = min(reach, int64(r+1)+int64(fixed[j]))
				}
			}
			if ly.limit > 0 && len(ids) > ly.limit {
				return tokLimitError(ErrCloseBudget, "states explored to find a closing distance", int64(ly.limit), int64(len(ids)))
			}
		}
		lo = hi
		closed := true
		for i := hi; i < len(ids); i++ {
			closed = closed && fixed[i] >= 0
		}
		if !closed && int64(r)+2 < reach {
			continue
		}
		// Backward pass: Dijkstra from the sinks over the reverse edges.
		dist = slices.Grow(dist[:0], len(ids))[:len(ids)]
		h = h[:0]
		for i, f := range fixed {
			dist[i] = distInf
			if f >= 0 && f != distInf {
				dist[i] = f
				h.push(f, int32(i))
			}
		}
		for len(h) > 0 {
			d, j := h.pop()
			if d != dist[j] {
				continue
			}
			for _, i := range rev[j] {
				if fixed[i] < 0 && d+1 < dist[i] {
					dist[i] = d + 1
					h.push(d+1, i)
				}
			}
		}
		for i := range ids {
			if fixed[i] >= 0 || !closed && (dist[i] == distInf || lvl[i]+dist[i] > r+2) {
				continue
			}
			fixed[i] = dist[i]
			ly.dist.set(ids[i], dist[i])
			if lvl[i] == 0 {
				pending--
			}
		}
		if closed {
			break
		}
	}
	return nil
}

// searchGrowthShare is the share of a lazy constraint's remaining NFA and
// DFA room that one closing search may fill: a search expands the states
// it explores, and the ball around a tool call's opening tag can expand
// the argument automata of every tool (thousands of NFA states for each
// bounded string or array reached), which would spend budgets that are
// the constraint's, not the call's, and fail it for good. An eighth keeps
// any number of searches inside the budgets (each takes at most an eighth
// of what is left) and lets a search build the few fragments a closing
// distance needs; past it the search fails like one over its state limit
// (ErrCloseBudget), and the fallbacks answer.
const searchGrowthShare = 8

// growthGuard returns a check that fails with ErrCloseBudget once the lazy
// constraint's NFA or DFA has grown by more than its share
// (searchGrowthShare) since growthGuard was called. An eager constraint
// creates nothing; its check never fails.
func (c *Constraint) growthGuard() func() error {
	l := c.lazy
	if l == nil {
		return func() error { return nil }
	}
	maxN := int64(l.s.m.maxStates)
	maxD := min(int64(l.s.maxStates), l.s.maxBytes/(4*int64(c.k)))
	n0, d0 := l.nfaStates.Load(), l.states.Load()
	roomN, roomD := max(maxN-n0, 0)/searchGrowthShare, max(maxD-d0, 0)/searchGrowthShare
	return func() error {
		if n := l.nfaStates.Load() - n0; n > roomN {
			return tokLimitError(ErrCloseBudget, "NFA states built to find a closing distance", roomN, n)
		}
		if d := l.states.Load() - d0; d > roomD {
			return tokLimitError(ErrCloseBudget, "DFA states created to find a closing distance", roomD, d)
		}
		return nil
	}
}

// distHeap is a binary min-heap of (distance, index) pairs packed in one
// word, distance first.
type distHeap []uint64

func (h *distHeap) push(d, i int32) {
	*h = append(*h, uint64(d)<<32|uint64(uint32(i)))
	a := *h
	for j := len(a) - 1; j > 0; {
		p := (j - 1) / 2
		if a[p] <= a[j] {
			break
		}
		a[p], a[j] = a[j], a[p]
		j = p
	}
}

func (h *distHeap) pop() (d, i int32) {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for j := 0; ; {
		l, m := 2*j+1, j
		if l < n && a[l] < a[m] {
			m = l
		}
		if l+1 < n && a[l+1] < a[m] {
			m = l + 1
		}
		if m == j {
			break
		}
		a[j], a[m] = a[m], a[j]
		j = m
	}
	*h = a
	return int32(top >> 32), int32(uint32(top))
}
