//go:build cgo

package llamaengine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"conform/internal/llama"
	"conform/runner"
	"conform/sampler"
)

// BenchmarkStep measures one decode step of P sequences two ways on the
// same model, threads and prompt: "binding" decodes the batch through
// Engine and reads every row (argmax in Go), as llama.cpp's own loop does;
// "runner" generates the same token counts through runner.Run
// (unconstrained), so the difference is what the runner adds to a step.
// Reported per step: ms/step (wall) and, for the runner, decode-ms/step
// (inside Engine.Decode) and sample-ms/step.
//
// At parallel 4 both KV layouts run (KVPerSequence, KVUnified).
//
// The model is $CONFORM_STEP_MODEL (e.g. the e2e model,
// build/qwen2.5-0.5b-llama3_1.gguf) or else the package's tiny fixture;
// threads $CONFORM_STEP_THREADS or 2.
func BenchmarkStep(b *testing.B) {
	path := os.Getenv("CONFORM_STEP_MODEL")
	if path == "" {
		path = getFixture(b).path
	}
	threads := 2
	if s := os.Getenv("CONFORM_STEP_THREADS"); s != "" {
		fmt.Sscan(s, &threads)
	}
	const steps = 32
	for _, c := range []struct {
		par int
		kv  llama.KVLayout
	}{{1, llama.KVAuto}, {4, llama.KVPerSequence}, {4, llama.KVUnified}} {
		par := c.par
		name := fmt.Sprintf("parallel=%d", par)
		if par > 1 {
			name += "/kv=" + c.kv.String()
		}
		eng, err := Load(path, llama.Params{ContextSize: par * 256, Parallel: par, Threads: threads, KVLayout: c.kv})
		if err != nil {
			b.Fatal(err)
		}
		prompt, err := eng.Tokenize("Answer in JSON: the name, age and city of a person.", true, false)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/binding", func(b *testing.B) {
			var total time.Duration
			n := 0
			for b.Loop() {
				for s := range par {
					if err := eng.RemoveKV(s, 0, -1); err != nil {
						b.Fatal(err)
					}
				}
				var bt runner.Batch
				for s := range par {
					for j, t := range prompt {
						bt.Tokens = append(bt.Tokens, t)
						bt.Pos = append(bt.Pos, j)
						bt.Seq = append(bt.Seq, s)
						bt.Logits = append(bt.Logits, j == len(prompt)-1)
					}
				}
				if err := eng.Decode(bt); err != nil {
					b.Fatal(err)
				}
				last := make([]runner.TokenID, par)
				for s := range par {
					row, err := eng.Logits(s*len(prompt) + len(prompt) - 1)
					if err != nil {
						b.Fatal(err)
					}
					last[s] = runner.TokenID(argmaxRow(row))
				}
				t0 := time.Now()
				for k := range steps - 1 {
					bt = runner.Batch{}
					for s := range par {
						bt.Tokens = append(bt.Tokens, last[s])
						bt.Pos = append(bt.Pos, len(prompt)+k)
						bt.Seq = append(bt.Seq, s)
						bt.Logits = append(bt.Logits, true)
					}
					if err := eng.Decode(bt); err != nil {
						b.Fatal(err)
					}
					for s := range par {
						row, err := eng.Logits(s)
						if err != nil {
							b.Fatal(err)
						}
						last[s] = runner.TokenID(argmaxRow(row))
					}
				}
				total += time.Since(t0)
				n += steps - 1
			}
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "ms/step")
		})
		for _, temp := range []float64{0, 1} {
			b.Run(fmt.Sprintf("%s/runner/temperature=%g", name, temp), func(b *testing.B) {
				// The runner starts from an empty cache (its slots hold no
				// tokens): drop what the binding run left.
				for s := range par {
					if err := eng.RemoveKV(s, 0, -1); err != nil {
						b.Fatal(err)
					}
				}
				cfg := eng.RunnerConfig()
				r, err := runner.New(eng, cfg)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); r.Run(ctx) }()
				defer func() { cancel(); <-done }()
				var st runner.Stats
				var wall time.Duration
				for b.Loop() {
					before := r.Stats()
					chans := make([]<-chan runner.Event, par)
					firsts := make([]time.Time, par)
					lasts := make([]time.Time, par)
					for s := range par {
						ch, err := r.Submit(context.Background(), runner.Request{Prompt: slices.Clone(prompt), MaxTokens: steps,
							Params: sampler.Params{Temperature: sampler.Temp(temp), Seed: uint64(s + 1)}})
						if err != nil {
							b.Fatal(err)
						}
						chans[s] = ch
					}
					for s, ch := range chans {
						for ev := range ch {
							if ev.Finish != "" {
								if ev.Finish != runner.FinishLength {
									b.Fatalf("finish %s (%v), want length", ev.Finish, ev.Err)
								}
								continue
							}
							if firsts[s].IsZero() {
								firsts[s] = time.Now()
							}
							lasts[s] = time.Now()
						}
					}
					after := r.Stats()
					st.Steps += after.Steps - before.Steps
					st.StepTime += after.StepTime - before.StepTime
					st.DecodeTime += after.DecodeTime - before.DecodeTime
					st.SampleTime += after.SampleTime - before.SampleTime
					// The decode steps: from the first token (prefill done)
					// to the last, over steps-1 steps.
					lo, hi := slices.MinFunc(firsts, time.Time.Compare), slices.MaxFunc(lasts, time.Time.Compare)
					wall += hi.Sub(lo)
				}
				n := float64(b.N) * float64(steps-1)
				b.ReportMetric(float64(wall.Microseconds())/1e3/n, "ms/step")
				k := float64(st.Steps)
				b.ReportMetric(float64(st.StepTime.Microseconds())/1e3/k, "in-step-ms/step")
				b.ReportMetric(float64(st.DecodeTime.Microseconds())/1e3/k, "decode-ms/step")
				b.ReportMetric(float64(st.SampleTime.Microseconds())/1e3/k, "sample-ms/step")
			})
		}
		eng.Close()
	}
}

func argmaxRow(row []float32) int {
	best := 0
	for i, x := range row {
		if x > row[best] {
			best = i
		}
	}
	return best
}
