package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// sparseDivisor sets the gather threshold: a mask allowing fewer than
// vocab/sparseDivisor tokens takes the sparse gather. BenchmarkGather shows
// the sparse gather no slower than the dense one at any density (it does the
// same word tests and skips the -Inf writes and the row rescan), so the
// divisor is 1: the dense path is kept only as ApplyMask for callers that
// want the row itself masked.
const sparseDivisor = 1

// TokenLogprob is one token with its logprob, for top-logprob lists.
type TokenLogprob struct {
	ID      TokenID
	Logprob float32
}

// Result is the outcome of one draw.
type Result struct {
	// ID is the chosen token.
	ID TokenID
	// Logprob is ID's logprob (see the package doc for the distribution);
	// set when Params.Logprobs or Params.TopLogprobs asks for it, else 0.
	Logprob float32
	// Top lists the Params.TopLogprobs most likely allowed tokens, most
	// likely first (ties by lower id). It aliases the sampler's scratch and
	// is valid until the next call on the same Sampler; copy it to keep it.
	Top []TokenLogprob
	// Allowed is the number of tokens the mask allowed (the vocabulary when
	// unconstrained).
	Allowed int
}

// Sampler draws tokens for one sequence. See the package doc for the chain.
// It is not safe for concurrent use.
type Sampler struct {
	vocab int
	p     Params
	temp  float32
	bias  []biasEntry // sorted by id
	rng   *rand.Rand
	src   *rand.PCG

	// Penalty history: window holds the observed tokens (a ring of
	// PenaltyLastN when bounded), counts their multiplicities in the window.
	window []TokenID
	head   int
	counts map[TokenID]int32

	cands []cand
	top   []TokenLogprob
	w     []float32 // drawRow's weights
}

type biasEntry struct {
	id TokenID
	b  float32
}

// New returns a Sampler for a vocabulary of vocab tokens (the logit row width).
func New(vocab int, p Params) (*Sampler, error) {
	if vocab <= 0 {
		return nil, errorf(CodeInvalidParam, "vocab", "%d is not positive", vocab)
	}
	s := &Sampler{vocab: vocab, src: rand.NewPCG(0, 0), counts: map[TokenID]int32{}}
	s.rng = rand.New(s.src)
	if err := s.Reset(p); err != nil {
		return nil, err
	}
	return s, nil
}

// Reset prepares the sampler for a new sequence with parameters p: it
// reseeds the RNG, clears the penalty history and keeps the scratch buffers.
func (s *Sampler) Reset(p Params) error {
	if err := p.Validate(s.vocab); err != nil {
		return err
	}
	s.p = p
	s.temp = float32(p.temperature())
	s.bias = s.bias[:0]
	for id, b := range p.LogitBias {
		if b != 0 {
			s.bias = append(s.bias, biasEntry{id, float32(b)})
		}
	}
	slices.SortFunc(s.bias, func(a, b biasEntry) int { return int(a.id) - int(b.id) })
	s.src.Seed(p.Seed, p.Seed^0x9e3779b97f4a7c15)
	s.window = s.window[:0]
	s.head = 0
	clear(s.counts)
	return nil
}

// Params returns the sampler's parameters.
func (s *Sampler) Params() Params { return s.p }

// Observe records tokens in the penalty history without sampling them (for
// example tokens forced by a constraint, or prompt tokens when penalties
// should see them). Sample records the tokens it draws itself.
//
// Without any penalty configured the history is not kept at all.
func (s *Sampler) Observe(ids ...TokenID) {
	if !s.penalized() {
		return
	}
	n := s.p.PenaltyLastN
	for _, id := range ids {
		s.counts[id]++
		if n == 0 || len(s.window) < n {
			s.window = append(s.window, id)
			continue
		}
		old := s.window[s.head]
		if c := s.counts[old] - 1; c == 0 {
			delete(s.counts, old)
		} else {
			s.counts[old] = c
		}
		s.window[s.head] = id
		s.head = (s.head + 1) % n
	}
}

// Sample draws one token from logits under mask and records it in the
// penalty history.
//
// mask nil means unconstrained; otherwise it must have MaskWords(len(logits))
// words. allowed is the mask's popcount when the caller knows it; allowed <=
// 0 means unknown and it is counted (O(vocab/64)). A mask that allows nothing
// is a CodeEmptyMask error, never an unconstrained draw.
//
// Sample reads logits and, when it takes the dense gather, overwrites
// disallowed entries with -Inf; it never writes allowed entries.
func (s *Sampler) Sample(logits []float32, mask []uint64, allowed int) (Result, error) {
	if len(logits) != s.vocab {
		return Result{}, errorf(CodeBadInput, "logits", "%d logits, want %d", len(logits), s.vocab)
	}
	if mask == nil && s.plain() {
		res, err := s.drawRow(logits)
		if err == nil {
			s.Observe(res.ID)
		}
		return res, err
	}
	c := s.cands[:0]
	if mask == nil {
		c = gatherAll(c, logits)
	} else {
		if err := checkMask(logits, mask); err != nil {
			return Result{}, err
		}
		if allowed <= 0 {
			allowed = Popcount(mask)
		}
		if allowed == 0 {
			return Result{}, errorf(CodeEmptyMask, "mask", "no token is allowed")
		}
		if allowed*sparseDivisor <= s.vocab {
			c = gatherSparse(c, logits, mask)
		} else {
			c = gatherDense(c, logits, mask)
		}
	}
	s.cands = c
	res := Result{Allowed: len(c)}
	if mask == nil {
		res.Allowed = s.vocab
	}
	if err := s.draw(&res); err != nil {
		return Result{}, err
	}
	s.Observe(res.ID)
	return res, nil
}

// draw runs the chain from logit bias to the final draw over s.cands, which
// holds the allowed candidates in increasing id order.
func (s *Sampler) draw(res *Result) error {
	c := s.cands
	s.applyBias(c)
	s.applyPenalties(c)

	// Temperature and compaction: drop -Inf and NaN, clamp +Inf, scale.
	inv := float32(1)
	if !s.p.greedy() {
		inv = 1 / s.temp
	}
	k := 0
	maxL := negInf
	for _, x := range c {
		if !(x.l > negInf) {
			continue
		}
		if x.l *= inv; x.l > math.MaxFloat32 {
			x.l = math.MaxFloat32
		}
		if x.l > maxL {
			maxL = x.l
		}
		c[k] = x
		k++
	}
	c = c[:k]
	if len(c) == 0 {
		return errorf(CodeNoCandidates, "logits", "every allowed token has a logit of -Inf or NaN")
	}

	wantLogprobs := s.p.Logprobs || s.p.TopLogprobs > 0
	if s.p.greedy() && !wantLogprobs {
		res.ID = argmax(c).id
		return nil
	}

	// Weights exp(l - max) and the log-normaliser over the allowed set.
	var z float64
	for i := range c {
		w := expNeg(c[i].l - maxL)
		c[i].w = w
		z += float64(w)
	}
	lse := maxL + float32(math.Log(z))

	if n := s.p.TopLogprobs; n > 0 {
		n = min(n, len(c))
		selectTop(c, n)
		sortTop(c[:n])
		s.top = s.top[:0]
		for _, x := range c[:n] {
			s.top = append(s.top, TokenLogprob{x.id, x.l - lse})
		}
		res.Top = s.top
	}

	var chosen cand
	if s.p.greedy() {
		chosen = argmax(c)
	} else {
		c, z = s.truncate(c, z)
		chosen = s.pick(c, z)
	}
	res.ID = chosen.id
	if wantLogprobs {
		res.Logprob = chosen.l - lse
	}
	return nil
}

// argmax returns the best candidate, ties to the lowest id (c is non-empty).
func argmax(c []cand) cand {
	best := c[0]
	for _, x := range c[1:] {
		if better(x, best) {
			best = x
		}
	}
	return best
}

// applyBias adds the logit bias to the candidates that have one; c is in
// increasing id order.
func (s *Sampler) applyBias(c []cand) {
	if len(s.bias) == 0 {
		return
	}
	j := 0
	for _, b := range s.bias {
		j += sort.Search(len(c)-j, func(i int) bool { return c[j+i].id >= b.id })
		if j == len(c) {
			return
		}
		if c[j].id == b.id {
			c[j].l += b.b
		}
	}
}

// penalized reports whether any penalty is configured.
func (s *Sampler) penalized() bool {
	return (s.p.RepetitionPenalty != 0 && s.p.RepetitionPenalty != 1) || s.p.PresencePenalty != 0 || s.p.FrequencyPenalty != 0
}

// applyPenalties applies the repetition, presence and frequency penalties to
// the candidates seen in the window; c is in increasing id order.
func (s *Sampler) applyPenalties(c []cand) {
	if !s.penalized() {
		return
	}
	rep := float32(s.p.RepetitionPenalty)
	pres, freq := float32(s.p.PresencePenalty), float32(s.p.FrequencyPenalty)
	for id, n := range s.counts {
		i := sort.Search(len(c), func(i int) bool { return c[i].id >= id })
		if i == len(c) || c[i].id != id {
			continue
		}
		l := c[i].l
		if rep != 0 && rep != 1 {
			if l > 0 {
				l /= rep
			} else {
				l *= rep
			}
		}
		l -= float32(n)*freq + pres
		c[i].l = l
	}
}

// truncate applies top_k, top_p and min_p in that order; z is the total
// weight of c. It returns the kept candidates (possibly reordered) and their
// total weight.
func (s *Sampler) truncate(c []cand, z float64) ([]cand, float64) {
	if k := s.p.TopK; k > 0 && k < len(c) {
		selectTop(c, k)
		c = c[:k]
		z = 0
		for _, x := range c {
			z += float64(x.w)
		}
	}
	if p := s.p.TopP; p > 0 && p < 1 && len(c) > 1 {
		target := p * z
		for k := min(len(c), 32); ; k = min(len(c), k*4) {
			selectTop(c, k)
			sortTop(c[:k])
			var cum float64
			cut := -1
			for i, x := range c[:k] {
				cum += float64(x.w)
				if cum >= target {
					cut = i + 1
					break
				}
			}
			if cut > 0 {
				c = c[:cut]
				z = cum
				break
			}
			if k == len(c) {
				break
			}
		}
	}
	if mp := s.p.MinP; mp > 0 && len(c) > 1 {
		var maxW float32
		for _, x := range c {
			maxW = max(maxW, x.w)
		}
		thr := float32(mp) * maxW
		k := 0
		for _, x := range c {
			if x.w >= thr {
				c[k] = x
				k++
			}
		}
		c = c[:k]
		z = 0
		for _, x := range c {
			z += float64(x.w)
		}
	}
	return c, z
}

// pick draws one candidate with probability proportional to its weight; z
// is the total weight.
func (s *Sampler) pick(c []cand, z float64) cand {
	u := s.rng.Float64() * z
	var cum float64
	for _, x := range c {
		cum += float64(x.w)
		if u < cum {
			return x
		}
	}
	// Rounding: u landed on the total; return the last token with weight.
	for i := len(c) - 1; i > 0; i-- {
		if c[i].w > 0 {
			return c[i]
		}
	}
	return c[0]
}

// better orders candidates by decreasing logit, then increasing id.
func better(a, b cand) bool { return a.l > b.l || (a.l == b.l && a.id < b.id) }

// sortTop sorts c best first.
func sortTop(c []cand) {
	slices.SortFunc(c, func(a, b cand) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
}

// selectTop reorders c so that its k best candidates (by better) come first,
// in no particular order: an iterative quickselect with a median-of-three
// pivot, deterministic so that seeded draws stay reproducible.
func selectTop(c []cand, k int) {
	lo, hi := 0, len(c)
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		a, b, d := c[lo], c[mid], c[hi-1]
		pivot := b
		if better(a, b) != better(a, d) {
			pivot = a
		} else if better(b, a) != better(b, d) {
			pivot = b
		} else {
			pivot = d
		}
		// Three-way partition: [lo,lt) better, [lt,gt) equal, [gt,hi) worse.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch {
			case better(c[i], pivot):
				c[lt], c[i] = c[i], c[lt]
				lt++
				i++
			case better(pivot, c[i]):
				gt--
				c[i], c[gt] = c[gt], c[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k <= gt:
			return
		default:
			lo = gt
		}
	}
	sortTop(c[lo:hi])
}
