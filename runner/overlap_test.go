package runner

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"conform/sampler"
)

// TestOverlapSameOutput: masks filled during the decode are the masks the
// loop would have filled after it. The same constrained workload (a real
// fsm matcher, budgets that restrict the masks, a MaxForced small enough
// that forced runs continue in the next step, slots admitted at different
// times) gives token for token the same streams with and without
// OverlapMasks, and with overlap most masks were filled during a decode.
func TestOverlapSameOutput(t *testing.T) {
	c, detok, re := tinyJSONConstraint(t)
	run := func(overlap, parallel bool) ([]result, Stats) {
		r, _ := start(t, Config{Slots: 3, Detokenize: detok, MaxForced: 1, OverlapMasks: overlap, ParallelSampling: parallel})
		var chans []<-chan Event
		for seed := range 16 {
			chans = append(chans, submit(t, r, Request{
				Prompt:    prompt(seed, 2+seed%5),
				Params:    sampler.Params{Seed: uint64(seed), Temperature: sampler.Temp(1.5)},
				MaxTokens: []int{0, 7, 9, 12}[seed%4],
				Guide:     c.NewMatcher(),
			}))
		}
		var out []result
		for _, ch := range chans {
			out = append(out, collect(t, ch))
		}
		return out, r.Stats()
	}
	want, serial := run(false, false)
	if serial.Overlapped != 0 {
		t.Errorf("without overlap: Stats.Overlapped = %d, want 0", serial.Overlapped)
	}
	for _, parallel := range []bool{false, true} {
		got, st := run(true, parallel)
		for i := range want {
			w, g := want[i], got[i]
			if !slices.Equal(w.tokens, g.tokens) || !slices.Equal(w.forced, g.forced) || w.final.Finish != g.final.Finish || w.text != g.text {
				t.Errorf("parallel=%v request %d:\n overlap %v\n serial  %v", parallel, i, g, w)
			}
			if g.final.Finish != FinishLength && !re.MatchString(g.text) {
				t.Errorf("parallel=%v request %d: %q does not match", parallel, i, g.text)
			}
		}
		// Masks after a forced run or before the budget check are filled
		// after the decode; the rest during it.
		if st.Overlapped == 0 || st.Overlapped > st.Sampled {
			t.Errorf("parallel=%v: Stats.Overlapped = %d of %d sampled, want some and at most all", parallel, st.Overlapped, st.Sampled)
		}
		t.Logf("parallel=%v: %d of %d sampled tokens' masks filled during the decode, %d forced", parallel, st.Overlapped, st.Sampled, st.Forced)
	}
}

// signalGuide is a scriptGuide whose FillMask counts the calls made
// while the fake engine decodes, and reports each.
type signalGuide struct {
	*scriptGuide
	decoding atomic.Bool
	during   atomic.Int32
	filled   chan struct{}
}

func (c *signalGuide) FillMask(dst []uint64) error {
	if c.decoding.Load() {
		c.during.Add(1)
		c.filled <- struct{}{}
	}
	return c.scriptGuide.FillMask(dst)
}

// TestOverlapDuringDecode: with OverlapMasks the mask of a step is filled
// while Engine.Decode runs. The fake's decode waits (at most 5 s) for the
// guide's FillMask from the second decode on; without overlap FillMask
// only comes after the decode (the decode then waits 20 ms for nothing).
func TestOverlapDuringDecode(t *testing.T) {
	for _, overlap := range []bool{true, false} {
		t.Run(fmt.Sprintf("overlap=%v", overlap), func(t *testing.T) {
			r, eng := start(t, Config{Slots: 1, OverlapMasks: overlap})
			g := &signalGuide{scriptGuide: newScript(testEOS, true, []TokenID{1, 2}, []TokenID{3, 4}, []TokenID{5, 6}), filled: make(chan struct{}, 8)}
			eng.mu.Lock()
			eng.onDecode = func(n int) {
				if n == 0 {
					return // the prompt: the first mask waits for the budget check
				}
				wait := 5 * time.Second
				if !overlap {
					wait = 20 * time.Millisecond
				}
				g.decoding.Store(true)
				defer g.decoding.Store(false)
				select {
				case <-g.filled:
				case <-time.After(wait):
				}
			}
			eng.mu.Unlock()
			res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: g}))
			if res.final.Err != nil || len(res.tokens) != 3 {
				t.Fatalf("%v, want 3 tokens and a normal finish", res)
			}
			// Decodes 1 and 2 come before the masks of the 2nd and 3rd
			// token; the guide is terminated after the 3rd.
			want := map[bool]int32{true: 2, false: 0}[overlap]
			if n := g.during.Load(); n != want {
				t.Errorf("%d masks filled during a decode, want %d", n, want)
			}
		})
	}
}

// TestOverlapDuringLogits: with a GPU backend llama_decode returns once
// the graph is queued and the first Logits call waits for the device, so
// the masks must fill during Logits too. The fake's decode returns at
// once and its Logits waits (at most 5 s) for the guide's FillMask from
// the second decode on: were the rows read only after the masks, every
// wait would run out and no mask would count as filled during it.
func TestOverlapDuringLogits(t *testing.T) {
	r, eng := start(t, Config{Slots: 1, OverlapMasks: true})
	g := &signalGuide{scriptGuide: newScript(testEOS, true, []TokenID{1, 2}, []TokenID{3, 4}, []TokenID{5, 6}), filled: make(chan struct{}, 8)}
	eng.mu.Lock()
	eng.onLogits = func(n int) {
		if n <= 1 {
			return // the prompt's row: the first mask waits for the budget check
		}
		g.decoding.Store(true)
		defer g.decoding.Store(false)
		select {
		case <-g.filled:
		case <-time.After(5 * time.Second):
		}
	}
	eng.mu.Unlock()
	res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: g}))
	if res.final.Err != nil || len(res.tokens) != 3 {
		t.Fatalf("%v, want 3 tokens and a normal finish", res)
	}
	if n := g.during.Load(); n != 2 {
		t.Errorf("%d masks filled while the rows were read, want 2", n)
	}
	if st := r.Stats(); st.LogitsTime <= 0 {
		t.Errorf("Stats.LogitsTime = %v, want the time inside Logits", st.LogitsTime)
	}
}

// TestNoJumpForward: with jump-forward off every token is sampled (a
// forced one from its one-token mask), none goes out forced, and the
// outputs still match.
func TestNoJumpForward(t *testing.T) {
	c, detok, re := tinyJSONConstraint(t)
	for _, overlap := range []bool{false, true} {
		r, _ := start(t, Config{Slots: 2, Detokenize: detok, NoJumpForward: true, OverlapMasks: overlap})
		var chans []<-chan Event
		for seed := range 6 {
			chans = append(chans, submit(t, r, Request{Prompt: prompt(seed, 3),
				Params: sampler.Params{Seed: uint64(seed), Temperature: sampler.Temp(1.5)}, Guide: c.NewMatcher()}))
		}
		for i, ch := range chans {
			res := collect(t, ch)
			if res.final.Err != nil || !re.MatchString(res.text) || slices.Contains(res.forced, true) {
				t.Errorf("overlap=%v request %d: %v (forced %v), want a match with nothing forced", overlap, i, res, res.forced)
			}
		}
		if st := r.Stats(); st.Forced != 0 || st.Sampled == 0 {
			t.Errorf("overlap=%v: %d forced, %d sampled, want 0 and some", overlap, st.Forced, st.Sampled)
		}
	}
}
