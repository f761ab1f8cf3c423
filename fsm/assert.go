package fsm

import (
	"unicode"
	"unicode/utf8"
)

// Assertions in JSON Schema patterns: ^ and $ anywhere, lookaheads, and
// word boundaries.
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
//
// Word boundaries. \b holds between a word character (\w: [A-Za-z0-9_])
// and a character that is not one, the start and the end of the input
// counting as non-word; \B holds where \b does not. Characters that some
// validators read as word characters and others do not are kept away from
// both (see classNon). A top-level sequence with a word boundary is
// resolved from the right with its suffixes kept apart by the class of
// their first character and by what a boundary to their right needs of
// the character before them (boundarySeq), so boundaries, anchors and
// lookaheads may appear anywhere in it; a \b or \B inside a group is
// refused.

// The marker ops: ^ and $ not at the ends of a top-level alternative,
// lookaheads (Subs[0] the body; Min 1 for a negative one), and word
// boundaries.
const (
	opAssertBegin Op = 100 + iota
	opAssertEnd
	opLookahead
	opWordBoundary // \b; Min 1 for \B
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
	acc, err := r.seqParts(flattenConcat(n, nil))
	if err != nil {
		return nil, err
	}
	return Alt(acc[0], acc[1], acc[2], acc[3]), nil
}

// seqParts resolves a top-level sequence (its items, which start at the
// start of the input and end at its end) into its parts, from the right.
func (r *assertResolver) seqParts(seq []*Node) (parts, error) {
	for _, it := range seq {
		if it.Op == opWordBoundary {
			return r.boundarySeq(seq)
		}
	}
	acc := plainParts(empty) // the parts of seq[i+1:]
	for i := len(seq) - 1; i >= 0; i-- {
		var err error
		if acc, err = r.seqItem(seq, i, acc); err != nil {
			return parts{}, err
		}
	}
	return acc, nil
}

// seqItem prepends item i of a top-level sequence, not a word boundary, to
// the parts acc of the items after it.
func (r *assertResolver) seqItem(seq []*Node, i int, acc parts) (parts, error) {
	it := seq[i]
	switch {
	case it.Op == opLookahead:
		la, err := r.lookLanguage(it, r.zeroWidth(seq[:i]))
		if err != nil {
			return parts{}, err
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
		return acc, nil
	case isGuardedRepeat(it):
		if !partsOnlyEmpty(acc) {
			return parts{}, r.unsupported(it.Subs[0].Subs[0], "lookahead in a repeat that is not the end of its pattern")
		}
		rep, err := r.guardedRepeat(it)
		if err != nil {
			return parts{}, err
		}
		return catParts(plainParts(rep), acc), nil
	}
	d, err := r.parts(it)
	if err != nil {
		return parts{}, err
	}
	return catParts(d, acc), nil
}

// The classes of a character next to a word boundary. ECMA-262 reads \b
// with the ASCII word characters of \w, but validators differ: Python's
// re and .NET-style engines (regexp2) count letters, marks and digits of
// every script as word characters. So that every output satisfies both
// readings, only ASCII characters are next to a \b or \B: a non-ASCII
// one is in neither class, and text starting or ending with it does not
// meet a boundary's need. (Telling the non-ASCII non-word characters
// apart, by Unicode category, costs thousands of byte ranges in every
// automaton the boundary touches.) The start and the end of the input
// count as non-word in both readings.
var (
	wordChar    = RuneClass(asciiWord...)
	nonWordChar = RuneClass(complementRunes(append(append([]RuneRange(nil), asciiWord...), RuneRange{0x80, unicode.MaxRune}))...)
	ambigChar   = RuneClass(RuneRange{0x80, unicode.MaxRune})
)

// The class of a character after a position: an ASCII word character, an
// ASCII non-word character (or the end of the input), or neither.
const (
	classNon = iota
	classWord
	classAmbig
)

var (
	classStarts = [3]*Node{classNon: Cat(nonWordChar, anyStar), classWord: Cat(wordChar, anyStar), classAmbig: Cat(ambigChar, anyStar)}
	needEnds    = [3]*Node{1 + classNon: Cat(anyStar, nonWordChar), 1 + classWord: Cat(anyStar, wordChar)}
)

// boundarySeq is seqParts for a sequence that holds a word boundary. From
// the right, the text after each position is kept in parts split by what
// is known of it: the class of its first character (class: of the
// character right after the position, see above), and what a word boundary to its
// right still needs of the character right before the position (need: 0
// nothing, else 1 + the class). An item that consumes text satisfies the
// need with its last character and fixes the class with its first one; an
// item that may consume nothing passes the need on. A \b or \B turns the
// class into a need (\b: the other class, \B: the same one), which
// contradicts a different need already there. At the start of the input
// the character before counts as not a word character.
func (r *assertResolver) boundarySeq(seq []*Node) (parts, error) {
	acc := noParts3()
	acc[classNon][0] = plainParts(empty) // the end of the input
	starts, ends := classStarts, needEnds
	first := 0 // the first word boundary: items before it need no class
	for seq[first].Op != opWordBoundary {
		first++
	}
	for i := len(seq) - 1; i >= 0; i-- {
		it := seq[i]
		next := noParts3()
		if it.Op == opWordBoundary {
			for c := range acc[:classAmbig] { // neither class: no boundary
				need := 1 + (1 - c) // \b: the other class before
				if it.Min == 1 {
					need = 1 + c // \B: the same class
				}
				for q, e := range acc[c] {
					if q == 0 || q == need {
						next[c][need] = altParts(next[c][need], e)
					}
				}
			}
			acc = next
			continue
		}
		if it.Op == opLookahead {
			// Zero width: it changes no class and no need.
			for c := range acc {
				for q, e := range acc[c] {
					x, err := r.seqItem(seq, i, e)
					if err != nil {
						return parts{}, err
					}
					next[c][q] = x
				}
			}
			acc = next
			continue
		}
		var d parts
		if isGuardedRepeat(it) {
			for c := range acc {
				for _, e := range acc[c] {
					if !partsOnlyEmpty(e) {
						return parts{}, r.unsupported(it.Subs[0].Subs[0], "lookahead in a repeat that is not the end of its pattern")
					}
				}
			}
			rep, err := r.guardedRepeat(it)
			if err != nil {
				return parts{}, err
			}
			d = plainParts(rep)
		} else {
			var err error
			if d, err = r.parts(it); err != nil {
				return parts{}, err
			}
		}
		var none parts // d's parts that consume nothing
		for k, x := range d {
			none[k] = emptyPart(x)
		}
		for c := range acc {
			for q, e := range acc[c] {
				if partsNone(e) {
					continue
				}
				// Consuming nothing: the class and the need pass on.
				next[c][q] = altParts(next[c][q], catParts(none, e))
				// Consuming text: its last character meets the need and
				// its first one sets the class.
				x := d
				if q > 0 {
					x = andParts(x, ends[q])
				}
				if i < first {
					// No boundary left of it reads its class.
					next[classNon][0] = altParts(next[classNon][0], catParts(x, e))
					continue
				}
				for cx := range starts {
					next[cx][0] = altParts(next[cx][0], catParts(andParts(x, starts[cx]), e))
				}
			}
		}
		acc = next
	}
	out := noParts
	for c := range acc {
		for q, e := range acc[c] {
			if q != 1+classWord {
				out = altParts(out, e)
			}
		}
	}
	return out, nil
}

// noParts is the parts of ∅.
var noParts = parts{noMatch, noMatch, noMatch, noMatch}

// noParts3 is boundarySeq's grid (by class, by need) of ∅ parts.
func noParts3() (g [3][3]parts) {
	for c := range g {
		for q := range g[c] {
			g[c][q] = noParts
		}
	}
	return g
}

// altParts is the union of x and y, part by part.
func altParts(x, y parts) parts {
	return parts{Alt(x[0], y[0]), Alt(x[1], y[1]), Alt(x[2], y[2]), Alt(x[3], y[3])}
}

// partsNone reports whether every part of p is ∅.
func partsNone(p parts) bool {
	for _, x := range p {
		if x.Op != OpNoMatch {
			return false
		}
	}
	return true
}

// andParts intersects every part of p with lang.
func andParts(p parts, lang *Node) parts {
	for k, x := range p {
		switch x.Op {
		case OpNoMatch:
		case OpEmpty:
			if !nullable(lang) {
				p[k] = noMatch
			}
		default:
			p[k] = And(x, lang)
		}
	}
	return p
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
	case opAssertBegin, opAssertEnd, opLookahead, opWordBoundary:
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
		case opAssertBegin, opAssertEnd, opLookahead, opWordBoundary:
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
	case opWordBoundary:
		return parts{}, r.unsupported(n, "word boundary inside a group (only top-level word boundaries are supported)")
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
