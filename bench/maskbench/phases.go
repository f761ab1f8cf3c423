package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// phaseRecord is where one successful compile spent its time to first mask
// (-phases): grammar (schema → regex AST), the fsm build split into NFA,
// determinization and minimization, and NewConstraint (table setup and the
// start state's mask).
type phaseRecord struct {
	grammar, nfa, det, min, constraint time.Duration
	nfaStates, dfaStates               int
}

// phases collects phaseRecords across threads.
type phases struct {
	mu   sync.Mutex
	recs []phaseRecord
}

func (p *phases) add(r phaseRecord) {
	p.mu.Lock()
	p.recs = append(p.recs, r)
	p.mu.Unlock()
}

// print writes, per phase, its total and its p50/p90/p99 over schemas.
func (p *phases) print(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.recs) == 0 {
		return
	}
	cols := []struct {
		name string
		get  func(phaseRecord) float64
	}{
		{"grammar", func(r phaseRecord) float64 { return us(r.grammar) }},
		{"nfa", func(r phaseRecord) float64 { return us(r.nfa) }},
		{"determinize", func(r phaseRecord) float64 { return us(r.det) }},
		{"minimize", func(r phaseRecord) float64 { return us(r.min) }},
		{"constraint+first mask", func(r phaseRecord) float64 { return us(r.constraint) }},
		{"NFA states", func(r phaseRecord) float64 { return float64(r.nfaStates) }},
		{"DFA states", func(r phaseRecord) float64 { return float64(r.dfaStates) }},
	}
	fmt.Fprintf(w, "\nTime to first mask by phase (%d compiled schemas; µs, states):\n", len(p.recs))
	fmt.Fprintln(w, "| phase | total | p50 | p90 | p99 | max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	v := make([]float64, len(p.recs))
	for _, c := range cols {
		var sum float64
		for i, r := range p.recs {
			v[i] = c.get(r)
			sum += v[i]
		}
		sort.Float64s(v)
		q := func(f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", c.name, sum, q(0.5), q(0.9), q(0.99), v[len(v)-1])
	}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
