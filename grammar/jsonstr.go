package grammar

import (
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"conform/fsm"
)

// This file maps languages of decoded strings (sequences of Unicode code
// points, as fsm.ParsePattern returns them and as format regexes are
// written) to languages of JSON string bodies (the bytes between the
// quotes). A decoded string has many JSON encodings: each character may be
// written raw (except ", \ and U+0000–U+001F, which must be escaped), as a
// short escape where one exists (\" \\ \/ \b \f \n \r \t), or as \uXXXX in
// either hex case (a surrogate pair for astral characters). The map is the
// inverse image under JSON decoding, so it commutes with union,
// intersection and complement; that is what lets pattern, format,
// minLength/maxLength and not combine exactly.

// Escapes selects which JSON encodings of a character a string language
// admits. Whatever the set, encoding is the inverse image of JSON decoding
// restricted to that set, so it still commutes with union, intersection and
// complement (complement taken within the set's strings).
type Escapes uint8

// The escape sets. The zero value is EscapesNeeded.
const (
	// EscapesNeeded: raw UTF-8, the short escapes \" \\ \/ \b \f \n \r \t,
	// and \uXXXX (either hex case) only for U+0000–U+001F, the characters
	// that must be escaped. This is what models and json.dumps write, and it
	// keeps a bounded string at about a third of the DFA states of
	// EscapesAll (no \u path, no surrogate pairs per position).
	EscapesNeeded Escapes = iota
	// EscapesAll: additionally \uXXXX for every BMP character and surrogate
	// pairs for astral ones: every legal JSON encoding.
	EscapesAll
)

type strLangs struct {
	char, body, str *fsm.Node
}

var strLang = [2]strLangs{buildStrLangs(EscapesNeeded), buildStrLangs(EscapesAll)}

func buildStrLangs(esc Escapes) strLangs {
	ch := encodeClass([]fsm.RuneRange{{Lo: 0, Hi: utf8.MaxRune}}, esc)
	body := fsm.Star(ch)
	// Pinned: intersections and complements with them (extra keys minus
	// the declared names, negated patterns) reuse one DFA per process.
	return strLangs{fsm.Pin(ch), fsm.Pin(body), fsm.Pin(fsm.Cat(fsm.Lit(`"`), body, fsm.Lit(`"`)))}
}

// EncodeJSONString returns the language of JSON string bodies (without the
// quotes) whose decoded text is in cp, with every legal encoding of each
// character (EscapesAll). cp is a code-point-level language: OpRunes name
// characters, OpLiteral holds UTF-8 text, and OpNot is the complement
// within all decoded strings. OpBytes has no meaning there and is an error.
// The result shares structure the way cp does.
func EncodeJSONString(cp *fsm.Node) (*fsm.Node, error) {
	return EncodeJSONStringWith(cp, EscapesAll)
}

// EncodeJSONStringWith is EncodeJSONString restricted to the encodings in
// esc.
func EncodeJSONStringWith(cp *fsm.Node, esc Escapes) (*fsm.Node, error) {
	if esc > EscapesAll {
		esc = EscapesAll
	}
	e := &encoder{memo: map[*fsm.Node]*fsm.Node{}, esc: esc}
	return e.encode(cp)
}

type encoder struct {
	memo map[*fsm.Node]*fsm.Node // by code-point node
	nots map[*fsm.Node]*fsm.Node // the complement of an encoded node
	esc  Escapes
}

func (e *encoder) encode(n *fsm.Node) (*fsm.Node, error) {
	if r, ok := e.memo[n]; ok {
		return r, nil
	}
	var r *fsm.Node
	switch n.Op {
	case fsm.OpNoMatch, fsm.OpEmpty:
		r = n
	case fsm.OpLiteral:
		if !utf8.Valid(n.Lit) {
			return nil, fmt.Errorf("literal %q is not valid UTF-8", n.Lit)
		}
		parts := make([]*fsm.Node, 0, utf8.RuneCount(n.Lit))
		for _, c := range string(n.Lit) {
			parts = append(parts, encodeRune(c, e.esc))
		}
		r = fsm.Cat(parts...)
	case fsm.OpRunes:
		r = encodeClass(n.Runes, e.esc)
	case fsm.OpBytes:
		return nil, fmt.Errorf("a raw byte class has no decoded-string meaning")
	case fsm.OpConcat, fsm.OpAlt, fsm.OpAnd:
		subs := make([]*fsm.Node, len(n.Subs))
		for i, s := range n.Subs {
			es, err := e.encode(s)
			if err != nil {
				return nil, err
			}
			subs[i] = es
		}
		switch n.Op {
		case fsm.OpConcat:
			r = fsm.Cat(subs...)
		case fsm.OpAlt:
			r = fsm.Alt(subs...)
		default:
			r = fsm.And(subs...)
		}
	case fsm.OpRepeat:
		s, err := e.encode(n.Subs[0])
		if err != nil {
			return nil, err
		}
		r = fsm.Repeat(s, n.Min, n.Max)
	case fsm.OpNot:
		s, err := e.encode(n.Subs[0])
		if err != nil {
			return nil, err
		}
		// One node per complemented language: complements of one
		// language built apart (a oneOf excludes a branch from each of
		// the others) then share one DFA.
		if r = e.nots[s]; r == nil {
			r = fsm.And(strLang[e.esc].body, fsm.Not(s))
			if e.nots == nil {
				e.nots = map[*fsm.Node]*fsm.Node{}
			}
			e.nots[s] = r
		}
	default:
		return nil, fmt.Errorf("unknown AST op %d", n.Op)
	}
	e.memo[n] = r
	return r, nil
}

var shortEscapes = []struct {
	r   rune
	esc byte
}{{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}}

// asciiEnc caches the encodings of single ASCII characters per escape set:
// literals (property names, enum values, consts) are encoded one character
// at a time, and building the escape alternatives of every character anew
// was a large share of compile time for enum-heavy schemas. Nodes are
// immutable, so the cached ones are shared by every compile.
var asciiEnc [EscapesAll + 1][utf8.RuneSelf]atomic.Pointer[fsm.Node]

// encodeRune returns encodeClass of the single character c.
func encodeRune(c rune, esc Escapes) *fsm.Node {
	if c < 0 || c >= utf8.RuneSelf || esc > EscapesAll {
		return encodeClass([]fsm.RuneRange{{Lo: c, Hi: c}}, esc)
	}
	p := &asciiEnc[esc][c]
	if n := p.Load(); n != nil {
		return n
	}
	n := encodeClass([]fsm.RuneRange{{Lo: c, Hi: c}}, esc)
	p.Store(n)
	return n
}

// encodeClass returns the JSON encodings in esc of every character in rs.
func encodeClass(rs []fsm.RuneRange, esc Escapes) *fsm.Node {
	var raw []fsm.RuneRange
	var short []byte
	var bmp, astral []fsm.RuneRange
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
		raw = append(raw, clip(r, 0x20, 0x21)...)
		raw = append(raw, clip(r, 0x23, 0x5B)...)
		raw = append(raw, clip(r, 0x5D, utf8.MaxRune)...)
		for _, s := range shortEscapes {
			if r.Lo <= s.r && s.r <= r.Hi {
				short = append(short, s.esc)
			}
		}
		if esc == EscapesNeeded {
			bmp = append(bmp, clip(r, 0, 0x1F)...)
			continue
		}
		bmp = append(bmp, clip(r, 0, 0xD7FF)...)
		bmp = append(bmp, clip(r, 0xE000, 0xFFFF)...)
		astral = append(astral, clip(r, 0x10000, utf8.MaxRune)...)
	}
	var u []*fsm.Node
	for _, r := range bmp {
		u = append(u, hexRange(int(r.Lo), int(r.Hi)))
	}
	for _, r := range astral {
		u = append(u, astralRange(r.Lo, r.Hi))
	}
	var escs []*fsm.Node
	if len(short) > 0 {
		var brs []fsm.RuneRange
		for _, b := range short {
			brs = append(brs, fsm.RuneRange{Lo: rune(b), Hi: rune(b)})
		}
		escs = append(escs, fsm.RuneClass(brs...))
	}
	if len(u) > 0 {
		escs = append(escs, fsm.Cat(fsm.Lit("u"), fsm.Alt(u...)))
	}
	alts := []*fsm.Node{}
	if len(raw) > 0 {
		alts = append(alts, fsm.RuneClass(raw...))
	}
	if len(escs) > 0 {
		alts = append(alts, fsm.Cat(fsm.Lit(`\`), fsm.Alt(escs...)))
	}
	return fsm.Alt(alts...)
}

// clip intersects r with [lo, hi].
func clip(r fsm.RuneRange, lo, hi rune) []fsm.RuneRange {
	if r.Lo > lo {
		lo = r.Lo
	}
	if r.Hi < hi {
		hi = r.Hi
	}
	if lo > hi {
		return nil
	}
	return []fsm.RuneRange{{Lo: lo, Hi: hi}}
}

// astralRange encodes [lo, hi] ⊆ [U+10000, U+10FFFF] as surrogate pairs
// \uHHHH\uLLLL (the leading \u is the caller's).
func astralRange(lo, hi rune) *fsm.Node {
	hs := func(c rune) int { return 0xD800 + int(c-0x10000)>>10 }
	ls := func(c rune) int { return 0xDC00 + int(c-0x10000)&0x3FF }
	pair := func(h1, h2, l1, l2 int) *fsm.Node {
		return fsm.Cat(hexRange(h1, h2), fsm.Lit(`\u`), hexRange(l1, l2))
	}
	hlo, hhi := hs(lo), hs(hi)
	if hlo == hhi {
		return pair(hlo, hlo, ls(lo), ls(hi))
	}
	var alts []*fsm.Node
	first, last := hlo, hhi
	if ls(lo) != 0xDC00 {
		alts = append(alts, pair(hlo, hlo, ls(lo), 0xDFFF))
		first++
	}
	var tail *fsm.Node
	if ls(hi) != 0xDFFF {
		tail = pair(hhi, hhi, 0xDC00, ls(hi))
		last--
	}
	if first <= last {
		alts = append(alts, pair(first, last, 0xDC00, 0xDFFF))
	}
	if tail != nil {
		alts = append(alts, tail)
	}
	return fsm.Alt(alts...)
}

// hexRange matches four hex digits, either case, whose value is in [lo, hi].
func hexRange(lo, hi int) *fsm.Node {
	return rangeDigits(digitsOf(lo, 16, 4), digitsOf(hi, 16, 4), 16, hexClass)
}

func digitsOf(v, base, width int) []int {
	d := make([]int, width)
	for i := width - 1; i >= 0; i-- {
		d[i] = v % base
		v /= base
	}
	return d
}

// hexClass matches the hex digits with values lo..hi, in either case.
func hexClass(lo, hi int) *fsm.Node {
	var rs []fsm.RuneRange
	if lo <= 9 {
		rs = append(rs, fsm.RuneRange{Lo: '0' + rune(lo), Hi: '0' + rune(min(hi, 9))})
	}
	if hi >= 10 {
		a, b := rune(max(lo, 10)-10), rune(hi-10)
		rs = append(rs, fsm.RuneRange{Lo: 'a' + a, Hi: 'a' + b}, fsm.RuneRange{Lo: 'A' + a, Hi: 'A' + b})
	}
	return fsm.RuneClass(rs...)
}

// decClass matches the decimal digits lo..hi.
func decClass(lo, hi int) *fsm.Node {
	return fsm.RuneClass(fsm.RuneRange{Lo: '0' + rune(lo), Hi: '0' + rune(hi)})
}

// rangeDigits matches the fixed-width digit strings (in base) whose value
// lies between the digit strings a and b (same length, a ≤ b), sharing
// prefixes: equal leading digits become one literal digit, and full tails
// become [0-(base-1)]{k}.
func rangeDigits(a, b []int, base int, class func(lo, hi int) *fsm.Node) *fsm.Node {
	n := len(a)
	if n == 0 {
		return fsm.Empty()
	}
	all := func(d []int, v int) bool {
		for _, x := range d {
			if x != v {
				return false
			}
		}
		return true
	}
	full := func(k int) *fsm.Node { return fsm.Repeat(class(0, base-1), k, k) }
	if all(a, 0) && all(b, base-1) {
		return full(n)
	}
	if a[0] == b[0] {
		return fsm.Cat(class(a[0], a[0]), rangeDigits(a[1:], b[1:], base, class))
	}
	zeros := make([]int, n-1)
	tops := make([]int, n-1)
	for i := range tops {
		tops[i] = base - 1
	}
	var alts []*fsm.Node
	lo, hi := a[0], b[0]
	if !all(a[1:], 0) {
		alts = append(alts, fsm.Cat(class(lo, lo), rangeDigits(a[1:], tops, base, class)))
		lo++
	}
	var tail *fsm.Node
	if !all(b[1:], base-1) {
		tail = fsm.Cat(class(hi, hi), rangeDigits(zeros, b[1:], base, class))
		hi--
	}
	if lo <= hi {
		alts = append(alts, fsm.Cat(class(lo, hi), full(n-1)))
	}
	if tail != nil {
		alts = append(alts, tail)
	}
	return fsm.Alt(alts...)
}
