package sampler

import "math"

// The unconstrained draw without a chain. With no mask, no bias, no
// penalties, no truncation (top_k off or the whole vocabulary, top_p 1,
// min_p 0) and no logprobs, the chain reduces to a weighted draw over
// the row itself; drawRow makes it on the logits directly instead of
// first copying every entry into a candidate (id, logit, weight: 1.5 MB
// for a 128k row), and greedy to one pass. It computes what draw
// computes, in the same order (the same scaled logits, the same float32
// weights summed in id order in float64, the same single uniform draw),
// so a seeded request draws the same token either way
// (TestDrawRowSameAsChain).

// plain reports whether the chain has nothing to do but temperature and
// the draw.
func (s *Sampler) plain() bool {
	p := s.p
	return len(s.bias) == 0 && !s.penalized() && (p.TopK == 0 || p.TopK >= s.vocab) &&
		(p.TopP == 0 || p.TopP == 1) && p.MinP == 0 && !p.Logprobs && p.TopLogprobs == 0
}

// drawRow draws from the whole row; see above. A row with +Inf, or whose
// scaled maximum overflows, takes the chain, which clamps it.
func (s *Sampler) drawRow(logits []float32) (Result, error) {
	maxL := negInf
	for _, l := range logits {
		if l > maxL {
			maxL = l
		}
	}
	if !(maxL > negInf) {
		return Result{}, errorf(CodeNoCandidates, "logits", "every allowed token has a logit of -Inf or NaN")
	}
	res := Result{Allowed: s.vocab}
	if maxL > math.MaxFloat32 {
		return s.drawChain(logits) // +Inf: the chain clamps it
	}
	if s.p.greedy() {
		for i, l := range logits {
			if l == maxL {
				res.ID = TokenID(i)
				return res, nil
			}
		}
	}
	inv := 1 / s.temp
	m := maxL * inv
	if m > math.MaxFloat32 {
		return s.drawChain(logits)
	}
	if cap(s.w) < len(logits) {
		s.w = make([]float32, len(logits))
	}
	w := s.w[:len(logits)]
	var z float64
	for i, l := range logits {
		// NaN and -Inf weigh 0, as the chain drops them.
		x := expNeg(l*inv - m)
		w[i] = x
		z += float64(x)
	}
	u := s.rng.Float64() * z
	var cum float64
	for i, x := range w {
		cum += float64(x)
		if u < cum {
			res.ID = TokenID(i)
			return res, nil
		}
	}
	// Rounding: u landed on the total; the last token with weight after
	// the first candidate, else the first candidate, as pick.
	first := 0
	for first < len(logits) && !(logits[first] > negInf) {
		first++
	}
	for i := len(w) - 1; i > first; i-- {
		if w[i] > 0 {
			res.ID = TokenID(i)
			return res, nil
		}
	}
	res.ID = TokenID(first)
	return res, nil
}

// drawChain is the chain's unconstrained draw, for the rows drawRow does
// not take.
func (s *Sampler) drawChain(logits []float32) (Result, error) {
	s.cands = gatherAll(s.cands[:0], logits)
	res := Result{Allowed: s.vocab}
	err := s.draw(&res)
	return res, err
}
