package sampler

import (
	"fmt"
	"testing"
)

// sampleFirst is "sample first, verify, mask only on rejection", kept in a
// test file so that BenchmarkSampleFirst can be rerun: it lost to mask-first
// (see the package doc), so Sample does not use it. It draws from
// the unconstrained distribution, and if isAllowed accepts the draw it
// returns it without ever building the mask. Otherwise it calls fill to get
// the mask (and its popcount, or 0 if unknown) and draws again, mask-first.
//
// This is exact only for pure temperature sampling and greedy (see the
// package doc); with top_k, top_p or min_p set, or when logprobs are asked
// for, sampleFirst calls fill first and behaves exactly like Sample.
func (s *Sampler) sampleFirst(logits []float32, isAllowed func(TokenID) bool, fill func() ([]uint64, int, error)) (Result, error) {
	if !s.p.pureTemperature() || s.p.Logprobs || s.p.TopLogprobs > 0 {
		mask, n, err := fill()
		if err != nil {
			return Result{}, err
		}
		return s.Sample(logits, mask, n)
	}
	if len(logits) != s.vocab {
		return Result{}, errorf(CodeBadInput, "logits", "%d logits, want %d", len(logits), s.vocab)
	}
	s.cands = gatherAll(s.cands[:0], logits)
	res := Result{Allowed: s.vocab}
	if err := s.draw(&res); err == nil && isAllowed(res.ID) {
		s.Observe(res.ID)
		return res, nil
	}
	mask, n, err := fill()
	if err != nil {
		return Result{}, err
	}
	if mask == nil {
		return Result{}, errorf(CodeBadInput, "mask", "fill returned no mask after a rejected draw")
	}
	return s.Sample(logits, mask, n)
}

func TestSampleFirst(t *testing.T) {
	base := logitsOf(0.4, 0.25, 0.15, 0.1, 0.06, 0.04)
	mask := maskOf(6, 1, 3, 5)
	want := []float64{0, 0.25 / 0.39, 0, 0.1 / 0.39, 0, 0.04 / 0.39}
	fills := 0
	fill := func() ([]uint64, int, error) { fills++; return mask, 3, nil }
	isAllowed := func(id TokenID) bool { return Allowed(mask, id) }
	const n = 100000
	s := mustNew(t, 6, Params{Seed: 11})
	h := make([]int, 6)
	buf := make([]float32, 6)
	for range n {
		copy(buf, base)
		r, err := s.sampleFirst(buf, isAllowed, fill)
		if err != nil {
			t.Fatal(err)
		}
		if !Allowed(mask, r.ID) {
			t.Fatalf("sampleFirst = %d, which the mask disallows", r.ID)
		}
		h[r.ID]++
	}
	if x := chiSquare(h, want, n); x > chiLimit {
		t.Errorf("sampleFirst: counts %v, want proportions %v: chi-square %.1f", h, want, x)
	}
	// The mask is built only on rejection: about 61% of draws here.
	if fills < n/2 || fills > n*7/10 {
		t.Errorf("sampleFirst built the mask %d times in %d draws, want about %d", fills, n, n*61/100)
	}
	// With top_k the mask is always built first.
	fills = 0
	s = mustNew(t, 6, Params{TopK: 2})
	for range 100 {
		copy(buf, base)
		if r, err := s.sampleFirst(buf, isAllowed, fill); err != nil || !Allowed(mask, r.ID) {
			t.Fatalf("sampleFirst(top_k) = %v, %v", r.ID, err)
		}
	}
	if fills != 100 {
		t.Errorf("sampleFirst(top_k 2) built the mask %d times in 100 draws, want 100", fills)
	}
}

// BenchmarkSampleFirst compares sample-first-then-verify with mask-first for
// pure temperature sampling, when the mask costs nothing but a copy (the
// sampler-only view; a real constraint pays its FillMask on top, which
// sample-first skips when the draw is accepted). "agree": the model's peaks
// are allowed (most draws accepted); "disagree": they are not.
func BenchmarkSampleFirst(b *testing.B) {
	for _, v := range []int{128256} {
		for _, agree := range []bool{true, false} {
			l := benchRow(v)
			m := benchMask(v, "dense")
			for i, x := range l {
				if x > 8 {
					if agree {
						m[i>>6] |= 1 << (uint(i) & 63)
					} else {
						m[i>>6] &^= 1 << (uint(i) & 63)
					}
				}
			}
			n := Popcount(m)
			dst := make([]uint64, len(m))
			fill := func() ([]uint64, int, error) { copy(dst, m); return dst, n, nil }
			isAllowed := func(id TokenID) bool { return Allowed(m, id) }
			row := make([]float32, v)
			name := map[bool]string{true: "agree", false: "disagree"}[agree]
			b.Run(fmt.Sprintf("vocab=%d/%s/mask-first", v, name), func(b *testing.B) {
				s := mustNew(b, v, Params{Temperature: Temp(0.8)})
				for b.Loop() {
					copy(row, l)
					mk, c, _ := fill()
					if _, err := s.Sample(row, mk, c); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("vocab=%d/%s/sample-first", v, name), func(b *testing.B) {
				s := mustNew(b, v, Params{Temperature: Temp(0.8)})
				for b.Loop() {
					copy(row, l)
					if _, err := s.sampleFirst(row, isAllowed, fill); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
