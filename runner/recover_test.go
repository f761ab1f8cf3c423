package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"conform/sampler"
)

// panicGuide is a scriptGuide that panics in method op at step at
// (the number of tokens accepted so far).
type panicGuide struct {
	*scriptGuide
	op string
	at int
}

func (c *panicGuide) boom(op string) {
	if op == c.op && c.i == c.at {
		panic("injected panic in " + op)
	}
}

func (c *panicGuide) FillMask(dst []uint64) error {
	c.boom("FillMask")
	return c.scriptGuide.FillMask(dst)
}

func (c *panicGuide) Accept(t TokenID) error {
	c.boom("Accept")
	return c.scriptGuide.Accept(t)
}

func (c *panicGuide) Forced(max int) []TokenID {
	c.boom("Forced")
	return c.scriptGuide.Forced(max)
}

// noEOS keeps free-running requests going to their MaxTokens.
var noEOS = sampler.Params{LogitBias: map[sampler.TokenID]float64{sampler.TokenID(testEOS): -100}}

// wantPanicked checks that res ended with a CodePanic error carrying a stack.
func wantPanicked(t *testing.T, name string, res result, tokens int) {
	t.Helper()
	var e *Error
	if res.final.Finish != FinishError || !errors.As(res.final.Err, &e) || e.Code != CodePanic {
		t.Errorf("%s: %v, want a %v error", name, res, CodePanic)
		return
	}
	if !strings.Contains(e.Msg, "injected panic") || !strings.Contains(e.Stack, "goroutine") {
		t.Errorf("%s: panic error msg %q, stack %d bytes; want the panic value and a stack", name, e.Msg, len(e.Stack))
	}
	if len(res.tokens) != tokens {
		t.Errorf("%s: %d tokens before the panic, want %d", name, len(res.tokens), tokens)
	}
}

// TestConstraintPanic: a panic inside a request's constraint (mask, accept,
// forced tokens; in the loop or in the parallel phase) ends that request
// with a CodePanic error, drops its KV cells, frees its slot, is counted,
// and leaves the runner serving: a neighbour finishes and the next request
// runs normally.
func TestConstraintPanic(t *testing.T) {
	steps := [][]TokenID{{1, 2}, {3, 4}, {5, 6}, {7, 8}}
	tests := []struct {
		name     string
		op       string
		at       int
		parallel bool
		overlap  bool
		tokens   int // emitted before the panic
	}{
		{"FillMask at the first step", "FillMask", 0, false, false, 0},
		{"FillMask later", "FillMask", 2, false, false, 2},
		{"Accept", "Accept", 1, false, false, 1},
		{"Forced at admission", "Forced", 0, false, false, 0},
		{"FillMask in the parallel phase", "FillMask", 2, true, false, 2},
		{"Accept in the parallel phase", "Accept", 1, true, false, 1},
		{"FillMask during the decode", "FillMask", 2, false, true, 2},
		{"Forced during the decode", "Forced", 2, false, true, 2},
		{"FillMask during the decode, parallel phase", "FillMask", 1, true, true, 1},
	}
	for _, tt := range tests {
		r, eng := start(t, Config{Slots: 2, ParallelSampling: tt.parallel, OverlapMasks: tt.overlap})
		neighbour := submit(t, r, Request{Prompt: prompt(3, 4), MaxTokens: 10, Params: noEOS})
		c := &panicGuide{scriptGuide: newScript(testEOS, true, steps...), op: tt.op, at: tt.at}
		res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), Guide: c}))
		wantPanicked(t, tt.name, res, tt.tokens)
		if n := r.Stats().Panics; n != 1 {
			t.Errorf("%s: Stats().Panics = %d, want 1", tt.name, n)
		}
		if g := collect(t, neighbour); len(g.tokens) != 10 || g.final.Finish != FinishLength {
			t.Errorf("%s: neighbour: %v, want 10 tokens and finish length", tt.name, g)
		}
		_, removed := eng.snapshot()
		if !slices.ContainsFunc(removed, func(x [3]int) bool { return x[1] == 0 && x[2] == -1 }) {
			t.Errorf("%s: RemoveKV calls %v, want the panicked sequence dropped", tt.name, removed)
		}
		for i := range 3 {
			if res := collect(t, submit(t, r, Request{Prompt: prompt(2+i, 3), MaxTokens: 3, Params: noEOS})); len(res.tokens) != 3 {
				t.Errorf("%s: request %d after the panic: %v, want 3 tokens", tt.name, i, res)
			}
		}
	}
}

// TestEnginePanic: a panic in the engine ends the requests of that step's
// batch, and the runner goes on with the next requests.
func TestEnginePanic(t *testing.T) {
	for _, where := range []string{"Decode", "Logits"} {
		r, eng := start(t, Config{Slots: 2})
		calls := 0
		eng.mu.Lock()
		hook := func() {
			calls++
			if calls == 3 {
				panic("injected panic in " + where)
			}
		}
		if where == "Decode" {
			eng.failDecode = func(Batch) error { hook(); return nil }
		} else {
			eng.failLogits = func(int) error { hook(); return nil }
		}
		eng.mu.Unlock()
		res := collect(t, submit(t, r, Request{Prompt: prompt(1, 3), MaxTokens: 10, Params: noEOS}))
		wantPanicked(t, where, res, 2)
		if n := r.Stats().Panics; n != 1 {
			t.Errorf("%s: Stats().Panics = %d, want 1", where, n)
		}
		if res := collect(t, submit(t, r, Request{Prompt: prompt(2, 3), MaxTokens: 4, Params: noEOS})); len(res.tokens) != 4 {
			t.Errorf("%s: next request: %v, want 4 tokens", where, res)
		}
	}
}
