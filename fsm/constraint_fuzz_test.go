package fsm

import (
	"bytes"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tokCheckAllStates compares, on every state of d, the stored mask with the
// brute-force mask and the sliced computation with the plain walk.
func tokCheckAllStates(t *testing.T, d *DFA, ti *TokenIndex) {
	t.Helper()
	c, err := NewConstraint(d, ti, ConstraintOptions{})
	if err != nil {
		if tokIsCode(err, ErrEmptyLanguage) {
			return
		}
		t.Fatalf("NewConstraint = %v", err)
	}
	w := make([]uint64, ti.MaskWords())
	sc := ti.newScratch()
	for _, q := range tokLiveStates(d) {
		if err := c.FillMask(q, w); err != nil {
			t.Fatalf("FillMask(%d) = %v", q, err)
		}
		want := tokBruteMask(d, ti, q)
		if !slices.Equal(w, want) {
			t.Fatalf("state %d: mask differs from brute force: %s", q, tokDiffMasks(ti, w, want))
		}
		plain, err := c.plainMask(q)
		if err != nil {
			t.Fatalf("plainMask(%d) = %v", q, err)
		}
		plain = slices.Clone(plain)
		if sliced, err := c.computeBits(q, sc, true); err != nil || !slices.Equal(sliced, plain) {
			t.Fatalf("state %d: sliced differs from plain: %s", q, tokDiffMasks(ti, sliced, plain))
		}
	}
}

// FuzzTokenMasks builds a vocabulary from the fuzz input (tokens separated by
// 0x00; empty and duplicate tokens included) and checks every state's mask
// of a finite DFA (words separated by ',') and of a random DFA.
func FuzzTokenMasks(f *testing.F) {
	f.Add([]byte("a\x00b\x00ab\x00ab\x00\x00\"\x00é\x00\xc3\x00\xa9"), "ab,abc,é")
	f.Add([]byte("tr\x00ue\x00true\x00fal\x00se\x00 \x00\xff\x00nul"), "true,false,null")
	f.Add([]byte("x\x00xx\x00xxx\x00\x00x"), "xxxxxxx,x")
	f.Fuzz(func(t *testing.T, vocab []byte, words string) {
		if len(vocab) > 4096 || len(words) > 512 {
			return
		}
		toks := bytes.Split(vocab, []byte{0})
		toks = append(toks, []byte{SpecialPrefix, 'E'}) // EOS
		eos := TokenID(len(toks) - 1)
		ti, err := NewTokenIndex(toks, []TokenID{eos}, len(toks)+len(words)%70) // padded width
		if err != nil {
			t.Fatalf("NewTokenIndex = %v", err)
		}
		tokCheckAllStates(t, testDFAFromStrings(strings.Split(words, ",")...), ti)
		h := fnv.New64a()
		h.Write(vocab)
		h.Write([]byte(words))
		tokCheckAllStates(t, tokRandomDFA(rand.New(rand.NewPCG(h.Sum64(), 1)), 1+len(words)%7), ti)
	})
}

func TestLongTokens(t *testing.T) {
	a := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	toks := [][]byte{a(1), a(1023), a(1024), a(1100), a(1500), []byte("b"), {SpecialPrefix}}
	ti, err := NewTokenIndex(toks, []TokenID{6}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ti.long, []TokenID{2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("long tokens = %v, want %v", got, want)
	}
	d := testDFAFromStrings(string(a(1100)) + "b")
	tokCheckAllStates(t, d, ti)
	m := tokMustConstraint(t, d, ti, ConstraintOptions{}).NewMatcher()
	if got, want := tokMaskOf(t, m), []TokenID{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("start mask = %v, want %v (a×1500 is too long)", got, want)
	}
	for _, tok := range []TokenID{3, 5, 6} {
		if err := m.Accept(tok); err != nil {
			t.Fatalf("Accept(%d) = %v", tok, err)
		}
	}
}
