package fsm

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
)

// permExpansion is the reference for Perm(sep, extra, members, req): the
// subset lattice written out as a plain (exponential) regex.
func permExpansion(sep, extra *Node, members []*Node, req []bool) *Node {
	return permCountExpansion(sep, extra, members, req, 0, -1)
}

// permCountExpansion is permExpansion with between lo and hi items in
// all (hi -1: unbounded): the lattice also counts the extras, up to
// max(lo, hi).
func permCountExpansion(sep, extra *Node, members []*Node, req []bool, lo, hi int) *Node {
	var reqMask uint64
	for i, r := range req {
		if r {
			reqMask |= 1 << i
		}
	}
	capN := max(lo, hi, 0)
	var after func(seen uint64, n int) *Node // after n ≥ 1 items
	after = func(seen uint64, n int) *Node {
		alts := []*Node{}
		if seen&reqMask == reqMask && n >= lo {
			alts = append(alts, Empty())
		}
		if hi >= 0 && n >= hi {
			return Alt(alts...)
		}
		for i, m := range members {
			if seen&(1<<i) == 0 {
				alts = append(alts, Cat(sep, m, after(seen|1<<i, n+1)))
			}
		}
		if n >= capN && hi < 0 {
			// More extras change nothing.
			alts = append(alts, Cat(Plus(Cat(sep, extra)), Alt(alts...)))
		} else {
			alts = append(alts, Cat(sep, extra, after(seen, n+1)))
		}
		return Alt(alts...)
	}
	var alts []*Node
	if reqMask == 0 && lo == 0 {
		alts = append(alts, Empty())
	}
	if hi != 0 {
		alts = append(alts, Cat(extra, after(0, 1)))
		for i, m := range members {
			alts = append(alts, Cat(m, after(1<<i, 1)))
		}
	}
	return Alt(alts...)
}

// permOperands parses a Perm test case's members and extra ("" for none)
// and pads its required flags to the members.
func permOperands(t *testing.T, members []string, required []bool, extraSrc string) ([]*Node, []bool, *Node) {
	t.Helper()
	var ms []*Node
	for _, m := range members {
		ms = append(ms, mustParse(t, m))
	}
	extra := NoMatch()
	if extraSrc != "" {
		extra = mustParse(t, extraSrc)
	}
	req := make([]bool, len(ms))
	copy(req, required)
	return ms, req, extra
}

// TestPermCountMatchesExpansion: counted Perms against their written-out
// lattice, and their dialect round trip.
func TestPermCountMatchesExpansion(t *testing.T) {
	sep := mustParse(t, `,`)
	for _, tc := range []struct {
		name    string
		members []string
		req     []bool
		extra   string
		lo, hi  int
	}{
		{"max-members-only", []string{"a", "b", "c"}, nil, "", 0, 2},
		{"min-members-only", []string{"a", "b", "c"}, nil, "", 2, -1},
		{"exact-with-extra", []string{"a", "b"}, []bool{true, false}, "x[0-9]", 2, 2},
		{"range-with-extra", []string{"a", "b", "c"}, []bool{false, true, false}, "x", 1, 3},
		{"min-above-members", []string{"a"}, nil, "x", 3, -1},
		{"extras-only", nil, nil, "x", 2, 4},
		{"max-zero", []string{"a"}, nil, "x", 0, 0},
		{"required-over-max", []string{"a", "b"}, []bool{true, true}, "", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, req, extra := permOperands(t, tc.members, tc.req, tc.extra)
			got := Cat(Lit("{"), PermCount(sep, extra, ms, req, tc.lo, tc.hi), Lit("}"))
			want := Cat(Lit("{"), permCountExpansion(sep, extra, ms, req, tc.lo, tc.hi), Lit("}"))
			g, err1 := Compile(got, Options{})
			w, err2 := Compile(want, Options{})
			if err1 != nil || err2 != nil {
				t.Fatalf("Compile: %v, %v", err1, err2)
			}
			if g.String() != w.String() {
				t.Errorf("PermCount DFA differs from the expansion\nperm:\n%s\nexpansion:\n%s", g, w)
			}
			back, err := Parse(got.String())
			if err != nil {
				t.Fatalf("Parse(%s) = %v", got, err)
			}
			if back.String() != got.String() {
				t.Errorf("round trip: %s → %s", got, back)
			}
		})
	}
	// Spot checks of the language itself (the expansion could share a
	// mistake with the builder).
	n := Cat(Lit("{"), PermCount(sep, mustParse(t, "x"), []*Node{Lit("a"), Lit("b")}, []bool{true, false}, 2, 3), Lit("}"))
	d := mustCompile(t, n)
	for s, want := range map[string]bool{"{a}": false, "{a,b}": true, "{x,a}": true, "{b,a,x}": true, "{x,x,a}": true, "{a,x,x,x}": false, "{b,x}": false, "{a,a}": false} {
		if got := Matches(d, []byte(s)); got != want {
			t.Errorf("Matches(%s) = %v, want %v", s, got, want)
		}
	}
}

// TestPermMatchesExpansion compares the minimized DFA of Perm nodes with
// that of their written-out subset lattice: canonical dumps are equal
// exactly when the languages are.
func TestPermMatchesExpansion(t *testing.T) {
	sep := mustParse(t, ` ?, ?`)
	for _, tc := range []struct {
		name    string
		members []string
		req     []bool
		extra   string
	}{
		{"one-optional", []string{"a"}, nil, ""},
		{"one-required", []string{"a"}, []bool{true}, ""},
		{"three-mixed", []string{"a", "bb", "c"}, []bool{true, false, true}, ""},
		{"prefixes", []string{"a", "ab", "abc"}, []bool{false, true, false}, ""},
		{"extra", []string{"k1:[0-9]", "k2:x+"}, []bool{true, false}, `[a-z]{1,2}:[0-9]`},
		{"extra-overlaps-member", []string{"a", "b"}, nil, `[ab]`},
		{"four-required", []string{"w", "x", "y", "z"}, []bool{true, true, true, true}, ""},
		{"four-none", []string{"w", "xx", "y", "z"}, nil, `q`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, req, extra := permOperands(t, tc.members, tc.req, tc.extra)
			got := Cat(Lit("{"), Perm(sep, extra, ms, req), Lit("}"))
			want := Cat(Lit("{"), permExpansion(sep, extra, ms, req), Lit("}"))
			if g, w := mustCompile(t, got).String(), mustCompile(t, want).String(); g != w {
				t.Errorf("Perm DFA differs from the expansion\nperm:\n%s\nexpansion:\n%s", g, w)
			}
			// The dialect round-trips Perm.
			back, err := Parse(got.String())
			if err != nil {
				t.Fatalf("Parse(%s) = %v", got, err)
			}
			if back.String() != got.String() {
				t.Errorf("round trip: %s → %s", got, back)
			}
		})
	}
}

// stripDefer returns n without its Defer nodes (the same language).
func stripDefer(n *Node, memo map[*Node]*Node) *Node {
	if r, ok := memo[n]; ok {
		return r
	}
	r := n
	if n.Op == OpDefer {
		r = stripDefer(n.Subs[0], memo)
	} else if len(n.Subs) > 0 {
		subs := make([]*Node, len(n.Subs))
		for i, s := range n.Subs {
			subs[i] = stripDefer(s, memo)
		}
		r = rebuild(n, subs)
	}
	memo[n] = r
	return r
}

// rebuild returns a node like n (a composite) with operands subs.
func rebuild(n *Node, subs []*Node) *Node {
	switch n.Op {
	case OpConcat:
		return Cat(subs...)
	case OpAlt:
		return Alt(subs...)
	case OpAnd:
		return And(subs...)
	case OpNot:
		return Not(subs[0])
	case OpRepeat:
		return Repeat(subs[0], n.Min, n.Max)
	case OpPerm:
		return PermCount(subs[0], subs[1], subs[2:], n.Req, n.Min, n.Max)
	case OpDefer:
		return Defer(subs[0])
	}
	return n
}

// deferCases put Defer where grammar/ does (values, items, nested free-form
// values) and where it must be harmless (an empty operand, a loop body,
// inside an intersection).
func deferCases(tb testing.TB) []*Node {
	str := mustParse(tb, jsonString)
	num := mustParse(tb, jsonNumber)
	W := mustParse(tb, ws)
	sep := Cat(W, Lit(","), W)
	colon := Cat(W, Lit(":"), W)
	emptyStr := And(mustParse(tb, `"a+"`), mustParse(tb, `"b+"`))
	any1 := Alt(str, num, Cat(Lit("["), W, Opt(Cat(num, Star(Cat(sep, num)))), W, Lit("]")))
	any2 := Alt(str, num, Cat(Lit("["), W, Opt(Cat(Defer(any1), Star(Cat(sep, Defer(any1))))), W, Lit("]")))
	kv := func(k string, v *Node) *Node { return Cat(Lit(`"`+k+`"`), colon, Defer(v)) }
	obj := Cat(Lit("{"), W, Perm(sep, Cat(Diff(str, Alt(Lit(`"a"`), Lit(`"b"`))), colon, Defer(any2)),
		[]*Node{kv("a", num), kv("b", any2), kv("c", emptyStr), kv("d", str)}, []bool{true, false, false, true}), W, Lit("}"))
	return []*Node{
		Cat(Lit("["), Defer(any2), Lit("]")),
		Cat(Lit("x"), Defer(emptyStr), Lit("y")),
		Alt(Cat(Lit("x"), Defer(emptyStr)), Lit("z")),
		Alt(Cat(Lit("xab"), Defer(emptyStr)), Lit("z")),
		Cat(Lit("("), Star(Defer(Cat(Lit("a"), Alt(Lit("b"), num)))), Lit(")")),
		// Repeats of 8 or more are stamped from one built fragment, which
		// must not copy placeholders.
		Cat(Lit("["), Repeat(Cat(Lit(","), Defer(Alt(num, Cat(Lit("x"), Defer(str))))), 0, 12), Lit("]")),
		And(Cat(Lit(`"`), Defer(mustParse(tb, `[a-z]*`)), Lit(`"`)), mustParse(tb, `"[^q]{2,5}"`)),
		obj,
		Cat(Lit("["), obj, Star(Cat(sep, obj)), Lit("]")), // [8]: TestLazyConcurrent
		Cat(Lit("{"), Perm(sep, NoMatch(), []*Node{kv("a", num), kv("c", emptyStr)}, []bool{true, true}), Lit("}")),
	}
}

// TestDeferSameLanguage checks that deferring changes no language (the
// minimized DFAs with and without Defer are equal), that the NFA keeps
// every reachable state live, and that a lazy constraint (which does not
// trim) gives the masks of the eager, trimmed DFA of the node without Defer.
func TestDeferSameLanguage(t *testing.T) {
	ti := tokCl100kIndex(t)
	for i, n := range deferCases(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			plain := stripDefer(n, map[*Node]*Node{})
			d := mustCompile(t, plain)
			if g, w := mustCompile(t, n).String(), d.String(); g != w {
				t.Errorf("%s: DFA with Defer differs from %s", n, plain)
			}
			checkNFALive(t, n, Options{})
			if n.Op == OpAnd || d.Start == DeadState {
				return
			}
			eager, err := NewConstraint(d, ti, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			compareBothPrebuilds(t, ti, eager, n, Options{}, rand.NewPCG(7, uint64(i)))
		})
	}
}

// compareBothPrebuilds walks n's lazy constraint under opts against eager,
// with its deferred operands prebuilt (the default) and all built when
// first reached.
func compareBothPrebuilds(t *testing.T, ti *TokenIndex, eager *Constraint, n *Node, opts Options, src rand.Source) {
	t.Helper()
	rng := rand.New(src)
	for _, np := range []bool{false, true} {
		o := opts
		o.NoPrebuild = np
		lazy, err := CompileConstraint(context.Background(), n, ti, o, ConstraintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for walk := range 12 {
			compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("no-prebuild %v walk %d", np, walk))
		}
	}
}

// TestPrebuild: the compile builds the deferred operands' first instances
// (every one here, within the budget) unless NoPrebuild says not to; a
// prebuild that runs into a budget is dropped, and the operand that did not
// fit fails only when a generation reaches it.
func TestPrebuild(t *testing.T) {
	obj := deferCases(t)[7]
	for _, np := range []bool{false, true} {
		c := newCompiler(Options{NoPrebuild: np})
		m, err := c.lazyNFAOf(obj)
		if err != nil {
			t.Fatal(err)
		}
		operands, built := map[*Node]bool{}, 0
		for _, it := range m.b.lazy {
			if x := it.n.Subs; it.n.Op == OpDefer && !operands[x[0]] {
				operands[x[0]] = true
				if m.b.frags[x[0]] != nil {
					built++
				}
			}
		}
		// The values of a, b and d (the extra value is b's operand), and,
		// once b's is built, the array items of that any-value; c's value
		// is ∅ and has no placeholder.
		wantOps, wantBuilt := 4, 4
		if np {
			wantOps, wantBuilt = 3, 0
		}
		if len(operands) != wantOps || built != wantBuilt {
			t.Errorf("NoPrebuild %v: %d of %d deferred operands prebuilt, want %d of %d", np, built, len(operands), wantBuilt, wantOps)
		}
	}

	// A deferred operand too large for the NFA budget, deeper than the
	// first mask looks: the prebuild fails and is dropped, the constraint
	// compiles, the branch without the operand works, and the one that
	// reaches it fails with the NFA budget's error (past lazyNFAGrowth
	// times MaxNFAStates: the operand needs over 9,000 states).
	ti := tokCl100kIndex(t)
	long := "c" + strings.Repeat("9", 40)
	n := Alt(Lit("ab"), Cat(Lit(long), Defer(mustParse(t, `[a-z]{0,9000}`))))
	c, err := CompileConstraint(context.Background(), n, ti, Options{MaxNFAStates: 4000}, ConstraintOptions{})
	if err != nil {
		t.Fatalf("CompileConstraint = %v, want the constraint (the prebuild's error dropped)", err)
	}
	byteTok := func(b byte) TokenID { return TokenID(100277 + int(b)) } // cl100k's byte tokens
	m := c.NewMatcher()
	for _, b := range []byte("ab") {
		if err := m.Accept(byteTok(b)); err != nil {
			t.Fatalf("Accept(%q) = %v", b, err)
		}
	}
	if !m.IsAccepting() {
		t.Error(`"ab" not accepted`)
	}
	m = c.NewMatcher()
	w := make([]uint64, ti.MaskWords())
	for _, b := range []byte(long) {
		if err = m.FillMask(w); err == nil {
			err = m.Accept(byteTok(b))
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = m.FillMask(w)
	}
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != ErrTooManyNFAStates {
		t.Errorf("after %q: %v, want ErrTooManyNFAStates", long, err)
	}
}

// TestLazyNFAGrowth: past its compile a lazy constraint's NFA may grow to
// lazyNFAGrowth times MaxNFAStates. An operand of over 3,000 states (about
// 1.7 a repetition) under a budget of 2,500 is built when a generation
// reaches it, and works; the same operand outside a Defer is refused by
// the compile.
func TestLazyNFAGrowth(t *testing.T) {
	ti := tokCl100kIndex(t)
	long := "c" + strings.Repeat("9", 40)
	body := mustParse(t, `[a-z]{0,2000}`)
	opts := Options{MaxNFAStates: 2500}
	c, err := CompileConstraint(context.Background(), Alt(Lit("ab"), Cat(Lit(long), Defer(body))), ti, opts, ConstraintOptions{})
	if err != nil {
		t.Fatalf("CompileConstraint = %v", err)
	}
	byteTok := func(b byte) TokenID { return TokenID(100277 + int(b)) } // cl100k's byte tokens
	m := c.NewMatcher()
	w := make([]uint64, ti.MaskWords())
	for _, b := range []byte(long + "xyz") {
		if err = m.FillMask(w); err == nil {
			err = m.Accept(byteTok(b))
		}
		if err != nil {
			t.Fatalf("at %q: %v", b, err)
		}
	}
	if !m.IsAccepting() {
		t.Errorf("%q not accepted", long+"xyz")
	}
	_, err = CompileConstraint(context.Background(), Alt(Lit("ab"), Cat(Lit(long), body)), ti, opts, ConstraintOptions{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != ErrTooManyNFAStates {
		t.Errorf("eager operand: %v, want ErrTooManyNFAStates from the compile", err)
	}
}

// TestPermBudgets: a wide Perm is cheap lazily but its whole DFA (2^n
// subsets) runs into a budget with a limit error, not a hang.
func TestPermBudgets(t *testing.T) {
	var ms []*Node
	for i := range 40 {
		ms = append(ms, Lit(fmt.Sprintf(`"k%d":1`, i)))
	}
	n := Cat(Lit("{"), Perm(Lit(","), NoMatch(), ms, nil), Lit("}"))
	_, err := Compile(n, Options{MaxDFAStates: 50_000})
	var fe *Error
	if !errors.As(err, &fe) || !fe.Code.IsLimit() {
		t.Fatalf("Compile(40-member perm) = %v, want a limit error", err)
	}
	ti := tokCl100kIndex(t)
	c, err := CompileConstraint(context.Background(), n, ti, Options{MaxDFAStates: 50_000}, ConstraintOptions{})
	if err != nil {
		t.Fatalf("CompileConstraint = %v", err)
	}
	m := c.NewMatcher()
	for _, b := range []byte(`{"k39":1,"k0":1,"k7":1}`) {
		if err := m.Accept(TokenID(100277 + int(b))); err != nil { // the byte tokens
			t.Fatalf("Accept = %v", err)
		}
	}
	if !m.IsAccepting() {
		t.Error("not accepting after a complete object")
	}
	big := make([]*Node, MaxPermMembers+1)
	for i := range big {
		big[i] = Lit(fmt.Sprint(i))
	}
	if _, err := Compile(Perm(Lit(","), NoMatch(), big, nil), Options{}); !errors.As(err, &fe) || fe.Code != ErrInvalidNode {
		t.Errorf("Compile(65-member perm) = %v, want ErrInvalidNode", err)
	}
}

// withDefers wraps composite sub-nodes of n in Defer, choosing by the bits
// of h, so a fuzzer reaches deferral in every position.
func withDefers(n *Node, h uint64, memo map[*Node]*Node) *Node {
	if r, ok := memo[n]; ok {
		return r
	}
	r := n
	if len(n.Subs) > 0 {
		subs := make([]*Node, len(n.Subs))
		for i, s := range n.Subs {
			subs[i] = withDefers(s, h>>1|h<<63, memo)
			if h>>(uint(i)%64)&1 == 1 {
				subs[i] = Defer(subs[i])
			}
		}
		r = rebuild(n, subs)
	}
	memo[n] = r
	return r
}

// FuzzLazyNFA: for any parsable regex (Perm included) with Defer wrapped
// around sub-nodes, the lazy constraint gives the masks, flags and forced
// tokens of the eager constraint of the plain regex, over a byte vocabulary.
// fuzzWalkVocab is the walks' vocabulary of the lazy fuzz tests: every
// byte, the words, and an end-of-sequence token.
func fuzzWalkVocab(f *testing.F, words ...string) *TokenIndex {
	toks := make([][]byte, 0, 257+len(words))
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	for _, w := range words {
		toks = append(toks, []byte(w))
	}
	toks = append(toks, []byte{SpecialPrefix, 'E'})
	ti, err := NewTokenIndex(toks, []TokenID{TokenID(len(toks) - 1)}, len(toks))
	if err != nil {
		f.Fatal(err)
	}
	return ti
}

func FuzzLazyNFA(f *testing.F) {
	fuzzSeeds(f)
	f.Add(`\[(?:,(?:[0-9]+|x"[a-c]*"|\{(?perm(,)(k[a-z]:1)(a:(?:1|2))!(b:[xy]+))\})){0,12}\]`)
	f.Add(`\{(?perm{2,3}(,)(k[a-z]:1)(a:(?:1|2))!(b:[xy]+))\}`)
	f.Add(`\[(?perm{1,-1}(,)(x)(a)(b))\]`)
	ti := fuzzWalkVocab(f, "ab", `", "`, "xyz")
	f.Fuzz(func(t *testing.T, s string) {
		n, d, ok, err := fuzzCompile(s)
		if !ok || err != nil || d.Start == DeadState {
			return
		}
		opts := fuzzOptions()
		eager, err := NewConstraint(d, ti, ConstraintOptions{})
		if err != nil {
			return
		}
		h := fnv.New64a()
		h.Write([]byte(s))
		dn := withDefers(n, h.Sum64()|1, map[*Node]*Node{})
		lazy, err := CompileConstraint(context.Background(), dn, ti, opts, ConstraintOptions{})
		if err != nil {
			var fe *Error
			if errors.As(err, &fe) && fe.Code.IsLimit() {
				return
			}
			t.Fatalf("CompileConstraint(context.Background(), %s) = %v", dn, err)
		}
		rng := rand.New(rand.NewPCG(h.Sum64(), 3))
		for walk := range 3 {
			compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("%q walk %d", s, walk))
		}
	})
}
