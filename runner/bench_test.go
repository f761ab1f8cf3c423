package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"conform/sampler"
)

// rowEngine is an engine with no model: every logits row is the same fixed
// row, so a benchmark measures the runner and the sampler, not the fake.
type rowEngine struct {
	row []float32
	n   int
}

func (e *rowEngine) NumVocab() int { return len(e.row) }
func (e *rowEngine) Decode(b Batch) error {
	e.n = b.NumLogits()
	return nil
}
func (e *rowEngine) Logits(i int) ([]float32, error)  { return e.row, nil }
func (e *rowEngine) RemoveKV(seq, from, to int) error { return nil }

// denseGuide allows a fixed 90% of the vocabulary forever (never
// accepting), like a JSON string state: it costs one mask copy per token.
type denseGuide struct{ mask []uint64 }

func (c *denseGuide) FillMask(dst []uint64) error { copy(dst, c.mask); return nil }
func (c *denseGuide) Accept(t TokenID) error      { return nil }
func (c *denseGuide) IsAccepting() bool           { return false }
func (c *denseGuide) IsTerminated() bool          { return false }
func (c *denseGuide) Forced(max int) []TokenID    { return nil }
func (c *denseGuide) Rollback(n int) error        { return nil }

// BenchmarkGenerate reports the loop's cost per output token with 4 slots
// generating 64 tokens each, without and with a constraint, with the slots'
// sampling serial (the default) or concurrent; the engine costs nothing, so
// this is the runner's and sampler's own overhead.
func BenchmarkGenerate(b *testing.B) {
	for _, vocab := range []int{32000, 128256} {
		r := rand.New(rand.NewPCG(1, 1))
		row := make([]float32, vocab)
		for i := range row {
			row[i] = float32(r.NormFloat64() * 2)
		}
		mask := make([]uint64, sampler.MaskWords(vocab))
		for i := range vocab {
			if i%10 != 0 {
				mask[i>>6] |= 1 << (uint(i) & 63)
			}
		}
		for _, mode := range []struct{ constrained, parallel bool }{{false, false}, {true, false}, {true, true}} {
			constrained := mode.constrained
			b.Run(fmt.Sprintf("vocab=%d/constrained=%v/parallel=%v", vocab, constrained, mode.parallel), func(b *testing.B) {
				eng := &rowEngine{row: row}
				rn, err := New(eng, Config{Slots: 4, ContextSize: 4096, ParallelSampling: mode.parallel})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go rn.Run(ctx)
				tokens := 0
				for b.Loop() {
					var chans []<-chan Event
					for i := range 4 {
						req := Request{Prompt: []TokenID{1, 2, 3}, MaxTokens: 64, Params: sampler.Params{Seed: uint64(i), Temperature: sampler.Temp(0.8)}}
						if constrained {
							req.Guide = &denseGuide{mask: mask}
						}
						ch, err := rn.Submit(ctx, req)
						if err != nil {
							b.Fatal(err)
						}
						chans = append(chans, ch)
					}
					for _, ch := range chans {
						for ev := range ch {
							if ev.Finish == "" {
								tokens++
							}
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tokens), "ns/token")
				st := rn.Stats()
				b.ReportMetric(float64(st.ConstraintTimePerToken().Nanoseconds()), "constraint-ns/token")
			})
		}
	}
}
