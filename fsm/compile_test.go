package fsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var dfaTests = []struct {
	re   string
	want string
}{
	{`[^\x{0}-\x{10FFFF}]`, "dfa states=1 classes=1 start=0\n"},
	{`(?:)`, "dfa states=2 classes=1 start=1\n1*:\n"},
	{`abc`, "dfa states=5 classes=4 start=1\n1: a->2\n2: b->3\n3: c->4\n4*:\n"},
	{`a[a-z]*`, "dfa states=3 classes=3 start=1\n1: a->2\n2*: a-z->2\n"},
	{`foo|bar|baz`, "dfa states=7 classes=6 start=1\n1: b->2 f->3\n2: a->4\n3: o->5\n4: r,z->6\n5: o->6\n6*:\n"},
	{`(?:a|b)*`, "dfa states=2 classes=2 start=1\n1*: a-b->1\n"},
	{`(?:a*b*)*`, "dfa states=2 classes=2 start=1\n1*: a-b->1\n"},
	{`x{2,3}`, "dfa states=5 classes=2 start=1\n1: x->2\n2: x->3\n3*: x->4\n4*:\n"},
	{`~(a)`, "dfa states=4 classes=2 start=1\n1*: \\x00-`,b-\\xFF->2 a->3\n2*: \\x00-\\xFF->2\n3: \\x00-\\xFF->2\n"},
	{`[ab]*&~(.*aa.*)`, "dfa states=3 classes=3 start=1\n1*: b->1 a->2\n2*: b->1\n"},
	{`\y{80-BF}|\x{80}`, "dfa states=4 classes=4 start=1\n1: \\x80-\\xBF->2 \\xC2->3\n2*:\n3: \\x80->2\n"},
	{`[\x{80}-\x{7FF}]`, "dfa states=4 classes=3 start=1\n1: \\xC2-\\xDF->2\n2: \\x80-\\xBF->3\n3*:\n"},
}

func TestDFAString(t *testing.T) {
	for _, tt := range dfaTests {
		d := mustCompile(t, mustParse(t, tt.re))
		if got := d.String(); got != tt.want {
			t.Errorf("Compile(%q).String() =\n%s\nwant\n%s", tt.re, got, tt.want)
		}
	}
}

var nfaTests = []struct {
	re   string
	want string
}{
	{`ab`, "start 3\n0 fail\n1 match\n2 byte 62 -> 1\n3 byte 61 -> 2\n"},
	{`a|b`, "start 4\n0 fail\n1 match\n2 byte 61 -> 1\n3 byte 62 -> 1\n4 eps -> 2 3\n"},
	{`a*`, "start 2\n0 fail\n1 match\n2 eps -> 3 1\n3 byte 61 -> 2\n"},
	{`a{2,3}`, "start 5\n0 fail\n1 match\n2 byte 61 -> 1\n3 eps -> 2 1\n4 byte 61 -> 3\n5 byte 61 -> 4\n"},
	{`[a-c\x{e9}]`, "start 5\n0 fail\n1 match\n2 byte 61-63 -> 1\n3 byte A9 -> 1\n4 byte C3 -> 3\n5 eps -> 2 4\n"},
	// A byte class of several ranges is one set state.
	{`\y{00,FF}`, "start 2\n0 fail\n1 match\n2 set 00,FF -> 1\n"},
	{`\y{09-0A,0D,20}{0,2}`, "start 5\n0 fail\n1 match\n2 set 09-0A,0D,20 -> 1\n3 eps -> 2 1\n4 set 09-0A,0D,20 -> 3\n5 eps -> 4 1\n"},
}

func TestNFAString(t *testing.T) {
	for _, tt := range nfaTests {
		got, err := DumpNFA(mustParse(t, tt.re), Options{})
		if err != nil {
			t.Fatalf("DumpNFA(%q) error: %v", tt.re, err)
		}
		if got != tt.want {
			t.Errorf("DumpNFA(%q) =\n%s\nwant\n%s", tt.re, got, tt.want)
		}
	}
}

// optionalObject builds a JSON-like object with n optional integer
// properties in fixed order, the way grammar/ does: two continuations per
// suffix (nothing emitted yet / a comma needed), each suffix node shared.
func optionalObject(n int) *Node {
	integer := Cat(Opt(Lit("-")), Alt(Lit("0"), Cat(RuneClass(RuneRange{'1', '9'}), Star(RuneClass(RuneRange{'0', '9'})))))
	first, after := Empty(), Empty()
	for i := n - 1; i >= 0; i-- {
		kv := Cat(Lit(fmt.Sprintf(`"p%d":`, i)), integer)
		first, after = Alt(Cat(kv, after), first), Cat(Opt(Cat(Lit(","), kv)), after)
	}
	return Cat(Lit("{"), first, Lit("}"))
}

func nfaSize(t *testing.T, n *Node) int {
	t.Helper()
	m, err := newCompiler(Options{}).nfaOf(n)
	if err != nil {
		t.Fatalf("nfaOf error: %v", err)
	}
	return len(m.states)
}

func TestOptionalPropertiesLinear(t *testing.T) {
	s100, s200 := nfaSize(t, optionalObject(100)), nfaSize(t, optionalObject(200))
	// Each property costs its key literal (~7 bytes), one integer (~6
	// states) and a few glue states, twice (first and after arms).
	if s200 > 2*s100+200 || s200 > 200*40 {
		t.Errorf("NFA states for 100/200 optional properties = %d/%d, want linear growth (≤ 2×+200) and ≤ %d", s100, s200, 200*40)
	}
	n := optionalObject(200)
	d, err := Compile(n, Options{})
	if err != nil {
		t.Fatalf("Compile(200 optional properties) error: %v", err)
	}
	checkDFA(t, d)
	if d.NumStates() > 200*20 {
		t.Errorf("DFA states for 200 optional properties = %d, want ≤ %d", d.NumStates(), 200*20)
	}
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{`{}`, true},
		{`{"p0":1}`, true},
		{`{"p3":1,"p77":-20,"p199":0}`, true},
		{`{"p199":5}`, true},
		{`{,"p1":1}`, false},
		{`{"p2":1,"p1":1}`, false},
		{`{"p1":1,}`, false},
		{`{"p1":01}`, false},
		{`{"p1":1"p2":2}`, false},
	} {
		if got := Matches(d, []byte(tc.s)); got != tc.want {
			t.Errorf("Matches(200 optional properties, %s) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestUTF8AnyRune(t *testing.T) {
	d := mustCompile(t, AnyRune())
	var buf [4]byte
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		if !Matches(d, buf[:n]) {
			t.Fatalf("AnyRune rejects U+%04X % X", r, buf[:n])
		}
	}
	for _, bad := range [][]byte{
		{0xC0, 0x80}, {0xC1, 0xBF}, {0xE0, 0x80, 0x80}, {0xE0, 0x9F, 0xBF}, // overlong
		{0xF0, 0x80, 0x80, 0x80}, {0xF0, 0x8F, 0xBF, 0xBF}, // overlong
		{0xED, 0xA0, 0x80}, {0xED, 0xBF, 0xBF}, // surrogates
		{0xF4, 0x90, 0x80, 0x80}, {0xF5, 0x80, 0x80, 0x80}, {0xFF}, {0x80}, // out of range, stray
		{0xC3}, {0xE2, 0x82}, {0xF0, 0x9F, 0x98}, // truncated
		{}, {'a', 'b'}, // not one rune
	} {
		if Matches(d, bad) {
			t.Errorf("AnyRune accepts % X", bad)
		}
	}
	// Every 1- and 2-byte string, and random 3- and 4-byte strings.
	want := func(b []byte) bool { return utf8.Valid(b) && utf8.RuneCount(b) == 1 }
	for i := range 1 << 16 {
		b := []byte{byte(i >> 8), byte(i)}
		if got := Matches(d, b); got != want(b) {
			t.Fatalf("Matches(AnyRune, % X) = %v, want %v", b, got, want(b))
		}
		if got := Matches(d, b[1:]); got != want(b[1:]) {
			t.Fatalf("Matches(AnyRune, % X) = %v, want %v", b[1:], got, want(b[1:]))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, 3+rng.IntN(2))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if i > 0 && rng.IntN(3) > 0 {
				b[i] = 0x80 | byte(rng.IntN(64))
			}
		}
		if got := Matches(d, b); got != want(b) {
			t.Fatalf("Matches(AnyRune, % X) = %v, want %v", b, got, want(b))
		}
	}
}

func TestUTF8RandomClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	edges := []rune{0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0x10FFFF}
	pick := func() rune {
		if rng.IntN(2) == 0 {
			return edges[rng.IntN(len(edges))] + rune(rng.IntN(3)) - 1
		}
		return rune(rng.IntN(utf8.MaxRune + 1))
	}
	for range 200 {
		var rs []RuneRange
		for range 1 + rng.IntN(4) {
			a, b := pick(), pick()
			if a > b {
				a, b = b, a
			}
			rs = append(rs, RuneRange{a, b})
		}
		n := RuneClass(rs...)
		d := mustCompile(t, n)
		in := func(r rune) bool {
			for _, x := range rs {
				if r >= x.Lo && r <= x.Hi {
					return utf8.ValidRune(r)
				}
			}
			return false
		}
		var buf [4]byte
		for range 500 {
			r := pick()
			if r < 0 || r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
				continue
			}
			k := utf8.EncodeRune(buf[:], r)
			if got := Matches(d, buf[:k]); got != in(r) {
				t.Fatalf("Matches(%s, U+%04X) = %v, want %v", n, r, got, in(r))
			}
		}
	}
}

func TestCanonical(t *testing.T) {
	groups := [][]string{
		{`(?:a|b)*`, `(?:a*b*)*`, `[ab]*`, `(?:[ab]*)*|a`},
		{`a+`, `aa*`, `a*a`, `a{1,}`},
		{`(?:ab|ac)d`, `a[bc]d`, `a(?:b|c)d`},
		{`\d{2,4}`, `[0-9][0-9][0-9]?[0-9]?`},
		{`[a-z]+&[a-c]+`, `[a-c]+`},
		{`~(~(abc))`, `abc`},
	}
	for _, g := range groups {
		want := mustCompile(t, mustParse(t, g[0])).String()
		for _, re := range g[1:] {
			if got := mustCompile(t, mustParse(t, re)).String(); got != want {
				t.Errorf("Compile(%q).String() =\n%s\nwant (same as %q)\n%s", re, got, g[0], want)
			}
		}
	}
}

func TestIsEmpty(t *testing.T) {
	for _, tt := range []struct {
		n    *Node
		want bool
	}{
		{NoMatch(), true},
		{Empty(), false},
		{And(Lit("a"), Lit("b")), true},
		{And(mustParse(t, `[a-z]+`), mustParse(t, `[0-9]+`)), true},
		{And(mustParse(t, `[a-z]+`), mustParse(t, `.*q.*`)), false},
		{Diff(mustParse(t, `a|b`), mustParse(t, `[ab]`)), true},
		{Diff(mustParse(t, `a|b|c`), mustParse(t, `[ab]`)), false},
		{And(Not(Empty()), Empty()), true},
		{Cat(Lit("x"), And(Lit("a"), Lit("b"))), true},
		{And(mustParse(t, `[a-c]+`), mustParse(t, `[b-d]+`), mustParse(t, `[c-e]+`)), false},
		{And(mustParse(t, `[a-c]+`), mustParse(t, `[b-d]+`), mustParse(t, `[d-e]+`)), true},
	} {
		got, err := IsEmpty(tt.n, Options{MaxDFAStates: 100_000})
		if err != nil || got != tt.want {
			t.Errorf("IsEmpty(%s) = %v, %v; want %v, nil", tt.n, got, err, tt.want)
		}
	}
}

func TestIsEmptyEarlyExit(t *testing.T) {
	// The full product exceeds the budget, but a common string is found
	// long before: IsEmpty must answer without building the product.
	n := And(mustParse(t, `[ab]*a[ab]{10}`), mustParse(t, `(?:[ab]{3})*`))
	opts := Options{MaxDFAStates: 5000}
	if _, err := Compile(n, opts); err == nil {
		t.Fatalf("Compile(%s) under %d states succeeded; the test needs a product over budget", n, opts.MaxDFAStates)
	}
	if empty, err := IsEmpty(n, opts); err != nil || empty {
		t.Errorf("IsEmpty(%s) = %v, %v; want false, nil", n, empty, err)
	}
}

func TestShortestMatch(t *testing.T) {
	for _, tt := range []struct {
		re   string
		want string
		ok   bool
	}{
		{`abc|ab|b`, "b", true},
		{`(?:)`, "", true},
		{`[^\x{0}-\x{10FFFF}]`, "", false},
		{`x{3}y*`, "xxx", true},
		{`[b-z]a+`, "ba", true},
		{`é`, "é", true},
	} {
		got, ok := ShortestMatch(mustCompile(t, mustParse(t, tt.re)))
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("ShortestMatch(%q) = %q, %v; want %q, %v", tt.re, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRandomWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, re := range []string{`[a-z]{3,8}@[a-z]+\.(?:com|org)`, `(?:ab|c)*d`, `.{20}`, `\d{4}-\d{2}-\d{2}`, `(?:)`} {
		d := mustCompile(t, mustParse(t, re))
		lengths := map[int]bool{}
		for range 200 {
			s := RandomWalk(d, rng, 30)
			if !Matches(d, s) {
				t.Fatalf("RandomWalk(%q) = %q, not accepted", re, s)
			}
			if len(s) > 30 && !strings.HasPrefix(re, ".{20}") {
				t.Fatalf("RandomWalk(%q, maxLen 30) = %q, longer than 30", re, s)
			}
			lengths[len(s)] = true
		}
		if re == `(?:ab|c)*d` && len(lengths) < 5 {
			t.Errorf("RandomWalk(%q) produced only lengths %v, want variety", re, lengths)
		}
	}
	if s := RandomWalk(emptyDFA(), rng, 10); s != nil {
		t.Errorf("RandomWalk(empty language) = %q, want nil", s)
	}
}

func TestBudgets(t *testing.T) {
	deep := Lit("x")
	for range 20000 {
		deep = &Node{Op: OpConcat, Subs: []*Node{Lit("a"), deep}}
	}
	for _, tt := range []struct {
		name  string
		n     *Node
		opts  Options
		code  ErrorCode
		limit int64
	}{
		{"blowup", mustParse(t, `[ab]*a[ab]{20}`), Options{}, ErrTooManyDFAStates, DefaultMaxDFAStates},
		{"blowup-small", mustParse(t, `[ab]*a[ab]{12}`), Options{MaxDFAStates: 1000}, ErrTooManyDFAStates, 1000},
		{"work", mustParse(t, `[ab]*a[ab]{12}`), Options{MaxWork: 5000}, ErrTooMuchWork, 5000},
		{"nfa", mustParse(t, `(?:abcdefgh){100}`), Options{MaxNFAStates: 500}, ErrTooManyNFAStates, 500},
		{"repeat", mustParse(t, `a{20000}`), Options{}, ErrRepeatTooLarge, DefaultMaxRepeat},
		{"repeat-small", mustParse(t, `a{2,11}`), Options{MaxRepeat: 10}, ErrRepeatTooLarge, 10},
		{"deep", deep, Options{}, ErrTooDeep, DefaultMaxDepth},
		{"bytes", mustParse(t, `[ab]*a[ab]{12}`), Options{MaxDFABytes: 4 << 10}, ErrTooManyDFABytes, 4 << 10},
		{"product", mustParse(t, `[ab]*a[ab]{8}&[ab]*b[ab]{8}`), Options{MaxDFAStates: 600}, ErrTooManyDFAStates, 600},
		{"timeout", mustParse(t, `[ab]*a[ab]{20}`), Options{Timeout: time.Nanosecond}, ErrTimeout, 0},
	} {
		start := time.Now()
		d, err := Compile(tt.n, tt.opts)
		code, ok := errCode(err)
		if d != nil || !ok || code != tt.code {
			t.Errorf("%s: Compile = %v, %v; want nil, code %v", tt.name, d, err, tt.code)
			continue
		}
		e := err.(*Error)
		if tt.limit != 0 && (e.Limit != tt.limit || e.Size <= e.Limit) {
			t.Errorf("%s: error %v has Limit %d, Size %d; want Limit %d and Size > Limit", tt.name, err, e.Limit, e.Size, tt.limit)
		}
		t.Logf("%s: %v after %v", tt.name, err, time.Since(start))
	}
}

func TestInvalidNodes(t *testing.T) {
	for _, n := range []*Node{
		nil,
		{Op: OpRepeat, Min: 0, Max: -1},
		{Op: OpNot},
		{Op: OpAnd},
		{Op: Op(99)},
		Cat(Lit("a"), &Node{Op: OpConcat, Subs: []*Node{nil}}),
	} {
		_, err := Compile(n, Options{})
		if code, ok := errCode(err); !ok || code != ErrInvalidNode {
			t.Errorf("Compile(%s) error = %v, want ErrInvalidNode", n, err)
		}
	}
}

func TestMalformedRanges(t *testing.T) {
	// Nodes built without the constructors: unsorted, reversed, surrogate
	// and out-of-range rune ranges must not panic or match surrogates.
	n := &Node{Op: OpRunes, Runes: []RuneRange{{'z', 'a'}, {0xD000, 0xE0FF}, {0x10FFF0, 0x7FFFFFFF}, {-5, 'A'}}}
	d := mustCompile(t, n)
	for _, tc := range []struct {
		s    string
		want bool
	}{{"A", true}, {"\x00", true}, {"b", false}, {"\uD7FF", true}, {"\uE000", true}, {"\U0010FFFF", true}, {"\xED\xA0\x80", false}} {
		if got := Matches(d, []byte(tc.s)); got != tc.want {
			t.Errorf("Matches(malformed class, %q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestConcurrentCompile compiles one shared AST from several goroutines:
// Compile keeps all its state per call (run with -race to check).
func TestConcurrentCompile(t *testing.T) {
	n := optionalObject(20)
	want := mustCompile(t, n).String()
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			d, err := Compile(n, Options{})
			switch {
			case err != nil:
				errs <- err.Error()
			case d.String() != want:
				errs <- "different DFA"
			default:
				errs <- ""
			}
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Errorf("concurrent Compile: %s", e)
		}
	}
}

// TestRepeatTemplate checks that repeats stamped from one built fragment
// (copyOf, from repeatTemplateMin copies) give the same automaton as the
// repeat written out by hand, for fragments with loops, alternations,
// multi-byte classes and spliced intersections.
func TestRepeatTemplate(t *testing.T) {
	xs := map[string]*Node{
		"class":   mustParse(t, `[^"\\\x{0}-\x{1F}]`),
		"char":    mustParse(t, `[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}`),
		"loop":    mustParse(t, `a[bc]*d`),
		"spliced": And(mustParse(t, `[a-z]+,`), mustParse(t, `[^q]{1,3},`)),
	}
	unrolled := func(x *Node, lo, hi int) *Node {
		var tail *Node = Empty()
		for range hi - lo {
			tail = Opt(Cat(x, tail))
		}
		parts := []*Node{}
		for range lo {
			parts = append(parts, x)
		}
		return Cat(append(parts, tail)...)
	}
	for name, x := range xs {
		for _, r := range [][2]int{{0, repeatTemplateMin}, {2, 11}, {repeatTemplateMin, repeatTemplateMin}, {9, 20}} {
			got := mustCompile(t, Cat(Lit("<"), Repeat(x, r[0], r[1]), Lit(">"))).String()
			want := mustCompile(t, Cat(Lit("<"), unrolled(x, r[0], r[1]), Lit(">"))).String()
			if got != want {
				t.Errorf("%s{%d,%d}: stamped repeat differs from the unrolled one:\n%s\nwant\n%s", name, r[0], r[1], got, want)
			}
		}
	}
}

// TestComplementAndDifference: a complement is only trimmed (its operand is
// minimal), so ¬¬x must give x's DFA exactly; and a ∧ ¬b, built as one
// difference product, must equal the intersection with the complement.
func TestComplementAndDifference(t *testing.T) {
	exprs := []string{`[\x00-\xff]*a`, `(?:a|[^a])*b[\x00-\xff]*`, `a*`, `[\x00-\xff]*`, `"[a-z]{2,5}"`, `name|namespace|id`, ``}
	for _, x := range exprs {
		dd := mustCompile(t, Not(Not(mustParse(t, x))))
		checkDFA(t, dd)
		if want := mustCompile(t, mustParse(t, x)); dd.String() != want.String() {
			t.Errorf("¬¬(%s) differs from %s:\n%s\nwant\n%s", x, x, dd, want)
		}
		for _, y := range exprs {
			got := mustCompile(t, And(mustParse(t, x), Not(mustParse(t, y))))
			checkDFA(t, got)
			c := newCompiler(Options{})
			a, b := mustDFAOf(t, c, mustParse(t, x)), mustDFAOf(t, c, mustParse(t, y))
			nb, err := c.complement(b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.intersect(a, nb)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s ∧ ¬(%s): difference product differs from the intersection with the complement:\n%s\nwant\n%s", x, y, got, want)
			}
		}
	}
}

// TestSubtractStrings checks the trie difference (a minus a finite set of
// strings) against the general difference product, and that Compile
// finishes its loose result.
func TestSubtractStrings(t *testing.T) {
	as := []string{`"[^"\\]*"`, `[\x00-\xff]*`, `[a-z]{1,4}`, `abc|abd|x`, `(?:é|e)+`, `a*`}
	subs := []*Node{
		Lit("abc"),
		Alt(Lit("a"), Lit("ab"), Lit("abd"), Lit("")),
		Cat(Lit(`"`), Alt(Lit("name"), Lit("id")), Lit(`"`)),
		Cat(Lit(`"`), RuneClass(RuneRange{'é', 'é'}), Lit(`"`)),
		Cat(RuneClass(RuneRange{'a', 'c'}, RuneRange{'é', 'ê'}), Lit("e")),
		ByteClass(ByteRange{'x', 'z'}),
		Empty(),
	}
	for _, x := range as {
		for _, y := range subs {
			if _, ok := finiteStrings(y); !ok {
				t.Fatalf("finiteStrings(%s) failed", y)
			}
			got := mustCompile(t, And(mustParse(t, x), Not(y)))
			checkDFA(t, got)
			c := newCompiler(Options{})
			want, err := c.difference(mustDFAOf(t, c, mustParse(t, x)), mustDFAOf(t, c, y))
			if err != nil {
				t.Fatal(err)
			}
			// The same states and bytes; the class partitions may differ.
			body := func(d *DFA) string { s := d.String(); return s[strings.IndexByte(s, '\n'):] }
			if body(got) != body(want) || got.Start != want.Start {
				t.Errorf("%s ∧ ¬(%s): trie difference differs from the product:\n%s\nwant\n%s", x, y, got, want)
			}
			// Unfinished, it is as small: every state it has is spliced
			// (and stamped per any-order subset) into lazy NFAs.
			raw := mustDFAOf(t, newCompiler(Options{}), And(mustParse(t, x), Not(y)))
			if raw.NumStates() != want.NumStates() {
				t.Errorf("%s ∧ ¬(%s): the trie difference has %d states, the minimal DFA %d", x, y, raw.NumStates(), want.NumStates())
			}
		}
	}
	// Too many strings: the general path.
	if _, ok := finiteStrings(Repeat(ByteClass(ByteRange{0, 255}), 2, 2)); ok {
		t.Error("finiteStrings accepted a repeat")
	}
	if _, ok := finiteStrings(Cat(ByteClass(ByteRange{0, 255}), ByteClass(ByteRange{0, 255}))); ok {
		t.Error("finiteStrings accepted 65,536 strings")
	}
}

// TestPinnedDFA checks that a pinned node's DFA is shared across compiles
// and not reused past a smaller budget.
func TestPinnedDFA(t *testing.T) {
	str := Pin(Cat(Lit(`"`), Star(RuneClass(RuneRange{'a', 'z'})), Lit(`"`)))
	n := Diff(str, Lit(`"id"`))
	c1, c2 := newCompiler(Options{}), newCompiler(Options{})
	if _, err := c1.dfaOf(n); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.dfaOf(Diff(str, Lit(`"x"`))); err != nil {
		t.Fatal(err)
	}
	if c1.dfas[str] == nil || c1.dfas[str] != c2.dfas[str] {
		t.Errorf("the pinned node's DFA was built twice")
	}
	_, err := Compile(Diff(str, Lit(`"x"`)), Options{MaxDFAStates: 2})
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != ErrTooManyDFAStates {
		t.Errorf("a pinned DFA over the budget: got %v, want %s", err, ErrTooManyDFAStates)
	}
}

// mustDFAOf compiles n with c.
func mustDFAOf(t testing.TB, c *compiler, n *Node) *DFA {
	t.Helper()
	d, err := c.dfaOf(n)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPinnedDFAConcurrent compiles differences of one pinned node from
// several goroutines (run with -race): the shared DFA is only read.
func TestPinnedDFAConcurrent(t *testing.T) {
	str := Pin(Cat(Lit(`"`), Star(RuneClass(RuneRange{'a', 'z'})), Lit(`"`)))
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			name := `"` + strings.Repeat("ab", i+1) + `"`
			d, err := Compile(Diff(str, Lit(name)), Options{})
			if err == nil && (Matches(d, []byte(name)) || !Matches(d, []byte(`"x"`))) {
				err = fmt.Errorf("%s: wrong language", name)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSetStates: a byte class of several ranges, built as one set state,
// has the language of the alternation of its ranges built as byte states
// (equal canonical minimized DFAs), alone and inside repeats, alternations,
// intersections, complements and deferred nodes, for random classes that
// touch 0x00 and 0xFF and ranges that are adjacent after sorting.
func TestSetStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	randClass := func() []ByteRange {
		var rs []ByteRange
		for range 2 + rng.IntN(5) {
			lo := byte(rng.IntN(256))
			switch rng.IntN(6) {
			case 0:
				lo = 0
			case 1:
				lo = 0xFF
			}
			hi := lo
			if rng.IntN(2) == 0 {
				hi = byte(min(255, int(lo)+rng.IntN(40)))
			}
			rs = append(rs, ByteRange{lo, hi})
		}
		return rs
	}
	asAlt := func(rs []ByteRange) *Node {
		var alts []*Node
		for _, r := range rs {
			alts = append(alts, ByteClass(r))
		}
		return Alt(alts...)
	}
	shapes := []func(c, d *Node) *Node{
		func(c, d *Node) *Node { return c },
		func(c, d *Node) *Node { return Cat(Repeat(c, 0, 4), Lit("x")) },
		func(c, d *Node) *Node { return Plus(Alt(Cat(c, d), Lit("ab"))) },
		func(c, d *Node) *Node { return And(Star(c), Star(d)) },
		func(c, d *Node) *Node { return Cat(Not(Cat(c, d)), Lit("z")) },
		func(c, d *Node) *Node { return Cat(Lit("["), Defer(Repeat(c, 1, 3)), Lit("]"), Defer(d)) },
	}
	for i := range 60 {
		a, b := randClass(), randClass()
		for j, shape := range shapes {
			set := shape(ByteClass(a...), ByteClass(b...))
			alt := shape(asAlt(a), asAlt(b))
			dSet, errSet := Compile(set, Options{})
			dAlt, errAlt := Compile(alt, Options{})
			if (errSet == nil) != (errAlt == nil) {
				t.Fatalf("case %d shape %d: errors %v / %v", i, j, errSet, errAlt)
			}
			if errSet != nil {
				continue
			}
			if g, w := dSet.String(), dAlt.String(); g != w {
				t.Fatalf("case %d shape %d, classes %v %v: set states give\n%s\nranges give\n%s", i, j, a, b, g, w)
			}
		}
	}
}
