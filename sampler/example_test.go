package sampler_test

import (
	"fmt"

	"conform/sampler"
)

// A constrained greedy draw: the mask allows tokens 1 and 3 only, so the
// highest logit (token 2) cannot be chosen, and the logprob is over the
// allowed set.
func Example() {
	s, err := sampler.New(4, sampler.Params{Temperature: sampler.Temp(0), Logprobs: true})
	if err != nil {
		panic(err)
	}
	logits := []float32{0, 1, 5, 1}
	mask := make([]uint64, sampler.MaskWords(4))
	mask[0] = 1<<1 | 1<<3
	res, err := s.Sample(logits, mask, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("token %d, logprob %.3f, %d allowed\n", res.ID, res.Logprob, res.Allowed)

	// An empty mask is an error, never an unconstrained draw.
	_, err = s.Sample(logits, make([]uint64, 1), 0)
	fmt.Println(err)
	// Output:
	// token 1, logprob -0.693, 2 allowed
	// sampler: empty mask: mask: no token is allowed
}
