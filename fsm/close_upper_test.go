package fsm

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// agentAnyBytes is every byte string.
var agentAnyBytes = Star(ByteClass(ByteRange{0, 0xFF}))

// agentJSONString is a JSON string of up to maxLen characters (-1: any).
func agentJSONString(maxLen int) *Node {
	char := Alt(
		RuneClass(RuneRange{0x20, 0x21}, RuneRange{0x23, 0x5B}, RuneRange{0x5D, 0x10FFFF}),
		Cat(Lit(`\`), ByteClass(ByteRange{'"', '"'}, ByteRange{'\\', '\\'}, ByteRange{'n', 'n'}, ByteRange{'t', 't'})),
	)
	return Cat(Lit(`"`), Repeat(char, 0, maxLen), Lit(`"`))
}

// agentInt is a JSON integer of up to 16 digits.
var agentInt = Alt(Lit("0"), Cat(Opt(Lit("-")), ByteClass(ByteRange{'1', '9'}), Repeat(ByteClass(ByteRange{'0', '9'}), 0, 15)))

// agentValue returns the i-th kind of property value: strings with and
// without bounds, integers, enums, a pattern-like string with an
// intersection (spliced as a DFA when it is built), arrays with item
// bounds, URIs and a nested object.
func agentValue(i int) *Node {
	switch i % 8 {
	case 0:
		return agentJSONString(-1)
	case 1:
		return agentInt
	case 2:
		return Alt(Lit(`"low"`), Lit(`"medium"`), Lit(`"high"`))
	case 3:
		// No "..": an intersection with a complement.
		return And(agentJSONString(64), Not(Cat(agentAnyBytes, Lit(".."), agentAnyBytes)))
	case 4:
		s := agentJSONString(200)
		return Cat(Lit("["), s, Repeat(Cat(Lit(", "), s), 0, 3), Lit("]"))
	case 5:
		return Cat(Lit(`"https://`), Plus(ByteClass(ByteRange{'a', 'z'}, ByteRange{'.', '/'})), Lit(`"`))
	case 6:
		return Alt(Lit("true"), Lit("false"))
	default:
		return agentObject(fmt.Sprintf("n%d", i), 3, 1)
	}
}

// agentObject is an object with the given properties in any order (a
// Perm, as grammar builds it), the first req of them required, each value
// deferred.
func agentObject(prefix string, props, req int) *Node {
	var members []*Node
	var required []bool
	for j := range props {
		v := Defer(agentValue(j + len(prefix)))
		members = append(members, Cat(Lit(fmt.Sprintf(`"%s_%d": `, prefix, j)), v))
		required = append(required, j < req)
	}
	return Cat(Lit("{"), Perm(Lit(", "), NoMatch(), members, required), Lit("}"))
}

// agentTurn is a tool-calling turn of the shape the lead reproduced with
// Claude Code's 24 tools: free text that cannot contain "<tool_call>",
// then optionally one call of one of the tools, each with its own
// argument object.
func agentTurn(tools int) *Node {
	var calls []*Node
	for i := range tools {
		name := fmt.Sprintf("tool_%c%d", 'a'+i%26, i)
		calls = append(calls, Cat(Lit(`{"name": "`+name+`", "arguments": `), agentObject(name, 3+i%5, 1+i%3), Lit("}")))
	}
	text := And(Star(AnyRune()), Not(Cat(agentAnyBytes, Lit("<tool_call>"), agentAnyBytes)))
	return Cat(text, Opt(Cat(Lit("<tool_call>\n"), Alt(calls...), Lit("\n</tool_call>"))))
}

// agentVocab is a synthetic byte-level vocabulary: every byte, the
// markup's words and a few text words, then EOS.
func agentVocab(t testing.TB) (*TokenIndex, TokenID) {
	words := []string{"<tool_call>", "<tool", "_call", ">\n", "\n</tool_call>", `{"name": "`, `", "arguments": `, `": `, `", "`, `, "`, `"}`, `}}`, "tool_", "Hello", " world", " the", "https://", ".com", "true", "false", "12", "00", `"low"`, `"high"`, "..", " ", "\n", "é", "日本"}
	for b := range 256 {
		words = append(words, string([]byte{byte(b)}))
	}
	return closeVocab(t, words...)
}

// agentModel picks tokens like a model that writes script, longest token
// first, while the mask allows it, and random allowed tokens after.
type agentModel struct {
	ti     *TokenIndex
	rng    *rand.Rand
	script string
}

func (am *agentModel) pick(ids []TokenID) TokenID {
	if am.script != "" {
		best := TokenID(-1)
		for _, id := range ids {
			tok := am.ti.raw[id]
			if len(tok) > 0 && strings.HasPrefix(am.script, string(tok)) && (best < 0 || len(tok) > len(am.ti.raw[best])) {
				best = id
			}
		}
		if best >= 0 {
			am.script = am.script[len(am.ti.raw[best]):]
			return best
		}
		am.script = ""
	}
	// Mostly short tokens, so that random walks stay in the structure
	// instead of filling one string.
	for range 4 {
		if id := ids[am.rng.IntN(len(ids))]; len(am.ti.raw[id]) <= 2 || am.rng.IntN(4) == 0 {
			return id
		}
	}
	return ids[am.rng.IntN(len(ids))]
}

// agentScripts are the texts the walks start with: plain text, text that
// opens a call of one tool or another, and one that stops at the tag.
var agentScripts = []string{
	"Hello world",
	"Hello <tool_call>\n" + `{"name": "tool_c2", "arguments": {"tool_c2_0": `,
	"<tool_call>\n" + `{"name": "tool_x23", "arguments": {`,
	"The plan: <tool_call>\n",
	"<tool_call>\n" + `{"name": "tool_h7", "arguments": {"tool_h7_0": "a", "tool_h7_1": 12, "tool_h7_2": "low", "tool_h7_3": "b`,
}

// walkAgent runs walks over c from each script, with a budget per walk
// (budget(walk)), stepping with FillMaskWithin: no step may fail or leave
// the mask empty, and when the budget is spent the output must be
// accepting. maxSteps (-1: none) ends a walk early.
func walkAgent(c *Constraint, seed uint64, walks int, budget func(walk int) int, maxSteps int) error {
	ti := c.ti
	dst := make([]uint64, ti.MaskWords())
	for walk := range walks {
		script := agentScripts[walk%len(agentScripts)]
		am := &agentModel{ti: ti, rng: rand.New(rand.NewPCG(seed, uint64(walk))), script: script}
		m := c.NewMatcher()
		b := budget(walk)
		var out []byte
		for n := 0; ; n++ {
			if b == 0 || n == maxSteps {
				if b == 0 && !m.IsAccepting() {
					return fmt.Errorf("walk %d (%q): budget spent in a state that is not accepting, after %q", walk, script, out)
				}
				break
			}
			if _, err := m.FillMaskWithin(dst, b); err != nil {
				return fmt.Errorf("walk %d (%q): FillMaskWithin(%d) after %q = %w", walk, script, b, out, err)
			}
			ids := tokAllowedIDs(dst)
			if len(ids) == 0 {
				return fmt.Errorf("walk %d (%q): FillMaskWithin(%d) after %q: empty mask", walk, script, b, out)
			}
			tok := am.pick(ids)
			if ti.IsEOS(tok) {
				if !m.IsAccepting() {
					return fmt.Errorf("walk %d: EOS allowed in a state that is not accepting, after %q", walk, out)
				}
				break
			}
			if err := m.Accept(tok); err != nil {
				return fmt.Errorf("walk %d: Accept(%q) after %q = %w", walk, ti.raw[tok], out, err)
			}
			out = append(out, ti.raw[tok]...)
			b--
		}
	}
	return nil
}

// fallbackUsed reports how many states got their horizon from the
// NFA-path bounds (Hu), and how many had their token search run out of
// states after the byte search did (the bounds cut their masks).
func fallbackUsed(c *Constraint) (horizons, cut int) {
	cl := c.closer()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for q := StateID(1); int(q) < c.numStates(); q++ {
		if _, ok := cl.hupp.get(q); ok {
			horizons++
		}
	}
	for q := range cl.tokFailed {
		if h, _ := cl.hbyt.get(q); h == distInf {
			cut++
		}
	}
	return horizons, cut
}

// TestWithinUpperFallback reproduces the lead's failure: a tool-calling
// turn over 24 tools, where the closing searches around free text that may
// open a call explore every tool's arguments and run out of states (a
// small MaxCloseStates makes it small). Walks with a large budget (what
// 19,000 tokens of room are to it) and with budgets that run out in the
// middle of a call must never fail a step nor see an empty mask, and must
// be accepting when the budget is spent.
func TestWithinUpperFallback(t *testing.T) {
	ti, _ := agentVocab(t)
	for _, limit := range []int{16, 64} {
		t.Run(fmt.Sprintf("MaxCloseStates=%d", limit), func(t *testing.T) {
			c, err := CompileConstraint(context.Background(), agentTurn(24), ti, Options{}, ConstraintOptions{MaxCloseStates: limit})
			if err != nil {
				t.Fatal(err)
			}
			// Without the fallback the first call inside "<tool_call>\n"
			// fails: check that both searches do run out there.
			m := c.NewMatcher()
			for _, b := range []byte("Hi <tool_call>\n") {
				if err := m.Accept(TokenID(slices.IndexFunc(ti.raw, func(tok []byte) bool { return len(tok) == 1 && tok[0] == b }))); err != nil {
					t.Fatal(err)
				}
			}
			cl := c.closer()
			if _, err := cl.byteHorizon(c, m.State()); err != nil {
				t.Fatal(err)
			}
			if h, _ := cl.hbyt.get(m.State()); h != distInf {
				t.Fatalf("byte horizon after the tag = %d, want the search to run out (distInf)", h)
			}
			if _, err := cl.tokHorizon(c, m.State()); !isCode(err, ErrCloseBudget) {
				t.Fatalf("tokHorizon after the tag = %v, want ErrCloseBudget", err)
			}
			if err := walkAgent(c, 1, 10, func(int) int { return 19000 }, 300); err != nil {
				t.Fatal(err)
			}
			for _, extra := range []int{0, 1, 3, 8, 20} {
				if err := walkAgent(c, uint64(extra)+2, 10, func(walk int) int { return 40 + extra + walk }, -1); err != nil {
					t.Fatal(err)
				}
			}
			if horizons, cut := fallbackUsed(c); horizons == 0 || cut == 0 {
				t.Errorf("horizons from the NFA bounds: %d, masks cut by them: %d; want some of each", horizons, cut)
			}
		})
	}
}

// TestWithinUpperFallbackLlama runs the same walks over the Llama-3.1
// vocabulary (../shared; skipped when absent) with the default
// MaxCloseStates and a smaller one.
func TestWithinUpperFallbackLlama(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the Llama-3.1 vocabulary")
	}
	ti := tokLlama31(t)
	for _, limit := range []int{0, 256} {
		t.Run(fmt.Sprintf("MaxCloseStates=%d", limit), func(t *testing.T) {
			c, err := CompileConstraint(context.Background(), agentTurn(24), ti, Options{}, ConstraintOptions{MaxCloseStates: limit})
			if err != nil {
				t.Fatal(err)
			}
			if err := walkAgent(c, 7, 5, func(int) int { return 19000 }, 150); err != nil {
				t.Fatal(err)
			}
			for _, extra := range []int{0, 5} {
				if err := walkAgent(c, uint64(extra)+8, 5, func(walk int) int { return 30 + extra + walk }, -1); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestWithinUpperConcurrent walks one shared constraint from several
// goroutines at once (run it with -race): the NFA passes, versions and
// horizons of the bounds are shared like the exact distances, and every
// walk must still close in time.
func TestWithinUpperConcurrent(t *testing.T) {
	ti, _ := agentVocab(t)
	c, err := CompileConstraint(context.Background(), agentTurn(24), ti, Options{}, ConstraintOptions{MaxCloseStates: 16})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if errs[w] = walkAgent(c, uint64(w), 5, func(walk int) int { return 19000 }, 80); errs[w] != nil {
				return
			}
			errs[w] = walkAgent(c, uint64(w)+10, 10, func(walk int) int { return 38 + w + walk }, -1)
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
}

// TestUpperBoundsSound checks U ≥ D, and Hu ≥ H, against the brute force
// on every state the walks of TestWithinUpperFallback's constraint reach
// (over a smaller turn, so that the brute force stays cheap), and that no
// bound was stored into the exact tables.
func TestUpperBoundsSound(t *testing.T) {
	ti, _ := agentVocab(t)
	c, err := CompileConstraint(context.Background(), agentTurn(4), ti, Options{}, ConstraintOptions{MaxCloseStates: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []int{0, 2, 6} {
		if err := walkAgent(c, uint64(extra)+30, 10, func(walk int) int { return 30 + extra + walk }, -1); err != nil {
			t.Fatal(err)
		}
	}
	bf := newBruteClose(c)
	bf.checkStored(t)
	cl, states, checked := checkUpperSound(t, c, bf)
	for _, q := range states {
		if hu, ok := cl.hupp.get(q); ok {
			h := int32(-1)
			for _, s := range bf.next(t, q) {
				if s != DeadState {
					h = max(h, bf.d(t, s))
				}
			}
			if hu < h {
				t.Fatalf("state %d: Hu = %d < H = %d", q, hu, h)
			}
		}
	}
	if checked < len(states)/2 {
		t.Errorf("only %d of %d states have a finite bound", checked, len(states))
	}
}

// checkUpperSound computes U for every state c has and fails t where U <
// D (the brute force bf); it returns the closer, the states and how many
// have a finite U.
func checkUpperSound(t *testing.T, c *Constraint, bf *bruteClose) (*closer, []StateID, int) {
	t.Helper()
	cl := c.closer()
	cl.mu.Lock()
	var states []StateID
	for q := StateID(1); int(q) < c.numStates(); q++ {
		states = append(states, q)
	}
	cl.ensureUpper(c, states, true)
	cl.mu.Unlock()
	finite := 0
	for _, q := range states {
		u, _ := cl.ub.at.get(q)
		if d := bf.d(t, q); u < d {
			t.Fatalf("state %d: U = %d < D = %d", q, u, d)
		}
		if u != distInf {
			finite++
		}
	}
	return cl, states, finite
}

// TestShortTable checks short, the AST estimate behind the placeholders'
// bounds, on one node per operator over a vocabulary with every byte and
// over one without the bytes above 0x7F. The nodes are part of the
// constraint (under a Defer), as they always are: usable bytes are decided
// per byte class.
func TestShortTable(t *testing.T) {
	all, _ := agentVocab(t)
	var ascii []string
	for b := range 0x80 {
		ascii = append(ascii, string([]byte{byte(b)}))
	}
	low, _ := closeVocab(t, ascii...)
	inf := distInf
	compiled := And(Star(Lit("a")), Not(Lit("a")))
	cases := []struct {
		name     string
		n        *Node
		all, low int32
	}{
		{"empty", Empty(), 0, 0},
		{"nomatch", NoMatch(), inf, inf},
		{"literal", Lit("abc"), 3, 3},
		{"literal non-ASCII", Lit("é"), 2, inf},
		{"bytes", ByteClass(ByteRange{0x80, 0xFF}, ByteRange{'a', 'a'}), 1, 1},
		{"bytes high", ByteClass(ByteRange{0x80, 0xFF}), 1, inf},
		{"runes", RuneClass(RuneRange{0x400, 0x4FF}), 2, inf},
		{"runes mixed", RuneClass(RuneRange{'a', 'z'}, RuneRange{0x10000, 0x10FFFF}), 1, 1},
		{"runes surrogates", RuneClass(RuneRange{0xD800, 0xE000}), 3, inf},
		{"concat", Cat(Lit("ab"), RuneClass(RuneRange{0x800, 0x900})), 5, inf},
		{"alt", Alt(Lit("abcd"), Lit("é")), 2, 4},
		{"repeat", Repeat(Lit("ab"), 3, 5), 6, 6},
		{"star", Star(Lit("ab")), 0, 0},
		{"defer", Defer(Cat(Lit("ab"), Star(Lit("x")))), 2, 2},
		{"perm", Perm(Lit(", "), NoMatch(), []*Node{Lit("aaa"), Lit("b"), Lit("cc")}, []bool{true, false, true}), 7, 7},
		{"and compiled", compiled, 0, 0},
	}
	alts := []*Node{Lit("x")}
	for _, tc := range cases {
		alts = append(alts, tc.n)
	}
	n := Cat(Lit("<"), Defer(Cat(Lit("("), compiled, Alt(alts...))), Lit(">"))
	for _, v := range []struct {
		name string
		ti   *TokenIndex
		want func(i int) int32
	}{{"all", all, func(i int) int32 { return cases[i].all }}, {"ascii", low, func(i int) int32 { return cases[i].low }}} {
		c, err := CompileConstraint(context.Background(), n, v.ti, Options{NoPrebuild: true}, ConstraintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cl := c.closer()
		cl.mu.Lock()
		cl.ub.short = map[*Node]int32{}
		for i, tc := range cases {
			if got := cl.short(c, tc.n); got != v.want(i) {
				t.Errorf("short(%s) over %s = %d, want %d", tc.name, v.name, got, v.want(i))
			}
		}
		// An intersection the compiler has not built is unknown.
		if got := cl.short(c, And(Plus(Lit("b")), Not(Lit("b")))); got != inf || !cl.ub.unknown {
			t.Errorf("short(an intersection not compiled) = %d, unknown %v; want distInf, true", got, cl.ub.unknown)
		}
		cl.mu.Unlock()
	}
}

// FuzzUpperBounds: for any regex of the project dialect (Perm included),
// with Defer wrapped around sub-nodes and compiled lazily over a byte
// vocabulary (every byte, or printable ASCII only, where some states
// cannot close) under a tiny MaxCloseStates, walks under a budget of
// MinTokens plus a little never fail a step nor see an empty mask and end
// accepting, and on small constraints U ≥ D and Hu ≥ H at every state
// (brute force).
func FuzzUpperBounds(f *testing.F) {
	for i, tt := range parseTests {
		f.Add(tt.in, i%2 == 1, uint8(i))
	}
	for i, tt := range printTests {
		f.Add(tt.str, i%2 == 0, uint8(i))
	}
	f.Add(`\[(?:,(?:[0-9]+|x"[a-c]*"|\{(?perm(,)(k[a-z]:1)(a:(?:1|2))!(b:[xy]+))\})){0,12}\]`, false, uint8(3))
	f.Add(`(?:[^<]|<[^t])*(?:<t(?:\{(?perm(, )(a:[0-9]{1,3})!(b:"[a-z]*")!(c:(?:x|yy)))\}|\[[a-z]{2,5}\]))?`, true, uint8(1))
	words := []string{"ab", `", "`, "xyz", "<t", "{a:", "12"}
	var all, ascii []string
	for b := range 256 {
		all = append(all, string([]byte{byte(b)}))
		if b >= 0x20 && b < 0x7F {
			ascii = append(ascii, string([]byte{byte(b)}))
		}
	}
	tiAll, _ := closeVocab(f, append(all, words...)...)
	tiASCII, _ := closeVocab(f, append(ascii, words...)...)
	opts := Options{MaxNFAStates: 50000, MaxDFAStates: 20000, MaxWork: 2000000, MaxRepeat: 200}
	f.Fuzz(func(t *testing.T, s string, useASCII bool, limit uint8) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		ti := tiAll
		if useASCII {
			ti = tiASCII
		}
		h := fnv.New64a()
		h.Write([]byte(s))
		dn := withDefers(n, h.Sum64()|1, map[*Node]*Node{})
		c, err := CompileConstraint(context.Background(), dn, ti, opts, ConstraintOptions{MaxCloseStates: 1 + int(limit%8)})
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("CompileConstraint(%s) = %v, not an *Error", dn, err)
			}
			return
		}
		need, err := c.NewMatcher().MinTokens()
		if err != nil {
			return // the search ran out, or nothing closes: no base for the walk
		}
		rng := rand.New(rand.NewPCG(h.Sum64(), uint64(limit)))
		dst := make([]uint64, ti.MaskWords())
		for walk := range 3 {
			m := c.NewMatcher()
			for b := need + 2*walk; ; b-- {
				if b == 0 {
					if !m.IsAccepting() {
						t.Fatalf("%q walk %d: budget spent in a state that is not accepting", s, walk)
					}
					break
				}
				if _, err := m.FillMaskWithin(dst, b); err != nil {
					var fe *Error
					if errors.As(err, &fe) && fe.Code.IsLimit() && fe.Code != ErrCloseBudget {
						return // the constraint's own budgets
					}
					t.Fatalf("%q walk %d: FillMaskWithin(%d) = %v", s, walk, b, err)
				}
				ids := tokAllowedIDs(dst)
				if len(ids) == 0 {
					t.Fatalf("%q walk %d: FillMaskWithin(%d): empty mask", s, walk, b)
				}
				tok := ids[rng.IntN(len(ids))]
				if ti.IsEOS(tok) {
					break
				}
				if err := m.Accept(tok); err != nil {
					t.Fatalf("%q walk %d: Accept = %v", s, walk, err)
				}
			}
		}
		// The brute force only on small automata: every state reachable
		// from the start within 60 (the walks created some).
		seen := map[StateID]bool{c.start: true}
		queue := []StateID{c.start}
		for len(queue) > 0 && len(seen) <= 60 {
			q := queue[0]
			queue = queue[1:]
			for _, tok := range ti.tokens {
				x, err := c.run(q, tok)
				if err != nil {
					return
				}
				if x != DeadState && !seen[x] {
					seen[x] = true
					queue = append(queue, x)
				}
			}
		}
		if len(seen) > 60 {
			return
		}
		bf := newBruteClose(c)
		cl := c.closer()
		var states []StateID
		for q := StateID(1); int(q) < c.numStates(); q++ {
			states = append(states, q)
		}
		for _, q := range states {
			bf.d(t, q)
		}
		if c.lazy == nil {
			bf.checkStored(t) // an intersection at the top: eager, no NFA bounds
			return
		}
		cl.mu.Lock()
		cl.ensureUpper(c, states, true)
		cl.mu.Unlock()
		for _, q := range states {
			if u, _ := cl.ub.at.get(q); u < bf.d(t, q) {
				t.Fatalf("%q state %d: U = %d < D = %d", s, q, u, bf.d(t, q))
			}
			if hu, ok := cl.hupp.get(q); ok {
				hmax := int32(-1)
				for _, x := range bf.next(t, q) {
					if x != DeadState {
						hmax = max(hmax, bf.d(t, x))
					}
				}
				if hu < hmax {
					t.Fatalf("%q state %d: Hu = %d < H = %d", s, q, hu, hmax)
				}
			}
		}
		bf.checkStored(t)
	})
}
