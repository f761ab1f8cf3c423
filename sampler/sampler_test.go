package sampler

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// maskOf builds a mask over vocab tokens allowing exactly ids.
func maskOf(vocab int, ids ...TokenID) []uint64 {
	m := make([]uint64, MaskWords(vocab))
	for _, id := range ids {
		m[id>>6] |= 1 << (uint(id) & 63)
	}
	return m
}

// logitsOf returns log(p) for each p, so that softmax(logits) = p (when p sums to 1).
func logitsOf(ps ...float64) []float32 {
	l := make([]float32, len(ps))
	for i, p := range ps {
		l[i] = float32(math.Log(p))
	}
	return l
}

func mustNew(t testing.TB, vocab int, p Params) *Sampler {
	t.Helper()
	s, err := New(vocab, p)
	if err != nil {
		t.Fatalf("New(%d, %+v) = %v", vocab, p, err)
	}
	return s
}

func TestValidate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name  string
		p     Params
		field string // "" = valid
	}{
		{"zero", Params{}, ""},
		{"greedy", Params{Temperature: Temp(0)}, ""},
		{"full", Params{Temperature: Temp(0.7), TopK: 40, TopP: 0.9, MinP: 0.05, RepetitionPenalty: 1.1, PresencePenalty: -2, FrequencyPenalty: 2, PenaltyLastN: 64, LogitBias: map[TokenID]float64{3: -100, 4: 100}, TopLogprobs: 20}, ""},
		{"negative temperature", Params{Temperature: Temp(-0.1)}, "temperature"},
		{"NaN temperature", Params{Temperature: Temp(nan)}, "temperature"},
		{"inf temperature", Params{Temperature: Temp(math.Inf(1))}, "temperature"},
		{"negative top_k", Params{TopK: -1}, "top_k"},
		{"top_p above 1", Params{TopP: 1.01}, "top_p"},
		{"negative top_p", Params{TopP: -0.5}, "top_p"},
		{"NaN top_p", Params{TopP: nan}, "top_p"},
		{"min_p above 1", Params{MinP: 1.5}, "min_p"},
		{"negative min_p", Params{MinP: -0.01}, "min_p"},
		{"negative repetition", Params{RepetitionPenalty: -1}, "repetition_penalty"},
		{"presence too large", Params{PresencePenalty: 2.5}, "presence_penalty"},
		{"frequency too small", Params{FrequencyPenalty: -2.5}, "frequency_penalty"},
		{"negative last_n", Params{PenaltyLastN: -1}, "penalty_last_n"},
		{"top_logprobs too many", Params{TopLogprobs: 21}, "top_logprobs"},
		{"bias id outside", Params{LogitBias: map[TokenID]float64{10: 1}}, "logit_bias"},
		{"bias id negative", Params{LogitBias: map[TokenID]float64{-1: 1}}, "logit_bias"},
		{"bias too large", Params{LogitBias: map[TokenID]float64{1: 101}}, "logit_bias"},
		{"bias NaN", Params{LogitBias: map[TokenID]float64{1: nan}}, "logit_bias"},
	}
	for _, tt := range tests {
		_, err := New(10, tt.p)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: New(10, %+v) = %v, want nil", tt.name, tt.p, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidParam || e.Field != tt.field {
			t.Errorf("%s: New(10, %+v) = %v, want CodeInvalidParam on %q", tt.name, tt.p, err, tt.field)
		}
	}
	if _, err := New(0, Params{}); err == nil {
		t.Errorf("New(0, Params{}) = nil error, want one")
	}
}

func TestApplyMask(t *testing.T) {
	inf := float32(math.Inf(-1))
	row := func(n int) []float32 {
		l := make([]float32, n)
		for i := range l {
			l[i] = float32(i)
		}
		return l
	}
	tests := []struct {
		name    string
		vocab   int
		allowed []TokenID
	}{
		{"none", 130, nil},
		{"all of a word", 130, seq(64, 128)},
		{"scattered", 130, []TokenID{0, 5, 63, 64, 100, 129}},
		{"partial last word", 70, []TokenID{1, 69}},
		{"one", 1, []TokenID{0}},
	}
	for _, tt := range tests {
		l := row(tt.vocab)
		m := maskOf(tt.vocab, tt.allowed...)
		if err := ApplyMask(l, m); err != nil {
			t.Fatalf("%s: ApplyMask = %v", tt.name, err)
		}
		for i, x := range l {
			want := inf
			if Allowed(m, TokenID(i)) {
				want = float32(i)
			}
			if x != want {
				t.Errorf("%s: ApplyMask: logits[%d] = %v, want %v", tt.name, i, x, want)
			}
		}
	}
	if err := ApplyMask(row(130), make([]uint64, 2)); !errors.Is(err, &Error{Code: CodeBadInput}) {
		t.Errorf("ApplyMask(short mask) = %v, want CodeBadInput", err)
	}
	if err := ApplyMask(row(70), []uint64{0, 1 << 10}); !errors.Is(err, &Error{Code: CodeBadInput}) {
		t.Errorf("ApplyMask(bit past vocab) = %v, want CodeBadInput", err)
	}
}

func seq(from, to int) []TokenID {
	var s []TokenID
	for i := from; i < to; i++ {
		s = append(s, TokenID(i))
	}
	return s
}

func TestGatherSparseEqualsDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		vocab := 1 + r.IntN(700)
		m := randomMask(r, vocab)
		l := make([]float32, vocab)
		for i := range l {
			l[i] = float32(r.NormFloat64())
		}
		sp := gatherSparse(nil, l, m)
		de := gatherDense(nil, append([]float32(nil), l...), m)
		if len(sp) != len(de) || len(sp) != Popcount(m) {
			t.Fatalf("trial %d: len(sparse) = %d, len(dense) = %d, want %d", trial, len(sp), len(de), Popcount(m))
		}
		for i := range sp {
			if sp[i] != de[i] {
				t.Fatalf("trial %d: sparse[%d] = %v, dense[%d] = %v", trial, i, sp[i], i, de[i])
			}
		}
	}
}

// randomMask returns a mask of one of several shapes: empty, full, sparse,
// dense, random runs.
func randomMask(r *rand.Rand, vocab int) []uint64 {
	m := make([]uint64, MaskWords(vocab))
	density := []float64{0, 0.001, 0.02, 0.3, 0.7, 0.99, 1}[r.IntN(7)]
	run := r.IntN(3) == 0
	for i := 0; i < vocab; i++ {
		on := r.Float64() < density
		if run {
			n := 1 + r.IntN(200)
			for j := i; j < min(i+n, vocab); j++ {
				if on {
					m[j>>6] |= 1 << (uint(j) & 63)
				}
			}
			i += n - 1
			continue
		}
		if on {
			m[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return m
}

func TestGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		mask   []uint64
		bias   map[TokenID]float64
		want   TokenID
	}{
		{"argmax", []float32{1, 3, 2}, nil, nil, 1},
		{"tie lowest id", []float32{1, 3, 3}, nil, nil, 1},
		{"masked argmax", []float32{1, 3, 2}, maskOf(3, 0, 2), nil, 2},
		{"bias wins", []float32{1, 3, 2}, nil, map[TokenID]float64{0: 5}, 0},
		{"bias on masked token ignored", []float32{1, 3, 2}, maskOf(3, 1, 2), map[TokenID]float64{0: 100}, 1},
		{"-Inf skipped", []float32{float32(math.Inf(-1)), -5, float32(math.NaN())}, nil, nil, 1},
		{"+Inf wins", []float32{1, float32(math.Inf(1)), 2}, nil, nil, 1},
	}
	for _, tt := range tests {
		s := mustNew(t, len(tt.logits), Params{Temperature: Temp(0), LogitBias: tt.bias})
		got, err := s.Sample(append([]float32(nil), tt.logits...), tt.mask, 0)
		if err != nil || got.ID != tt.want {
			t.Errorf("%s: Sample(%v) = %d, %v, want %d", tt.name, tt.logits, got.ID, err, tt.want)
		}
	}
}

func TestPenalties(t *testing.T) {
	// Greedy over crafted logits after observing a history shows each penalty.
	tests := []struct {
		name    string
		p       Params
		logits  []float32
		history []TokenID
		want    TokenID
	}{
		{"no penalty", Params{}, []float32{2, 1.9, 0}, []TokenID{0}, 0},
		{"repetition divides positive", Params{RepetitionPenalty: 1.2}, []float32{2, 1.9, 0}, []TokenID{0}, 1},
		{"repetition multiplies negative", Params{RepetitionPenalty: 2}, []float32{-1, -1.5, -9}, []TokenID{0}, 1},
		{"presence", Params{PresencePenalty: 0.2}, []float32{2, 1.9, 0}, []TokenID{0}, 1},
		{"presence counted once", Params{PresencePenalty: 0.2}, []float32{2, 1.7, 0}, []TokenID{0, 0, 0}, 0},
		{"frequency counts", Params{FrequencyPenalty: 0.2}, []float32{2, 1.7, 0}, []TokenID{0, 0}, 1},
		{"window forgets", Params{FrequencyPenalty: 0.2, PenaltyLastN: 2}, []float32{2, 1.7, 0}, []TokenID{0, 0, 2, 2}, 0},
		{"window keeps", Params{FrequencyPenalty: 0.2, PenaltyLastN: 3}, []float32{2, 1.9, 0}, []TokenID{0, 0, 2, 2}, 1},
		{"bias and penalty together", Params{PresencePenalty: 0.5, LogitBias: map[TokenID]float64{1: 0.2}}, []float32{2, 1.7, 0}, []TokenID{0}, 1},
		{"negative presence rewards", Params{PresencePenalty: -2}, []float32{2, 1.9, 0.5}, []TokenID{2}, 2},
	}
	for _, tt := range tests {
		tt.p.Temperature = Temp(0)
		s := mustNew(t, len(tt.logits), tt.p)
		s.Observe(tt.history...)
		got, err := s.Sample(append([]float32(nil), tt.logits...), nil, 0)
		if err != nil || got.ID != tt.want {
			t.Errorf("%s: Sample(%v) after %v = %d, %v, want %d", tt.name, tt.logits, tt.history, got.ID, err, tt.want)
		}
	}
}

func TestSampleRecordsHistory(t *testing.T) {
	s := mustNew(t, 3, Params{Temperature: Temp(0), PresencePenalty: 2})
	var got []TokenID
	for range 3 {
		r, err := s.Sample([]float32{3, 2, 1}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
	}
	// [3 2 1] → 0; then [1 2 1] → 1; then [1 0 1] → 0 (tie, lower id).
	want := []TokenID{0, 1, 0}
	if !equalIDs(got, want) {
		t.Errorf("greedy with presence 2 over [3 2 1]: got %v, want %v", got, want)
	}
}

func equalIDs(a, b []TokenID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// histogram draws n tokens with fresh logits each time and counts them.
func histogram(t *testing.T, s *Sampler, logits []float32, mask []uint64, n int) []int {
	t.Helper()
	h := make([]int, len(logits))
	buf := make([]float32, len(logits))
	for range n {
		copy(buf, logits)
		r, err := s.Sample(buf, mask, 0)
		if err != nil {
			t.Fatalf("Sample = %v", err)
		}
		h[r.ID]++
	}
	return h
}

// chiSquare returns the chi-square statistic of counts against expected
// probabilities (cells with zero expectation must have zero counts; they
// are checked separately by the callers).
func chiSquare(counts []int, want []float64, n int) float64 {
	var x float64
	for i, p := range want {
		if p == 0 {
			continue
		}
		e := p * float64(n)
		d := float64(counts[i]) - e
		x += d * d / e
	}
	return x
}

// chiLimit is a bound on chi-square far in the tail (p < 1e-9 for up to 10
// degrees of freedom: the 1e-9 quantile for df=10 is about 62): with a fixed
// seed the test is deterministic, and a correct sampler cannot come near it
// with any seed.
const chiLimit = 65

func TestDistributions(t *testing.T) {
	const n = 200000
	base := logitsOf(0.4, 0.25, 0.15, 0.1, 0.06, 0.04)
	norm := func(w []float64) []float64 {
		var z float64
		for _, x := range w {
			z += x
		}
		out := make([]float64, len(w))
		for i, x := range w {
			out[i] = x / z
		}
		return out
	}
	tests := []struct {
		name string
		p    Params
		mask []uint64
		want []float64
	}{
		{"temperature 1", Params{}, nil, []float64{0.4, 0.25, 0.15, 0.1, 0.06, 0.04}},
		{"temperature 2", Params{Temperature: Temp(2)}, nil, norm([]float64{math.Sqrt(0.4), math.Sqrt(0.25), math.Sqrt(0.15), math.Sqrt(0.1), math.Sqrt(0.06), math.Sqrt(0.04)})},
		{"temperature 0.5", Params{Temperature: Temp(0.5)}, nil, norm([]float64{0.16, 0.0625, 0.0225, 0.01, 0.0036, 0.0016})},
		{"masked", Params{}, maskOf(6, 1, 3, 5), norm([]float64{0, 0.25, 0, 0.1, 0, 0.04})},
		{"top_k 2", Params{TopK: 2}, nil, norm([]float64{0.4, 0.25, 0, 0, 0, 0})},
		{"top_p 0.7", Params{TopP: 0.7}, nil, norm([]float64{0.4, 0.25, 0.15, 0, 0, 0})},
		{"top_p 0.4 keeps one", Params{TopP: 0.4}, nil, []float64{1, 0, 0, 0, 0, 0}},
		{"min_p 0.3", Params{MinP: 0.3}, nil, norm([]float64{0.4, 0.25, 0.15, 0, 0, 0})},
		{"top_k 4 then top_p 0.8", Params{TopK: 4, TopP: 0.8}, nil, norm([]float64{0.4, 0.25, 0.15, 0, 0, 0})},
		{"masked top_k 2", Params{TopK: 2}, maskOf(6, 2, 4, 5), norm([]float64{0, 0, 0.15, 0, 0.06, 0})},
		{"bias", Params{LogitBias: map[TokenID]float64{5: math.Log(10)}}, nil, norm([]float64{0.4, 0.25, 0.15, 0.1, 0.06, 0.4})},
	}
	for i, tt := range tests {
		tt.p.Seed = uint64(1000 + i)
		s := mustNew(t, len(base), tt.p)
		h := histogram(t, s, base, tt.mask, n)
		for id, p := range tt.want {
			if p == 0 && h[id] != 0 {
				t.Errorf("%s: token %d drawn %d times, want never", tt.name, id, h[id])
			}
		}
		if x := chiSquare(h, tt.want, n); x > chiLimit {
			t.Errorf("%s: counts %v, want proportions %v: chi-square %.1f > %d", tt.name, h, tt.want, x, chiLimit)
		}
	}
}

func TestMinPThreshold(t *testing.T) {
	// 0.1/0.4 = 0.25 < 0.3, so token 3 is dropped by min_p 0.3 and kept by 0.25.
	base := logitsOf(0.4, 0.25, 0.15, 0.1, 0.06, 0.04)
	for _, tt := range []struct {
		minP float64
		keep int
	}{{0.3, 3}, {0.25, 4}, {0.5, 2}, {1, 1}} {
		s := mustNew(t, 6, Params{MinP: tt.minP, Seed: 7})
		h := histogram(t, s, base, nil, 20000)
		for id := range h {
			if (id < tt.keep) != (h[id] > 0) {
				t.Errorf("min_p %v: histogram %v, want exactly tokens < %d drawn", tt.minP, h, tt.keep)
				break
			}
		}
	}
}

func TestMaskedNeverSampled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	paramsList := []Params{
		{}, {Temperature: Temp(0)}, {Temperature: Temp(3)}, {TopK: 5}, {TopP: 0.5}, {MinP: 0.2},
		{TopK: 3, TopP: 0.9, MinP: 0.1, Temperature: Temp(0.3)},
		{RepetitionPenalty: 1.5, PresencePenalty: 1, FrequencyPenalty: 1},
		{LogitBias: map[TokenID]float64{0: 100, 1: 100, 2: 100}, TopLogprobs: 5},
	}
	for trial := range 600 {
		vocab := 3 + r.IntN(400)
		m := randomMask(r, vocab)
		p := paramsList[trial%len(paramsList)]
		p.Seed = uint64(trial)
		s := mustNew(t, vocab, p)
		l := make([]float32, vocab)
		for step := range 5 {
			for i := range l {
				l[i] = float32(r.NormFloat64() * 5)
			}
			res, err := s.Sample(l, m, 0)
			if Popcount(m) == 0 {
				if !errors.Is(err, &Error{Code: CodeEmptyMask}) {
					t.Fatalf("trial %d: Sample(empty mask) = %v, want CodeEmptyMask", trial, err)
				}
				break
			}
			if err != nil {
				t.Fatalf("trial %d step %d: Sample = %v", trial, step, err)
			}
			if !Allowed(m, res.ID) {
				t.Fatalf("trial %d step %d: Sample(%+v) = %d, which the mask disallows", trial, step, p, res.ID)
			}
			for _, tl := range res.Top {
				if !Allowed(m, tl.ID) {
					t.Fatalf("trial %d: top logprob token %d is disallowed", trial, tl.ID)
				}
			}
		}
	}
}

func TestLogprobs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 100 {
		vocab := 2 + r.IntN(300)
		m := randomMask(r, vocab)
		if Popcount(m) == 0 || Popcount(m) > MaxTopLogprobs {
			m = maskOf(vocab, TokenID(r.IntN(vocab)), TokenID(r.IntN(vocab)))
		}
		temp := []float64{0, 0.5, 1, 2}[trial%4]
		p := Params{Temperature: Temp(temp), TopLogprobs: MaxTopLogprobs, RepetitionPenalty: 1.3, Seed: uint64(trial)}
		s := mustNew(t, vocab, p)
		s.Observe(TokenID(r.IntN(vocab)), TokenID(r.IntN(vocab)))
		l := make([]float32, vocab)
		for i := range l {
			l[i] = float32(r.NormFloat64() * 4)
		}
		res, err := s.Sample(l, m, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Top) != Popcount(m) {
			t.Fatalf("trial %d: %d top logprobs, want %d (every allowed token)", trial, len(res.Top), Popcount(m))
		}
		var sum float64
		found := false
		for i, tl := range res.Top {
			sum += math.Exp(float64(tl.Logprob))
			if i > 0 && tl.Logprob > res.Top[i-1].Logprob {
				t.Errorf("trial %d: top logprobs not sorted: %v", trial, res.Top)
			}
			if tl.ID == res.ID {
				found = true
				if tl.Logprob != res.Logprob {
					t.Errorf("trial %d: chosen logprob %v, in top list %v", trial, res.Logprob, tl.Logprob)
				}
			}
		}
		if !found {
			t.Errorf("trial %d: chosen token %d missing from the full top list %v", trial, res.ID, res.Top)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Errorf("trial %d: sum of exp(logprob) over the allowed set = %v, want 1", trial, sum)
		}
	}
	// A known value: two allowed tokens with p 0.4 and 0.1 → 0.8 and 0.2.
	s := mustNew(t, 3, Params{Temperature: Temp(0), Logprobs: true})
	res, err := s.Sample(logitsOf(0.4, 0.5, 0.1), maskOf(3, 0, 2), 0)
	if err != nil || res.ID != 0 || math.Abs(float64(res.Logprob)-math.Log(0.8)) > 1e-5 {
		t.Errorf("Sample(masked greedy) = %+v, %v, want id 0 with logprob %v", res, err, math.Log(0.8))
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64) []TokenID {
		s := mustNew(t, 1000, Params{Seed: seed, TopP: 0.95, Temperature: Temp(1.5), FrequencyPenalty: 0.5})
		r := rand.New(rand.NewPCG(9, 9))
		l := make([]float32, 1000)
		var out []TokenID
		for range 50 {
			for i := range l {
				l[i] = float32(r.NormFloat64())
			}
			res, err := s.Sample(l, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res.ID)
		}
		return out
	}
	a, b, c := run(42), run(42), run(43)
	if !equalIDs(a, b) {
		t.Errorf("seed 42 twice: %v and %v, want equal", a, b)
	}
	if equalIDs(a, c) {
		t.Errorf("seeds 42 and 43 gave the same 50 tokens %v", a)
	}
	// Reset restores the start of the stream.
	s := mustNew(t, 4, Params{Seed: 1})
	first, _ := s.Sample(logitsOf(0.25, 0.25, 0.25, 0.25), nil, 0)
	for range 10 {
		_, _ = s.Sample(logitsOf(0.25, 0.25, 0.25, 0.25), nil, 0)
	}
	_ = s.Reset(Params{Seed: 1})
	again, _ := s.Sample(logitsOf(0.25, 0.25, 0.25, 0.25), nil, 0)
	if first.ID != again.ID {
		t.Errorf("after Reset: first draw %d, want %d", again.ID, first.ID)
	}
}

func TestErrors(t *testing.T) {
	s := mustNew(t, 3, Params{})
	inf := float32(math.Inf(-1))
	tests := []struct {
		name   string
		logits []float32
		mask   []uint64
		n      int
		code   ErrorCode
	}{
		{"empty mask", []float32{1, 2, 3}, maskOf(3), 0, CodeEmptyMask},
		{"empty mask with wrong count", []float32{1, 2, 3}, maskOf(3), 0, CodeEmptyMask},
		{"all -Inf", []float32{inf, inf, inf}, nil, 0, CodeNoCandidates},
		{"allowed are NaN", []float32{float32(math.NaN()), 1, 2}, maskOf(3, 0), 1, CodeNoCandidates},
		{"short row", []float32{1, 2}, nil, 0, CodeBadInput},
		{"long mask", []float32{1, 2, 3}, []uint64{1, 1}, 0, CodeBadInput},
	}
	for _, tt := range tests {
		_, err := s.Sample(tt.logits, tt.mask, tt.n)
		if !errors.Is(err, &Error{Code: tt.code}) {
			t.Errorf("%s: Sample(%v, %v) = %v, want code %v", tt.name, tt.logits, tt.mask, err, tt.code)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	const vocab = 32000
	r := rand.New(rand.NewPCG(1, 1))
	l := make([]float32, vocab)
	for i := range l {
		l[i] = float32(r.NormFloat64())
	}
	m := randomMask(r, vocab)
	m[0] |= 1
	s := mustNew(t, vocab, Params{TopP: 0.9, TopK: 50, TopLogprobs: 5})
	buf := make([]float32, vocab)
	_, _ = s.Sample(append(buf[:0], l...), m, 0)
	allocs := testing.AllocsPerRun(20, func() {
		copy(buf, l)
		if _, err := s.Sample(buf, m, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Sample allocated %v times per call, want 0", allocs)
	}
}

func TestExtremeInputs(t *testing.T) {
	inf := float32(math.Inf(1))
	tests := []struct {
		name   string
		p      Params
		logits []float32
		want   TokenID
	}{
		{"tiny temperature is greedy", Params{Temperature: Temp(1e-40)}, []float32{0, 3, -2, 0}, 1},
		{"tiny temperature with logprobs", Params{Temperature: Temp(1e-9), TopLogprobs: 2}, []float32{0, 3, -2, 0}, 1},
		{"+Inf logit sampled", Params{Temperature: Temp(0.5)}, []float32{0, inf, 1, 2}, 1},
		{"huge logits", Params{Temperature: Temp(1e-3)}, []float32{-3e38, 3e38, 1, 2}, 1},
	}
	for _, tt := range tests {
		s := mustNew(t, len(tt.logits), tt.p)
		for range 20 {
			res, err := s.Sample(append([]float32(nil), tt.logits...), nil, 0)
			if err != nil || res.ID != tt.want {
				t.Fatalf("%s: Sample(%v) = %+v, %v, want token %d", tt.name, tt.logits, res, err, tt.want)
			}
			if math.IsNaN(float64(res.Logprob)) {
				t.Fatalf("%s: logprob NaN", tt.name)
			}
		}
	}
}
