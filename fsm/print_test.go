package fsm

import "testing"

var printTests = []struct {
	n    *Node
	str  string
	dump string
}{
	{NoMatch(), `[^\x{0}-\x{10FFFF}]`, `nomatch{}`},
	{Empty(), `(?:)`, `empty{}`},
	{Lit("abc"), `abc`, `lit{"abc"}`},
	{Lit(`a.b*c\`), `a\.b\*c\\`, `lit{"a.b*c\\"}`},
	{Lit("&~{}^$"), `\&\~\{\}\^\$`, `lit{"&~{}^$"}`},
	{Lit("é\n\x00"), `é\n\x{0}`, `lit{"é\n\x00"}`},
	{LitBytes([]byte{'a', 0xFF, 0xC3}), `a\y{FF}\y{C3}`, `lit{"a\xff\xc3"}`},
	{RuneClass(RuneRange{'a', 'z'}, RuneRange{'0', '9'}), `[0-9a-z]`, `runes{30-39 61-7A}`},
	{RuneClass(RuneRange{']', ']'}, RuneRange{'-', '-'}, RuneRange{'^', '^'}), `[\-\]\^]`, `runes{2D 5D-5E}`},
	{AnyRune(), `[\x{0}-\x{10FFFF}]`, `runes{0-D7FF E000-10FFFF}`},
	{RuneClass(RuneRange{0, '!'}, RuneRange{'#', '['}, RuneRange{']', 0x10FFFF}), `[^"\\]`, `runes{0-21 23-5B 5D-D7FF E000-10FFFF}`},
	{RuneClass(RuneRange{0x80, 0x9F}), `[\x{80}-\x{9F}]`, `runes{80-9F}`},
	{RuneClass(RuneRange{'*', '*'}), `\*`, `runes{2A}`},
	{Star(RuneClass(RuneRange{0x85, 0x85})), `\x{85}*`, `star{runes{85}}`},
	{ByteClass(ByteRange{0x80, 0xBF}, ByteRange{0xFF, 0xFF}), `\y{80-BF,FF}`, `bytes{80-BF FF}`},
	{Cat(Lit("a"), Star(Lit("bc")), Opt(Lit("d"))), `a(?:bc)*d?`, `cat{lit{"a"}star{lit{"bc"}}quest{lit{"d"}}}`},
	{Alt(Lit("a"), Cat(Lit("b"), Alt(Lit("c"), Lit("d")))), `a|b(?:c|d)`, `alt{lit{"a"}cat{lit{"b"}alt{lit{"c"}lit{"d"}}}}`},
	{Alt(And(Lit("ab"), Lit("cd")), Lit("e")), `ab&cd|e`, `alt{and{lit{"ab"}lit{"cd"}}lit{"e"}}`},
	{And(Alt(Lit("a"), Lit("b")), Plus(RuneClass(RuneRange{'a', 'a'}))), `(?:a|b)&a+`, `and{alt{lit{"a"}lit{"b"}}plus{runes{61}}}`},
	{Not(Cat(Lit("a"), Star(Lit("b")))), `~(ab*)`, `not{cat{lit{"a"}star{lit{"b"}}}}`},
	{Repeat(Lit("x"), 2, 5), `x{2,5}`, `rep{2,5 lit{"x"}}`},
	{Repeat(Lit("x"), 3, 3), `x{3}`, `rep{3,3 lit{"x"}}`},
	{Repeat(Lit("x"), 3, -1), `x{3,}`, `rep{3,-1 lit{"x"}}`},
	{Star(Plus(Lit("x"))), `(?:x+)*`, `star{plus{lit{"x"}}}`},
	{Star(Empty()), `(?:)`, `empty{}`},
	{Cat(Lit("a"), Empty(), Lit("b")), `ab`, `lit{"ab"}`},
	{Alt(Lit("a"), Empty()), `a|(?:)`, `alt{lit{"a"}empty{}}`},
	{Not(Not(Lit("a"))), `a`, `lit{"a"}`},
	{Star(Lit("é")), `é*`, `star{lit{"é"}}`},
}

func TestString(t *testing.T) {
	for _, tt := range printTests {
		if got := tt.n.String(); got != tt.str {
			t.Errorf("%s.String() = %q, want %q", tt.dump, got, tt.str)
		}
		if got := tt.n.Dump(); got != tt.dump {
			t.Errorf("(%s).Dump() = %q, want %q", tt.str, got, tt.dump)
		}
	}
}

func TestStringNil(t *testing.T) {
	n := &Node{Op: OpRepeat, Min: 0, Max: -1}
	if got, want := n.String(), "(?:<nil>)*"; got != want {
		t.Errorf("malformed repeat String() = %q, want %q", got, want)
	}
}

func TestStringTruncates(t *testing.T) {
	// A DAG whose unfolding doubles per level: 40 levels would be 2^40 leaves.
	n := Lit("abcdefgh")
	for range 40 {
		n = Alt(Cat(n, Lit("x")), Cat(Lit("y"), n))
	}
	s := n.String()
	if len(s) > maxPrintLen+1024 || s[len(s)-len("…"):] != "…" {
		t.Errorf("String of exponential DAG: len %d, suffix %q; want truncated near %d ending in …", len(s), s[len(s)-8:], maxPrintLen)
	}
}

func TestStringDeep(t *testing.T) {
	n := Lit("x")
	for range 3 * maxPrintDepth {
		n = &Node{Op: OpNot, Subs: []*Node{n}}
	}
	for _, s := range []string{n.String(), n.Dump()} {
		if len(s) > 20*maxPrintDepth || s[len(s)-len("…"):] != "…" {
			t.Errorf("String/Dump of a %d-deep AST: len %d, want truncated with …", 3*maxPrintDepth, len(s))
		}
	}
}
