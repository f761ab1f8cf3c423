package fsm

import (
	"math/rand/v2"
	"testing"
)

// TestMinimizeRandom runs finish (trim, Hopcroft, canonical numbering) on
// random complete DFAs and checks the result against the naive Moore
// refinement in checkDFA and against the raw automaton on random inputs.
func TestMinimizeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := newCompiler(Options{})
	for iter := range 2000 {
		n := 2 + rng.IntN(40)
		k := 1 + rng.IntN(5)
		r := &rawDFA{k: k, trans: make([]int32, n*k), accept: make([]bool, n), start: int32(1 + rng.IntN(n-1))}
		for b := range 256 {
			r.classes[b] = uint8(b * k / 256)
		}
		density := 1 + rng.IntN(4)
		for s := 1; s < n; s++ {
			r.accept[s] = rng.IntN(3) == 0
			for cl := range k {
				if rng.IntN(density+1) > 0 {
					// Few distinct targets make equivalent states likely.
					if rng.IntN(2) == 0 {
						r.trans[s*k+cl] = int32(rng.IntN(n))
					} else {
						r.trans[s*k+cl] = int32(rng.IntN(min(n, 4)))
					}
				}
			}
		}
		d, err := c.finish(r)
		if err != nil {
			t.Fatalf("finish error: %v", err)
		}
		checkDFA(t, d)
		for range 50 {
			in := make([]byte, rng.IntN(8))
			s := r.start
			for i := range in {
				in[i] = byte(rng.IntN(256))
				s = r.trans[int(s)*k+int(r.classes[in[i]])]
			}
			if want := r.accept[s]; Matches(d, in) != want {
				t.Fatalf("iteration %d: minimized DFA on % X = %v, raw DFA says %v\n%s", iter, in, !want, want, d)
			}
		}
	}
}
