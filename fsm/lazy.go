package fsm

// Lazy constraints: determinization on demand.
//
// Compile builds the whole DFA of a schema before the first mask: subset
// construction of every reachable state, then trimming and minimization.
// For a large schema that is most of the time to first mask (tens of
// thousands of states, of which one generation visits a few hundred).
// CompileConstraint instead keeps the Thompson NFA and creates DFA states as
// they are reached: the start state's row and the states its tokens lead to
// are all the first mask needs; every later mask, Accept or Forced call
// expands the states it touches, once, for every matcher of the constraint.
//
// The language is the same: a DFA state is a set of live NFA states (the
// NFA is trimmed of states that cannot reach the match state, so every
// non-empty set can reach acceptance and the dead state is exactly the
// empty set, as in a trimmed DFA). The states are not minimized, so two
// equivalent states may each get a mask; masks are interned, so equal masks
// are stored once anyway.
//
// Budgets: the DFA state and table budgets of Options apply to the states
// created so far, and the NFA budget to the fragments built so far;
// MaxExpansionWork bounds each expansion (one state's row, with the lazy
// NFA fragments and sub-DFAs it builds). Exceeding one makes the mask or
// Accept call that needed the state fail with the limit error, and the
// constraint stays failed (sticky) from then on: none of these budgets
// depends on the request, the clock or the load, so the failure is the
// constraint's, the same for every request that reaches the state.
//
// The compile's context and deadline bound only CompileConstraint itself
// (which builds the start state's row and mask, and the prebuilt
// operands): the constraint it returns keeps neither. A request that is
// cancelled while its mask is expanding a state still finishes that
// expansion (a bounded piece of work whose result every later request
// reuses) and notices the cancellation at its next step; stopping half way
// would leave the NFA builder half way through a fragment, which no later
// request could use (doc.go, "Budgets").

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// lazyDet is a lazy constraint's determinizer: the subset construction of
// its NFA, advanced one state at a time under mu.
type lazyDet struct {
	mu  sync.Mutex
	s   *subsets
	row []int32 // scratch: the row being computed
	err error   // the first expansion error (sticky)
	// comp is the compiler of the NFA's lazy fragments (nil when it has
	// none), whose call has ended (compiler.endCall); maxWork is
	// Options.MaxExpansionWork.
	comp    *compiler
	maxWork int64
	states  atomic.Int64
	mem     atomic.Int64 // memory of the construction, for MemoryBytes
	// nfaStates is the NFA's size after the last expansion, which the
	// closing searches read to bound what they make the NFA grow by.
	nfaStates atomic.Int64
	// reserved: the table moved into reserved address space (reserve.go)
	// with room for every state the budgets allow; it never grows again.
	reserved atomic.Bool
}

// CompileConstraint compiles n for the vocabulary ti into a Constraint whose
// DFA is determinized lazily (see the file comment); the result decodes
// exactly the language Compile(n) would give. A node that is itself an
// intersection or complement needs its whole DFA and is compiled eagerly
// (Compile, then NewConstraint). Errors are Compile's (budgets, malformed
// nodes) and NewConstraint's (ErrEmptyLanguage).
//
// ctx (nil: none) and opts.Timeout bound this call only (ErrTimeout when
// ctx is done or the time is up): the Constraint it returns is a finished
// value that keeps neither, so it can be cached and shared by requests that
// outlive the one that compiled it. What the constraint builds later is
// bounded by the deterministic budgets of opts alone (see Options and
// "Budgets" in doc.go). opts.Stats, if set, describes this call and is not
// written after it returns.
func CompileConstraint(ctx context.Context, n *Node, ti *TokenIndex, opts Options, copts ConstraintOptions) (*Constraint, error) {
	if ti == nil {
		return nil, tokError(ErrBadDFA, "nil TokenIndex")
	}
	if ctx != nil && ctx.Err() != nil {
		return nil, &Error{Code: ErrTimeout, Expr: ctx.Err().Error(), Pos: -1}
	}
	c := newCompiler(opts)
	c.ctx = ctx
	defer c.endCall()
	if n == nil || n.Op == OpAnd || n.Op == OpNot {
		d, err := c.dfaOf(n)
		if err != nil {
			return nil, err
		}
		copts.TrustTrimmed = true
		return NewConstraint(d, ti, copts)
	}
	var before time.Duration
	if st := c.opts.Stats; st != nil {
		before = st.NFATime + st.DetTime + st.MinTime
	}
	t0 := time.Now()
	m, err := c.lazyNFAOf(n)
	if err != nil {
		return nil, err
	}
	if st := c.opts.Stats; st != nil {
		// Spliced sub-DFAs already added their own phase times.
		nested := st.NFATime + st.DetTime + st.MinTime - before
		st.NFAStates += len(m.states)
		st.NFATime += time.Since(t0) - nested
	}
	var comp *compiler
	if m.b != nil {
		comp = c
		// The compile was held to MaxNFAStates; what generations reach
		// later may grow the NFA further (lazyNFAGrowth).
		m.b.limit = lazyNFAGrowth * c.opts.MaxNFAStates
		m.maxStates = m.b.limit
	}
	return newLazyConstraint(m, comp, ti, c.opts, copts)
}

// lazyInitialStates is the first table's capacity, in states.
const lazyInitialStates = 64

// newLazyConstraint makes the lazy constraint of m, whose fragments comp
// builds (nil: m has none); opts has its defaults.
func newLazyConstraint(m *nfa, comp *compiler, ti *TokenIndex, opts Options, copts ConstraintOptions) (*Constraint, error) {
	s := newSubsets(m, opts.MaxDFAStates, int64(opts.MaxDFABytes))
	start, err := s.start()
	if err != nil {
		return nil, err
	}
	if start == 0 {
		return nil, tokError(ErrEmptyLanguage, "the constraint accepts no string")
	}
	c := newConstraint(ti, copts, s.classes, s.k, StateID(start), opts.MaxDFAStates+1)
	l := &lazyDet{s: s, comp: comp, maxWork: opts.MaxExpansionWork}
	l.nfaStates.Store(int64(len(m.states)))
	c.lazy = l
	t := l.grow(c, &table{}, lazyInitialStates)
	initRows(t, c.k, 0, s.numStates())
	l.publish(c, t)
	if _, err := c.maskFor(c.start); err != nil {
		return nil, err
	}
	return c, nil
}

// grow returns a copy of t with room for at least n states (doubling),
// holding t's rows, flags and accepting flags. The rows past t's are not
// initialized (the caller initializes each state's row and info word when
// the state is created, initRows): filling the whole new half at once
// doubled the memory a growth touches, and a 50 MB growth stalled one mask
// for ~50 ms. A table that would grow past reserveAbove bytes moves into a
// reservation with room for every state the budgets allow instead
// (reserve.go), once; the first table is one already when the pool has one
// at hand. The caller holds l.mu (or owns t).
func (l *lazyDet) grow(c *Constraint, t *table, n int) *table {
	capStates := max(n, 2*len(t.info), lazyInitialStates)
	capStates = min(capStates, l.s.maxStates+1)
	capStates = max(capStates, n)
	k := c.k
	var nt *table
	large := capStates*k*4 > reserveAbove
	if first := len(t.info) == 0; first || large {
		// The most states subsets.state lets in, budgets included.
		most := min(int64(l.s.maxStates), l.s.maxBytes/(4*int64(k))) + 1
		var res *reservation
		if nt, res = reservedTable(most, k, !large); res != nil {
			l.reserved.Store(true)
			runtime.AddCleanup(c, func(r *reservation) { r.release() }, res)
		}
	}
	if nt == nil {
		nt = &table{
			trans:  make([]uint32, capStates*k),
			info:   make([]uint32, capStates),
			accept: make([]bool, capStates),
		}
	}
	copy(nt.trans, t.trans)
	copy(nt.info, t.info)
	copy(nt.accept, l.s.accept)
	return nt
}

// initRows initializes new states [from, to): rows not computed yet, no
// flags (the table may hold old data, reserve.go).
func initRows(t *table, k, from, to int) {
	r := t.trans[from*k : to*k]
	for i := range r {
		r[i] = unknownState
	}
	clear(t.info[from:to])
}

// publish makes t the constraint's table and updates the counters.
func (l *lazyDet) publish(c *Constraint, t *table) {
	l.states.Store(int64(l.s.numStates()))
	l.mem.Store(l.s.memoryBytes() + int64(len(l.s.m.states))*12 + int64(len(l.s.m.eps))*4)
	c.tab.Store(t)
}

// expand computes state q's row unless it is known and returns the current
// table.
//
// A panic (a bug) that unwinds through an expansion may leave the NFA
// builder half way through a fragment, so it fails the constraint for good
// (ErrInternal, sticky) and keeps unwinding, for the request edge to
// recover: later requests get an error, never a half-built automaton.
func (l *lazyDet) expand(c *Constraint, q StateID) (*table, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	finished := false
	defer func() {
		if !finished && l.err == nil {
			l.err = tokError(ErrInternal, "a lazy expansion of this constraint panicked")
		}
	}()
	t, err := l.expandLocked(c, q)
	finished = true
	return t, err
}

// expandLocked is expand under l.mu: one expansion, under its own work
// budget (compiler.beginExpansion; MaxExpansionWork).
func (l *lazyDet) expandLocked(c *Constraint, q StateID) (*table, error) {
	t := c.tab.Load()
	if atomic.LoadUint32(&t.info[q])&stateKnown != 0 {
		return t, nil
	}
	if l.err != nil {
		return nil, l.err
	}
	before := l.s.numStates()
	if l.comp != nil {
		l.comp.beginExpansion()
	}
	row, work, err := l.s.row(int32(q), l.row[:0])
	l.row = row
	total := int64(work)
	if l.comp != nil {
		total += l.comp.endExpansion()
	}
	if err == nil && total > l.maxWork {
		err = expansionWorkErr(l.maxWork, total)
	}
	if err != nil {
		l.err = err
		return nil, err
	}
	n := l.s.numStates()
	grown := n > len(t.info)
	if grown {
		t = l.grow(c, t, n)
	}
	// New states become reachable only through the row stored below
	// (atomically, after these writes).
	initRows(t, c.k, before, n)
	for i := before; i < n; i++ {
		t.accept[i] = l.s.accept[i]
	}
	k := c.k
	out := t.trans[int(q)*k : int(q)*k+k]
	storeRow(out, row, uint32(k))
	info := c.rowInfo(out, t.accept[q])
	if set := l.s.t.get(int32(q)); l.s.safeUniversal(set) {
		info |= stateSafeUniversal
	} else if c.ti.maxChars > 0 && l.s.safeRun(set, c.ti.maxChars) {
		info |= stateSafeDeep
	}
	atomic.StoreUint32(&t.info[q], info)
	if grown || n != before {
		l.publish(c, t)
	}
	l.nfaStates.Store(int64(len(l.s.m.states)))
	return t, nil
}

// storeRow publishes a row computed by expand: out[cl] = row[cl]·k. Walkers
// read the entries concurrently with atomic loads, so each entry is stored
// atomically, two at a time where they share an aligned word (an atomic
// store is a locked instruction on amd64, and a row is dozens of entries).
// The pair is packed with shifts: writing its halves to memory and loading
// them as one word stalls on store forwarding (TBM p99 +5% on MaskBench).
func storeRow(out []uint32, row []int32, k uint32) {
	i := 0
	if len(out) > 0 && uintptr(unsafe.Pointer(&out[0]))&7 != 0 {
		atomic.StoreUint32(&out[0], uint32(row[0])*k)
		i = 1
	}
	for ; i+1 < len(out); i += 2 {
		a, b := uint64(uint32(row[i])*k), uint64(uint32(row[i+1])*k)
		v := a | b<<32
		if !littleEndian {
			v = b | a<<32
		}
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&out[i])), v)
	}
	if i < len(out) {
		atomic.StoreUint32(&out[i], uint32(row[i])*k)
	}
}

// littleEndian reports the byte order storeRow packs two entries in.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
