package fsm

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Thompson NFA.
//
// States are of three kinds: a byte state consumes one byte in [lo, hi] and
// moves to next; an epsilon state moves without input to each of its
// targets; the match state accepts. State 0 is the fail state (an epsilon
// state without targets: the continuation of ∅) and state 1 is the match
// state.
//
// The NFA is built backwards by continuation passing: build(n, k) returns a
// state that matches n and then continues at state k. Because the
// continuation is known, a concatenation needs no patch lists, and the
// result is memoized on (n, k): when the AST shares a node between two
// places that continue at the same NFA state — the optional-property
// suffixes of a JSON object, for instance — the fragment is built once and
// the NFA stays linear in the DAG, not in its unfolded tree. (This is how
// llguidance keeps objects with many optional properties linear.)

type nfaKind uint8

const (
	nfaEps nfaKind = iota
	nfaByte
	nfaMatch
	// nfaLazy is a placeholder for a fragment not built yet (OpDefer, or
	// one subset state of an OpPerm): next indexes builder.lazy. The
	// determinizer's closure builds it on first contact (builder.expand),
	// which turns it into an epsilon state.
	nfaLazy
	// nfaSet moves on any byte of a set with more than one range (a class
	// like JSON whitespace, [ \t\n\r]): one state where byte states would
	// need one per range and an epsilon state to join them. n indexes
	// nfa.sets; lo and hi are the set's least and greatest bytes.
	nfaSet
)

// nfaState is 12 bytes: byte states use lo, hi and next; epsilon states
// keep their targets in the NFA's shared eps arena at [next, next+n).
// flags mark byte states that prove a state set can never die inside a
// JSON string body (safe.go).
type nfaState struct {
	kind   nfaKind
	lo, hi byte  // nfaByte: the byte range; nfaSet: the least and greatest byte
	flags  uint8 // nfaByte: nfaSafeUniversal, nfaSafeLoop
	next   int32 // nfaByte, nfaSet: the successor; nfaEps: offset into nfa.eps
	n      int32 // nfaEps: number of targets; nfaSet: index into nfa.sets
}

// byteSet is a set of bytes, bit b of word b/64.
type byteSet [4]uint64

func (bs *byteSet) has(b byte) bool { return bs[b>>6]&(1<<(b&63)) != 0 }

// runs calls f with each maximal range of consecutive bytes in bs.
func (bs *byteSet) runs(f func(lo, hi byte)) {
	for b := 0; b < 256; {
		if !bs.has(byte(b)) {
			b++
			continue
		}
		e := b
		for e+1 < 256 && bs.has(byte(e+1)) {
			e++
		}
		f(byte(b), byte(e))
		b = e + 1
	}
}

const (
	nfaFail   int32 = 0
	nfaAccept int32 = 1
)

type nfa struct {
	states []nfaState
	eps    []int32
	start  int32
	// liveByConstruction records that the builder made every state
	// reachable from start able to reach the match state: build never
	// creates a state whose continuation is the fail state (byteState and
	// split drop them), and spliced DFAs are trimmed.
	liveByConstruction bool
	// b builds the NFA's lazy states on demand (nil when it has none).
	b *builder
	// maxStates is the most states the NFA may grow to (the builder's limit).
	maxStates int
	// sets holds the byte sets of nfaSet states (stamped copies share them).
	sets []byteSet
	// bounds holds the byte-class boundaries of the fragments not built
	// yet (collected from their AST when the NFA has lazy states), so the
	// classes computed before they exist stay valid: a boundary at b means
	// b starts a new class.
	bounds *[257]bool
}

func (m *nfa) targets(s *nfaState) []int32 { return m.eps[s.next : s.next+s.n] }

// String dumps the NFA, one state per line, for table tests and fsmdump.
func (m *nfa) String() string {
	var b strings.Builder
	b.WriteString("start " + strconv.Itoa(int(m.start)) + "\n")
	for i := range m.states {
		s := &m.states[i]
		b.WriteString(strconv.Itoa(i))
		switch s.kind {
		case nfaMatch:
			b.WriteString(" match")
		case nfaLazy:
			b.WriteString(" lazy")
		case nfaByte:
			b.WriteString(" byte " + hexRange(s.lo, s.hi))
			b.WriteString(" -> " + strconv.Itoa(int(s.next)))
		case nfaSet:
			b.WriteString(" set")
			sep := " "
			m.sets[s.n].runs(func(lo, hi byte) {
				b.WriteString(sep + hexRange(lo, hi))
				sep = ","
			})
			b.WriteString(" -> " + strconv.Itoa(int(s.next)))
		case nfaEps:
			if i == int(nfaFail) {
				b.WriteString(" fail")
				break
			}
			b.WriteString(" eps ->")
			for _, t := range m.targets(s) {
				b.WriteString(" " + strconv.Itoa(int(t)))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type memoKey struct {
	n *Node
	k int32
}

type byteKey struct {
	lo, hi byte
	next   int32
}

// runeTemplate is the UTF-8 automaton of one rune class with its
// continuation left open, computed once per node (with suffix sharing) and
// copied for every continuation the class is built with.
type runeTemplate struct {
	states []nfaState // next < 0 means "the continuation"; else a template index
	starts []int32
}

// builder builds one NFA. The compiler it belongs to holds the budgets and
// the DFAs of intersections and complements, which are shared across NFAs.
type builder struct {
	c *compiler
	m *nfa
	// limit is the NFA states allowed now: Options.MaxNFAStates while
	// the compile builds, lazyNFAGrowth times it once a lazy constraint
	// grows over generations (CompileConstraint raises it).
	limit int
	memo  map[memoKey]int32
	tmpls map[*Node]*runeTemplate
	// first builds of nodes built with many continuations (repeated
	// nodes, Perm members, Defer operands; see stamped) and of spliced
	// DFAs, stamped for the later continuations
	setIndex   map[byteSet]int32 // index of each set in m.sets
	frags      map[*Node]*fragment
	splices    map[*DFA]*fragment
	spliceList []spliceByte // splice1's lists, kept for reuse

	// Lazy fragments (OpDefer, OpPerm): the placeholders' items, the
	// placeholder of each item, the built Perm subset states, and the
	// memoized emptiness of deferred nodes.
	lazy      []lazyItem
	lazyMemo  map[lazyItem]int32
	permMemo  map[lazyItem]int32
	emptyMemo map[*Node]bool
	// prods holds the lazy product of each OpAnd built as one (nil: built
	// as a spliced DFA); lazy_product.go.
	prods map[*Node]*lazyProduct
	// products enables lazy products (a lazy constraint's NFA).
	products bool
}

// lazyItem is a fragment to build later: Defer node n continuing at k, the
// state of Perm node n after the members in seen were written (written:
// whether any item, an extra one included, was written yet), or one pair
// of the lazy product prod of And node n.
type lazyItem struct {
	n       *Node
	seen    uint64
	written bool
	extras  int32 // a counted Perm's extra items written so far, capped (permCap)
	k       int32
	prod    *lazyProduct
	pair    uint64 // prod's pair: the operands' states (pairKey)
}

func newBuilder(c *compiler) *builder {
	b := &builder{
		c:     c,
		m:     &nfa{states: make([]nfaState, 2, 64), maxStates: c.opts.MaxNFAStates},
		limit: c.opts.MaxNFAStates,
		memo:  make(map[memoKey]int32),
		tmpls: make(map[*Node]*runeTemplate),
		frags: make(map[*Node]*fragment),
	}
	b.m.states[nfaFail] = nfaState{kind: nfaEps}
	b.m.states[nfaAccept] = nfaState{kind: nfaMatch}
	return b
}

func (b *builder) add(s nfaState) (int32, error) {
	if len(b.m.states) >= b.limit {
		return 0, limitErr(ErrTooManyNFAStates, int64(b.limit), int64(len(b.m.states)+1))
	}
	b.m.states = append(b.growStates(1), s)
	return int32(len(b.m.states) - 1), nil
}

// setState adds an nfaSet state moving on the bytes of set (lo and hi its
// least and greatest) to next.
func (b *builder) setState(set *byteSet, lo, hi byte, next int32) (int32, error) {
	if next == nfaFail {
		return nfaFail, nil
	}
	i, ok := b.setIndex[*set]
	if !ok {
		if b.setIndex == nil {
			b.setIndex = make(map[byteSet]int32)
		}
		i = int32(len(b.m.sets))
		b.m.sets = append(b.m.sets, *set)
		b.setIndex[*set] = i
	}
	return b.add(nfaState{kind: nfaSet, lo: lo, hi: hi, next: next, n: i})
}

func (b *builder) byteState(lo, hi byte, next int32) (int32, error) {
	if next == nfaFail {
		return nfaFail, nil
	}
	return b.add(nfaState{kind: nfaByte, lo: lo, hi: hi, next: next})
}

// growStates returns the NFA's states with room for n more: on the Go heap
// or, once large, in a reservation for MaxNFAStates (reserve.go).
func (b *builder) growStates(n int) []nfaState {
	return growArray(b.m.states, n, b.limit, keepUntil(b.m), true)
}

// growEps returns the NFA's epsilon targets with room for n more: on the Go
// heap or, once large, in a reservation for two targets per state (an NFA
// with more doubles on the heap past it, as before).
func (b *builder) growEps(n int) []int32 {
	return growArray(b.m.eps, n, 2*b.limit, keepUntil(b.m), true)
}

// double returns s with room for n more elements, growing the capacity by
// doubling (append grows large slices by only 1.25×, which for a
// million-state NFA means dozens of copies of the whole array).
func double[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	t := make([]T, len(s), max(2*cap(s), len(s)+n, 64))
	copy(t, s)
	return t
}

// setTargets stores targets as the epsilon targets of state s.
func (b *builder) setTargets(s int32, targets []int32) {
	b.m.states[s].next = int32(len(b.m.eps))
	b.m.states[s].n = int32(len(targets))
	b.m.eps = append(b.growEps(len(targets)), targets...)
}

// split returns a state that moves to every target; it drops fail targets
// and duplicates, and avoids the epsilon state when one target is left.
// It may reorder targets.
func (b *builder) split(targets []int32) (int32, error) {
	out := targets[:0]
	for _, t := range targets {
		if t != nfaFail {
			out = append(out, t)
		}
	}
	if len(out) > 8 {
		slices.Sort(out)
		out = slices.Compact(out)
	} else {
		w := 0
	next:
		for _, t := range out {
			for _, u := range out[:w] {
				if u == t {
					continue next
				}
			}
			out[w] = t
			w++
		}
		out = out[:w]
	}
	switch len(out) {
	case 0:
		return nfaFail, nil
	case 1:
		return out[0], nil
	}
	s, err := b.add(nfaState{kind: nfaEps})
	if err != nil {
		return 0, err
	}
	b.setTargets(s, out)
	return s, nil
}

// build returns a state that matches n and then continues at k.
func (b *builder) build(n *Node, k int32) (int32, error) {
	if n == nil {
		return 0, &Error{Code: ErrInvalidNode, Expr: "nil node", Pos: -1}
	}
	if k == nfaFail {
		return nfaFail, nil
	}
	memo := n.shared()
	key := memoKey{n, k}
	if memo {
		if s, ok := b.memo[key]; ok {
			return s, nil
		}
	}
	if err := b.c.enter(); err != nil {
		return 0, err
	}
	s, err := b.build1(n, k)
	b.c.depth--
	if err != nil {
		return 0, err
	}
	if memo {
		b.memo[key] = s
	}
	return s, nil
}

func (b *builder) build1(n *Node, k int32) (int32, error) {
	switch n.Op {
	case OpNoMatch:
		return nfaFail, nil
	case OpEmpty:
		return k, nil
	case OpLiteral:
		s := k
		for i := len(n.Lit) - 1; i >= 0; i-- {
			var err error
			if s, err = b.byteState(n.Lit[i], n.Lit[i], s); err != nil {
				return 0, err
			}
		}
		return s, nil
	case OpBytes:
		var set byteSet
		ranges := 0
		lo, hi := byte(255), byte(0)
		for _, r := range n.Bytes {
			if r.Lo > r.Hi {
				continue
			}
			ranges++
			lo, hi = min(lo, r.Lo), max(hi, r.Hi)
			for c := int(r.Lo); c <= int(r.Hi); c++ {
				set[c>>6] |= 1 << (c & 63)
			}
		}
		switch {
		case ranges == 0:
			return nfaFail, nil
		case ranges == 1:
			return b.byteState(lo, hi, k)
		}
		return b.setState(&set, lo, hi, k)
	case OpRunes:
		return b.runes(n, k)
	case OpConcat:
		s := k
		for i := len(n.Subs) - 1; i >= 0; i-- {
			var err error
			if s, err = b.build(n.Subs[i], s); err != nil {
				return 0, err
			}
		}
		return s, nil
	case OpAlt:
		if x, cnt, tail, ok := chainAlt(n); ok {
			return b.chain(x, cnt, tail, k)
		}
		targets := make([]int32, 0, len(n.Subs))
		for _, sub := range n.Subs {
			s, err := b.build(sub, k)
			if err != nil {
				return 0, err
			}
			targets = append(targets, s)
		}
		return b.split(targets)
	case OpRepeat:
		return b.repeat(n, k)
	case OpAnd, OpNot:
		if n.Op == OpAnd {
			lp, err := b.productOf(n)
			if err != nil {
				return 0, err
			}
			if lp != nil {
				return b.lazyProductStart(n, lp, k)
			}
		}
		d, err := b.c.dfaOf(n)
		if err != nil {
			return 0, err
		}
		return b.splice(d, k)
	case OpDefer:
		if len(n.Subs) != 1 {
			return 0, &Error{Code: ErrInvalidNode, Expr: "defer needs one operand", Pos: -1}
		}
		// The placeholder must be live (the determinizer treats every
		// non-empty state set as able to reach acceptance), so an operand
		// whose language is empty is ∅ here, as building it would give.
		ok, err := b.nonEmpty(n.Subs[0])
		if err != nil || !ok {
			return nfaFail, err
		}
		return b.lazyState(lazyItem{n: n, k: k})
	case OpPerm:
		return b.permStart(n, k)
	case OpResidue:
		d, err := b.c.dfaOf(n)
		if err != nil {
			return 0, err
		}
		return b.splice(d, k)
	}
	return 0, &Error{Code: ErrInvalidNode, Expr: "unknown op " + strconv.Itoa(int(n.Op)), Pos: -1}
}

func (b *builder) repeat(n *Node, k int32) (int32, error) {
	if len(n.Subs) != 1 {
		return 0, &Error{Code: ErrInvalidNode, Expr: "repeat needs one operand", Pos: -1}
	}
	x, lo, hi := n.Subs[0], n.Min, n.Max
	if lo < 0 {
		lo = 0
	}
	if hi >= 0 && hi < lo {
		return nfaFail, nil
	}
	limit := b.c.opts.MaxRepeat
	if lo > limit || hi > limit {
		return 0, limitErr(ErrRepeatTooLarge, int64(limit), int64(max(lo, hi)))
	}
	s := k
	if hi < 0 {
		// x* as a loop: L = split(x L, k).
		loop, err := b.add(nfaState{kind: nfaEps})
		if err != nil {
			return 0, err
		}
		body, err := b.build(x, loop)
		if err != nil {
			return 0, err
		}
		if body == nfaFail {
			b.setTargets(loop, []int32{k})
		} else {
			b.setTargets(loop, []int32{body, k})
		}
		s = loop
	} else {
		// x{0,j} as nested options: (x(x(x)?)?)?, every exit to k.
		for range hi - lo {
			body, err := b.copyOf(x, s, hi)
			if err != nil {
				return 0, err
			}
			if s, err = b.split([]int32{body, k}); err != nil {
				return 0, err
			}
		}
	}
	for range lo {
		var err error
		if s, err = b.copyOf(x, s, max(lo, hi)); err != nil {
			return 0, err
		}
	}
	return s, nil
}

// chainAlt matches x{0,n-1}|x{n}T (either order), the shape of a long
// string's deferred chunks (grammar's lengthRepeat), and returns x, n and
// T's factors.
func chainAlt(a *Node) (x *Node, n int, tail []*Node, ok bool) {
	if len(a.Subs) != 2 {
		return nil, 0, nil, false
	}
	for _, p := range [2][2]*Node{{a.Subs[0], a.Subs[1]}, {a.Subs[1], a.Subs[0]}} {
		short, long := p[0], p[1]
		if short.Op != OpRepeat || short.Min != 0 || short.Max < 1 || long.Op != OpConcat {
			continue
		}
		head := long.Subs[0]
		if head.Op == OpRepeat && head.Subs[0] == short.Subs[0] && head.Min == short.Max+1 && head.Max == head.Min {
			return short.Subs[0], head.Min, long.Subs[1:], true
		}
	}
	return nil, 0, nil, false
}

// chain builds x{0,n-1}|x{n}T continuing at k as one chain of n copies of
// x, each position with an exit to k and the last leading into T: the
// same language as the alternation, built with n copies of x instead of
// 2n-1, and with one copy active at each position instead of two (a DFA
// state inside a long string holds half the NFA states).
func (b *builder) chain(x *Node, n int, tail []*Node, k int32) (int32, error) {
	if limit := b.c.opts.MaxRepeat; n > limit {
		return 0, limitErr(ErrRepeatTooLarge, int64(limit), int64(n))
	}
	s := k
	for i := len(tail) - 1; i >= 0; i-- {
		var err error
		if s, err = b.build(tail[i], s); err != nil {
			return 0, err
		}
	}
	for range n {
		body, err := b.copyOf(x, s, n)
		if err != nil {
			return 0, err
		}
		if s, err = b.split([]int32{body, k}); err != nil {
			return 0, err
		}
	}
	return s, nil
}

// repeatTemplateMin is the repeat count from which the copies of a repeated
// node are stamped from one built fragment instead of built one by one.
const repeatTemplateMin = 8

// fragment is a built sub-NFA that can be stamped again with another
// continuation: states [lo, hi) and eps targets [epsLo, epsHi) of the NFA,
// entered at start, where exit stands for the continuation. lazies lists
// the placeholders it was built with (position, item): a placeholder may
// have been expanded since (into states outside the fragment), so a copy
// restores it as a fresh placeholder with its continuation relocated.
type fragment struct {
	lo, hi, epsLo, epsHi int32
	start, exit          int32
	lazies               [][2]int32
}

// instance builds the first instance of a fragment continuing at k:
// gen(exit) builds it towards a placeholder continuation exit, which then
// moves to k. Later instances are stamp(f, k'). Building towards a fresh
// exit keeps everything the fragment continues into inside it (memoized
// states from before continue elsewhere and are shared, correctly).
func (b *builder) instance(k int32, gen func(exit int32) (int32, error)) (*fragment, error) {
	exit, err := b.add(nfaState{kind: nfaEps})
	if err != nil {
		return nil, err
	}
	f := &fragment{lo: exit + 1, epsLo: int32(len(b.m.eps)), exit: exit}
	if f.start, err = gen(exit); err != nil {
		return nil, err
	}
	f.hi, f.epsHi = int32(len(b.m.states)), int32(len(b.m.eps))
	for i := f.lo; i < f.hi; i++ {
		if st := &b.m.states[i]; st.kind == nfaLazy {
			f.lazies = append(f.lazies, [2]int32{i, st.next})
		}
	}
	b.setTargets(exit, []int32{k})
	return f, nil
}

// copyOf builds x continuing at k. For a node repeated n ≥
// repeatTemplateMin times it builds x once (the first time, with a
// placeholder continuation) and stamps every later copy from that fragment
// by relocating its states, which is several times cheaper than building
// (memo lookups, splits, templates) and yields the same graph. Copies of a
// repeat always continue at different states, so no memo sharing is lost.
func (b *builder) copyOf(x *Node, k int32, n int) (int32, error) {
	if n < repeatTemplateMin {
		return b.build(x, k)
	}
	return b.stamped(x, k)
}

// stamped builds x continuing at k: the first time with a placeholder
// continuation, recorded as a fragment, and later as a stamped copy of it.
// It is for nodes built with many continuations (copyOf's repeats, Perm
// members in every subset state, Defer operands in every place that
// reaches them), where copying states is several times cheaper than
// building them again.
func (b *builder) stamped(x *Node, k int32) (int32, error) {
	return stampedBy(b, &b.frags, x, k, func(exit int32) (int32, error) { return b.build(x, exit) })
}

// stampedBy continues at k the fragment recorded under key in *frags,
// building it with gen (towards a placeholder exit) the first time.
func stampedBy[K comparable](b *builder, frags *map[K]*fragment, key K, k int32, gen func(exit int32) (int32, error)) (int32, error) {
	if k == nfaFail {
		return nfaFail, nil
	}
	if f, ok := (*frags)[key]; ok {
		return b.stamp(f, k)
	}
	f, err := b.instance(k, gen)
	if err != nil {
		return 0, err
	}
	if *frags == nil {
		*frags = make(map[K]*fragment)
	}
	(*frags)[key] = f
	return f.start, nil
}

// stamp adds a copy of fragment f continuing at k and returns its start.
func (b *builder) stamp(f *fragment, k int32) (int32, error) {
	size := f.hi - f.lo
	if len(b.m.states)+int(size) > b.limit {
		return 0, limitErr(ErrTooManyNFAStates, int64(b.limit), int64(len(b.m.states))+int64(size))
	}
	b.m.states = b.growStates(int(size))
	b.m.eps = b.growEps(int(f.epsHi - f.epsLo))
	delta := int32(len(b.m.states)) - f.lo
	epsDelta := int32(len(b.m.eps)) - f.epsLo
	reloc := func(t int32) int32 {
		switch {
		case t == f.exit:
			return k
		case t >= f.lo && t < f.hi:
			return t + delta
		}
		return t // fail, or a state outside the fragment
	}
	for i := f.lo; i < f.hi; i++ {
		st := b.m.states[i]
		switch st.kind {
		case nfaByte, nfaSet:
			st.next = reloc(st.next)
		case nfaEps:
			st.next += epsDelta
		}
		b.m.states = append(b.m.states, st)
	}
	for i := f.epsLo; i < f.epsHi; i++ {
		b.m.eps = append(b.m.eps, reloc(b.m.eps[i]))
	}
	for _, la := range f.lazies {
		it := b.lazy[la[1]]
		it.k = reloc(it.k)
		b.m.states[la[0]+delta] = nfaState{kind: nfaLazy, next: int32(len(b.lazy))}
		b.lazy = append(b.lazy, it)
	}
	return reloc(f.start), nil
}

func (b *builder) runes(n *Node, k int32) (int32, error) {
	t, ok := b.tmpls[n]
	if !ok {
		t = cachedRuneTemplate(n.Runes)
		b.tmpls[n] = t
	}
	if len(b.m.states)+len(t.states) > b.limit {
		return 0, limitErr(ErrTooManyNFAStates, int64(b.limit), int64(len(b.m.states)+len(t.states)))
	}
	b.m.states = b.growStates(len(t.states))
	base := int32(len(b.m.states))
	for _, s := range t.states {
		if s.next < 0 {
			s.next = k
		} else {
			s.next += base
		}
		b.m.states = append(b.m.states, s)
	}
	targets := make([]int32, len(t.starts))
	for i, s := range t.starts {
		targets[i] = base + s
	}
	return b.split(targets)
}

// runeTemplates caches templates by their ranges across compiles (the
// same few classes, a JSON string character above all, recur in every
// schema); templates are immutable. At most maxRuneTemplates are kept.
var (
	runeTemplates     sync.Map // string(ranges) → *runeTemplate
	runeTemplateCount atomic.Int32
)

const maxRuneTemplates = 4096

func cachedRuneTemplate(rs []RuneRange) *runeTemplate {
	key := make([]byte, 0, 8*len(rs))
	for _, r := range rs {
		key = binary.LittleEndian.AppendUint32(key, uint32(r.Lo))
		key = binary.LittleEndian.AppendUint32(key, uint32(r.Hi))
	}
	if t, ok := runeTemplates.Load(string(key)); ok {
		return t.(*runeTemplate)
	}
	t := newRuneTemplate(rs)
	if runeTemplateCount.Load() < maxRuneTemplates {
		if _, loaded := runeTemplates.LoadOrStore(string(key), t); !loaded {
			runeTemplateCount.Add(1)
		}
	}
	return t
}

func newRuneTemplate(rs []RuneRange) *runeTemplate {
	var seqs []utf8Seq
	for _, r := range rs {
		seqs = appendUTF8Seqs(seqs, r.Lo, r.Hi)
	}
	t := &runeTemplate{}
	covers := coversSafeChars(rs)
	suffix := map[byteKey]int32{}
	for _, q := range seqs {
		s := int32(-1)
		for i := q.n - 1; i >= 0; i-- {
			key := byteKey{q.r[i].Lo, q.r[i].Hi, s}
			if u, ok := suffix[key]; ok {
				s = u
				continue
			}
			st := nfaState{kind: nfaByte, lo: q.r[i].Lo, hi: q.r[i].Hi, next: s}
			if covers && q.n == 1 {
				// A one-byte character's state of a class holding every
				// safe character: see nfaSafeLoop.
				st.flags = nfaSafeLoop
			}
			t.states = append(t.states, st)
			s = int32(len(t.states) - 1)
			suffix[key] = s
		}
		t.starts = append(t.starts, s)
	}
	return t
}

// splice adds d to the NFA as a fragment that continues at k: a DFA is an
// NFA. Each live DFA state becomes an epsilon state whose targets are one
// byte state per run of bytes with the same live successor, plus k when
// the DFA state accepts.
//
// The first splice of d builds the fragment with a placeholder continuation;
// later ones (d continuing elsewhere: an extra-key language in every state
// of an any-order object, say) stamp that fragment, which costs a copy
// instead of 256 transition lookups per DFA state.
func (b *builder) splice(d *DFA, k int32) (int32, error) {
	if d.Start == DeadState {
		return nfaFail, nil
	}
	return stampedBy(b, &b.splices, d, k, func(exit int32) (int32, error) { return b.splice1(d, exit) })
}

// spliceByte is a byte state splice1 made: its range, flag and state, and
// the next one with the same target.
type spliceByte struct {
	lo, hi byte
	univ   bool
	bs     int32
	next   int32
}

func (b *builder) splice1(d *DFA, k int32) (int32, error) {
	univ := safeUniversalStates(d)
	base := int32(len(b.m.states)) - 1 // DFA state s ≥ 1 becomes base+s
	for s := 1; s < d.NumStates(); s++ {
		if _, err := b.add(nfaState{kind: nfaEps}); err != nil {
			return 0, err
		}
	}
	// The byte ranges of d's classes, in byte order.
	type classRun struct{ lo, hi, class uint8 }
	var runs []classRun
	for c := 0; c < 256; {
		e := c
		for e+1 < 256 && d.Classes[e+1] == d.Classes[c] {
			e++
		}
		runs = append(runs, classRun{uint8(c), uint8(e), d.Classes[c]})
		c = e + 1
	}
	// Byte states are shared between the states whose rows have the same
	// range to the same target (and the same safe-universal flag): rows
	// that differ from a neighbor's in a few bytes, like the trie states of
	// subtractStrings, then cost those bytes only, in this splice and in
	// every stamped copy of it. The byte states made so far are listed per
	// target (head[t], chained through next): a target is reached over a
	// few ranges, so a list beats hashing.
	head := slices.Repeat([]int32{-1}, d.NumStates())
	list := b.spliceList[:0]
	var targets []int32
	for s := 1; s < d.NumStates(); s++ {
		targets = targets[:0]
		row := d.Trans[s*d.NumClasses : (s+1)*d.NumClasses]
		for i := 0; i < len(runs); {
			t := row[runs[i].class]
			j := i
			for j+1 < len(runs) && row[runs[j+1].class] == t {
				j++
			}
			if t != DeadState {
				lo, hi := runs[i].lo, runs[j].hi
				bs := int32(-1)
				for e := head[t]; e >= 0; e = list[e].next {
					if x := &list[e]; x.lo == lo && x.hi == hi && x.univ == univ[s] {
						bs = x.bs
						break
					}
				}
				if bs < 0 {
					var err error
					if bs, err = b.byteState(lo, hi, base+int32(t)); err != nil {
						b.spliceList = list
						return 0, err
					}
					if univ[s] {
						b.m.states[bs].flags = nfaSafeUniversal
					}
					list = append(list, spliceByte{lo, hi, univ[s], bs, head[t]})
					head[t] = int32(len(list) - 1)
				}
				targets = append(targets, bs)
			}
			i = j + 1
		}
		if d.Accept[s] {
			targets = append(targets, k)
		}
		b.setTargets(base+int32(s), targets)
	}
	b.spliceList = list
	return base + int32(d.Start), nil
}
