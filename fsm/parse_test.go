package fsm

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseTests pair project-dialect input with its printed form.
var parseTests = []struct {
	in   string
	want string
}{
	{``, `(?:)`},
	{`abc`, `abc`},
	{`a|b|c`, `a|b|c`},
	{`(a|b)c`, `(?:a|b)c`},
	{`(?:ab)*`, `(?:ab)*`},
	{`a*?b+?c??`, `a*b+c?`},
	{`x{3}x{2,}x{1,4}x{,4}`, `x{3}x{2,}x{1,4}x{0,4}`},
	{`a{1}`, `a`},
	{`a{0}`, `(?:)`},
	{`a{`, `a\{`},
	{`a{x}`, `a\{x\}`},
	{`a}`, `a\}`},
	{`]`, `\]`},
	{`^abc$`, `abc`},
	{`^a|b$`, `a|b`},
	{`.`, `[^\n]`},
	{`(?s).`, `[\x{0}-\x{10FFFF}]`},
	{`(?s:.)\n.`, `[\x{0}-\x{10FFFF}]\n[^\n]`},
	{`[a-c]`, `[a-c]`},
	{`[]a]`, `[\]a]`},
	{`[^]a]`, `[^\]a]`},
	{`[a-]`, `[\-a]`},
	{`[-a]`, `[\-a]`},
	{`[\d]`, `[0-9]`},
	{`[^\d]`, `[^0-9]`},
	{`\d\w\s`, `[0-9][0-9A-Z_a-z][\t-\r ]`},
	{`\D`, `[^0-9]`},
	{`[\b]`, `\x{8}`},
	{`\x41\x{42}\u0043\U00000044`, `ABCD`},
	{`\x{10FFFF}`, `\x{10FFFF}`},
	{`\x{D800}`, `[^\x{0}-\x{10FFFF}]`},
	{`\0\012`, `\x{0}\n`},
	{`\.\*\&\~\-`, `\.\*\&\~-`},
	{`é+`, `é+`},
	{`\p{ASCII}`, `[\x{0}-\x{7F}]`},
	{`[a-c]&\p{ASCII}`, `[a-c]&[\x{0}-\x{7F}]`},
	{`\y{80-BF,FF}`, `\y{80-BF,FF}`},
	{`\y{}`, `[^\x{0}-\x{10FFFF}]`},
	{`ab&cd|e`, `ab&cd|e`},
	{`(ab|cd)&e`, `(?:ab|cd)&e`},
	{`~(a*)b`, `~(a*)b`},
	{`~(a)*`, `~(a)*`},
	{`(?P<name>a)(?<n2>b)`, `ab`},
	{`(?u:a)`, `a`},
	{`(?:)`, `(?:)`},
	{`a||b`, `a|(?:)|b`},
	{`(((a)))`, `a`},
	{`\n\t\r\f\v\a`, `\n\t\r\x{C}\x{B}\x{7}`},
	{`[\x{0}-\x{10FFFF}]`, `[\x{0}-\x{10FFFF}]`},
	{`[^"\\\x{0}-\x{1F}]`, `[^\x{0}-\x{1F}"\\]`},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		n, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.in, err)
			continue
		}
		if got := n.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRoundTrip checks Parse(n.String()).String() == n.String() for the
// parse table, the printer table and random ASTs.
func TestRoundTrip(t *testing.T) {
	check := func(n *Node) {
		t.Helper()
		s := n.String()
		m, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q) [printed from %s] error: %v", s, n.Dump(), err)
			return
		}
		if got := m.String(); got != s {
			t.Errorf("Parse(%q).String() = %q, want the same (node %s)", s, got, n.Dump())
		}
	}
	for _, tt := range parseTests {
		if n, err := Parse(tt.in); err == nil {
			check(n)
		}
	}
	for _, tt := range printTests {
		check(tt.n)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		check(randomNode(rng, 4))
	}
}

// randomNode builds a random AST with the constructors.
func randomNode(rng *rand.Rand, depth int) *Node {
	if depth == 0 || rng.IntN(4) == 0 {
		switch rng.IntN(7) {
		case 0:
			b := make([]byte, 1+rng.IntN(3))
			for i := range b {
				const chars = "ab\\.*&~{}()[]^$|?+\n\x00\xff\xc3"
				b[i] = chars[rng.IntN(len(chars))]
			}
			return LitBytes(b)
		case 1:
			return Lit(string(rune(rng.IntN(0x11000))))
		case 2:
			var rs []RuneRange
			for range 1 + rng.IntN(3) {
				lo := rune(rng.IntN(0x300))
				if rng.IntN(4) == 0 {
					lo = rune(rng.IntN(utf8.MaxRune))
				}
				rs = append(rs, RuneRange{lo, lo + rune(rng.IntN(40))})
			}
			if rng.IntN(3) == 0 {
				rs = complementRunes(rs)
			}
			return RuneClass(rs...)
		case 3:
			lo := byte(rng.IntN(256))
			return ByteClass(ByteRange{lo, lo + byte(rng.IntN(int(255-lo)+1))})
		case 4:
			return Empty()
		case 5:
			return NoMatch()
		default:
			return Lit("x")
		}
	}
	sub := func() *Node { return randomNode(rng, depth-1) }
	switch rng.IntN(6) {
	case 0:
		return Cat(sub(), sub(), sub())
	case 1:
		return Alt(sub(), sub())
	case 2:
		return And(sub(), sub())
	case 3:
		return Not(sub())
	default:
		lo := rng.IntN(3)
		hi := lo + rng.IntN(3) - 1
		if rng.IntN(3) == 0 {
			hi = -1
		}
		return Repeat(sub(), lo, hi)
	}
}

var invalidTests = []struct {
	in   string
	mode mode
	code ErrorCode
	pos  int
}{
	{`(a`, modeProject, ErrMissingParen, 0},
	{`a(?:b`, modeProject, ErrMissingParen, 1},
	{`a)`, modeProject, ErrUnexpectedParen, 1},
	{`[a`, modeProject, ErrMissingBracket, 0},
	{`[]`, modeProject, ErrMissingBracket, 0},
	{`\q`, modeProject, ErrInvalidEscape, 0},
	{`a\`, modeProject, ErrInvalidEscape, 1},
	{`\x4`, modeProject, ErrInvalidEscape, 0},
	{`\x{110000}`, modeProject, ErrInvalidEscape, 0},
	{`\x{}`, modeProject, ErrInvalidEscape, 0},
	{`\y{8}`, modeProject, ErrInvalidEscape, 0},
	{`\y{BF-80}`, modeProject, ErrInvalidEscape, 0},
	{`[\y{80}]`, modeProject, ErrInvalidEscape, 1},
	{`\y{80}`, modePython, ErrInvalidEscape, 0},
	{`[z-a]`, modeProject, ErrInvalidRange, 1},
	{`[\d-z]`, modeProject, ErrInvalidRange, 1},
	{`[\d-z]`, modePython, ErrInvalidRange, 1},
	{`[z-a]`, modeECMA, ErrInvalidRange, 1},
	{`*a`, modeProject, ErrMissingRepeatArg, 0},
	{`a|*`, modeProject, ErrMissingRepeatArg, 2},
	{`a**`, modeProject, ErrMissingRepeatArg, 2},
	{`a{2}{3}`, modeProject, ErrMissingRepeatArg, 4},
	{`{2}`, modeProject, ErrMissingRepeatArg, 0},
	{`a{3,2}`, modeProject, ErrInvalidRepeat, 1},
	{`a{99999999}`, modeProject, ErrInvalidRepeat, 1},
	{`a{2000000}`, modeProject, ErrInvalidRepeat, 1},
	{"a\xff", modeProject, ErrInvalidUTF8, 1},
	{strings.Repeat("(", 1001) + strings.Repeat(")", 1001), modeProject, ErrNestingDepth, 1000},
	{`(?=a)`, modeProject, ErrUnsupported, 0},
	{`(?!a)`, modePython, ErrUnsupported, 0},
	{`a(?<=b)`, modeECMA, ErrUnsupported, 1},
	{`(?<!b)`, modeECMA, ErrUnsupported, 0},
	{`(a)\1`, modePython, ErrUnsupported, 3},
	{`(?P<x>a)(?P=x)`, modePython, ErrUnsupported, 8},
	{`(?<x>a)\k<x>`, modeECMA, ErrUnsupported, 7},
	{`(a\b|b)c`, modeProject, ErrUnsupported, 2},
	{`x(\Ba|b)`, modeECMA, ErrUnsupported, 2},
	{`(a\b)*`, modeECMA, ErrUnsupported, 2},
	{`[\B]`, modeECMA, ErrUnsupported, 1},
	{`\Aa`, modePython, ErrUnsupported, 0},
	{`a^b`, modeProject, ErrUnsupported, 1},
	{`a$b`, modePython, ErrUnsupported, 1},
	{`(^a)`, modePython, ErrUnsupported, 1},
	{`(a$)`, modeProject, ErrUnsupported, 2},
	{`(a(?=b))*`, modeECMA, ErrUnsupported, 2},
	{`a|(b|(?!c))`, modeECMA, ErrUnsupported, 5},
	{`^((?!a).)*b$`, modeECMA, ErrUnsupported, 2},
	{`b(?!^a)`, modeECMA, ErrUnsupported, 1},
	{`((?=a)b)*(?=c)`, modeECMA, ErrUnsupported, 1},
	{`^(a$){200}`, modeECMA, ErrUnsupported, 3},
	{`(?i)a`, modePython, ErrUnsupported, 2},
	{`(?i:a)`, modeECMA, ErrUnsupported, 0},
	{`a*+`, modePython, ErrUnsupported, 2},
	{`(?#c)`, modePython, ErrUnsupported, 0},
	{`\p{Nope}`, modeECMA, ErrUnsupported, 0},
	{`\pL`, modeECMA, ErrInvalidEscape, 0},
	{`\a`, modeECMA, ErrInvalidEscape, 0},
	{`\01`, modeECMA, ErrUnsupported, 0},
	{`~a`, modeProject, ErrMissingParen, 0},
	{`~(a`, modeProject, ErrMissingParen, 1},
}

func TestParseInvalid(t *testing.T) {
	names := [...]string{modeProject: "Parse", modePython: "ParseRegex", modeECMA: "ParsePattern"}
	for _, tt := range invalidTests {
		n, err := parse(tt.in, tt.mode)
		var e *Error
		code, ok := errCode(err)
		if ok {
			e = err.(*Error)
		}
		if n != nil || !ok || code != tt.code || e.Pos != tt.pos {
			t.Errorf("%s(%q) = %v, %v; want error code %v (%d) at offset %d", names[tt.mode], tt.in, n, err, tt.code, tt.code, tt.pos)
		}
	}
}

func TestParseRegexLiterals(t *testing.T) {
	// & and ~ are plain characters outside the project dialect.
	for _, tt := range []struct{ in, want string }{
		{`a&b`, `a\&b`},
		{`~a`, `\~a`},
		{`[&~]`, `[&~]`},
	} {
		n, err := ParseRegex(tt.in)
		if err != nil || n.String() != tt.want {
			t.Errorf("ParseRegex(%q) = %v, %v; want %s", tt.in, n, err, tt.want)
		}
	}
}

// patternTests check ParsePattern semantically: accepted and rejected
// decoded strings.
var patternTests = []struct {
	pattern string
	yes, no []string
}{
	{`^\d{3}-\d{4}$`, []string{"555-1234"}, []string{"555-12345", "x555-1234", "５５５-1234"}},
	{`abc`, []string{"abc", "xxabcyy", "\nabc\n"}, []string{"ab", "acb"}},
	{`^abc`, []string{"abc", "abcdef"}, []string{"xabc"}},
	{`abc$`, []string{"abc", "xxabc"}, []string{"abcx"}},
	{`^a|b$`, []string{"a", "ax", "xb", "b"}, []string{"xa", "bx"}},
	{``, []string{"", "anything"}, nil},
	{`^$`, []string{""}, []string{"a"}},
	{`^.$`, []string{"a", "é", "\t", "😀"}, []string{"\n", "\r", "\u2028", "\u2029", "", "ab"}},
	{`^[^]$`, []string{"a", "\n"}, []string{""}},
	{`^[]$`, nil, []string{"", "a"}},
	{`^\s$`, []string{" ", "\t", "\v", "\f", "\u00a0", "\ufeff", "\u2028", "\u3000", "\u1680"}, []string{"a", "\u200b", "\u0085"}},
	{`^\S$`, []string{"a", "\u200b"}, []string{" ", "\u00a0"}},
	{`^\w+$`, []string{"abc_09"}, []string{"é", "a-b"}},
	{`^\u00e9\u{1F600}\x41$`, []string{"é😀A"}, []string{"e😀A"}},
	{`^\uD83D\uDE00$`, []string{"😀"}, []string{"\uFFFD"}},
	{`^\uD83D$`, nil, []string{"\uFFFD", ""}},
	{`^\cJ\0$`, []string{"\n\x00"}, nil},
	{`^a{2}{$`, []string{"aa{"}, []string{"aa"}},
	{`^a{,2}$`, []string{"a{,2}"}, []string{"aa"}},
	{`^x{1,3}?$`, []string{"x", "xxx"}, []string{"xxxx"}},
	{`^[\d-]+$`, []string{"12-3", "-"}, []string{"a", ""}},
	{`^[\w-.]+$`, []string{"a-b.c_1"}, []string{"a+b", ""}},
	{`^[a-\d]$`, []string{"a", "-", "5"}, []string{"b"}},
	{`^\p{Lu}\p{Script=Greek}$`, []string{"Aα"}, []string{"aα", "Aa"}},
	{`^\P{L}$`, []string{"1"}, []string{"a"}},
	{`^[\/\-\.]$`, []string{"/", "-", "."}, []string{"a"}},
	{`^(?<year>\d{4})-(?:0[1-9]|1[0-2])$`, []string{"2024-12"}, []string{"2024-13"}},
	{`[a-z]+@[a-z]+`, []string{"mail me at x@y now"}, []string{"@y"}},
}

func TestParsePattern(t *testing.T) {
	for _, tt := range patternTests {
		n, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Errorf("ParsePattern(%q) error: %v", tt.pattern, err)
			continue
		}
		checkNoBytes(t, tt.pattern, n)
		d := mustCompile(t, n)
		for _, s := range tt.yes {
			if !Matches(d, []byte(s)) {
				t.Errorf("ParsePattern(%q) rejects %q, want accept (regex %s)", tt.pattern, s, n)
			}
		}
		for _, s := range tt.no {
			if Matches(d, []byte(s)) {
				t.Errorf("ParsePattern(%q) accepts %q, want reject (regex %s)", tt.pattern, s, n)
			}
		}
	}
}

// checkNoBytes verifies the ParsePattern contract: only literals of valid
// UTF-8, rune classes and structure (intersections and complements, which
// lookaheads make, included).
func checkNoBytes(t testing.TB, pattern string, n *Node) {
	t.Helper()
	seen := map[*Node]bool{}
	var walk func(*Node)
	walk = func(n *Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch {
		case n.Op == OpBytes:
			t.Fatalf("ParsePattern(%q) contains OpBytes %s", pattern, n)
		case n.Op == OpLiteral && !utf8.Valid(n.Lit):
			t.Fatalf("ParsePattern(%q) contains invalid UTF-8 literal %q", pattern, n.Lit)
		}
		for _, s := range n.Subs {
			walk(s)
		}
	}
	walk(n)
}

// TestEquivalenceGoRegexp compares the DFA of random regexes with Go's
// regexp (anchored as ^(?:…)$) on all short strings over a small alphabet
// and on random walks of the DFA. Only syntax both dialects share is
// generated, and only valid UTF-8 inputs are compared (Go matches a stray
// byte as U+FFFD).
func TestEquivalenceGoRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabet := []string{"a", "b", "c", "é", "\n", "中"}
	var inputs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			gen(prefix+a, n-1)
		}
	}
	gen("", 4)
	iters := 400
	if testing.Short() {
		iters = 60
	}
	for range iters {
		re := randomRegex(rng, 3)
		n, err := ParseRegex(re)
		if err != nil {
			t.Fatalf("ParseRegex(%q) error: %v", re, err)
		}
		d := mustCompile(t, n)
		g := regexp.MustCompile(`^(?:` + re + `)$`)
		compare := func(s string) {
			if got, want := Matches(d, []byte(s)), g.MatchString(s); got != want {
				t.Fatalf("Matches(%q, %q) = %v, Go regexp says %v\nDFA:\n%s", re, s, got, want, d)
			}
		}
		for _, s := range inputs {
			compare(s)
		}
		for range 20 {
			if s := RandomWalk(d, rng, 12); s != nil {
				compare(string(s))
			}
		}
	}
}

// randomRegex generates regex text in the Go/Python common subset.
func randomRegex(rng *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "c", "é", "中", ".", "[ab]", "[^a]", "[a-c]", "[^\\n]", "\\d", "(?:)", "[é-中]"}
	if depth == 0 || rng.IntN(3) == 0 {
		return atoms[rng.IntN(len(atoms))]
	}
	sub := func() string { return randomRegex(rng, depth-1) }
	switch rng.IntN(5) {
	case 0:
		return sub() + sub()
	case 1:
		return "(?:" + sub() + "|" + sub() + ")"
	case 2:
		return "(?:" + sub() + ")" + []string{"*", "+", "?", "{2}", "{0,2}", "{1,}", "*?"}[rng.IntN(7)]
	default:
		return sub() + sub() + sub()
	}
}

// TestProductsAgainstGo checks intersection, difference and complement
// against Go's regexp on the same inputs.
func TestProductsAgainstGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var inputs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, a := range []string{"a", "b", "c", "é"} {
			gen(prefix+a, n-1)
		}
	}
	gen("", 5)
	for range 150 {
		r1, r2 := randomRegex(rng, 3), randomRegex(rng, 3)
		n1, _ := ParseRegex(r1)
		n2, _ := ParseRegex(r2)
		g1 := regexp.MustCompile(`^(?:` + r1 + `)$`)
		g2 := regexp.MustCompile(`^(?:` + r2 + `)$`)
		and := mustCompile(t, And(n1, n2))
		diff := mustCompile(t, Diff(n1, n2))
		not := mustCompile(t, Not(n1))
		if empty, err := IsEmpty(And(n1, n2), Options{}); err != nil || empty != (and.Start == DeadState) {
			t.Fatalf("IsEmpty(%q & %q) = %v, %v; want %v (from the product)", r1, r2, empty, err, and.Start == DeadState)
		}
		for _, s := range inputs {
			m1, m2 := g1.MatchString(s), g2.MatchString(s)
			if got := Matches(and, []byte(s)); got != (m1 && m2) {
				t.Fatalf("Matches(%q & %q, %q) = %v, want %v", r1, r2, s, got, m1 && m2)
			}
			if got := Matches(diff, []byte(s)); got != (m1 && !m2) {
				t.Fatalf("Matches(%q − %q, %q) = %v, want %v", r1, r2, s, got, m1 && !m2)
			}
			if got := Matches(not, []byte(s)); got != !m1 {
				t.Fatalf("Matches(~(%q), %q) = %v, want %v", r1, s, got, !m1)
			}
		}
		// The complement is over all byte strings: invalid UTF-8 is in it.
		if !Matches(not, []byte{0xFF}) || !Matches(not, []byte("a\xC3")) {
			t.Fatalf("~(%q) rejects invalid UTF-8, want accept", r1)
		}
	}
}
