package fsm

import "unicode/utf8"

// Assertions in JSON Schema patterns: ^ and $ anywhere, and lookaheads.
//
// ParsePattern reads an ECMA-262 pattern with search semantics. The parser
// turns the anchors at the ends of top-level alternatives into .* wrappers
// (or none) directly, so that every pattern without other assertions keeps
// the AST it always had. Any other ^, $, (?=X) or (?!X) becomes a marker
// node (the unexported ops below); once the whole pattern is read, resolve
// replaces them with plain regular operators, exactly, or fails with
// ErrUnsupported. Markers never leave this file.
//
// Anchors. Without the m flag, ^ holds only at position 0 of the input and
// $ only at its end. The parsed node n (with the wrappers) matches whole
// inputs, so along one path through n a ^ holds iff nothing was consumed
// before it, and a $ iff nothing is consumed after it. Each node is split
// by the anchors its paths cross into four anchor-free languages (parts):
//
//	p  paths with no anchor
//	s  paths with a ^ and no $, every ^ preceded by nothing consumed within
//	   the node (so the node must start at position 0)
//	e  paths with a $ and no ^, nothing consumed after any $ (the node must
//	   end at the end of the input)
//	b  paths with both
//
// A literal is {p: itself}, ^ is {s: ε}, $ is {e: ε}, an alternation is the
// union part by part, and a concatenation x·y combines each part of x with
// each part of y: when y's part holds a ^, x's part is cut to its empty
// string (ε or nothing); when x's part holds a $, y's part is. Repeats
// with a bounded count are such concatenations; x* has the closed forms
// p = p(x)*, s = s(x)·p(x)*, e = p(x)*·e(x), b = s(x)·p(x)*·e(x) ∪ b(x),
// plus ε when some iteration can cross a $ and a later one a ^ consuming
// nothing. The whole pattern is then p ∪ s ∪ e ∪ b: the input is the match.
//
// Lookaheads. (?=X) at some position asserts that X matches a prefix of
// the rest of the input ((?!X): that it does not). In a top-level
// sequence (the items of a top-level alternative, nested concatenations
// flattened) the rest of the input is exactly what the items after the
// lookahead consume, so the sequence is resolved from the right: the
// parts of the suffix are intersected with X·.* (with X's $-paths matching
// to the end, and its ^-paths only when nothing can come before the
// lookahead), or have it subtracted. The one form inside a repeat is
// ((?!X)c)* or ((?=X)c)* with c one character, as the last consuming item
// of its sequence: every position the repeat covers must (not) start a
// match of X, which is "no suffix of the repeated text is in X·.* ∩ .+"
// (for (?=X): no suffix outside it). Anything else (lookaheads under
// alternation or other repeats, lookbehinds) is refused.

// The marker ops: ^ and $ not at the ends of a top-level alternative, and
// lookaheads (Subs[0] the body; Min 1 for a negative one).
const (
	opAssertBegin Op = 100 + iota
	opAssertEnd
	opLookahead
)

// maxAssertRepeat bounds the count of a repeat whose body crosses an
// anchor: such a repeat is unrolled into a concatenation of its copies.
const maxAssertRepeat = 100

// parts are the four anchor-free languages of a node (see above), indexed
// by the anchors crossed: bit 0 a ^, bit 1 a $.
type parts [4]*Node

const (
	partBegin = 1 << iota
	partEnd
)

func plainParts(n *Node) parts { return parts{n, noMatch, noMatch, noMatch} }

// assertResolver resolves one pattern's markers; pos holds each marker's
// offset in the pattern, for errors.
type assertResolver struct {
	pos  map[*Node]int
	has  map[*Node]bool // memo of hasMarker
	anyC *Node          // .* over all code points
}

// resolveAssertions returns the marker-free node equivalent to n, a
// full-match node of ParsePattern.
func resolveAssertions(n *Node, pos map[*Node]int) (*Node, error) {
	r := &assertResolver{pos: pos, has: map[*Node]bool{}, anyC: anyStar}
	if n.Op == OpAlt {
		alts := make([]*Node, len(n.Subs))
		for i, s := range n.Subs {
			x, err := r.top(s)
			if err != nil {
				return nil, err
			}
			alts[i] = x
		}
		return Alt(alts...), nil
	}
	return r.top(n)
}

// top resolves one top-level alternative (a full match of the input).
func (r *assertResolver) top(n *Node) (*Node, error) {
	if !r.hasMarker(n) {
		return n, nil
	}
	seq := flattenConcat(n, nil)
	acc := plainParts(empty) // the parts of seq[i+1:]
	for i := len(seq) - 1; i >= 0; i-- {
		it := seq[i]
		switch {
		case it.Op == opLookahead:
			la, err := r.lookLanguage(it, r.zeroWidth(seq[:i]))
			if err != nil {
				return nil, err
			}
			for k, x := range acc {
				if x.Op == OpNoMatch {
					continue
				}
				if it.Min == 1 {
					acc[k] = And(x, Diff(r.anyC, la))
				} else {
					acc[k] = And(x, la)
				}
			}
		case isGuardedRepeat(it):
			if !partsOnlyEmpty(acc) {
				return nil, r.unsupported(it.Subs[0].Subs[0], "lookahead in a repeat that is not the end of its pattern")
			}
			rep, err := r.guardedRepeat(it)
			if err != nil {
				return nil, err
			}
			acc = catParts(plainParts(rep), acc)
		default:
			d, err := r.parts(it)
			if err != nil {
				return nil, err
			}
			acc = catParts(d, acc)
		}
	}
	return Alt(acc[0], acc[1], acc[2], acc[3]), nil
}

// flattenConcat appends the items of n with nested concatenations
// flattened.
func flattenConcat(n *Node, out []*Node) []*Node {
	if n.Op != OpConcat {
		return append(out, n)
	}
	for _, s := range n.Subs {
		out = flattenConcat(s, out)
	}
	return out
}

// hasMarker reports whether n contains a marker.
func (r *assertResolver) hasMarker(n *Node) bool {
	switch n.Op {
	case opAssertBegin, opAssertEnd, opLookahead:
		return true
	case OpNoMatch, OpEmpty, OpLiteral, OpRunes, OpBytes:
		return false
	}
	if h, ok := r.has[n]; ok {
		return h
	}
	h := false
	for _, s := range n.Subs {
		if r.hasMarker(s) {
			h = true
			break
		}
	}
	r.has[n] = h
	return h
}

// zeroWidth reports whether items consume nothing on every path (so that
// what follows them starts at position 0 of the input).
func (r *assertResolver) zeroWidth(items []*Node) bool {
	for _, it := range items {
		switch it.Op {
		case opAssertBegin, opAssertEnd, opLookahead:
			continue
		}
		if r.hasMarker(it) || !onlyEmpty(it) {
			return false
		}
	}
	return true
}

// parts splits n by the anchors its paths cross. A lookahead here (inside
// a group that is not a top-level item) is refused.
func (r *assertResolver) parts(n *Node) (parts, error) {
	if !r.hasMarker(n) {
		return plainParts(n), nil
	}
	switch n.Op {
	case opAssertBegin:
		return parts{noMatch, empty, noMatch, noMatch}, nil
	case opAssertEnd:
		return parts{noMatch, noMatch, empty, noMatch}, nil
	case opLookahead:
		return parts{}, r.unsupported(n, "lookahead inside a group (only top-level lookaheads and ((?!X).)* are supported)")
	case OpConcat:
		acc := plainParts(empty)
		for _, s := range n.Subs {
			d, err := r.parts(s)
			if err != nil {
				return parts{}, err
			}
			acc = catParts(acc, d)
		}
		return acc, nil
	case OpAlt:
		var alts [4][]*Node
		for _, s := range n.Subs {
			d, err := r.parts(s)
			if err != nil {
				return parts{}, err
			}
			for k := range d {
				alts[k] = append(alts[k], d[k])
			}
		}
		return parts{Alt(alts[0]...), Alt(alts[1]...), Alt(alts[2]...), Alt(alts[3]...)}, nil
	case OpRepeat:
		x, err := r.parts(n.Subs[0])
		if err != nil {
			return parts{}, err
		}
		if n.Min > maxAssertRepeat || n.Max > maxAssertRepeat {
			return parts{}, r.unsupported(n, "an anchor inside a group repeated more than 100 times")
		}
		acc := plainParts(empty)
		for i := 0; i < n.Min; i++ {
			acc = catParts(acc, x)
		}
		if n.Max < 0 {
			return catParts(acc, starParts(x)), nil
		}
		opt := x
		opt[0] = Alt(x[0], empty)
		for i := n.Min; i < n.Max; i++ {
			acc = catParts(acc, opt)
		}
		return acc, nil
	}
	return parts{}, r.unsupported(n, "assertion under an unexpected operator")
}

// catParts is the parts of x·y: a ^ in y's part needs x's part to consume
// nothing, a $ in x's part needs y's part to.
func catParts(x, y parts) parts {
	var alts [4][]*Node
	for fx, lx := range x {
		if lx.Op == OpNoMatch {
			continue
		}
		for fy, ly := range y {
			if ly.Op == OpNoMatch {
				continue
			}
			a, b := lx, ly
			if fy&partBegin != 0 {
				a = emptyPart(a)
			}
			if fx&partEnd != 0 {
				b = emptyPart(b)
			}
			alts[fx|fy] = append(alts[fx|fy], Cat(a, b))
		}
	}
	return parts{Alt(alts[0]...), Alt(alts[1]...), Alt(alts[2]...), Alt(alts[3]...)}
}

// starParts is the parts of x* (the closed forms in the file comment).
func starParts(x parts) parts {
	p := Star(x[0])
	b := []*Node{Cat(x[1], p, x[2]), x[3]}
	endEmpty := nullable(x[2]) || nullable(x[3])
	beginEmpty := nullable(x[1]) || nullable(x[3])
	if endEmpty && beginEmpty {
		b = append(b, empty)
	}
	return parts{p, Cat(x[1], p), Cat(p, x[2]), Alt(b...)}
}

// emptyPart is the empty string if n matches it, else nothing.
func emptyPart(n *Node) *Node {
	if nullable(n) {
		return empty
	}
	return noMatch
}

// nullable reports whether the marker-free node n matches the empty
// string. Perm and unknown operators answer false, which only drops paths
// (never adds one); patterns never hold them.
func nullable(n *Node) bool {
	switch n.Op {
	case OpEmpty:
		return true
	case OpLiteral:
		return len(n.Lit) == 0
	case OpConcat, OpAnd:
		for _, s := range n.Subs {
			if !nullable(s) {
				return false
			}
		}
		return true
	case OpAlt:
		for _, s := range n.Subs {
			if nullable(s) {
				return true
			}
		}
		return false
	case OpRepeat:
		return n.Min == 0 || nullable(n.Subs[0])
	case OpNot:
		return !nullable(n.Subs[0])
	case OpDefer:
		return nullable(n.Subs[0])
	}
	return false
}

// onlyEmpty reports whether the marker-free node n matches nothing but
// (possibly) the empty string; false when unsure.
func onlyEmpty(n *Node) bool {
	switch n.Op {
	case OpEmpty, OpNoMatch:
		return true
	case OpLiteral:
		return len(n.Lit) == 0
	case OpConcat, OpAlt:
		for _, s := range n.Subs {
			if !onlyEmpty(s) {
				return false
			}
		}
		return true
	case OpRepeat:
		return onlyEmpty(n.Subs[0])
	}
	return false
}

func partsOnlyEmpty(d parts) bool {
	for _, x := range d {
		if !onlyEmpty(x) {
			return false
		}
	}
	return true
}

// lookLanguage is the language of the rest of the input that lookahead la
// tests for: X·.* for X's paths without anchors, X alone for its paths
// through a $ (they end at the end of the input), and X's paths through
// a ^ only when the lookahead is at position 0 (atStart).
func (r *assertResolver) lookLanguage(la *Node, atStart bool) (*Node, error) {
	x, err := r.parts(la.Subs[0])
	if err != nil {
		return nil, err
	}
	if x[1].Op != OpNoMatch || x[3].Op != OpNoMatch {
		if !atStart {
			return nil, r.unsupported(la, "^ inside a lookahead that is not at the start of the pattern")
		}
		return Alt(Cat(Alt(x[0], x[1]), r.anyC), x[2], x[3]), nil
	}
	return Alt(Cat(x[0], r.anyC), x[2]), nil
}

// isGuardedRepeat reports whether n is ((?=X)c)* or ((?!X)c)* (any
// count) with c one character.
func isGuardedRepeat(n *Node) bool {
	if n.Op != OpRepeat {
		return false
	}
	b := n.Subs[0]
	return b.Op == OpConcat && len(b.Subs) == 2 && b.Subs[0].Op == opLookahead && oneChar(b.Subs[1])
}

// oneChar reports whether n matches exactly the strings of one character.
func oneChar(n *Node) bool {
	switch n.Op {
	case OpRunes:
		return true
	case OpLiteral:
		return utf8.Valid(n.Lit) && utf8.RuneCount(n.Lit) == 1
	}
	return false
}

// guardedRepeat resolves ((?!X)c){m,n} that ends the input: the text is
// c{m,n} and none of its non-empty suffixes is in X·.* (for (?=X): every
// one of them is).
func (r *assertResolver) guardedRepeat(n *Node) (*Node, error) {
	la, c := n.Subs[0].Subs[0], n.Subs[0].Subs[1]
	if r.hasMarker(c) {
		return nil, r.unsupported(la, "assertion inside a lookahead-guarded repeat")
	}
	x, err := r.lookLanguage(la, false)
	if err != nil {
		return nil, err
	}
	plus := Plus(AnyRune())
	bad := And(x, plus) // suffixes that start a match of X
	if la.Min == 0 {
		bad = Diff(plus, x) // suffixes that do not
	}
	return Diff(Repeat(c, n.Min, n.Max), Cat(r.anyC, bad)), nil
}

// unsupported is the ErrUnsupported error for a construct at marker m (or
// at the offset of the nearest marker under it).
func (r *assertResolver) unsupported(m *Node, what string) error {
	off := -1
	var find func(n *Node)
	find = func(n *Node) {
		if off >= 0 {
			return
		}
		if o, ok := r.pos[n]; ok {
			off = o
			return
		}
		for _, s := range n.Subs {
			find(s)
		}
	}
	find(m)
	if off < 0 {
		off = 0
	}
	return parseErr(ErrUnsupported, what, off)
}
