package fsm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPrintLen caps the output of String and Dump. The AST is a DAG and its
// printed form is the unfolded tree, which can be exponentially larger than
// the DAG; 4 MiB is far beyond any regex a person reads and keeps a
// pathological DAG from exhausting memory. Truncated output (also for ASTs
// nested deeper than maxPrintDepth) ends in "…" and does not parse back.
const maxPrintLen = 4 << 20

// Operator precedences, loosest first. A node is printed in parentheses
// when its own precedence is below what its context requires.
const (
	precAlt    = iota // a|b
	precAnd           // a&b
	precConcat        // ab
	precRepeat        // a*
	precAtom          // a, [a-z], (?:…), ~(…)
)

// maxPrintDepth caps the nesting String and Dump recurse into, so that a
// hand-built AST millions of levels deep cannot exhaust the goroutine
// stack; no regex a person reads nests that deep.
const maxPrintDepth = 10_000

type printer struct {
	b         strings.Builder
	depth     int
	truncated bool
}

func (p *printer) full() bool {
	if p.b.Len() > maxPrintLen || p.depth > maxPrintDepth {
		p.truncated = true
	}
	return p.truncated
}

// String returns n in the project's regex dialect (see the package
// documentation): deterministic, and Parse(n.String()).String() equals
// n.String() for every AST the constructors can build. Runes print as
// themselves when printable and as \x{H…} otherwise; raw bytes that are not
// part of valid UTF-8 print as \y{HH}.
func (n *Node) String() string {
	var p printer
	p.node(n, precAlt)
	if p.truncated {
		p.b.WriteString("…")
	}
	return p.b.String()
}

func prec(n *Node) int {
	switch n.Op {
	case OpDefer:
		if len(n.Subs) == 1 {
			return prec(n.Subs[0])
		}
	case OpAlt:
		return precAlt
	case OpAnd:
		return precAnd
	case OpConcat:
		return precConcat
	case OpRepeat:
		return precRepeat
	case OpLiteral:
		if litUnits(n.Lit) > 1 {
			return precConcat
		}
	}
	return precAtom
}

// litUnits counts the printed units of a literal: runes, and single bytes
// that are not part of valid UTF-8.
func litUnits(b []byte) int {
	k := 0
	for len(b) > 0 {
		_, size := utf8.DecodeRune(b)
		b = b[size:]
		k++
	}
	return k
}

func (p *printer) node(n *Node, ctx int) {
	p.depth++
	defer func() { p.depth-- }()
	if p.full() {
		return
	}
	if n == nil {
		p.b.WriteString("(?:<nil>)")
		return
	}
	if prec(n) < ctx {
		p.b.WriteString("(?:")
		p.node(n, precAlt)
		p.b.WriteString(")")
		return
	}
	switch n.Op {
	case OpNoMatch:
		p.b.WriteString(`[^\x{0}-\x{10FFFF}]`)
	case OpEmpty:
		p.b.WriteString("(?:)")
	case OpLiteral:
		p.literal(n.Lit)
	case OpRunes:
		p.runeClass(n.Runes)
	case OpBytes:
		p.byteClass(n.Bytes)
	case OpConcat:
		for _, s := range n.Subs {
			p.node(s, precConcat)
		}
	case OpAlt, OpAnd:
		sep, sub := "|", precAnd
		if n.Op == OpAnd {
			sep, sub = "&", precConcat
		}
		for i, s := range n.Subs {
			if i > 0 {
				p.b.WriteString(sep)
			}
			p.node(s, sub)
		}
	case OpRepeat:
		if len(n.Subs) == 0 {
			p.b.WriteString("(?:<nil>)")
		} else {
			p.node(n.Subs[0], precAtom)
		}
		switch {
		case n.Min == 0 && n.Max < 0:
			p.b.WriteString("*")
		case n.Min == 1 && n.Max < 0:
			p.b.WriteString("+")
		case n.Min == 0 && n.Max == 1:
			p.b.WriteString("?")
		case n.Max < 0:
			p.b.WriteString("{" + strconv.Itoa(n.Min) + ",}")
		case n.Min == n.Max:
			p.b.WriteString("{" + strconv.Itoa(n.Min) + "}")
		default:
			p.b.WriteString("{" + strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + "}")
		}
	case OpNot:
		p.b.WriteString("~(")
		if len(n.Subs) == 0 {
			p.b.WriteString("(?:<nil>)")
		} else {
			p.node(n.Subs[0], precAlt)
		}
		p.b.WriteString(")")
	case OpResidue:
		p.b.WriteString("(?mod{" + strconv.Itoa(n.Min) + ":" + residueList(n.Req) + "})")
	case OpDefer: // a build hint: the same language as its operand
		if len(n.Subs) == 1 {
			p.node(n.Subs[0], ctx)
		} else {
			p.b.WriteString("(?:<nil>)")
		}
	case OpPerm:
		p.b.WriteString("(?perm")
		if n.Min > 0 || n.Max >= 0 {
			p.b.WriteString("{" + strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + "}")
		}
		for i, s := range n.Subs {
			if i >= 2 && i-2 < len(n.Req) && n.Req[i-2] {
				p.b.WriteString("!")
			}
			p.b.WriteString("(")
			p.node(s, precAlt)
			p.b.WriteString(")")
		}
		p.b.WriteString(")")
	default:
		p.b.WriteString("(?:<op " + strconv.Itoa(int(n.Op)) + ">)")
	}
}

// literalMeta lists the characters that must be escaped outside classes.
const literalMeta = `\.+*?()|[]{}^$&~`

func (p *printer) literal(b []byte) {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			p.b.WriteString(`\y{` + hex2(b[0]) + `}`)
		} else {
			p.char(r, literalMeta)
		}
		b = b[size:]
	}
}

// char writes one rune, escaping the characters in meta and non-printables.
func (p *printer) char(r rune, meta string) {
	switch {
	case r < utf8.RuneSelf && strings.IndexByte(meta, byte(r)) >= 0:
		p.b.WriteByte('\\')
		p.b.WriteByte(byte(r))
	case r == '\n':
		p.b.WriteString(`\n`)
	case r == '\t':
		p.b.WriteString(`\t`)
	case r == '\r':
		p.b.WriteString(`\r`)
	case unicode.IsPrint(r):
		p.b.WriteRune(r)
	default:
		p.b.WriteString(`\x{` + hexRune(r) + `}`)
	}
}

const classMeta = `\]^-[`

func (p *printer) runeClass(rs []RuneRange) {
	if len(rs) == 1 && rs[0].Lo == rs[0].Hi {
		// One code point prints as a literal: u00[01] rather than [u][0][0][01].
		p.char(rs[0].Lo, literalMeta)
		return
	}
	rs = joinSurrogateGap(rs)
	neg := false
	// Print the complement when it is shorter, or as short and the class
	// is open-ended (reaches U+10FFFF): [^"\\] reads better than its
	// positive form.
	if len(rs) > 0 {
		c := complementRunes(rs)
		if len(c) > 0 && (len(c) < len(rs) || len(c) == len(rs) && rs[len(rs)-1].Hi == utf8.MaxRune) {
			neg, rs = true, c
		}
	}
	p.b.WriteByte('[')
	if neg {
		p.b.WriteByte('^')
	}
	for _, r := range rs {
		p.classChar(r.Lo)
		switch {
		case r.Hi == r.Lo+1:
			p.classChar(r.Hi)
		case r.Hi != r.Lo:
			p.b.WriteByte('-')
			p.classChar(r.Hi)
		}
	}
	p.b.WriteByte(']')
}

func (p *printer) classChar(r rune) {
	if r >= 0xD800 && r <= 0xDFFF { // only as a range end bridging the gap
		p.b.WriteString(`\x{` + hexRune(r) + `}`)
		return
	}
	p.char(r, classMeta)
}

// joinSurrogateGap merges ranges that touch only across the surrogate gap,
// so [\x{0}-\x{10FFFF}] prints as one range. Parsing re-splits them.
func joinSurrogateGap(rs []RuneRange) []RuneRange {
	for i := 0; i+1 < len(rs); i++ {
		if rs[i].Hi == 0xD7FF && rs[i+1].Lo == 0xE000 {
			out := append([]RuneRange(nil), rs[:i]...)
			for _, r := range rs[i:] {
				if k := len(out); k > 0 && out[k-1].Hi == 0xD7FF && r.Lo == 0xE000 {
					out[k-1].Hi = r.Hi
					continue
				}
				out = append(out, r)
			}
			return out
		}
	}
	return rs
}

// complementRunes returns the scalar values (surrogates excluded, the gap
// joined as in joinSurrogateGap) that rs does not contain.
func complementRunes(rs []RuneRange) []RuneRange {
	var out []RuneRange
	next := rune(0)
	for _, r := range normRunes(rs) {
		if r.Lo > next {
			out = append(out, RuneRange{next, r.Lo - 1})
		}
		next = r.Hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, RuneRange{next, utf8.MaxRune})
	}
	return joinSurrogateGap(normRunes(out))
}

func (p *printer) byteClass(bs []ByteRange) {
	p.b.WriteString(`\y{`)
	for i, r := range bs {
		if i > 0 {
			p.b.WriteByte(',')
		}
		p.b.WriteString(hexRange(r.Lo, r.Hi))
	}
	p.b.WriteString(`}`)
}

// hexRange writes a byte range as the dumps do: "41" or "41-5A".
func hexRange(lo, hi byte) string {
	if hi == lo {
		return hex2(lo)
	}
	return hex2(lo) + "-" + hex2(hi)
}

func hex2(b byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// Dump returns a tree form of n for table tests, in the style of Go's
// regexp/syntax dumps: one operator name per node and its operands in
// braces, e.g. cat{lit{"a"}star{runes{30-39}}}. Unlike String it shows the
// exact node structure (nested concatenations, single-rune classes).
func (n *Node) Dump() string {
	var p printer
	p.dump(n)
	if p.truncated {
		p.b.WriteString("…")
	}
	return p.b.String()
}

func (p *printer) dump(n *Node) {
	p.depth++
	defer func() { p.depth-- }()
	if p.full() {
		return
	}
	if n == nil {
		p.b.WriteString("nil")
		return
	}
	switch n.Op {
	case OpNoMatch:
		p.b.WriteString("nomatch{}")
	case OpEmpty:
		p.b.WriteString("empty{}")
	case OpLiteral:
		p.b.WriteString("lit{" + strconv.Quote(string(n.Lit)) + "}")
	case OpRunes:
		p.b.WriteString("runes{")
		for i, r := range n.Runes {
			if i > 0 {
				p.b.WriteByte(' ')
			}
			p.b.WriteString(hexRune(r.Lo))
			if r.Hi != r.Lo {
				p.b.WriteString("-" + hexRune(r.Hi))
			}
		}
		p.b.WriteString("}")
	case OpBytes:
		p.b.WriteString("bytes{")
		for i, r := range n.Bytes {
			if i > 0 {
				p.b.WriteByte(' ')
			}
			p.b.WriteString(hexRange(r.Lo, r.Hi))
		}
		p.b.WriteString("}")
	case OpConcat, OpAlt, OpAnd, OpNot:
		p.b.WriteString([...]string{OpConcat: "cat", OpAlt: "alt", OpAnd: "and", OpNot: "not"}[n.Op] + "{")
		for _, s := range n.Subs {
			p.dump(s)
		}
		p.b.WriteString("}")
	case OpRepeat:
		switch {
		case n.Min == 0 && n.Max < 0:
			p.b.WriteString("star{")
		case n.Min == 1 && n.Max < 0:
			p.b.WriteString("plus{")
		case n.Min == 0 && n.Max == 1:
			p.b.WriteString("quest{")
		default:
			p.b.WriteString("rep{" + strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + " ")
		}
		for _, s := range n.Subs {
			p.dump(s)
		}
		p.b.WriteString("}")
	case OpResidue:
		p.b.WriteString("mod{" + strconv.Itoa(n.Min) + ":" + residueList(n.Req) + "}")
	case OpDefer, OpPerm:
		name := "defer{"
		if n.Op == OpPerm {
			name = "perm{"
			if n.Min > 0 || n.Max >= 0 {
				name += strconv.Itoa(n.Min) + "," + strconv.Itoa(n.Max) + " "
			}
			for _, r := range n.Req {
				name += map[bool]string{true: "!", false: "?"}[r]
			}
			name += " "
		}
		p.b.WriteString(name)
		for _, s := range n.Subs {
			p.dump(s)
		}
		p.b.WriteString("}")
	default:
		p.b.WriteString("op" + strconv.Itoa(int(n.Op)) + "{}")
	}
}

func hexRune(r rune) string { return strings.ToUpper(strconv.FormatInt(int64(r), 16)) }
