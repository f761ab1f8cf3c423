package fsm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// closeVocab builds a small vocabulary: the given words, then EOS (the
// last id, no bytes).
func closeVocab(t testing.TB, words ...string) (*TokenIndex, TokenID) {
	t.Helper()
	toks := make([][]byte, len(words)+1)
	for i, w := range words {
		toks[i] = []byte(w)
	}
	eos := TokenID(len(words))
	ti, err := NewTokenIndex(toks, []TokenID{eos}, len(toks))
	if err != nil {
		t.Fatalf("NewTokenIndex(%q) = %v", words, err)
	}
	return ti, eos
}

// closeVocabs are the vocabularies the brute-force tests run over: every
// printable byte plus JSON-ish words (the byte bound applies, and token
// distances are shorter than byte distances), and words alone, without
// most single bytes (only the exact token search applies, and some states
// cannot be completed at all).
func closeVocabs(t testing.TB) map[string]*TokenIndex {
	words := []string{`{"`, `":`, `",`, `"}`, `"a`, `"b`, `abc`, `ab`, `12`, `00`, `-1`, `.5`, `e+`, `true`, `false`, `null`, `\u00`, `\"`, `"`, `,"`, `}`, `]`, `[`, `{`, `:`, `1`, `0`, `a`}
	withBytes := slices.Clone(words)
	for b := 0x20; b < 0x7f; b++ {
		withBytes = append(withBytes, string(rune(b)))
	}
	wb, _ := closeVocab(t, withBytes...)
	wo, _ := closeVocab(t, words...)
	return map[string]*TokenIndex{"bytes+words": wb, "words": wo}
}

// bruteClose is the reference for closing distances: token successors by
// running every token's bytes through the constraint, distances by plain
// breadth-first search.
type bruteClose struct {
	c    *Constraint
	succ map[StateID][]StateID // per state, per token id: the end state (dead included)
	dist map[StateID]int32
}

func newBruteClose(c *Constraint) *bruteClose {
	return &bruteClose{c: c, succ: map[StateID][]StateID{}, dist: map[StateID]int32{}}
}

func (b *bruteClose) next(t testing.TB, q StateID) []StateID {
	if s, ok := b.succ[q]; ok {
		return s
	}
	ti := b.c.ti
	out := make([]StateID, ti.numTokens)
	for id, tok := range ti.tokens {
		if len(tok) == 0 {
			continue
		}
		s, err := b.c.run(q, tok)
		if err != nil {
			t.Fatalf("run(%d, %q) = %v", q, tok, err)
		}
		out[id] = s
	}
	b.succ[q] = out
	return out
}

// d returns the token distance of q (distInf when acceptance is out of
// reach).
func (b *bruteClose) d(t testing.TB, q StateID) int32 {
	if d, ok := b.dist[q]; ok {
		return d
	}
	seen := map[StateID]bool{q: true}
	level := []StateID{q}
	for n := int32(0); len(level) > 0; n++ {
		var next []StateID
		for _, s := range level {
			if b.c.accepting(s) {
				b.dist[q] = n
				return n
			}
			for _, x := range b.next(t, s) {
				if x != DeadState && !seen[x] {
					seen[x] = true
					next = append(next, x)
				}
			}
		}
		level = next
	}
	b.dist[q] = distInf
	return distInf
}

// byteD returns the byte distance of q over the bytes that are one-byte
// tokens (distInf when acceptance is out of reach that way).
func (b *bruteClose) byteD(t testing.TB, q StateID) int32 {
	ti := b.c.ti
	seen := map[StateID]bool{q: true}
	level := []StateID{q}
	for n := int32(0); len(level) > 0; n++ {
		var next []StateID
		for _, s := range level {
			if b.c.accepting(s) {
				return n
			}
			for _, tok := range ti.tokens {
				if len(tok) != 1 {
					continue
				}
				x, err := b.c.run(s, tok)
				if err != nil {
					t.Fatalf("run(%d, %q) = %v", s, tok, err)
				}
				if x != DeadState && !seen[x] {
					seen[x] = true
					next = append(next, x)
				}
			}
		}
		level = next
	}
	return distInf
}

// checkStored compares every distance and horizon the constraint has
// stored with the brute force: a search must only ever store exact values.
func (b *bruteClose) checkStored(t testing.TB) {
	c := b.c
	cl := c.closer()
	for q := StateID(1); int(q) < c.numStates(); q++ {
		if d, ok := cl.tok.get(q); ok {
			if want := b.d(t, q); d != want {
				t.Fatalf("stored token distance of state %d = %d, want %d", q, d, want)
			}
		}
		if d, ok := cl.byt.get(q); ok {
			if want := b.byteD(t, q); d != want {
				t.Fatalf("stored byte distance of state %d = %d, want %d", q, d, want)
			}
		}
		h, ok := cl.htok.get(q)
		hf, okf := cl.hfin.get(q)
		if ok != okf {
			t.Fatalf("state %d: horizon stored %v, finite horizon stored %v", q, ok, okf)
		}
		if ok {
			wantH, wantF := int32(-1), int32(-1)
			for _, s := range b.next(t, q) {
				if s != DeadState {
					d := b.d(t, s)
					wantH = max(wantH, d)
					if d != distInf {
						wantF = max(wantF, d)
					}
				}
			}
			if h != wantH || hf != wantF {
				t.Fatalf("state %d: horizons %d, %d, want %d, %d", q, h, hf, wantH, wantF)
			}
		}
	}
}

// mask returns the mask of q restricted to budget, and whether it left out
// a token that a larger budget would keep.
func (b *bruteClose) mask(t testing.TB, q StateID, budget int) (within []uint64, restricted bool) {
	ti := b.c.ti
	within = make([]uint64, ti.MaskWords())
	for id, s := range b.next(t, q) {
		if s == DeadState {
			continue
		}
		switch d := b.d(t, s); {
		case d == distInf:
		case int(d) <= budget-1:
			within[id>>6] |= 1 << (uint(id) & 63)
		default:
			restricted = true
		}
	}
	if b.c.accepting(q) {
		for _, e := range ti.eos {
			within[e>>6] |= 1 << (uint(e) & 63)
		}
	}
	return within, restricted
}

// closeConstraints returns the eager and the lazy constraint of n.
func closeConstraints(t *testing.T, ti *TokenIndex, n *Node, copts ConstraintOptions) map[string]*Constraint {
	t.Helper()
	eager, err := NewConstraint(mustCompile(t, n), ti, copts)
	if err != nil {
		t.Fatalf("NewConstraint(%s) = %v", n, err)
	}
	lazy, err := CompileConstraint(context.Background(), n, ti, Options{}, copts)
	if err != nil {
		t.Fatalf("CompileConstraint(%s) = %v", n, err)
	}
	return map[string]*Constraint{"eager": eager, "lazy": lazy}
}

// TestMinTokensWithinBrute walks every lazyCases constraint (eager and
// lazy) over both small vocabularies with random tokens of the restricted
// masks, and checks at every step MinTokens against the brute-force token
// distance and FillMaskWithin, for budgets from the minimum up, against the
// brute-force restricted mask and its restricted flag.
func TestMinTokensWithinBrute(t *testing.T) {
	for vname, ti := range closeVocabs(t) {
		for _, tc := range lazyCases(t) {
			for kind, c := range closeConstraints(t, ti, tc.n, ConstraintOptions{}) {
				t.Run(fmt.Sprintf("%s/%s/%s", vname, tc.name, kind), func(t *testing.T) {
					checkCloseWalks(t, c, rand.New(rand.NewPCG(uint64(len(tc.name)), uint64(len(vname)))), 6)
				})
			}
		}
	}
}

func checkCloseWalks(t *testing.T, c *Constraint, rng *rand.Rand, walks int) {
	t.Helper()
	ti := c.ti
	bf := newBruteClose(c)
	dst := make([]uint64, ti.MaskWords())
	for walk := range walks {
		m := c.NewMatcher()
		slack := walk % 3
		budget := -1
		for step := 0; step < 60; step++ {
			q := m.State()
			want := bf.d(t, q)
			got, err := m.MinTokens()
			switch {
			case want == distInf:
				if !isCode(err, ErrUnclosable) {
					t.Fatalf("walk %d step %d: MinTokens() = %d, %v, want ErrUnclosable", walk, step, got, err)
				}
				return
			case err != nil || int32(got) != want:
				t.Fatalf("walk %d step %d: MinTokens() = %d, %v, want %d", walk, step, got, err, want)
			}
			if budget < 0 {
				budget = got + slack
			}
			for _, b := range []int{got, got + 1, got + 2, got + 5, budget, 1 << 20} {
				within, want := bf.mask(t, q, b)
				restricted, err := m.FillMaskWithin(dst, b)
				if err != nil {
					t.Fatalf("walk %d step %d: FillMaskWithin(%d) = %v", walk, step, b, err)
				}
				if !slices.Equal(dst, within) {
					t.Fatalf("walk %d step %d state %d: FillMaskWithin(%d) mask differs from brute force: %s", walk, step, q, b, tokDiffMasks(ti, dst, within))
				}
				if restricted != want {
					t.Fatalf("walk %d step %d: FillMaskWithin(%d) restricted = %v, want %v", walk, step, b, restricted, want)
				}
			}
			if got > budget {
				t.Fatalf("walk %d step %d: MinTokens() = %d exceeds the budget left, %d", walk, step, got, budget)
			}
			// Step with a random token of the mask within the budget.
			if _, err := m.FillMaskWithin(dst, budget); err != nil {
				t.Fatalf("walk %d step %d: FillMaskWithin(%d) = %v", walk, step, budget, err)
			}
			ids := tokAllowedIDs(dst)
			if len(ids) == 0 {
				t.Fatalf("walk %d step %d: empty mask within budget %d (MinTokens %d)", walk, step, budget, got)
			}
			tok := ids[rng.IntN(len(ids))]
			if ti.IsEOS(tok) || budget == 0 {
				if !m.IsAccepting() {
					t.Fatalf("walk %d step %d: budget spent (or EOS allowed) in a state that is not accepting", walk, step)
				}
				break
			}
			if err := m.Accept(tok); err != nil {
				t.Fatalf("walk %d step %d: Accept(%d) = %v", walk, step, tok, err)
			}
			budget--
		}
	}
	bf.checkStored(t)
}

// TestCloseRandomDFAs compares with the brute force on random DFAs (eager
// constraints only), whose states jump far from and back to acceptance.
func TestCloseRandomDFAs(t *testing.T) {
	for vname, ti := range closeVocabs(t) {
		for seed := range uint64(12) {
			rng := rand.New(rand.NewPCG(seed, 99))
			c, err := NewConstraint(tokRandomDFA(rng, 4+int(seed)), ti, ConstraintOptions{})
			if err != nil {
				t.Fatalf("NewConstraint(random %d) = %v", seed, err)
			}
			t.Run(fmt.Sprintf("%s/%d", vname, seed), func(t *testing.T) { checkCloseWalks(t, c, rng, 4) })
		}
	}
}

// TestFillMaskWithinCases are hand-checked masks: which tokens a budget
// leaves, and whether it restricted anything.
func TestFillMaskWithinCases(t *testing.T) {
	tests := []struct {
		pattern    string
		words      []string
		prefix     []string // tokens accepted first
		budget     int
		want       []string // allowed tokens ("" is EOS)
		restricted bool
		minTokens  int
	}{
		// "abc" in one token, or in two or three.
		{`abc`, []string{"a", "b", "c", "ab", "abc"}, nil, 1, []string{"abc"}, true, 1},
		{`abc`, []string{"a", "b", "c", "ab", "abc"}, nil, 2, []string{"ab", "abc"}, true, 1},
		{`abc`, []string{"a", "b", "c", "ab", "abc"}, nil, 3, []string{"a", "ab", "abc"}, false, 1},
		{`abc`, []string{"a", "b", "c", "ab", "abc"}, []string{"a"}, 2, []string{"b"}, false, 2},
		// An optional long tail: with one token left, only EOS.
		{`x(yyyy)?`, []string{"x", "y", "yy"}, []string{"x"}, 1, []string{""}, true, 0},
		{`x(yyyy)?`, []string{"x", "y", "yy"}, []string{"x"}, 2, []string{"", "yy"}, true, 0},
		{`x(yyyy)?`, []string{"x", "y", "yy"}, []string{"x"}, 4, []string{"", "y", "yy"}, false, 0},
		// A loop: a budget of 0 leaves EOS in an accepting state.
		{`(ab)*`, []string{"a", "b", "ab"}, []string{"ab"}, 0, []string{""}, true, 0},
		{`(ab)*`, []string{"a", "b", "ab"}, []string{"ab"}, 1, []string{"", "ab"}, true, 0},
		{`(ab)*`, []string{"a", "b", "ab"}, []string{"ab"}, 2, []string{"", "a", "ab"}, false, 0},
		// A token after which no token completes the output ("c": there is
		// no "d") is left out whatever the budget, which alone does not
		// count as restricting.
		{`a(b|cd)`, []string{"a", "b", "c", "ab"}, nil, 1, []string{"ab"}, true, 1},
		{`a(b|cd)`, []string{"a", "b", "c", "ab"}, []string{"a"}, 1, []string{"b"}, false, 1},
		{`a(b|cd)`, []string{"a", "b", "c", "ab"}, []string{"a"}, 50, []string{"b"}, false, 1},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/%q/%d", tt.pattern, tt.prefix, tt.budget)
		ti, eos := closeVocab(t, tt.words...)
		id := map[string]TokenID{"": eos}
		for i, w := range tt.words {
			id[w] = TokenID(i)
		}
		for kind, c := range closeConstraints(t, ti, mustParse(t, tt.pattern), ConstraintOptions{}) {
			m := c.NewMatcher()
			for _, w := range tt.prefix {
				if err := m.Accept(id[w]); err != nil {
					t.Fatalf("%s %s: Accept(%q) = %v", name, kind, w, err)
				}
			}
			if n, err := m.MinTokens(); err != nil || n != tt.minTokens {
				t.Errorf("%s %s: MinTokens() = %d, %v, want %d", name, kind, n, err, tt.minTokens)
			}
			dst := make([]uint64, ti.MaskWords())
			restricted, err := m.FillMaskWithin(dst, tt.budget)
			if err != nil {
				t.Errorf("%s %s: FillMaskWithin = %v", name, kind, err)
				continue
			}
			var got []string
			for _, t := range tokAllowedIDs(dst) {
				got = append(got, string(ti.raw[t]))
			}
			want := slices.Clone(tt.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || restricted != tt.restricted {
				t.Errorf("%s %s: FillMaskWithin = %q, restricted %v; want %q, %v", name, kind, got, restricted, want, tt.restricted)
			}
		}
	}
}

// TestCloseErrors covers the failures: a budget below the minimum, an
// output the vocabulary cannot complete, a search over its state budget,
// a short mask, and an error that the matcher already has.
func TestCloseErrors(t *testing.T) {
	ti, _ := closeVocab(t, "a", "b", "{")
	dst := make([]uint64, ti.MaskWords())

	for kind, c := range closeConstraints(t, ti, mustParse(t, `aab`), ConstraintOptions{}) {
		m := c.NewMatcher()
		if _, err := m.FillMaskWithin(dst, 2); !isCode(err, ErrNoRoom) {
			t.Errorf("%s: FillMaskWithin(2) for 3 tokens = %v, want ErrNoRoom", kind, err)
		}
		if _, err := m.FillMaskWithin(dst[:0], 5); !isCode(err, ErrMaskSize) {
			t.Errorf("%s: FillMaskWithin(short dst) = %v, want ErrMaskSize", kind, err)
		}
		// Closing errors are not sticky.
		if _, err := m.FillMaskWithin(dst, 3); err != nil || m.Err() != nil {
			t.Errorf("%s: FillMaskWithin(3) after ErrNoRoom = %v (sticky %v), want nil", kind, err, m.Err())
		}
		if err := m.Accept(1); err == nil {
			t.Fatalf("%s: Accept(b) at the start = nil, want an error", kind)
		}
		if _, err := m.MinTokens(); !isCode(err, ErrTokenRejected) {
			t.Errorf("%s: MinTokens after a rejected token = %v, want the sticky ErrTokenRejected", kind, err)
		}
		if _, err := m.FillMaskWithin(dst, 9); !isCode(err, ErrTokenRejected) {
			t.Errorf("%s: FillMaskWithin after a rejected token = %v, want the sticky ErrTokenRejected", kind, err)
		}
	}

	for kind, c := range closeConstraints(t, ti, mustParse(t, `\{\}`), ConstraintOptions{}) {
		if n, err := c.NewMatcher().MinTokens(); !isCode(err, ErrUnclosable) {
			t.Errorf("%s: MinTokens() of {} without a } token = %d, %v, want ErrUnclosable", kind, n, err)
		}
	}

	for kind, c := range closeConstraints(t, ti, mustParse(t, `a{40}b`), ConstraintOptions{MaxCloseStates: 10}) {
		_, err := c.NewMatcher().MinTokens()
		var fe *Error
		if !errors.As(err, &fe) || fe.Code != ErrCloseBudget || fe.Limit != 10 || fe.Size <= 10 || !fe.Code.IsLimit() {
			t.Errorf("%s: MinTokens() over MaxCloseStates 10 = %v, want ErrCloseBudget with limit 10", kind, err)
		}
	}
	for kind, c := range closeConstraints(t, ti, mustParse(t, `a{40}b`), ConstraintOptions{MaxCloseStates: -1}) {
		if n, err := c.NewMatcher().MinTokens(); err != nil || n != 41 {
			t.Errorf("%s: MinTokens() without a state limit = %d, %v, want 41", kind, n, err)
		}
	}
}

// TestWithinByteFallback checks FillMaskWithin when the exact token search
// is over its state budget: the byte distances still close the output in
// time while they fit the budget (the mask keeps the tokens whose end
// state has a byte distance within it), and the search's error is returned
// when they do not.
func TestWithinByteFallback(t *testing.T) {
	ti, eos := closeVocab(t, "a", "b", "aaaaa")
	dst := make([]uint64, ti.MaskWords())
	// a{30}b: 7 tokens at least (aaaaa ×6, b), 31 bytes.
	for kind, c := range closeConstraints(t, ti, mustParse(t, `a{30}b`), ConstraintOptions{MaxCloseStates: 5}) {
		if _, err := c.NewMatcher().FillMaskWithin(dst, 7); !isCode(err, ErrCloseBudget) {
			t.Errorf("%s: FillMaskWithin(7) = %v, want ErrCloseBudget (the byte distances do not fit)", kind, err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for walk := range 8 {
			m := c.NewMatcher()
			var text []byte
			for budget := 27; budget > 0; budget-- {
				restricted, err := m.FillMaskWithin(dst, budget)
				if err != nil {
					t.Fatalf("%s walk %d: FillMaskWithin(%d) after %q = %v", kind, walk, budget, text, err)
				}
				ids := tokAllowedIDs(dst)
				// At the start only aaaaa keeps the byte distance (26)
				// within the budget; a leads to 30.
				if budget == 27 && (!restricted || !slices.Equal(ids, []TokenID{2})) {
					t.Errorf("%s walk %d: FillMaskWithin(27) at the start = %v, restricted %v; want [2] (aaaaa), true", kind, walk, ids, restricted)
				}
				tok := ids[rng.IntN(len(ids))]
				if tok == eos {
					break
				}
				if err := m.Accept(tok); err != nil {
					t.Fatal(err)
				}
				text = append(text, ti.raw[tok]...)
			}
			if !m.IsAccepting() || string(text) != strings.Repeat("a", 30)+"b" {
				t.Errorf("%s walk %d: output %q, accepting %v; want a{30}b", kind, walk, text, m.IsAccepting())
			}
		}
	}
}

// TestWithinLargeBudgetIsFillMask checks the fast paths: a budget no token
// can break gives FillMask's mask, computes no token search for a lazy
// constraint whose byte bound suffices, and no per-state work at all for an
// eager one (its global bound).
func TestWithinLargeBudgetIsFillMask(t *testing.T) {
	var words []string
	for b := range 0xFF { // 0xFF is never a plain token
		words = append(words, string([]byte{byte(b)}))
	}
	ti, _ := closeVocab(t, append(words, `{"`, `":`, `",`, `"}`, `true`, `null`)...)
	n := objectNode(t, 6)
	cs := closeConstraints(t, ti, n, ConstraintOptions{})
	got := make([]uint64, ti.MaskWords())
	want := make([]uint64, ti.MaskWords())
	for kind, c := range cs {
		rng := rand.New(rand.NewPCG(3, 4))
		m := c.NewMatcher()
		for step := 0; step < 80 && !m.IsTerminated(); step++ {
			restricted, err := m.FillMaskWithin(got, 10_000)
			if err != nil || restricted {
				t.Fatalf("%s step %d: FillMaskWithin(10000) = %v, restricted %v", kind, step, err, restricted)
			}
			if err := m.FillMask(want); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s step %d: FillMaskWithin(10000) differs from FillMask: %s", kind, step, tokDiffMasks(ti, got[:ti.words], want[:ti.words]))
			}
			ids := tokAllowedIDs(want)
			tok := ids[rng.IntN(len(ids))]
			if ti.IsEOS(tok) {
				break
			}
			if err := m.Accept(tok); err != nil {
				t.Fatal(err)
			}
		}
		cl := c.closer()
		cl.mu.Lock()
		succ := len(cl.succ)
		cl.mu.Unlock()
		tokSearched := false
		for q := range StateID(c.numStates()) {
			if _, ok := cl.htok.get(q); ok {
				tokSearched = true
			}
		}
		switch kind {
		case "eager":
			if cl.globalBound(c) < 0 || succ != 0 {
				t.Errorf("eager: global bound %d, %d states walked for successors; want a bound and none", cl.globalBound(c), succ)
			}
		case "lazy":
			if succ == 0 || tokSearched {
				t.Errorf("lazy: %d states walked for successors, token search run %v; want some and false", succ, tokSearched)
			}
		}
	}
}

// TestCloseConcurrent runs random walks with tight budgets on one lazy
// constraint from several goroutines (run it with -race), then replays
// them on a fresh constraint, one at a time: every mask, flag and minimum
// must be the same.
func TestCloseConcurrent(t *testing.T) {
	ti := tokCl100kIndex(t)
	for _, tc := range lazyCases(t)[:8] {
		t.Run(tc.name, func(t *testing.T) {
			shared := closeConstraints(t, ti, tc.n, ConstraintOptions{})["lazy"]
			const workers = 6
			logs := make([][]string, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() { logs[w] = closeWalkLog(shared, uint64(w), 3) })
			}
			wg.Wait()
			fresh := closeConstraints(t, ti, tc.n, ConstraintOptions{})["lazy"]
			for w := range workers {
				if want := closeWalkLog(fresh, uint64(w), 3); !slices.Equal(logs[w], want) {
					t.Errorf("worker %d: concurrent log differs from the serial replay:\n got %q\nwant %q", w, logs[w], want)
				}
			}
		})
	}
}

// closeWalkLog walks c with random tokens under a budget of MinTokens+slack
// and logs what each step saw (the state ids differ between constraints,
// so it logs tokens, counts and minimums). Each walk must end accepting.
func closeWalkLog(c *Constraint, seed uint64, walks int) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	ti := c.ti
	dst := make([]uint64, ti.MaskWords())
	var log []string
	for walk := range walks {
		m := c.NewMatcher()
		need, err := m.MinTokens()
		if err != nil {
			return append(log, fmt.Sprintf("walk %d: MinTokens: %v", walk, err))
		}
		budget := need + int(seed)%3 + walk
		for budget > 0 {
			restricted, err := m.FillMaskWithin(dst, budget)
			if err != nil {
				log = append(log, fmt.Sprintf("FillMaskWithin(%d): %v", budget, err))
				break
			}
			ids := tokAllowedIDs(dst)
			need, _ := m.MinTokens()
			log = append(log, fmt.Sprintf("budget %d need %d allowed %d restricted %v", budget, need, len(ids), restricted))
			if len(ids) == 0 {
				break
			}
			tok := ids[rng.IntN(len(ids))]
			if ti.IsEOS(tok) {
				break
			}
			if err := m.Accept(tok); err != nil {
				log = append(log, fmt.Sprintf("Accept: %v", err))
				break
			}
			budget--
		}
		log = append(log, fmt.Sprintf("walk %d ends accepting %v", walk, m.IsAccepting()))
	}
	return log
}
