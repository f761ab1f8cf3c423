package sampler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDrawRowSameAsChain: the unconstrained fast path draws exactly the
// token the chain draws, seed for seed, on rows with ties, NaN, -Inf, +Inf
// and huge logits, greedy and at several temperatures.
func TestDrawRowSameAsChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const vocab = 3000
	row := func(kind int) []float32 {
		r := make([]float32, vocab)
		for i := range r {
			r[i] = float32(rng.NormFloat64() * 4)
		}
		switch kind {
		case 1: // ties at the top
			r[10], r[2000], r[5] = 40, 40, 40
		case 2: // NaN and -Inf, including the first entries
			for range 50 {
				r[rng.IntN(vocab)] = float32(math.NaN())
				r[rng.IntN(vocab)] = float32(math.Inf(-1))
			}
			r[0], r[1] = float32(math.Inf(-1)), float32(math.NaN())
		case 3: // +Inf after a MaxFloat32
			r[7], r[9] = math.MaxFloat32, float32(math.Inf(1))
		case 4: // a wide spread: most weights underflow
			for i := range r {
				r[i] *= 30
			}
		}
		return r
	}
	draws, same := 0, 0
	for kind := range 5 {
		for _, temp := range []float64{0, 0.05, 0.7, 1, 1.8} {
			for seed := range uint64(40) {
				logits := row(kind)
				p := Params{Temperature: Temp(temp), Seed: seed}
				fast, _ := New(vocab, p)
				chain, _ := New(vocab, p)
				if !fast.plain() {
					t.Fatalf("%+v: not plain", p)
				}
				for k := range 3 {
					got, err1 := fast.Sample(append([]float32(nil), logits...), nil, 0)
					want, err2 := chain.drawChain(append([]float32(nil), logits...))
					draws++
					if fmt.Sprint(err1) != fmt.Sprint(err2) || got.ID != want.ID || got.Allowed != want.Allowed {
						t.Fatalf("row kind %d, temperature %g, seed %d, draw %d: fast %+v (%v), chain %+v (%v)", kind, temp, seed, k, got, err1, want, err2)
					}
					same++
				}
			}
		}
	}
	t.Logf("%d of %d draws the same", same, draws)
	// Every entry NaN or -Inf: the same error.
	bad := make([]float32, vocab)
	for i := range bad {
		bad[i] = float32(math.Inf(-1))
	}
	s, _ := New(vocab, Params{})
	var e *Error
	if _, err := s.Sample(bad, nil, 0); !errors.As(err, &e) || e.Code != CodeNoCandidates {
		t.Errorf("all -Inf: %v, want %v", err, CodeNoCandidates)
	}
}

// TestPlain: the fast path is taken only when the chain has nothing else
// to do.
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want bool
	}{
		{Params{}, true},
		{Params{Temperature: Temp(0)}, true},
		{Params{TopP: 1, TopK: 100}, true}, // top_k = the vocabulary: off
		{Params{TopK: 5}, false},
		{Params{TopP: 0.9}, false},
		{Params{MinP: 0.1}, false},
		{Params{Logprobs: true}, false},
		{Params{TopLogprobs: 2}, false},
		{Params{PresencePenalty: 0.5}, false},
		{Params{RepetitionPenalty: 1.1}, false},
		{Params{LogitBias: map[TokenID]float64{3: 1}}, false},
	} {
		s, err := New(100, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.plain(); got != tc.want {
			t.Errorf("%+v: plain %v, want %v", tc.p, got, tc.want)
		}
	}
}
