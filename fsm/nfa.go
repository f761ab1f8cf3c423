package fsm

import (
	"strconv"
	"strings"
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
)

type nfaState struct {
	kind   nfaKind
	lo, hi byte    // nfaByte: the byte range
	next   int32   // nfaByte: the successor
	eps    []int32 // nfaEps: the targets
}

const (
	nfaFail   int32 = 0
	nfaAccept       = 1
)

type nfa struct {
	states []nfaState
	start  int32
}

// String dumps the NFA, one state per line, for table tests and fsmdump.
func (m *nfa) String() string {
	var b strings.Builder
	b.WriteString("start " + strconv.Itoa(int(m.start)) + "\n")
	for i, s := range m.states {
		b.WriteString(strconv.Itoa(i))
		switch s.kind {
		case nfaMatch:
			b.WriteString(" match")
		case nfaByte:
			b.WriteString(" byte " + hex2(s.lo))
			if s.hi != s.lo {
				b.WriteString("-" + hex2(s.hi))
			}
			b.WriteString(" -> " + strconv.Itoa(int(s.next)))
		case nfaEps:
			if i == int(nfaFail) {
				b.WriteString(" fail")
				break
			}
			b.WriteString(" eps ->")
			for _, t := range s.eps {
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

// builder builds one NFA. The compiler it belongs to holds the budgets and
// the DFAs of intersections and complements, which are shared across NFAs.
type builder struct {
	c     *compiler
	m     *nfa
	memo  map[memoKey]int32
	seqs  map[*Node][]utf8Seq
	bytes map[byteKey]int32 // scratch for suffix sharing inside one class
}

func newBuilder(c *compiler) *builder {
	return &builder{
		c:     c,
		m:     &nfa{states: []nfaState{{kind: nfaEps}, {kind: nfaMatch}}},
		memo:  make(map[memoKey]int32),
		seqs:  make(map[*Node][]utf8Seq),
		bytes: make(map[byteKey]int32),
	}
}

func (b *builder) add(s nfaState) (int32, error) {
	if len(b.m.states) >= b.c.opts.MaxNFAStates {
		return 0, limitErr(ErrTooManyNFAStates, int64(b.c.opts.MaxNFAStates), int64(len(b.m.states)+1))
	}
	b.m.states = append(b.m.states, s)
	return int32(len(b.m.states) - 1), nil
}

func (b *builder) byteState(lo, hi byte, next int32) (int32, error) {
	if next == nfaFail {
		return nfaFail, nil
	}
	return b.add(nfaState{kind: nfaByte, lo: lo, hi: hi, next: next})
}

// split returns a state that moves to every target; it drops fail targets
// and duplicates, and avoids the epsilon state when one target is left.
func (b *builder) split(targets []int32) (int32, error) {
	out := targets[:0]
	for _, t := range targets {
		if t == nfaFail {
			continue
		}
		dup := false
		for _, u := range out {
			if u == t {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, t)
		}
	}
	switch len(out) {
	case 0:
		return nfaFail, nil
	case 1:
		return out[0], nil
	}
	return b.add(nfaState{kind: nfaEps, eps: append([]int32(nil), out...)})
}

// build returns a state that matches n and then continues at k.
func (b *builder) build(n *Node, k int32) (int32, error) {
	if n == nil {
		return 0, &Error{Code: ErrInvalidNode, Expr: "nil node", Pos: -1}
	}
	if k == nfaFail {
		return nfaFail, nil
	}
	key := memoKey{n, k}
	if s, ok := b.memo[key]; ok {
		return s, nil
	}
	if err := b.c.enter(); err != nil {
		return 0, err
	}
	s, err := b.build1(n, k)
	b.c.depth--
	if err != nil {
		return 0, err
	}
	b.memo[key] = s
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
		targets := make([]int32, 0, len(n.Bytes))
		for _, r := range n.Bytes {
			if r.Lo > r.Hi {
				continue
			}
			s, err := b.byteState(r.Lo, r.Hi, k)
			if err != nil {
				return 0, err
			}
			targets = append(targets, s)
		}
		return b.split(targets)
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
			b.m.states[loop].eps = []int32{k}
		} else {
			b.m.states[loop].eps = []int32{body, k}
		}
		s = loop
	} else {
		// x{0,j} as nested options: (x(x(x)?)?)?, every exit to k.
		for range hi - lo {
			body, err := b.build(x, s)
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
		if s, err = b.build(x, s); err != nil {
			return 0, err
		}
	}
	return s, nil
}

func (b *builder) runes(n *Node, k int32) (int32, error) {
	seqs, ok := b.seqs[n]
	if !ok {
		for _, r := range n.Runes {
			seqs = appendUTF8Seqs(seqs, r.Lo, r.Hi)
		}
		b.seqs[n] = seqs
	}
	clear(b.bytes)
	var targets []int32
	for _, q := range seqs {
		s := k
		for i := q.n - 1; i >= 0; i-- {
			key := byteKey{q.r[i].Lo, q.r[i].Hi, s}
			if t, ok := b.bytes[key]; ok {
				s = t
				continue
			}
			t, err := b.byteState(q.r[i].Lo, q.r[i].Hi, s)
			if err != nil {
				return 0, err
			}
			b.bytes[key] = t
			s = t
		}
		targets = append(targets, s)
	}
	return b.split(targets)
}

// splice adds d to the NFA as a fragment that continues at k: a DFA is an
// NFA. Each live DFA state becomes an epsilon state whose targets are one
// byte state per run of bytes with the same live successor, plus k when
// the DFA state accepts.
func (b *builder) splice(d *DFA, k int32) (int32, error) {
	if d.Start == DeadState {
		return nfaFail, nil
	}
	base := int32(len(b.m.states)) - 1 // DFA state s ≥ 1 becomes base+s
	for s := 1; s < d.NumStates(); s++ {
		if _, err := b.add(nfaState{kind: nfaEps}); err != nil {
			return 0, err
		}
	}
	for s := 1; s < d.NumStates(); s++ {
		var targets []int32
		for lo := 0; lo < 256; {
			t := d.Next(StateID(s), byte(lo))
			hi := lo
			for hi+1 < 256 && d.Next(StateID(s), byte(hi+1)) == t {
				hi++
			}
			if t != DeadState {
				bs, err := b.byteState(byte(lo), byte(hi), base+int32(t))
				if err != nil {
					return 0, err
				}
				targets = append(targets, bs)
			}
			lo = hi + 1
		}
		if d.Accept[s] {
			targets = append(targets, k)
		}
		b.m.states[base+int32(s)].eps = targets
	}
	return base + int32(d.Start), nil
}
