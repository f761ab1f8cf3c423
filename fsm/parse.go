package fsm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse reads a regex in the project dialect (see the package
// documentation) with full-match semantics. Parse(n.String()) prints as
// n.String() for every n. Errors are *Error values with the offset of the
// offending construct.
func Parse(s string) (*Node, error) { return parse(s, modeProject) }

// ParseRegex reads a user-supplied regex (the guided_regex of vLLM-style
// APIs: Python re / RE2 syntax) with full-match semantics. It is Parse
// without the project extensions: '&' and '~' are literal characters and
// \y is an error. Word boundaries \b and \B in the top-level sequence
// of an alternative are resolved exactly (assert.go; \w, and so the
// boundary, is ASCII); lookarounds, backreferences, word boundaries inside
// a group and inner anchors are rejected with ErrUnsupported naming the
// construct and its offset. \d, \w and \s are ASCII-only.
func ParseRegex(s string) (*Node, error) { return parse(s, modePython) }

// ParsePattern reads an ECMA-262 regular expression as JSON Schema's
// "pattern" uses it and returns the language of decoded strings (sequences
// of code points, as UTF-8 text) that it accepts under search semantics:
// an alternative not anchored by ^ at its start gets .* in front, one not
// anchored by $ at its end gets .* behind (. here being any character).
// ^ and $ anywhere else are assertions (position 0, the end of the input)
// and are resolved exactly, as are lookaheads (?=X) and (?!X) in the
// top-level sequence of an alternative and in the form ((?!X)c)* that ends
// the pattern, and word boundaries \b and \B in the top-level sequence
// (assert.go); other lookaheads, lookbehinds, backreferences and word
// boundaries inside a group are rejected with ErrUnsupported.
//
// ECMA semantics followed: \d and \w are ASCII; \s is ECMA's white space
// (\t \n \v \f \r, space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000, U+FEFF); '.' excludes \n, \r, U+2028 and U+2029;
// [^] is any character and [] none; \uXXXX (surrogate pairs combine),
// \u{…}, \xHH, \cX, \0 and escaped syntax characters; '{' is literal when
// it does not start a quantifier; lazy quantifiers are the same language.
// \p{…}/\P{…} use Go's Unicode tables (general categories, scripts with
// Script= or sc=, and a few binary properties). There are no flags.
//
// The result contains only OpLiteral (valid UTF-8), OpRunes and structure
// (OpAnd and OpNot where lookaheads were resolved, complements taken
// within strings of code points), never OpBytes, so grammar/ can
// JSON-encode it character by character.
func ParsePattern(s string) (*Node, error) { return parse(s, modeECMA) }

type mode uint8

const (
	modeProject mode = iota // the project dialect: Python core + & ~( \y
	modePython              // guided_regex: Python re core
	modeECMA                // JSON Schema pattern: ECMA-262, search semantics
)

// maxParseDepth bounds group nesting, as Go's regexp/syntax does (its
// maxHeight is 1000): deeper patterns are not written by people, and the
// parser and compiler recurse per level.
const maxParseDepth = 1000

// maxParseRepeat bounds counts in {m,n} at parse time only to keep them in
// range; Compile applies the real budget (Options.MaxRepeat).
const maxParseRepeat = 1_000_000

type parser struct {
	src    string
	pos    int
	mode   mode
	dotAll bool
	depth  int
	// marks holds the offset of each assertion marker (ECMA mode: ^ and $
	// inside the pattern, lookaheads), which resolveAssertions replaces.
	marks map[*Node]int
}

func parse(s string, m mode) (*Node, error) {
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return nil, parseErr(ErrInvalidUTF8, s[i:i+1], i)
	}
	p := &parser{src: s, mode: m}
	n, err := p.alt(true)
	if err != nil {
		return nil, err
	}
	if p.pos < len(s) { // only a ')' stops the top level early
		return nil, parseErr(ErrUnexpectedParen, ")", p.pos)
	}
	if p.marks != nil {
		return resolveAssertions(n, p.marks)
	}
	return n, nil
}

// marker records an assertion marker (assert.go) at offset pos.
func (p *parser) marker(op Op, sub *Node, neg bool, pos int) *Node {
	m := &Node{Op: op}
	if sub != nil {
		m.Subs = []*Node{sub}
	}
	if neg {
		m.Min = 1
	}
	if p.marks == nil {
		p.marks = map[*Node]int{}
	}
	p.marks[m] = pos
	return m
}

func (p *parser) peek(c byte) bool { return p.pos < len(p.src) && p.src[p.pos] == c }

func (p *parser) hasPrefix(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

// anyStar is .* of search semantics: any sequence of code points.
var anyStar = Star(AnyRune())

// alt parses alternatives; at the top level it also handles the anchors
// at the ends of each alternative.
func (p *parser) alt(top bool) (*Node, error) {
	var alts []*Node
	for {
		startAnch := false
		if top {
			for p.peek('^') {
				p.pos++
				startAnch = true
			}
		}
		body, endAnch, err := p.and(top)
		if err != nil {
			return nil, err
		}
		if top && p.mode == modeECMA {
			switch {
			case !startAnch && !endAnch && body.Op == OpEmpty:
				body = anyStar
			default:
				pre, post := anyStar, anyStar
				if startAnch {
					pre = Empty()
				}
				if endAnch {
					post = Empty()
				}
				body = Cat(pre, body, post)
			}
		}
		alts = append(alts, body)
		if !p.peek('|') {
			break
		}
		p.pos++
	}
	return Alt(alts...), nil
}

func (p *parser) and(top bool) (*Node, bool, error) {
	var ops []*Node
	for {
		c, endAnch, err := p.concat(top)
		if err != nil {
			return nil, false, err
		}
		ops = append(ops, c)
		if p.mode != modeProject || !p.peek('&') {
			return And(ops...), endAnch, nil
		}
		p.pos++
	}
}

func (p *parser) concat(top bool) (*Node, bool, error) {
	var items []*Node
	endAnch := false
loop:
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '|' || c == ')':
			break loop
		case c == '&' && p.mode == modeProject:
			break loop
		case c == '$':
			if top {
				j := p.pos
				for j < len(p.src) && p.src[j] == '$' {
					j++
				}
				if j == len(p.src) || p.src[j] == '|' {
					p.pos = j
					endAnch = true
					break loop
				}
			}
			if p.mode != modeECMA {
				return nil, false, parseErr(ErrUnsupported, "$ anchor not at the end of a top-level alternative", p.pos)
			}
		case c == '^':
			if p.mode != modeECMA {
				return nil, false, parseErr(ErrUnsupported, "^ anchor not at the start of a top-level alternative", p.pos)
			}
		}
		var a *Node
		var err error
		switch c := p.src[p.pos]; c {
		case '^', '$': // ECMA mode, inside the pattern: a marker (assert.go)
			op := opAssertBegin
			if c == '$' {
				op = opAssertEnd
			}
			a = p.marker(op, nil, false, p.pos)
			p.pos++
		default:
			a, err = p.atom()
		}
		if err != nil {
			return nil, false, err
		}
		if a, err = p.quantifiers(a); err != nil {
			return nil, false, err
		}
		items = append(items, a)
	}
	return catItems(items), endAnch, nil
}

// catItems concatenates, joining runs of literals in one pass (Cat alone
// would copy the growing literal once per item).
func catItems(items []*Node) *Node {
	var out []*Node
	for i := 0; i < len(items); {
		if items[i].Op != OpLiteral {
			out = append(out, items[i])
			i++
			continue
		}
		j := i
		var lit []byte
		for ; j < len(items) && items[j].Op == OpLiteral; j++ {
			lit = append(lit, items[j].Lit...)
		}
		if j == i+1 {
			out = append(out, items[i])
		} else {
			out = append(out, LitBytes(lit))
		}
		i = j
	}
	return Cat(out...)
}

func (p *parser) atom() (*Node, error) {
	start := p.pos
	c := p.src[p.pos]
	switch c {
	case '(':
		return p.group()
	case '[':
		return p.class()
	case '.':
		p.pos++
		switch {
		case p.dotAll:
			return AnyRune(), nil
		case p.mode == modeECMA:
			return RuneClass(RuneRange{0, '\n' - 1}, RuneRange{'\n' + 1, '\r' - 1}, RuneRange{'\r' + 1, 0x2027}, RuneRange{0x202A, utf8.MaxRune}), nil
		}
		return RuneClass(RuneRange{0, '\n' - 1}, RuneRange{'\n' + 1, utf8.MaxRune}), nil
	case '\\':
		it, err := p.escape(false)
		if err != nil {
			return nil, err
		}
		if it.boundary != 0 {
			return p.marker(opWordBoundary, nil, it.boundary == 2, start), nil
		}
		return it.node(), nil
	case '*', '+', '?':
		return nil, parseErr(ErrMissingRepeatArg, string(c), start)
	case '{':
		if _, _, _, ok, _ := p.quantAt(p.pos); ok {
			return nil, parseErr(ErrMissingRepeatArg, "{", start)
		}
	case '~':
		if p.mode == modeProject {
			if !strings.HasPrefix(p.src[p.pos+1:], "(") {
				return nil, parseErr(ErrMissingParen, "~ must be followed by (", start)
			}
			p.pos++
			g, err := p.group()
			if err != nil {
				return nil, err
			}
			return Not(g), nil
		}
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return runeNode(r), nil
}

// runeNode is the literal for one code point; a surrogate matches nothing.
func runeNode(r rune) *Node {
	if !utf8.ValidRune(r) {
		return NoMatch()
	}
	return Lit(string(r))
}

// quantAt parses a quantifier at i: *, +, ?, {m}, {m,}, {m,n}, and in the
// Python-like modes {,n} and {,}. ok is false when there is none (a '{'
// that is not a quantifier is a literal).
func (p *parser) quantAt(i int) (lo, hi, end int, ok bool, err error) {
	if i >= len(p.src) {
		return 0, 0, i, false, nil
	}
	switch p.src[i] {
	case '*':
		return 0, -1, i + 1, true, nil
	case '+':
		return 1, -1, i + 1, true, nil
	case '?':
		return 0, 1, i + 1, true, nil
	case '{':
	default:
		return 0, 0, i, false, nil
	}
	j := i + 1
	num := func() (int, bool, error) {
		k := j
		for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false, nil
		}
		if j-k > 7 {
			return 0, true, parseErr(ErrInvalidRepeat, p.src[i:min(j+1, len(p.src))], i)
		}
		v, _ := strconv.Atoi(p.src[k:j])
		return v, true, nil
	}
	lo, hasLo, err := num()
	if err != nil {
		return 0, 0, i, false, err
	}
	hi = lo
	comma := false
	if j < len(p.src) && p.src[j] == ',' {
		comma = true
		j++
		var hasHi bool
		if hi, hasHi, err = num(); err != nil {
			return 0, 0, i, false, err
		}
		if !hasHi {
			hi = -1
		}
	}
	if j >= len(p.src) || p.src[j] != '}' {
		return 0, 0, i, false, nil
	}
	if !hasLo && (p.mode == modeECMA || !comma) {
		return 0, 0, i, false, nil
	}
	j++
	if lo > maxParseRepeat || hi > maxParseRepeat || (hi >= 0 && hi < lo) {
		return 0, 0, i, false, parseErr(ErrInvalidRepeat, p.src[i:j], i)
	}
	return lo, hi, j, true, nil
}

func (p *parser) quantifiers(a *Node) (*Node, error) {
	lo, hi, end, ok, err := p.quantAt(p.pos)
	if err != nil || !ok {
		return a, err
	}
	p.pos = end
	if p.peek('?') {
		p.pos++ // lazy: same language
	} else if p.peek('+') && p.mode != modeECMA {
		return nil, parseErr(ErrUnsupported, "possessive quantifier", p.pos)
	}
	if _, _, _, again, _ := p.quantAt(p.pos); again {
		return nil, parseErr(ErrMissingRepeatArg, "multiple repeat", p.pos)
	}
	return Repeat(a, lo, hi), nil
}

func (p *parser) group() (*Node, error) {
	start := p.pos
	p.pos++ // '('
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, parseErr(ErrNestingDepth, "(", start)
	}
	saved := p.dotAll
	defer func() { p.dotAll = saved }()
	if p.peek('?') {
		p.pos++
		rest := p.src[p.pos:]
		switch {
		case strings.HasPrefix(rest, ":"):
			p.pos++
		case (strings.HasPrefix(rest, "perm(") || strings.HasPrefix(rest, "perm{")) && p.mode == modeProject:
			p.pos += len("perm")
			return p.perm(start)
		case strings.HasPrefix(rest, "mod{") && p.mode == modeProject:
			p.pos += len("mod")
			return p.residues()
		case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
			if p.mode != modeECMA {
				return nil, parseErr(ErrUnsupported, "lookahead (?"+rest[:1], start)
			}
			// A marker (assert.go) holding the lookahead's body.
			p.pos++
			body, err := p.alt(false)
			if err != nil {
				return nil, err
			}
			if !p.peek(')') {
				return nil, parseErr(ErrMissingParen, p.src[start:p.pos], start)
			}
			p.pos++
			return p.marker(opLookahead, body, rest[0] == '!', start), nil
		case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
			return nil, parseErr(ErrUnsupported, "lookbehind (?"+rest[:2], start)
		case strings.HasPrefix(rest, "P="):
			return nil, parseErr(ErrUnsupported, "backreference (?P=", start)
		case strings.HasPrefix(rest, "P<") && p.mode != modeECMA, strings.HasPrefix(rest, "<"):
			k := strings.IndexByte(rest, '>')
			if k < 0 || !validGroupName(rest[strings.IndexByte(rest, '<')+1:k]) {
				return nil, parseErr(ErrMissingParen, "invalid named group", start)
			}
			p.pos += k + 1
		default:
			if p.mode == modeECMA {
				return nil, parseErr(ErrUnsupported, "group modifier (?"+firstRune(rest), start)
			}
			// Inline flags: (?s) or (?s:…); only s (and the no-op u) are supported.
			k := 0
			for k < len(rest) && (rest[k] >= 'a' && rest[k] <= 'z' || rest[k] >= 'A' && rest[k] <= 'Z' || rest[k] == '-') {
				switch rest[k] {
				case 's':
					p.dotAll = true
				case 'u':
				default:
					return nil, parseErr(ErrUnsupported, "flag "+rest[k:k+1], p.pos+k)
				}
				k++
			}
			if k == 0 || k >= len(rest) || (rest[k] != ':' && rest[k] != ')') {
				return nil, parseErr(ErrUnsupported, "group syntax (?"+firstRune(rest), start)
			}
			p.pos += k + 1
			if rest[k] == ')' {
				saved = p.dotAll // (?s) applies to the rest of the enclosing group
				return Empty(), nil
			}
		}
	}
	n, err := p.alt(false)
	if err != nil {
		return nil, err
	}
	if !p.peek(')') {
		return nil, parseErr(ErrMissingParen, p.src[start:p.pos], start)
	}
	p.pos++
	return n, nil
}

// residues parses the rest of (?mod{M:R}), R the accepted remainders as
// a list of numbers and ranges (0,3-5): Residues(M, R).
func (p *parser) residues() (*Node, error) {
	end := strings.Index(p.src[p.pos:], "})")
	bad := parseErr(ErrMissingParen, "residues are (?mod{M:R}) with M from 1 to "+strconv.Itoa(MaxModulus)+" and R a list of remainders (0,3-5)", p.pos)
	if end <= 1 {
		return nil, bad
	}
	ms, rs, ok := strings.Cut(p.src[p.pos+1:p.pos+end], ":")
	m, err := strconv.Atoi(ms)
	if !ok || err != nil || m < 1 || m > MaxModulus {
		return nil, bad
	}
	accept, ok := parseResidues(m, rs)
	if !ok {
		return nil, bad
	}
	p.pos += end + 2
	return Residues(m, accept), nil
}

// perm parses the operands of (?perm(SEP)(EXTRA)(M1)!(M2)…): groups, a
// required member marked by a leading !, up to the closing parenthesis.
// A counted Perm (PermCount) writes its bounds first: (?perm{MIN,MAX}…),
// MAX -1 for none.
func (p *parser) perm(start int) (*Node, error) {
	var subs []*Node
	var req []bool
	lo, hi := 0, -1
	if p.peek('{') {
		end := strings.IndexByte(p.src[p.pos:], '}')
		var ok bool
		if end > 0 {
			a, b, found := strings.Cut(p.src[p.pos+1:p.pos+end], ",")
			x, err1 := strconv.Atoi(a)
			y, err2 := strconv.Atoi(b)
			lo, hi, ok = x, y, found && err1 == nil && err2 == nil && x >= 0 && x <= 1<<20 && y >= -1 && y <= 1<<20
		}
		if !ok {
			return nil, parseErr(ErrMissingParen, "perm bounds are {MIN,MAX}", p.pos)
		}
		p.pos += end + 1
	}
	for !p.peek(')') {
		r := false
		if len(subs) >= 2 && p.peek('!') {
			p.pos++
			r = true
		}
		if !p.peek('(') {
			return nil, parseErr(ErrMissingParen, "perm operands are groups", p.pos)
		}
		g, err := p.group()
		if err != nil {
			return nil, err
		}
		subs = append(subs, g)
		if len(subs) > 2 {
			req = append(req, r)
		}
	}
	counted := lo > 0 || hi >= 0
	if len(subs) < 2 || len(subs) < 3 && !counted || len(req) > MaxPermMembers {
		return nil, parseErr(ErrMissingParen, "perm needs a separator, an extra and 1 to 64 members (0 when counted)", start)
	}
	p.pos++
	return PermCount(subs[0], subs[1], subs[2:], req, lo, hi), nil
}

func firstRune(s string) string {
	if s == "" {
		return ""
	}
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

func validGroupName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// classItem is what an escape denotes: one code point, a set of them, or
// (project dialect only) a raw byte class.
type classItem struct {
	r     rune
	set   []RuneRange
	isSet bool
	bytes []ByteRange
	isRaw bool
	// boundary is 1 for \b and 2 for \B outside a class: not a
	// character but an assertion (a marker, assert.go).
	boundary int8
}

func (it classItem) node() *Node {
	switch {
	case it.isRaw:
		return ByteClass(it.bytes...)
	case it.isSet:
		return RuneClass(it.set...)
	}
	return runeNode(it.r)
}

var (
	asciiDigit = []RuneRange{{'0', '9'}}
	asciiWord  = []RuneRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	asciiSpace = []RuneRange{{'\t', '\r'}, {' ', ' '}}
	ecmaSpace  = []RuneRange{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
)

// escape parses a backslash escape at p.pos.
func (p *parser) escape(inClass bool) (classItem, error) {
	start := p.pos
	p.pos++ // '\\'
	if p.pos >= len(p.src) {
		return classItem{}, parseErr(ErrInvalidEscape, `\`, start)
	}
	c, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	set := func(rs []RuneRange, neg bool) (classItem, error) {
		if neg {
			rs = complementRunes(rs)
		}
		return classItem{set: rs, isSet: true}, nil
	}
	bad := func(code ErrorCode, what string) (classItem, error) {
		return classItem{}, parseErr(code, what, start)
	}
	switch c {
	case 'd', 'D':
		return set(asciiDigit, c == 'D')
	case 'w', 'W':
		return set(asciiWord, c == 'W')
	case 's', 'S':
		if p.mode == modeECMA {
			return set(ecmaSpace, c == 'S')
		}
		return set(asciiSpace, c == 'S')
	case 'p', 'P':
		rs, err := p.unicodeClass(start)
		if err != nil {
			return classItem{}, err
		}
		return set(rs, c == 'P')
	case 'n':
		return classItem{r: '\n'}, nil
	case 't':
		return classItem{r: '\t'}, nil
	case 'r':
		return classItem{r: '\r'}, nil
	case 'f':
		return classItem{r: '\f'}, nil
	case 'v':
		return classItem{r: '\v'}, nil
	case 'a':
		if p.mode == modeECMA {
			return bad(ErrInvalidEscape, `\a`)
		}
		return classItem{r: 7}, nil
	case 'b':
		if inClass {
			return classItem{r: 8}, nil
		}
		return classItem{boundary: 1}, nil
	case 'B':
		if inClass {
			return bad(ErrUnsupported, `\B in a class`)
		}
		return classItem{boundary: 2}, nil
	case 'A', 'Z', 'z', 'G':
		return bad(ErrUnsupported, `anchor \`+string(c))
	case '0':
		if p.mode == modeECMA {
			if p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				return bad(ErrUnsupported, "octal escape")
			}
			return classItem{r: 0}, nil
		}
		v := 0
		for k := 0; k < 2 && p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '7'; k++ {
			v = v*8 + int(p.src[p.pos]-'0')
			p.pos++
		}
		return classItem{r: rune(v)}, nil
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return bad(ErrUnsupported, `backreference \`+string(c))
	case 'k':
		if p.mode == modeECMA || p.hasPrefix("<") {
			return bad(ErrUnsupported, `backreference \k`)
		}
	case 'x':
		if p.peek('{') && p.mode != modeECMA {
			return p.braceHex(start)
		}
		return p.fixedHex(start, 2)
	case 'u':
		if p.peek('{') && p.mode == modeECMA {
			return p.braceHex(start)
		}
		it, err := p.fixedHex(start, 4)
		if err != nil {
			return it, err
		}
		// ECMA: a surrogate pair written as two \u escapes is one code point.
		if p.mode == modeECMA && it.r >= 0xD800 && it.r <= 0xDBFF && p.hasPrefix(`\u`) && len(p.src) >= p.pos+6 {
			if lo, err := strconv.ParseUint(p.src[p.pos+2:p.pos+6], 16, 32); err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
				p.pos += 6
				it.r = 0x10000 + (it.r-0xD800)<<10 + rune(lo-0xDC00)
			}
		}
		return it, nil
	case 'U':
		if p.mode != modeECMA {
			return p.fixedHex(start, 8)
		}
	case 'c':
		if p.mode == modeECMA && p.pos < len(p.src) {
			if l := p.src[p.pos]; l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z' {
				p.pos++
				return classItem{r: rune(l % 32)}, nil
			}
		}
	case 'y':
		if p.mode == modeProject {
			if inClass {
				return bad(ErrInvalidEscape, `\y inside a character class`)
			}
			return p.rawBytes(start)
		}
	}
	if c < utf8.RuneSelf && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
		return classItem{r: c}, nil // escaped punctuation
	}
	if c >= utf8.RuneSelf && p.mode != modeECMA {
		return classItem{r: c}, nil
	}
	return bad(ErrInvalidEscape, p.src[start:p.pos])
}

func (p *parser) fixedHex(start, n int) (classItem, error) {
	if p.pos+n > len(p.src) {
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:], start)
	}
	h := p.src[p.pos : p.pos+n]
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil || strings.ContainsAny(h, "+-_xX") {
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:p.pos+n], start)
	}
	p.pos += n
	if v > utf8.MaxRune {
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:p.pos], start)
	}
	return classItem{r: rune(v)}, nil
}

func (p *parser) braceHex(start int) (classItem, error) {
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:], start)
	}
	h := p.src[p.pos+1 : p.pos+end]
	p.pos += end + 1
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil || h == "" || strings.ContainsAny(h, "+-_xX") || v > utf8.MaxRune {
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:p.pos], start)
	}
	return classItem{r: rune(v)}, nil
}

// rawBytes parses \y{HH,HH-HH,…} (the '\y' already consumed).
func (p *parser) rawBytes(start int) (classItem, error) {
	fail := func() (classItem, error) {
		end := strings.IndexByte(p.src[start:], '}')
		if end < 0 {
			end = len(p.src) - start - 1
		}
		return classItem{}, parseErr(ErrInvalidEscape, p.src[start:start+end+1], start)
	}
	if !p.peek('{') {
		return fail()
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if end < 0 {
		return fail()
	}
	body := p.src[p.pos+1 : p.pos+end]
	var rs []ByteRange
	if body != "" {
		for _, part := range strings.Split(body, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.ParseUint(lo, 16, 8)
			b, err2 := strconv.ParseUint(hi, 16, 8)
			if err1 != nil || err2 != nil || len(lo) != 2 || len(hi) != 2 || a > b {
				return fail()
			}
			rs = append(rs, ByteRange{byte(a), byte(b)})
		}
	}
	p.pos += end + 1
	return classItem{bytes: rs, isRaw: true}, nil
}

// unicodeClass parses the name after \p or \P (already consumed).
func (p *parser) unicodeClass(start int) ([]RuneRange, error) {
	var name string
	switch {
	case p.peek('{'):
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end < 0 {
			return nil, parseErr(ErrInvalidEscape, p.src[start:], start)
		}
		name = p.src[p.pos+1 : p.pos+end]
		p.pos += end + 1
	case p.pos < len(p.src) && p.mode != modeECMA:
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		name = string(r)
	default:
		return nil, parseErr(ErrInvalidEscape, p.src[start:p.pos], start)
	}
	rs, ok := unicodeTable(name)
	if !ok {
		return nil, parseErr(ErrUnsupported, "unknown Unicode property "+p.src[start:p.pos], start)
	}
	return rs, nil
}

var longCategories = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
	"Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
	"Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm",
	"Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
	"Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc",
	"cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co",
}

// unicodeTable resolves a \p name against Go's Unicode tables.
func unicodeTable(name string) ([]RuneRange, bool) {
	key, val, hasEq := strings.Cut(name, "=")
	switch {
	case !hasEq:
		switch name {
		case "Any":
			return []RuneRange{{0, utf8.MaxRune}}, true
		case "ASCII":
			return []RuneRange{{0, 0x7F}}, true
		case "LC":
			return append(tableRanges(unicode.Lu), append(tableRanges(unicode.Ll), tableRanges(unicode.Lt)...)...), true
		}
		if short, ok := longCategories[name]; ok {
			name = short
			if name == "LC" {
				return unicodeTable("LC")
			}
		}
		if t, ok := unicode.Categories[name]; ok {
			return tableRanges(t), true
		}
		if t, ok := unicode.Scripts[name]; ok {
			return tableRanges(t), true
		}
		if t, ok := unicode.Properties[name]; ok {
			return tableRanges(t), true
		}
	case key == "General_Category" || key == "gc":
		if strings.Contains(val, "=") {
			return nil, false
		}
		if _, ok := unicode.Scripts[val]; ok {
			return nil, false
		}
		return unicodeTable(val)
	case key == "Script" || key == "sc":
		if t, ok := unicode.Scripts[val]; ok {
			return tableRanges(t), true
		}
	}
	return nil, false
}

func tableRanges(t *unicode.RangeTable) []RuneRange {
	var out []RuneRange
	for _, r := range t.R16 {
		if r.Stride == 1 {
			out = append(out, RuneRange{rune(r.Lo), rune(r.Hi)})
			continue
		}
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, RuneRange{c, c})
		}
	}
	for _, r := range t.R32 {
		if r.Stride == 1 {
			out = append(out, RuneRange{rune(r.Lo), rune(r.Hi)})
			continue
		}
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, RuneRange{c, c})
		}
	}
	return out
}

// class parses a bracketed character class at p.pos.
func (p *parser) class() (*Node, error) {
	start := p.pos
	p.pos++ // '['
	neg := false
	if p.peek('^') {
		neg = true
		p.pos++
	}
	var rs []RuneRange
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, parseErr(ErrMissingBracket, p.src[start:], start)
		}
		if p.src[p.pos] == ']' && (!first || p.mode == modeECMA) {
			p.pos++
			break
		}
		first = false
		itemStart := p.pos
		lo, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if p.hasPrefix("-") && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if (lo.isSet || hi.isSet) && p.mode == modeECMA {
				// Annex B: a range with a class escape at either end is
				// the two items and a literal '-' ([\w-.] in the wild).
				for _, it := range []classItem{lo, {r: '-'}, hi} {
					if it.isSet {
						rs = append(rs, it.set...)
					} else {
						rs = append(rs, RuneRange{it.r, it.r})
					}
				}
				continue
			}
			if lo.isSet || hi.isSet || hi.r < lo.r {
				return nil, parseErr(ErrInvalidRange, p.src[itemStart:p.pos], itemStart)
			}
			rs = append(rs, RuneRange{lo.r, hi.r})
			continue
		}
		if lo.isSet {
			rs = append(rs, lo.set...)
		} else {
			rs = append(rs, RuneRange{lo.r, lo.r})
		}
	}
	if neg {
		rs = complementRunes(rs)
		if len(rs) == 0 {
			return NoMatch(), nil
		}
	}
	return RuneClass(rs...), nil
}

func (p *parser) classAtom() (classItem, error) {
	if p.src[p.pos] == '\\' {
		return p.escape(true)
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return classItem{r: r}, nil
}
