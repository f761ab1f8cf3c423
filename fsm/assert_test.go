package fsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// assertPatterns are patterns with anchors inside the pattern and
// lookaheads, most of them from MaskBench schemas, each compared with
// regexp2 (ECMAScript mode) on every string over alphabet up to maxLen
// characters.
var assertPatterns = []struct {
	pattern, alphabet string
	maxLen            int
}{
	{`^$|(^(?:\S+\s+){0,3}\S+$)`, "a b", 7},
	{`(^[0-9]+\.[0-9]+$)`, "1.x", 6},
	{`(^$)|(^[a-f0-9]{2}-[a-f0-9]{2}$)`, "a0-g", 6},
	{`^([0-9x]+\.[0-9x]+\.*[0-9x]*$|\%VERSION\%)`, "1x.%V", 6},
	{`^(\/?((\.{2})|([a-z0-9\-]*))($|\/))*$`, "/.a-", 6},
	{`^$[a-z$_]*$`, "a$_", 4},
	{`^([^,]|$)`, ",a", 4},
	{`(^gs://(.+))|(^http://(.+))`, "gs:/ht", 7},
	{`/^[0-9]{4}$/`, "/1", 6},
	{`a$b`, "ab", 4},
	{`a^b`, "ab", 4},
	{`$^`, "a", 2},
	{`(a|^)b`, "ab", 4},
	{`(a|$)b?`, "ab", 4},
	{`(^|x)(y|$)`, "xy", 4},
	{`(^a)*b`, "ab", 5},
	{`(a$)*`, "ab", 4},
	{`(^|a)*$`, "ab", 4},
	{`(^|a){2,3}b`, "ab", 5},
	{`((^)|(a$))+`, "ab", 4},
	{`^((?!ab).)*$`, "abc", 6},
	{`^((?!a|bc).)+$`, "abc", 5},
	{`^((?=a).)*$`, "ab", 4},
	{`^((?!b$).)*$`, "ab", 5},
	{`^(?!ab|ba)`, "abc", 4},
	{`^(?!aa)[a-c]*$`, "abc", 4},
	{`^(?=[^=]+$)(?!\s+$)(.|\n)+$`, "a= ", 4},
	{`^(?!^ab\.|bc\.).*`, "abc.", 5},
	{`((?:[^/]*/)*)(?=\.(ab|b))`, "/.ab", 6},
	{`^(?!.*(\{a\}|\{b\}))`, "{ab}", 6},
	{`^(?![a|A][b|B])`, "aAbB|", 3},
	{`x(?=ab)`, "xab", 5},
	{`(?!a)b`, "ab", 4},
	{`^(?=.*a)(?=.*b).{2,3}$`, "abc", 4},
	{`^(?!a).(?!b)`, "ab", 4},
	{`(?=a$)`, "ab", 3},
	{`\ba`, "a-", 4},
	{`a\b`, "a-", 4},
	{`\ba\b`, "a-", 5},
	{`\Ba`, "a-", 4},
	{`a\B-`, "a-", 4},
	{`^\b`, "a-", 3},
	{`\b$`, "a-", 3},
	{`^\B$`, "a-", 2},
	{`\b\B`, "a-", 3},
	{`\b`, "a- ", 3},
	{`-\b-`, "a-", 4},
	{`(a|-)\b(a|-)`, "a-", 4},
	{`^a*\b-*$`, "a-", 5},
	{`x\b(?!a)`, "xa-", 4},
	{`x\b(?=-|$)`, "xa-", 4},
	{`a$\b`, "a-", 3},
	{`\b^a`, "a-", 3},
	{`^h?:[-a.]{1,3}\.a{1,2}\b([-a.]*)$`, "ha-.:", 7}, // the shape of MaskBench dein.json's URL pattern
}

// TestPatternWordBoundaryWide: a non-ASCII character (some validators,
// regexp2 and Python's re, read letters of every script as word
// characters; ECMA-262 reads ASCII) is next to no \b and no \B, so that
// every accepted string satisfies both readings.
func TestPatternWordBoundaryWide(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		in      map[string]bool
	}{
		{`\bfoo`, map[string]bool{"foo": true, "-foo": true, "a foo": true, "ơfoo": false, "éfoo": false, "\u0352foo": false, "xfoo": false}},
		{`\Bfoo`, map[string]bool{"xfoo": true, "ơfoo": false, "-foo": false, "foo": false}},
		{`^é\b`, map[string]bool{"é": false, "é-": false}},
		{`^aé`, map[string]bool{"aé": true}},
		{`^a\bé?$`, map[string]bool{"a": true, "aé": false}},
		{`x\b.`, map[string]bool{"x-": true, "xé": false, "x\u200d": false, "x\u00a0": false, "x\u2026": false, "x\x7f": true}},
	} {
		n, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", tt.pattern, err)
		}
		d := mustCompile(t, n)
		for s, want := range tt.in {
			if got := Matches(d, []byte(s)); got != want {
				t.Errorf("ParsePattern(%q) on %q = %v, want %v", tt.pattern, s, got, want)
			}
		}
	}
}

func TestPatternAssertions(t *testing.T) {
	for _, tt := range assertPatterns {
		n, err := ParsePattern(tt.pattern)
		if err != nil {
			t.Errorf("ParsePattern(%q) error: %v", tt.pattern, err)
			continue
		}
		checkPatternNodes(t, tt.pattern, n)
		d := mustCompile(t, n)
		if !compareRegexp2(t, tt.pattern, d, []rune(tt.alphabet), tt.maxLen) {
			t.Errorf("regexp2 timed out on %q", tt.pattern)
		}
	}
}

// compareRegexp2 checks that d and the ECMA regex pattern (search
// semantics) agree on every string over alphabet of at most maxLen
// characters. It returns false, having checked nothing conclusive, when
// regexp2's backtracking runs past its timeout on some string (nested
// quantifiers of nullable groups are exponential for it).
func compareRegexp2(t *testing.T, pattern string, d *DFA, alphabet []rune, maxLen int) bool {
	t.Helper()
	re := regexp2.MustCompile(pattern, regexp2.ECMAScript)
	re.MatchTimeout = 100 * time.Millisecond
	bad := 0
	timedOut := false
	var s []rune
	var rec func()
	rec = func() {
		if timedOut {
			return
		}
		str := string(s)
		want, err := re.MatchString(str)
		if err != nil {
			timedOut = true
			return
		}
		if got := Matches(d, []byte(str)); got != want && bad < 5 {
			bad++
			t.Errorf("ParsePattern(%q) on %q = %v, regexp2 says %v", pattern, str, got, want)
		}
		if len(s) == maxLen {
			return
		}
		for _, c := range alphabet {
			s = append(s, c)
			rec()
			s = s[:len(s)-1]
		}
	}
	rec()
	return !timedOut
}

// checkPatternNodes verifies the ParsePattern contract: no markers left,
// no raw bytes, literals of valid UTF-8.
func checkPatternNodes(t testing.TB, pattern string, n *Node) {
	t.Helper()
	seen := map[*Node]bool{}
	var walk func(*Node)
	walk = func(n *Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch n.Op {
		case opAssertBegin, opAssertEnd, opLookahead:
			t.Fatalf("ParsePattern(%q) left an assertion marker", pattern)
		}
		for _, s := range n.Subs {
			walk(s)
		}
	}
	walk(n)
	checkNoBytes(t, pattern, n)
}

// TestPatternAssertionsRandom compares random patterns with anchors and
// lookaheads in every position with regexp2: each one ParsePattern
// accepts must agree with it on every short string; the ones it refuses
// must be refused with ErrUnsupported.
func TestPatternAssertionsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	n := 600
	if testing.Short() {
		n = 150
	}
	alphabet := []rune("abc")
	checked, refused := 0, 0
	for i := 0; i < n; i++ {
		p := randAssertPattern(rng, 3)
		if _, err := regexp2.Compile(p, regexp2.ECMAScript); err != nil {
			continue // not ECMA-262 (a quantified anchor, say)
		}
		switch comparePatternRandom(t, p, alphabet) {
		case randCompared:
			checked++
		case randRefused:
			refused++
		}
	}
	t.Logf("%d patterns compared with regexp2, %d refused", checked, refused)
	if checked < n/3 {
		t.Errorf("only %d of %d random patterns compared", checked, n)
	}
}

// TestPatternWordBoundaryRandom: random patterns with \b and \B between
// their top-level pieces (and now and then inside a group, which must be
// refused) against regexp2 on every short string over a word character,
// another one and a non-word character.
func TestPatternWordBoundaryRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	n := 400
	if testing.Short() {
		n = 100
	}
	checked, refused := 0, 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := rng.IntN(3) + 1; k > 0; k-- {
			switch rng.IntN(4) {
			case 0:
				b.WriteString(`\b`)
			case 1:
				b.WriteString(`\B`)
			}
			piece := randAssertPattern(rng, 2)
			if rng.IntN(8) == 0 {
				piece = `(` + piece + `|\b-)`
			}
			b.WriteString(piece)
		}
		if rng.IntN(2) == 0 {
			b.WriteString([]string{`\b`, `\B`}[rng.IntN(2)])
		}
		p := b.String()
		if _, err := regexp2.Compile(p, regexp2.ECMAScript); err != nil {
			continue
		}
		switch comparePatternRandom(t, p, []rune("ab-")) {
		case randCompared:
			checked++
		case randRefused:
			refused++
		}
	}
	t.Logf("%d patterns with word boundaries compared with regexp2, %d refused", checked, refused)
	if checked < n/3 {
		t.Errorf("only %d of %d random patterns compared", checked, n)
	}
}

// The outcomes of comparePatternRandom.
const (
	randCompared = iota
	randRefused
	randInconclusive // an error reported, or regexp2 timed out
)

// comparePatternRandom parses and compiles the random ECMA pattern p and
// compares it with regexp2 on every string over alphabet of at most 5
// characters; a refusal must be ErrUnsupported.
func comparePatternRandom(t *testing.T, p string, alphabet []rune) int {
	t.Helper()
	node, err := ParsePattern(p)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrUnsupported {
			t.Errorf("ParsePattern(%q) error %v, want ErrUnsupported or success", p, err)
		}
		return randRefused
	}
	checkPatternNodes(t, p, node)
	d, err := Compile(node, Options{})
	if err != nil {
		t.Errorf("Compile(ParsePattern(%q)): %v", p, err)
		return randInconclusive
	}
	if !compareRegexp2(t, p, d, alphabet, 5) {
		return randInconclusive
	}
	return randCompared
}

// randAssertPattern writes a random ECMA pattern over a, b, c with
// anchors, lookaheads, groups, alternation and quantifiers.
func randAssertPattern(rng *rand.Rand, depth int) string {
	var b strings.Builder
	items := 1 + rng.IntN(3)
	for i := 0; i < items; i++ {
		switch k := rng.IntN(12); {
		case k < 4:
			b.WriteByte("abc."[rng.IntN(4)])
		case k == 4:
			b.WriteString("[ab]")
		case k == 5:
			b.WriteByte('^')
			continue
		case k == 6:
			b.WriteByte('$')
			continue
		case depth > 0 && k == 7:
			fmt.Fprintf(&b, "(?%c%s)", "=!"[rng.IntN(2)], randAssertPattern(rng, depth-1))
			continue
		case depth > 0 && k == 8:
			fmt.Fprintf(&b, "((?%c%s).)", "=!"[rng.IntN(2)], randAssertPattern(rng, depth-1))
		case depth > 0:
			alts := []string{randAssertPattern(rng, depth-1)}
			if rng.IntN(2) == 0 {
				alts = append(alts, randAssertPattern(rng, depth-1))
			}
			fmt.Fprintf(&b, "(%s)", strings.Join(alts, "|"))
		default:
			b.WriteByte('b')
		}
		switch rng.IntN(6) {
		case 0:
			b.WriteByte('*')
		case 1:
			b.WriteByte('+')
		case 2:
			b.WriteByte('?')
		case 3:
			b.WriteString("{1,2}")
		}
	}
	if depth == 3 && rng.IntN(3) == 0 {
		return b.String() + "|" + randAssertPattern(rng, depth-1)
	}
	return b.String()
}
