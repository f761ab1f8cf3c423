package grammar

import "conform/fsm"

// The "regex" format: a valid ECMA-262 regular expression. Regexes nest, so
// the full language is not regular; this is a bounded-depth subset that is
// valid in ECMA-262 both with and without the u flag (the stricter u-mode
// grammar decides every choice below) and also accepted by Go's
// regexp.Compile, which santhosh-tekuri/jsonschema uses for this format:
//
//   - a pattern is any sequence of terms and '|' (empty alternatives are
//     valid in both dialects);
//   - a term is an assertion (^ $ \b \B, never quantified), or an atom with
//     at most one quantifier (* + ? {n} {n,} {n,m}, then an optional lazy
//     '?');
//   - atoms: a character other than the syntax characters ^ $ \ . * + ? (
//     ) [ ] { } |; '.'; the escapes \d \D \w \W \s \S \n \r \t \f \v \xHH
//     and '\' before a syntax character or '/' (u-mode's identity escapes);
//     a class; a group "(" or "(?:" around a pattern, nested at most
//     regexFormatDepth deep;
//   - a class is '[', an optional '^', then one or more of: a character
//     other than \ ] [ - ^; the escapes above and \-; the ranges 0-9, a-z,
//     A-Z; then ']'. So no empty class (ECMA "[]" and Go "[]" differ), no
//     range with an escape as an end (a u-mode error), no "[" in a class
//     (Go's POSIX "[:alpha:]");
//   - counts are 0..99 with n ≤ m, and only on non-group atoms: Go rejects
//     nested counts whose product exceeds 1000 and programs over ~3.3M
//     instructions (regexp/syntax maxSize). With counts ≤ 99 on single
//     atoms a character of the regex costs Go at most ~29 instructions
//     ("a{0,99}": 7 characters, 198 instructions), so only a regex over
//     100,000 characters could reach that limit; ECMA-262 has none.
//
// Under-approximated: lookarounds, backreferences, named groups, \u, \c,
// \0, \p, other class ranges, counts over 99, counted groups, deeper
// nesting.
const regexFormatDepth = 3

// syntaxChars are ECMA-262's SyntaxCharacter plus '/': the characters u-mode
// allows after '\' as an identity escape.
var syntaxChars = []fsm.RuneRange{
	{Lo: '$', Hi: '$'}, {Lo: '(', Hi: '+'}, {Lo: '.', Hi: '/'}, {Lo: '?', Hi: '?'},
	{Lo: '[', Hi: '^'}, {Lo: '{', Hi: '}'},
}

func regexFormatNode() *fsm.Node {
	r := func(lo, hi rune) fsm.RuneRange { return fsm.RuneRange{Lo: lo, Hi: hi} }
	hex := fsm.RuneClass(r('0', '9'), r('a', 'f'), r('A', 'F'))
	bs := fsm.Lit(`\`)
	// Characters that stand for themselves: all but the syntax characters
	// ^ $ \ . * + ? ( ) [ ] { } |.
	plain := fsm.RuneClass(r(0, '#'), r('%', '\''), r(',', '-'), r('/', '>'), r('@', 'Z'), r('_', 'z'), r('~', 0x10FFFF))
	classEsc := fsm.RuneClass(r('d', 'd'), r('D', 'D'), r('w', 'w'), r('W', 'W'), r('s', 's'), r('S', 'S'),
		r('n', 'n'), r('r', 'r'), r('t', 't'), r('f', 'f'), r('v', 'v'))
	hexEsc := fsm.Cat(fsm.Lit("x"), hex, hex)
	escape := fsm.Cat(bs, fsm.Alt(classEsc, hexEsc, fsm.RuneClass(syntaxChars...)))
	// In a class: all but \ ] [ - ^ stand for themselves; \- is an escape
	// there too.
	classPlain := fsm.RuneClass(r(0, ','), r('.', 'Z'), r('_', 0x10FFFF))
	classEscape := fsm.Cat(bs, fsm.Alt(classEsc, hexEsc, fsm.RuneClass(append([]fsm.RuneRange{{Lo: '-', Hi: '-'}}, syntaxChars...)...)))
	classRange := fsm.Alt(fsm.Lit("0-9"), fsm.Lit("a-z"), fsm.Lit("A-Z"))
	class := fsm.Cat(fsm.Lit("["), fsm.Opt(fsm.Lit("^")), fsm.Plus(fsm.Alt(classPlain, classEscape, classRange)), fsm.Lit("]"))
	atom := fsm.Alt(plain, fsm.Lit("."), escape, class)

	counted := fsm.Cat(fsm.Lit("{"), regexCounts(), fsm.Lit("}"))
	simpleQ := fsm.RuneClass(r('*', '+'), r('?', '?'))
	lazy := fsm.Opt(fsm.Lit("?"))
	atomTerm := fsm.Cat(atom, fsm.Opt(fsm.Cat(fsm.Alt(simpleQ, counted), lazy)))
	assertion := fsm.Alt(fsm.RuneClass(r('^', '^'), r('$', '$')), fsm.Cat(bs, fsm.RuneClass(r('b', 'b'), r('B', 'B'))))
	bar := fsm.Lit("|")

	pattern := fsm.Star(fsm.Alt(atomTerm, assertion, bar))
	for i := 0; i < regexFormatDepth; i++ {
		group := fsm.Cat(fsm.Alt(fsm.Lit("("), fsm.Lit("(?:")), pattern, fsm.Lit(")"), fsm.Opt(fsm.Cat(simpleQ, lazy)))
		pattern = fsm.Star(fsm.Alt(atomTerm, assertion, bar, group))
	}
	return pattern
}

// regexCounts is the inside of a counted quantifier: n, "n," or "n,m" with
// n and m in 0..99 (no leading zeros) and n ≤ m.
func regexCounts() *fsm.Node {
	d := func(lo, hi rune) *fsm.Node { return fsm.RuneClass(fsm.RuneRange{Lo: lo, Hi: hi}) }
	one := d('0', '9')
	two := fsm.Cat(d('1', '9'), d('0', '9'))
	num := fsm.Alt(one, two)
	comma := fsm.Lit(",")
	alts := []*fsm.Node{
		num,
		fsm.Cat(num, comma),
		fsm.Cat(one, comma, two), // one digit, then two
	}
	for n := '0'; n <= '9'; n++ { // both one digit
		alts = append(alts, fsm.Cat(d(n, n), comma, d(n, '9')))
	}
	for a := '1'; a <= '9'; a++ { // both two digits
		if a < '9' {
			alts = append(alts, fsm.Cat(d(a, a), d('0', '9'), comma, d(a+1, '9'), d('0', '9')))
		}
		for b := '0'; b <= '9'; b++ {
			alts = append(alts, fsm.Cat(d(a, a), d(b, b), comma, d(a, a), d(b, '9')))
		}
	}
	return fsm.Alt(alts...)
}
