package fsm

import (
	"sort"
	"unicode/utf8"
)

// The constructors below are the only way grammar/ builds regexes. They keep
// the AST a DAG (children are never copied, so a shared child stays shared),
// and apply only local simplifications: ∅ absorbs a concatenation and
// vanishes from an alternation, ε vanishes from a concatenation, and adjacent
// literal leaves are joined.

var (
	noMatch = &Node{Op: OpNoMatch}
	empty   = &Node{Op: OpEmpty}
)

// NoMatch returns the regex that matches nothing (∅).
func NoMatch() *Node { return noMatch }

// Empty returns the regex that matches only the empty string (ε).
func Empty() *Node { return empty }

// Lit returns the regex that matches s exactly (as bytes).
func Lit(s string) *Node { return LitBytes([]byte(s)) }

// LitBytes returns the regex that matches b exactly. An empty b is ε.
func LitBytes(b []byte) *Node {
	if len(b) == 0 {
		return empty
	}
	return &Node{Op: OpLiteral, Lit: append([]byte(nil), b...)}
}

// RuneClass returns the regex that matches one UTF-8 encoded Unicode scalar
// value in one of rs. Ranges are normalized (sorted, merged, clipped to
// [0, 0x10FFFF]); surrogates U+D800–U+DFFF never match. An empty class is ∅.
func RuneClass(rs ...RuneRange) *Node {
	n := normRunes(rs)
	if len(n) == 0 {
		return noMatch
	}
	return &Node{Op: OpRunes, Runes: n}
}

// AnyRune returns the regex that matches any one Unicode scalar value.
func AnyRune() *Node { return RuneClass(RuneRange{0, utf8.MaxRune}) }

// ByteClass returns the regex that matches one byte in one of bs. An empty
// class is ∅.
func ByteClass(bs ...ByteRange) *Node {
	n := normBytes(bs)
	if len(n) == 0 {
		return noMatch
	}
	return &Node{Op: OpBytes, Bytes: n}
}

// Cat returns the concatenation of subs.
func Cat(subs ...*Node) *Node {
	out := make([]*Node, 0, len(subs))
	for _, s := range subs {
		switch s.Op {
		case OpNoMatch:
			return noMatch
		case OpEmpty:
			continue
		case OpLiteral:
			if k := len(out); k > 0 && out[k-1].Op == OpLiteral {
				joined := append(append([]byte(nil), out[k-1].Lit...), s.Lit...)
				out[k-1] = &Node{Op: OpLiteral, Lit: joined}
				continue
			}
		}
		out = append(out, s)
	}
	switch len(out) {
	case 0:
		return empty
	case 1:
		return out[0]
	}
	markParents(out)
	return &Node{Op: OpConcat, Subs: out}
}

// Alt returns the alternation (union) of subs.
func Alt(subs ...*Node) *Node {
	out := make([]*Node, 0, len(subs))
	for _, s := range subs {
		if s.Op == OpNoMatch {
			continue
		}
		out = append(out, s)
	}
	switch len(out) {
	case 0:
		return noMatch
	case 1:
		return out[0]
	}
	markParents(out)
	return &Node{Op: OpAlt, Subs: out}
}

// Repeat returns sub repeated between min and max times; max < 0 means no
// upper bound. A max below min (with max ≥ 0) is ∅.
func Repeat(sub *Node, min, max int) *Node {
	if min < 0 {
		min = 0
	}
	if max >= 0 && max < min {
		return noMatch
	}
	if max == 0 {
		return empty
	}
	if min == 1 && max == 1 {
		return sub
	}
	switch sub.Op {
	case OpEmpty:
		return empty
	case OpNoMatch:
		if min == 0 {
			return empty
		}
		return noMatch
	}
	if max < 0 {
		max = -1
	}
	markParents([]*Node{sub})
	return &Node{Op: OpRepeat, Subs: []*Node{sub}, Min: min, Max: max}
}

// Defer returns sub, marked to be built lazily: a constraint's NFA gets a
// placeholder where sub starts, and the determinizer builds sub (with its
// continuation) the first time a DFA state reaches that place. The language
// is sub's; only the cost moves, from compile time to the first mask that
// needs it, and parts a generation never reaches are never built. grammar/
// defers property values, array items and nested free-form values, which
// keeps the time to the first mask independent of the schema's depth.
// Leaves and ∅ are returned as they are (deferring them saves nothing).
func Defer(sub *Node) *Node {
	switch sub.Op {
	case OpNoMatch, OpEmpty, OpLiteral, OpRunes, OpBytes, OpDefer:
		return sub
	}
	markParents([]*Node{sub})
	return &Node{Op: OpDefer, Subs: []*Node{sub}}
}

// Perm returns the regex of a sequence of items separated by sep, in any
// order, where each item is one of members (each at most once; those with
// required[i] exactly once) or extra (any number of times; nil or ∅ for
// none). It is how grammar/ accepts a JSON object's properties in any
// order: members are the declared "key": value pairs, extra the pairs
// additionalProperties allows.
//
// As a plain regex this language needs one copy of the remaining members
// for every subset already written (2^n); the NFA builder instead creates
// the state for "these members written" when the determinizer first reaches
// it, so a generation pays for the subsets it visits. Members that are ∅ are
// dropped (a required one makes the whole Perm ∅). More than MaxPermMembers
// members is an ErrInvalidNode when compiled.
func Perm(sep, extra *Node, members []*Node, required []bool) *Node {
	return PermCount(sep, extra, members, required, 0, -1)
}

// PermCount is Perm with between min and max items in all, members and
// extras together (max -1: no upper bound): how grammar/ writes an object
// with minProperties or maxProperties in any order. The states of a
// counted Perm also carry the extras written, up to max(min, max).
func PermCount(sep, extra *Node, members []*Node, required []bool, min, max int) *Node {
	if min < 0 {
		min = 0
	}
	if max >= 0 && max < min {
		return noMatch
	}
	if extra == nil {
		extra = noMatch
	}
	subs := []*Node{sep, extra}
	var req []bool
	for i, m := range members {
		r := i < len(required) && required[i]
		if m.Op == OpNoMatch {
			if r {
				return noMatch
			}
			continue
		}
		subs = append(subs, m)
		req = append(req, r)
	}
	if len(req) == 0 && min == 0 && max < 0 {
		if extra.Op == OpNoMatch {
			return empty
		}
		return Opt(Cat(extra, Star(Cat(sep, extra))))
	}
	if len(req) == 0 && extra.Op == OpNoMatch {
		if min == 0 {
			return empty
		}
		return noMatch
	}
	markParents(subs)
	return &Node{Op: OpPerm, Subs: subs, Req: req, Min: min, Max: max}
}

// Residues returns the language of the ASCII decimal digit strings
// ([0-9]+, leading zeros allowed) whose value modulo m is a remainder r
// with accept[r]: a remainder automaton of m states, which no regex of
// the other operators writes compactly. JSON Schema's multipleOf on
// integers (and its negations, and several of them at once, modulo their
// least common multiple) is its intersection with the integer syntax. An
// m below 1 or over MaxModulus, or an accept of another length, is an
// ErrInvalidNode when compiled.
func Residues(m int, accept []bool) *Node {
	all, none := true, true
	for _, a := range accept {
		all, none = all && a, none && !a
	}
	switch {
	case len(accept) == m && none:
		return noMatch
	case len(accept) == m && all:
		return Plus(ByteClass(ByteRange{Lo: '0', Hi: '9'}))
	}
	return &Node{Op: OpResidue, Min: m, Req: append([]bool(nil), accept...)}
}

// Multiple returns Residues(k, remainder 0 only): the digit strings whose
// value is a multiple of k.
func Multiple(k int) *Node {
	if k < 1 || k > MaxModulus {
		return &Node{Op: OpResidue, Min: k}
	}
	accept := make([]bool, k)
	accept[0] = true
	return Residues(k, accept)
}

// Opt returns sub?.
func Opt(sub *Node) *Node { return Repeat(sub, 0, 1) }

// Star returns sub*.
func Star(sub *Node) *Node { return Repeat(sub, 0, -1) }

// Plus returns sub+.
func Plus(sub *Node) *Node { return Repeat(sub, 1, -1) }

// And returns the intersection of subs.
func And(subs ...*Node) *Node {
	for _, s := range subs {
		if s.Op == OpNoMatch {
			return noMatch
		}
	}
	switch len(subs) {
	case 0:
		return Not(noMatch)
	case 1:
		return subs[0]
	}
	out := append([]*Node(nil), subs...)
	markParents(out)
	return &Node{Op: OpAnd, Subs: out}
}

// Not returns the complement of sub with respect to all byte strings. To
// exclude strings from a language L, write And(L, Not(sub)).
func Not(sub *Node) *Node {
	if sub.Op == OpNot {
		return sub.Subs[0]
	}
	markParents([]*Node{sub})
	return &Node{Op: OpNot, Subs: []*Node{sub}}
}

// Diff returns the strings of a that b does not match.
func Diff(a, b *Node) *Node { return And(a, Not(b)) }

func normRunes(rs []RuneRange) []RuneRange {
	var v []RuneRange
	for _, r := range rs {
		if r.Lo < 0 {
			r.Lo = 0
		}
		if r.Hi > utf8.MaxRune {
			r.Hi = utf8.MaxRune
		}
		if r.Lo > r.Hi {
			continue
		}
		// Drop surrogates: they have no UTF-8 encoding.
		if r.Lo <= 0xDFFF && r.Hi >= 0xD800 {
			if r.Lo < 0xD800 {
				v = append(v, RuneRange{r.Lo, 0xD7FF})
			}
			if r.Hi > 0xDFFF {
				v = append(v, RuneRange{0xE000, r.Hi})
			}
			continue
		}
		v = append(v, r)
	}
	sort.Slice(v, func(i, j int) bool { return v[i].Lo < v[j].Lo })
	out := v[:0]
	for _, r := range v {
		if k := len(out); k > 0 && r.Lo <= out[k-1].Hi+1 {
			if r.Hi > out[k-1].Hi {
				out[k-1].Hi = r.Hi
			}
			continue
		}
		out = append(out, r)
	}
	// Ranges that only bridge the surrogate gap stay split; that is fine.
	return out
}

func normBytes(bs []ByteRange) []ByteRange {
	v := append([]ByteRange(nil), bs...)
	w := v[:0]
	for _, b := range v {
		if b.Lo <= b.Hi {
			w = append(w, b)
		}
	}
	v = w
	sort.Slice(v, func(i, j int) bool { return v[i].Lo < v[j].Lo })
	out := v[:0]
	for _, r := range v {
		if k := len(out); k > 0 && int(r.Lo) <= int(out[k-1].Hi)+1 {
			if r.Hi > out[k-1].Hi {
				out[k-1].Hi = r.Hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}
