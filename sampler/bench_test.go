package sampler

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchVocabs = []int{32000, 128256, 200064}

// benchRow returns normal logits with a few peaks, like a model's row.
func benchRow(vocab int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	l := make([]float32, vocab)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 2)
	}
	for range 10 {
		l[r.IntN(vocab)] += 12
	}
	return l
}

// benchMask returns a mask of the given shape:
// "dense": about 90% allowed in runs (a JSON string state);
// "half": each token allowed with probability 1/2 (worst case for bit walks);
// "sparse": 50 allowed tokens (a structural state).
func benchMask(vocab int, shape string) []uint64 {
	r := rand.New(rand.NewPCG(3, 4))
	m := make([]uint64, MaskWords(vocab))
	set := func(i int) { m[i>>6] |= 1 << (uint(i) & 63) }
	switch shape {
	case "dense":
		for i := 0; i < vocab; {
			n := 1 + r.IntN(400)
			on := r.IntN(10) != 0
			for j := i; j < min(i+n, vocab); j++ {
				if on {
					set(j)
				}
			}
			i += n
		}
	case "half":
		for i := range vocab {
			if r.IntN(2) == 0 {
				set(i)
			}
		}
	case "sparse":
		for range 50 {
			set(r.IntN(vocab))
		}
	}
	return m
}

func BenchmarkApplyMask(b *testing.B) {
	for _, v := range benchVocabs {
		for _, shape := range []string{"dense", "half", "sparse"} {
			b.Run(fmt.Sprintf("vocab=%d/%s", v, shape), func(b *testing.B) {
				l, m := benchRow(v), benchMask(v, shape)
				for b.Loop() {
					_ = ApplyMask(l, m)
				}
			})
		}
	}
}

// BenchmarkGather compares the two ways Sample turns (row, mask) into
// candidates; the row is restored outside the timer-free loop by copying,
// which both variants pay.
func BenchmarkGather(b *testing.B) {
	for _, v := range benchVocabs {
		for _, shape := range []string{"dense", "half", "sparse"} {
			l, m := benchRow(v), benchMask(v, shape)
			row := make([]float32, v)
			c := make([]cand, 0, v)
			b.Run(fmt.Sprintf("vocab=%d/%s/sparse-gather", v, shape), func(b *testing.B) {
				for b.Loop() {
					copy(row, l)
					c = gatherSparse(c[:0], row, m)
				}
			})
			b.Run(fmt.Sprintf("vocab=%d/%s/dense-gather", v, shape), func(b *testing.B) {
				for b.Loop() {
					copy(row, l)
					c = gatherDense(c[:0], row, m)
				}
			})
		}
	}
}

// BenchmarkSample is the full chain per token: mask gather, penalties,
// temperature, truncation, draw. The row is copied in each iteration (as the
// engine adapter copies logits out of C memory).
func BenchmarkSample(b *testing.B) {
	params := map[string]Params{
		"greedy":      {Temperature: Temp(0)},
		"temperature": {Temperature: Temp(0.8)},
		"chain":       {Temperature: Temp(0.8), TopK: 40, TopP: 0.95, MinP: 0.05, RepetitionPenalty: 1.1, FrequencyPenalty: 0.2, LogitBias: map[TokenID]float64{5: 2}, TopLogprobs: 5},
		"top_p":       {Temperature: Temp(0.8), TopP: 0.9},
	}
	for _, v := range benchVocabs {
		for _, shape := range []string{"none", "dense", "sparse"} {
			for _, name := range []string{"greedy", "temperature", "top_p", "chain"} {
				b.Run(fmt.Sprintf("vocab=%d/mask=%s/%s", v, shape, name), func(b *testing.B) {
					l := benchRow(v)
					var m []uint64
					if shape != "none" {
						m = benchMask(v, shape)
					}
					s := mustNew(b, v, params[name])
					s.Observe(1, 2, 3, 2, 1)
					row := make([]float32, v)
					n := 0
					if m != nil {
						n = Popcount(m)
					}
					for b.Loop() {
						copy(row, l)
						if _, err := s.Sample(row, m, n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
