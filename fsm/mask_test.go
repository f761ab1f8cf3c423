package fsm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// tokTestDFAs are the DFAs the cl100k tests run over.
func tokTestDFAs() []struct {
	name string
	d    *DFA
} {
	rng := rand.New(rand.NewPCG(1, 2))
	out := []struct {
		name string
		d    *DFA
	}{
		{"string", tokStringDFA(-1)},
		{"string max 5", tokStringDFA(5)},
		{"string max 40", tokStringDFA(40)},
		{"object", tokJSONObjectDFA()},
		{"keywords", testDFAFromStrings("true", "false", "null", "nullable", " {\"a\": 1}")},
	}
	for i := range 6 {
		out = append(out, struct {
			name string
			d    *DFA
		}{fmt.Sprintf("random %d", i), tokRandomDFA(rng, 3+i*3)})
	}
	return out
}

// TestMasksAgainstBruteForce feeds tokens one at a time (random allowed
// tokens, with a bias to end) and checks every intermediate mask against a
// per-token DFA run, on the cl100k_base vocabulary.
func TestMasksAgainstBruteForce(t *testing.T) {
	ti := tokCl100kIndex(t)
	steps := 40
	if testing.Short() {
		steps = 10
	}
	for _, tc := range tokTestDFAs() {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []ConstraintOptions{{}, {NoSlicer: true}} {
				c := tokMustConstraint(t, tc.d, ti, opts)
				m := c.NewMatcher()
				rng := rand.New(rand.NewPCG(3, uint64(len(tc.name))))
				w := make([]uint64, ti.MaskWords()+1)
				var accepted []TokenID
				namesFF := false // whether some state has a 0xFF transition
				for q := range tc.d.NumStates() {
					namesFF = namesFF || tc.d.Next(StateID(q), SpecialPrefix) != DeadState
				}
				for step := 0; step < steps; step++ {
					if err := m.FillMask(w); err != nil {
						t.Fatalf("step %d: FillMask = %v", step, err)
					}
					want := tokBruteMask(tc.d, ti, m.State())
					if m.IsFinished() {
						want = make([]uint64, len(want))
						want[tokCl100kEOS>>6] |= 1 << (uint(tokCl100kEOS) & 63)
					}
					if !slices.Equal(w[:len(want)], want) || w[len(want)] != 0 {
						t.Fatalf("step %d (state %d, NoSlicer=%v): mask differs from brute force: %s", step, m.State(), opts.NoSlicer, tokDiffMasks(ti, w, want))
					}
					n, err := m.AllowedCount()
					if err != nil || n != popWords(want) {
						t.Fatalf("step %d: AllowedCount = %d, %v; want %d", step, n, err, popWords(want))
					}
					ids := tokAllowedIDs(want)
					if len(ids) == 0 {
						t.Fatalf("step %d: empty mask in state %d (DFA not trimmed?)", step, m.State())
					}
					for _, id := range ids {
						if int(id) >= ti.NumTokens() || (!namesFF && ti.TokenBytes(id)[0] == SpecialPrefix && !ti.IsEOS(id)) {
							t.Fatalf("step %d: mask allows %d (%q)", step, id, ti.TokenBytes(id))
						}
					}
					// A token outside the mask is rejected; then replay.
					if step%4 == 0 && !m.IsFinished() {
						bad := TokenID(rng.IntN(ti.NumTokens()))
						if w[bad>>6]&(1<<(uint(bad)&63)) == 0 {
							if err := m.Accept(bad); err == nil {
								t.Fatalf("step %d: Accept(%d %q) outside the mask succeeded", step, bad, ti.TokenBytes(bad))
							}
							m.Reset()
							for _, tk := range accepted {
								if err := m.Accept(tk); err != nil {
									t.Fatalf("replay Accept(%d) = %v", tk, err)
								}
							}
						}
					}
					tok := ids[rng.IntN(len(ids))]
					if m.IsAccepting() && rng.IntN(4) == 0 {
						tok = tokCl100kEOS
					}
					if err := m.Accept(tok); err != nil {
						t.Fatalf("step %d: Accept(%d %q) = %v", step, tok, ti.TokenBytes(tok), err)
					}
					accepted = append(accepted, tok)
					if m.IsFinished() && rng.IntN(2) == 0 {
						m.Reset()
						accepted = accepted[:0]
					}
				}
			}
		})
	}
}

// TestSlicedEqualsPlain checks the slicer against the plain walk on every
// state of the test DFAs, and that slices were actually used.
func TestSlicedEqualsPlain(t *testing.T) {
	ti := tokCl100kIndex(t)
	usedAny := false
	for _, tc := range tokTestDFAs() {
		c := tokMustConstraint(t, tc.d, ti, ConstraintOptions{})
		sc := ti.newScratch()
		for _, q := range tokLiveStates(tc.d) {
			plain, err := c.plainMask(q)
			if err != nil {
				t.Fatal(err)
			}
			plain = slices.Clone(plain)
			before := c.sliced.Load()
			sliced, err := c.computeBits(q, sc, true)
			if err != nil {
				t.Fatal(err)
			}
			if c.sliced.Load() > before {
				usedAny = true
			}
			if !slices.Equal(sliced, plain) {
				t.Fatalf("%s: state %d: sliced mask differs from plain walk: %s", tc.name, q, tokDiffMasks(ti, sliced, plain))
			}
		}
	}
	if !usedAny {
		t.Errorf("no state used a slice: the slicer test is vacuous")
	}
}

// tokDigitsDFA accepts [0-9]+.
func tokDigitsDFA() *DFA {
	b := newTokDFABuilder()
	start, digs := b.state(), b.state()
	b.add(start, '0', '9', digs)
	b.add(digs, '0', '9', digs)
	b.accept[digs] = true
	return b.build(start)
}

// TestSliceBounds checks safe(q) and dead(q) on string bodies and others.
func TestSliceBounds(t *testing.T) {
	ti := tokCl100kIndex(t)
	sc := ti.newScratch()
	const inf = noBound
	tests := []struct {
		name       string
		d          *DFA
		prefix     string
		safe, dead int // safe == inf: at least the longest slice token
	}{
		{"unbounded body", tokStringDFA(-1), `"`, inf, inf},
		{"unbounded after text", tokStringDFA(-1), `"abc é`, inf, inf},
		{"max 40, 0 used", tokStringDFA(40), `"`, 40, 41},
		{"max 40, 15 used", tokStringDFA(40), `"abcdefghijklmn😀`, 25, 26},
		// When one character can kill q, no slice applies and dead is not
		// computed.
		{"max 5, mid-char", tokStringDFA(5), "\"ab\xc3", 0, inf}, // slice tokens start at a boundary
		{"max 5, full", tokStringDFA(5), `"abcde`, 0, inf},
		{"max 5, 4 used", tokStringDFA(5), `"abcd`, 1, 2},
		{"before the string", tokStringDFA(-1), ``, 0, inf},
		{"after the string", tokStringDFA(-1), `"a"`, 0, inf},
		{"keyword", testDFAFromStrings("nullable"), `nu`, 0, inf},
		{"digits", tokDigitsDFA(), `1`, 0, inf},
		{"object start", tokJSONObjectDFA(), ``, 0, inf},
	}
	for _, tt := range tests {
		c := tokMustConstraint(t, tt.d, ti, ConstraintOptions{})
		q := tt.d.Run(tt.d.Start, []byte(tt.prefix))
		if q == DeadState {
			t.Fatalf("%s: prefix %q is rejected", tt.name, tt.prefix)
		}
		safe, dead, err := c.sliceBounds(q, sc)
		if err != nil {
			t.Fatal(err)
		}
		if (tt.safe == inf && safe < ti.maxChars) || (tt.safe != inf && safe != tt.safe) || dead != tt.dead {
			t.Errorf("%s: sliceBounds = %d, %d; want %d, %d", tt.name, safe, dead, tt.safe, tt.dead)
		}
	}
}

// TestInterning checks that equal masks share one entry and that sparse and
// complement storage round-trips.
func TestInterning(t *testing.T) {
	ti := tokCl100kIndex(t)
	// Many unbounded string bodies (one per property) share their mask's
	// string part, but differ after the closing quote; the body states of
	// one string share one mask.
	d := tokStringDFA(-1)
	c := tokMustConstraint(t, d, ti, ConstraintOptions{})
	m := c.NewMatcher()
	w := make([]uint64, ti.MaskWords())
	lookup := tokLookup(ti)
	for _, s := range []string{`"`, "abc", " def", "é", "x"} {
		if err := m.Accept(lookup[s]); err != nil {
			t.Fatalf("Accept(%q) = %v", s, err)
		}
		if err := m.FillMask(w); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.DistinctMasks != 2 {
		t.Errorf("Stats().DistinctMasks = %d after start + body states, want 2", st.DistinctMasks)
	}
	// Storage kinds round-trip.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, pop := range []int{0, 1, 10, 900, 5000, ti.numTokens - 900, ti.numTokens - 1, ti.numTokens} {
		bits := make([]uint64, ti.words)
		perm := rng.Perm(ti.numTokens)[:pop]
		for _, id := range perm {
			bits[id>>6] |= 1 << (uint(id) & 63)
		}
		h, hpop := hashWords(bits)
		if hpop != pop {
			t.Errorf("hashWords pop = %d, want %d", hpop, pop)
		}
		e := newMaskEntry(bits, ti.numTokens, h, pop)
		got := make([]uint64, ti.words+2)
		for i := range got {
			got[i] = ^uint64(0)
		}
		e.fill(got, ti.numTokens)
		if !slices.Equal(got[:ti.words], bits) || got[ti.words] != 0 || got[ti.words+1] != 0 {
			t.Errorf("pop %d (kind %d): fill does not round-trip: %s", pop, e.kind, tokDiffMasks(ti, got, bits))
		}
		if e.pop != pop || !e.equalBits(bits, pop) {
			t.Errorf("pop %d (kind %d): entry pop = %d, equalBits = %v", pop, e.kind, e.pop, e.equalBits(bits, pop))
		}
		if pop > 0 {
			other := slices.Clone(bits)
			other[perm[0]>>6] ^= 1 << (uint(perm[0]) & 63)
			other[(perm[0]+1)%ti.numTokens>>6] ^= 1 << (uint((perm[0]+1)%ti.numTokens) & 63)
			if _, opop := hashWords(other); e.equalBits(other, opop) && !slices.Equal(other, bits) {
				t.Errorf("pop %d (kind %d): equalBits of a different mask = true", pop, e.kind)
			}
		}
		for _, id := range perm[:min(pop, 20)] {
			if !e.has(uint32(id)) {
				t.Errorf("pop %d (kind %d): has(%d) = false", pop, e.kind, id)
			}
		}
		wantKind := maskBits
		switch lm := maskListMax(ti.words); {
		case pop <= lm:
			wantKind = maskList
		case ti.numTokens-pop <= lm:
			wantKind = maskComplement
		}
		if e.kind != wantKind {
			t.Errorf("pop %d: kind = %d, want %d", pop, e.kind, wantKind)
		}
	}
}

// TestWalkPrunes checks that the walk skips dead subtrees: from the start of
// a JSON string only '"'-prefixed tokens survive the first byte, while a
// string body visits most of the trie.
func TestWalkPrunes(t *testing.T) {
	ti := tokCl100kIndex(t)
	d := tokStringDFA(-1)
	c := tokMustConstraint(t, d, ti, ConstraintOptions{})
	k := uint32(c.k)
	trans := c.tab.Load().trans
	start := ti.full.countVisited(trans, &c.classes, uint32(d.Start)*k)
	body := ti.full.countVisited(trans, &c.classes, uint32(d.Run(d.Start, []byte(`"`)))*k)
	if n := len(ti.full.nodes); start > 2000 || body < n/2 {
		t.Errorf("visited nodes: start %d, body %d of %d; want start ≤ 2000 (pruned) and body ≥ half", start, body, n)
	}
}

// TestMarkerBytesOnlyFromSpecials checks that plain tokens holding byte
// 0xFF (byte-level vocabularies have a one-byte 0xFF token) are never
// allowed, so that plain tokens cannot spell a special token's marker.
func TestMarkerBytesOnlyFromSpecials(t *testing.T) {
	special := append([]byte{SpecialPrefix}, "<tc>"...)
	tokens := [][]byte{{SpecialPrefix}, []byte("<tc>"), special, []byte("x"), {'a', SpecialPrefix}}
	ti, err := NewTokenIndex(tokens, nil, len(tokens))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Compile(Alt(Cat(LitBytes(special), Lit("x")), Cat(ByteClass(ByteRange{0xFF, 0xFF}), Lit("<tc>x"))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConstraint(d, ti, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := c.NewMatcher()
	mask := make([]uint64, ti.MaskWords())
	if err := m.FillMask(mask); err != nil {
		t.Fatal(err)
	}
	for id, want := range []bool{false, false, true, false, false} {
		if got := mask[0]&(1<<uint(id)) != 0; got != want {
			t.Errorf("start mask: token %d (%q) allowed = %v, want %v", id, tokens[id], got, want)
		}
	}
}
