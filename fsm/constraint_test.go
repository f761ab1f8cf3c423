package fsm

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// toyVocab: id 0 unused, duplicates (ids 2 and 9 are both "b"; ids 3 and 10
// both "ab"), a special token and an EOS.
var tokToyTokens = [][]byte{
	nil,                       // 0 unused
	[]byte("a"),               // 1
	[]byte("b"),               // 2
	[]byte("ab"),              // 3
	[]byte("abc"),             // 4
	[]byte(`"`),               // 5
	[]byte("c"),               // 6
	{SpecialPrefix, 'x'},      // 7 special
	{SpecialPrefix, 'e', 'o'}, // 8 EOS
	[]byte("b"),               // 9 duplicate of 2
	[]byte("ab"),              // 10 duplicate of 3
	[]byte("bc"),              // 11
}

const tokToyEOS = TokenID(8)

func tokToyIndex(t *testing.T) *TokenIndex {
	t.Helper()
	ti, err := NewTokenIndex(tokToyTokens, []TokenID{tokToyEOS}, 130)
	if err != nil {
		t.Fatalf("NewTokenIndex(toy) = %v", err)
	}
	return ti
}

func tokMustConstraint(t testing.TB, d *DFA, ti *TokenIndex, opts ConstraintOptions) *Constraint {
	t.Helper()
	c, err := NewConstraint(d, ti, opts)
	if err != nil {
		t.Fatalf("NewConstraint = %v", err)
	}
	return c
}

func tokMaskOf(t *testing.T, m *Matcher) []TokenID {
	t.Helper()
	w := make([]uint64, m.Constraint().TokenIndex().MaskWords())
	if err := m.FillMask(w); err != nil {
		t.Fatalf("FillMask = %v", err)
	}
	return tokAllowedIDs(w)
}

func TestToyMasks(t *testing.T) {
	ti := tokToyIndex(t)
	tests := []struct {
		name   string
		d      *DFA
		tokens []TokenID // accepted in order before the mask is taken
		want   []TokenID
	}{
		{"start of {abc,b}", testDFAFromStrings("abc", "b"), nil, []TokenID{1, 2, 3, 4, 9, 10}},
		{"after a", testDFAFromStrings("abc", "b"), []TokenID{1}, []TokenID{2, 9, 11}},
		{"after ab", testDFAFromStrings("abc", "b"), []TokenID{3}, []TokenID{6}},
		{"accepting end", testDFAFromStrings("abc", "b"), []TokenID{4}, []TokenID{tokToyEOS}},
		{"accepting with more", testDFAFromStrings("a", "ab"), []TokenID{1}, []TokenID{2, tokToyEOS, 9}},
		{"special named", testDFAFromStrings("\xffx"), nil, []TokenID{7}},
		{"quote", testDFAFromStrings(`"a"`), nil, []TokenID{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tokMustConstraint(t, tt.d, ti, ConstraintOptions{}).NewMatcher()
			for _, tok := range tt.tokens {
				if err := m.Accept(tok); err != nil {
					t.Fatalf("Accept(%d) = %v", tok, err)
				}
			}
			if got := tokMaskOf(t, m); !slices.Equal(got, tt.want) {
				t.Errorf("mask = %v, want %v", got, tt.want)
			}
			if got, want := tokAllowedIDs(tokBruteMask(tt.d, ti, m.State())), tt.want; !m.IsFinished() && !slices.Equal(got, want) {
				t.Errorf("tokBruteMask = %v, want %v (table is wrong)", got, want)
			}
		})
	}
}

func TestTrieLayout(t *testing.T) {
	toks := [][]byte{[]byte("ab"), []byte("a"), []byte("b"), []byte("ab"), []byte("abc")}
	tr := buildTrie(toks, []TokenID{0, 1, 2, 3, 4}, 5)
	type node struct {
		tok   uint32
		b     byte
		size  uint32
		depth uint32
	}
	var got []node
	for _, n := range tr.nodes {
		got = append(got, node{n.w0 >> 8, byte(n.w0), n.w1 >> 10, n.w1 & trieMaxDepth})
	}
	want := []node{
		{1, 'a', 4, 1}, // "a" (id 1), subtree: ab, ab dup, abc
		{0, 'b', 3, 2}, // "ab" (id 0)
		{3, 'b', 1, 2}, // duplicate "ab" (id 3)
		{4, 'c', 1, 3}, // "abc"
		{2, 'b', 1, 1}, // "b"
	}
	if !slices.Equal(got, want) {
		t.Errorf("buildTrie nodes = %+v, want %+v", got, want)
	}
}

func TestMatcherSemantics(t *testing.T) {
	ti := tokToyIndex(t)
	c := tokMustConstraint(t, testDFAFromStrings("a", "ab", "abc"), ti, ConstraintOptions{})
	m := c.NewMatcher()
	if m.IsAccepting() || m.IsTerminated() {
		t.Fatalf("at start: IsAccepting = %v, IsTerminated = %v, want false, false", m.IsAccepting(), m.IsTerminated())
	}
	// EOS before acceptance is an error, and sticky.
	if err := m.Accept(tokToyEOS); !tokIsCode(err, ErrTokenRejected) {
		t.Fatalf("Accept(EOS) at start = %v, want ErrTokenRejected", err)
	}
	if err := m.Accept(1); !tokIsCode(err, ErrTokenRejected) {
		t.Fatalf("Accept(1) after error = %v, want the sticky ErrTokenRejected", err)
	}
	if err := m.FillMask(make([]uint64, 3)); err == nil || err != m.Err() {
		t.Fatalf("FillMask after error = %v, want the sticky error %v", err, m.Err())
	}
	if err := m.Rollback(0); err != m.Err() {
		t.Fatalf("Rollback after error = %v, want the sticky error", err)
	}
	m.Reset()
	if m.Err() != nil || m.Len() != 0 {
		t.Fatalf("after Reset: Err = %v, Len = %d, want nil, 0", m.Err(), m.Len())
	}
	// a, b, EOS, EOS; then roll back across EOS.
	for _, tok := range []TokenID{1, 2} {
		if err := m.Accept(tok); err != nil {
			t.Fatalf("Accept(%d) = %v", tok, err)
		}
	}
	if !m.IsAccepting() || m.IsTerminated() {
		t.Errorf("after ab: IsAccepting = %v, IsTerminated = %v, want true, false", m.IsAccepting(), m.IsTerminated())
	}
	if got, want := tokMaskOf(t, m), []TokenID{6, tokToyEOS}; !slices.Equal(got, want) {
		t.Errorf("mask after ab = %v, want %v", got, want)
	}
	if err := m.Accept(tokToyEOS); err != nil {
		t.Fatalf("Accept(EOS) when accepting = %v", err)
	}
	if !m.IsTerminated() || !m.IsFinished() {
		t.Errorf("after EOS: IsTerminated = %v, IsFinished = %v, want true, true", m.IsTerminated(), m.IsFinished())
	}
	if got, want := tokMaskOf(t, m), []TokenID{tokToyEOS}; !slices.Equal(got, want) {
		t.Errorf("mask after EOS = %v, want %v", got, want)
	}
	if err := m.Accept(tokToyEOS); err != nil {
		t.Fatalf("second Accept(EOS) = %v, want nil", err)
	}
	if err := m.Rollback(2); err != nil {
		t.Fatalf("Rollback(2) = %v", err)
	}
	if m.IsFinished() || m.Len() != 2 {
		t.Errorf("after Rollback(2): IsFinished = %v, Len = %d, want false, 2", m.IsFinished(), m.Len())
	}
	if err := m.Accept(6); err != nil {
		t.Fatalf("Accept(c) after rollback = %v", err)
	}
	if !m.IsTerminated() {
		t.Errorf("after abc: IsTerminated = false, want true (only EOS can follow)")
	}
	if err := m.Rollback(4); !tokIsCode(err, ErrRollback) {
		t.Errorf("Rollback(4) with 3 accepted = %v, want ErrRollback", err)
	}
	if err := m.Rollback(-1); !tokIsCode(err, ErrRollback) {
		t.Errorf("Rollback(-1) = %v, want ErrRollback", err)
	}
	if err := m.Rollback(3); err != nil || m.State() != c.DFA().Start {
		t.Errorf("Rollback(3) = %v, state %d, want nil, start %d", err, m.State(), c.DFA().Start)
	}
	// Non-EOS after EOS.
	m.Reset()
	for _, tok := range []TokenID{1, tokToyEOS} {
		if err := m.Accept(tok); err != nil {
			t.Fatalf("Accept(%d) = %v", tok, err)
		}
	}
	if err := m.Accept(2); !tokIsCode(err, ErrFinished) {
		t.Errorf("Accept(b) after EOS = %v, want ErrFinished", err)
	}
	// Unknown, unused and special tokens.
	for _, tok := range []TokenID{-1, 0, 12, 1000} {
		m.Reset()
		if err := m.Accept(tok); !tokIsCode(err, ErrUnknownToken) {
			t.Errorf("Accept(%d) = %v, want ErrUnknownToken", tok, err)
		}
	}
	m.Reset()
	if err := m.Accept(7); !tokIsCode(err, ErrTokenRejected) {
		t.Errorf("Accept(special) = %v, want ErrTokenRejected", err)
	}
	// Short mask buffers are a caller error, not sticky.
	m.Reset()
	if err := m.FillMask(make([]uint64, 2)); !tokIsCode(err, ErrMaskSize) || m.Err() != nil {
		t.Errorf("FillMask(short) = %v, Err = %v; want ErrMaskSize, nil", err, m.Err())
	}
}

func TestFillMaskOverwritesAndPads(t *testing.T) {
	ti := tokToyIndex(t)
	c := tokMustConstraint(t, testDFAFromStrings("a"), ti, ConstraintOptions{})
	m := c.NewMatcher()
	dst := make([]uint64, 5) // longer than needed (3 words for width 130)
	for i := range dst {
		dst[i] = ^uint64(0)
	}
	if err := m.FillMask(dst); err != nil {
		t.Fatalf("FillMask = %v", err)
	}
	if got, want := tokAllowedIDs(dst), []TokenID{1}; !slices.Equal(got, want) {
		t.Errorf("FillMask over a dirty buffer = %v, want %v", got, want)
	}
}

func TestForced(t *testing.T) {
	ti := tokToyIndex(t)
	c := tokMustConstraint(t, testDFAFromStrings("abcab"), ti, ConstraintOptions{})
	m := c.NewMatcher()
	// Several tokens are possible at the start (a, ab, ab-dup, abc), so the
	// mask forces nothing; but the DFA forces every byte.
	if got := m.Forced(10); len(got) != 0 {
		t.Errorf("Forced at start = %v, want none", got)
	}
	if got, want := string(m.ForcedBytes()), "abcab"; got != want {
		t.Errorf("ForcedBytes at start = %q, want %q", got, want)
	}
	// After "abc": a, ab and its duplicate are allowed: nothing is forced.
	if err := m.Accept(4); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Forced(10), []TokenID{}; len(got) != 0 {
		t.Errorf("Forced after abc = %v, want %v (a, ab and ab-dup all allowed)", got, want)
	}
	c2 := tokMustConstraint(t, testDFAFromStrings("cc\""), ti, ConstraintOptions{})
	m2 := c2.NewMatcher()
	if got, want := m2.Forced(10), []TokenID{6, 6, 5}; !slices.Equal(got, want) {
		t.Errorf("Forced(cc\") = %v, want %v", got, want)
	}
	if got, want := m2.Forced(2), []TokenID{6, 6}; !slices.Equal(got, want) {
		t.Errorf("Forced(2) = %v, want %v", got, want)
	}
	if m2.Len() != 0 {
		t.Errorf("Forced accepted tokens: Len = %d, want 0", m2.Len())
	}
	// Nothing is forced in an accepting state.
	c3 := tokMustConstraint(t, testDFAFromStrings("a", "ab"), ti, ConstraintOptions{})
	m3 := c3.NewMatcher()
	if err := m3.Accept(1); err != nil {
		t.Fatal(err)
	}
	if got := m3.ForcedBytes(); len(got) != 0 {
		t.Errorf("ForcedBytes in accepting state = %q, want none", got)
	}
	if err := m3.AcceptBytes([]byte("b")); err != nil || !m3.IsTerminated() {
		t.Errorf("AcceptBytes(b) = %v, IsTerminated = %v; want nil, true", err, m3.IsTerminated())
	}
	if err := m3.Rollback(1); err != nil || m3.IsTerminated() {
		t.Errorf("Rollback(1) after AcceptBytes = %v, IsTerminated = %v; want nil, false", err, m3.IsTerminated())
	}
}

func TestNewTokenIndexErrors(t *testing.T) {
	tests := []struct {
		name   string
		tokens [][]byte
		eos    []TokenID
		width  int
	}{
		{"empty", nil, nil, 0},
		{"narrow width", [][]byte{[]byte("a"), []byte("b")}, nil, 1},
		{"eos out of range", [][]byte{[]byte("a")}, []TokenID{1}, 64},
		{"negative eos", [][]byte{[]byte("a")}, []TokenID{-1}, 64},
	}
	for _, tt := range tests {
		_, err := NewTokenIndex(tt.tokens, tt.eos, tt.width)
		if !tokIsCode(err, ErrBadVocabulary) {
			t.Errorf("%s: NewTokenIndex = %v, want ErrBadVocabulary", tt.name, err)
		}
	}
}

func TestNewConstraintErrors(t *testing.T) {
	ti := tokToyIndex(t)
	good := testDFAFromStrings("ab")
	mut := func(f func(d *DFA)) *DFA {
		d := *good
		d.Trans = slices.Clone(good.Trans)
		d.Accept = slices.Clone(good.Accept)
		f(&d)
		return &d
	}
	tests := []struct {
		name string
		d    *DFA
		code ErrorCode
	}{
		{"short table", mut(func(d *DFA) { d.Trans = d.Trans[1:] }), ErrBadDFA},
		{"target out of range", mut(func(d *DFA) { d.Trans[len(d.Trans)-1] = 99 }), ErrBadDFA},
		{"start out of range", mut(func(d *DFA) { d.Start = 99 }), ErrBadDFA},
		{"dead accepting", mut(func(d *DFA) { d.Accept[0] = true }), ErrBadDFA},
		{"dead has edge", mut(func(d *DFA) { d.Trans[0] = 1 }), ErrBadDFA},
		{"not trimmed", mut(func(d *DFA) { d.Accept[len(d.Accept)-1] = false }), ErrBadDFA},
		{"class out of range", mut(func(d *DFA) { d.Classes[7] = 200 }), ErrBadDFA},
		{"empty language", mut(func(d *DFA) { d.Start = DeadState }), ErrEmptyLanguage},
	}
	for _, tt := range tests {
		if _, err := NewConstraint(tt.d, ti, ConstraintOptions{}); !tokIsCode(err, tt.code) {
			t.Errorf("%s: NewConstraint = %v, want code %d", tt.name, err, tt.code)
		}
		// TrustTrimmed skips only the trimming check.
		_, err := NewConstraint(tt.d, ti, ConstraintOptions{TrustTrimmed: true})
		if wantErr := tt.name != "not trimmed"; (err != nil) != wantErr {
			t.Errorf("%s: NewConstraint(TrustTrimmed) = %v, want error: %v", tt.name, err, wantErr)
		}
	}
}

func TestMaskBudget(t *testing.T) {
	ti := tokCl100kIndex(t)
	d := tokStringDFA(-1)
	// The start mask ("\"" tokens only) is small; the body's is dense.
	c := tokMustConstraint(t, d, ti, ConstraintOptions{MaxMaskBytes: 4096})
	m := c.NewMatcher()
	quote := TokenID(1) // cl100k rank 1 is `"`
	if got := string(ti.TokenBytes(quote)); got != `"` {
		t.Fatalf("cl100k token 1 = %q, want %q", got, `"`)
	}
	if err := m.Accept(quote); err != nil {
		t.Fatalf("Accept(quote) = %v", err)
	}
	err := m.FillMask(make([]uint64, ti.MaskWords()))
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrMaskBudget || e.Limit != 4096 || e.Size <= 4096 {
		t.Fatalf("FillMask over budget = %v, want ErrMaskBudget with Limit 4096 and Size > 4096", err)
	}
	if err2 := m.Accept(quote); err2 != err {
		t.Errorf("Accept after budget error = %v, want the sticky %v", err2, err)
	}
}

func TestFingerprint(t *testing.T) {
	base := tokToyIndex(t).Fingerprint()
	again := tokToyIndex(t).Fingerprint()
	if base != again {
		t.Errorf("Fingerprint not deterministic: %s vs %s", base, again)
	}
	changed := slices.Clone(tokToyTokens)
	changed[1] = []byte("z")
	variants := []struct {
		name   string
		tokens [][]byte
		eos    []TokenID
		width  int
	}{
		{"token bytes", changed, []TokenID{tokToyEOS}, 130},
		{"eos", tokToyTokens, []TokenID{7}, 130},
		{"width", tokToyTokens, []TokenID{tokToyEOS}, 192},
		{"split", append([][]byte{[]byte("ab"), nil}, tokToyTokens[2:]...), []TokenID{tokToyEOS}, 130},
	}
	for _, v := range variants {
		ti, err := NewTokenIndex(v.tokens, v.eos, v.width)
		if err != nil {
			t.Fatalf("%s: NewTokenIndex = %v", v.name, err)
		}
		if ti.Fingerprint() == base {
			t.Errorf("%s: Fingerprint unchanged (%s)", v.name, base)
		}
	}
}

func TestConcurrentMatchers(t *testing.T) {
	ti := tokCl100kIndex(t)
	d := tokJSONObjectDFA()
	c := tokMustConstraint(t, d, ti, ConstraintOptions{})
	texts := [][]byte{
		[]byte(`{"name":"Ada Lovelace","code":"X1","age":36,"tags":["math", "poetry"]}`),
		[]byte(`{"name": "żółw 🐢 \"q\"","code":"","age":-7,"tags":[]}`),
		[]byte(`{"name":"","code":"abcdefghijkl","age":0,"tags":["a","b","c"]}`),
	}
	lookup := tokLookup(ti)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			m := c.NewMatcher()
			w := make([]uint64, ti.MaskWords())
			for _, text := range texts {
				m.Reset()
				for _, tok := range tokGreedyTokenize(lookup, text, rng) {
					if err := m.FillMask(w); err != nil {
						errs <- err
						return
					}
					if w[tok>>6]&(1<<(uint(tok)&63)) == 0 {
						errs <- tokError(ErrTokenRejected, "token %d (%q) missing from the mask", tok, ti.TokenBytes(tok))
						return
					}
					if err := m.Accept(tok); err != nil {
						errs <- err
						return
					}
				}
				if err := m.Accept(tokCl100kEOS); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// tokGreedyTokenize splits text into vocabulary tokens: at each position a
// random choice among the 3 longest tokens that match (so that the walk
// goes through non-canonical tokenizations too). lookup maps bytes to ids.
func tokGreedyTokenize(lookup map[string]TokenID, text []byte, rng *rand.Rand) []TokenID {
	var out []TokenID
	for len(text) > 0 {
		var cands []TokenID
		for l := min(len(text), 64); l >= 1 && len(cands) < 3; l-- {
			if id, ok := lookup[string(text[:l])]; ok {
				cands = append(cands, id)
			}
		}
		tok := cands[rng.IntN(len(cands))]
		out = append(out, tok)
		for l := 1; ; l++ {
			if id, ok := lookup[string(text[:l])]; ok && id == tok {
				text = text[l:]
				break
			}
		}
	}
	return out
}

// tokLookup maps each non-EOS token's bytes to its smallest id.
func tokLookup(ti *TokenIndex) map[string]TokenID {
	m := make(map[string]TokenID, len(ti.tokens))
	for id := len(ti.tokens) - 1; id >= 0; id-- {
		if tb := ti.tokens[id]; len(tb) > 0 {
			m[string(tb)] = TokenID(id)
		}
	}
	return m
}

func tokIsCode(err error, code ErrorCode) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

func TestWarm(t *testing.T) {
	ti := tokCl100kIndex(t)
	d := tokJSONObjectDFA()
	c := tokMustConstraint(t, d, ti, ConstraintOptions{})
	n, err := c.Warm(context.Background(), 10)
	if err != nil || n != 10 || c.Stats().MasksComputed != 10 {
		t.Fatalf("Warm(10) = %d, %v; MasksComputed %d; want 10, nil, 10", n, err, c.Stats().MasksComputed)
	}
	n, err = c.Warm(context.Background(), 0)
	if err != nil || n != d.NumStates()-1 || c.Stats().MasksComputed != int64(d.NumStates()-1) {
		t.Fatalf("Warm(0) = %d, %v; MasksComputed %d; want %d (every live state)", n, err, c.Stats().MasksComputed, d.NumStates()-1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tokMustConstraint(t, d, ti, ConstraintOptions{}).Warm(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Warm with a cancelled context = %v, want context.Canceled", err)
	}
	for _, code := range []ErrorCode{ErrBadVocabulary, ErrMaskBudget, ErrTokenRejected, ErrMaskSize} {
		if name, ok := tokenCodeName(code); !ok || name == "" {
			t.Errorf("tokenCodeName(%d) = %q, %v; want a name", code, name, ok)
		}
	}
	if !tokenCodeIsLimit(ErrMaskBudget) || tokenCodeIsLimit(ErrTokenRejected) {
		t.Errorf("tokenCodeIsLimit(ErrMaskBudget, ErrTokenRejected) = %v, %v; want true, false", tokenCodeIsLimit(ErrMaskBudget), tokenCodeIsLimit(ErrTokenRejected))
	}
}
