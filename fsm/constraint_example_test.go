package fsm_test

import (
	"fmt"
	"math/bits"

	"conform/fsm"
)

// The token side in one loop: a vocabulary index (built once per model), a
// constraint (a compiled DFA paired with the vocabulary, shared by every
// request with the same pattern), and a matcher per sequence.
func ExampleConstraint() {
	// A toy vocabulary; a real one comes from package tokenizer. Token 6 is
	// a special (0xFF-marked) end-of-sequence token.
	vocab := [][]byte{[]byte("{"), []byte(`"`), []byte("ok"), []byte(`"}`), []byte("}"), []byte(`{"`), {0xFF, 'E'}}
	ti, err := fsm.NewTokenIndex(vocab, []fsm.TokenID{6}, 64)
	if err != nil {
		panic(err)
	}
	n, err := fsm.Parse(`\{"[a-z]+"\}`)
	if err != nil {
		panic(err)
	}
	d, err := fsm.Compile(n, fsm.Options{})
	if err != nil {
		panic(err)
	}
	c, err := fsm.NewConstraint(d, ti, fsm.ConstraintOptions{})
	if err != nil {
		panic(err)
	}
	m := c.NewMatcher()
	mask := make([]uint64, ti.MaskWords())
	for _, t := range []fsm.TokenID{5, 2, 3, 6} {
		if err := m.FillMask(mask); err != nil {
			panic(err)
		}
		fmt.Printf("allowed %v, sampled %q\n", tokExampleIDs(mask), vocab[t])
		if err := m.Accept(t); err != nil {
			panic(err)
		}
	}
	fmt.Println("finished:", m.IsTerminated())
	// Output:
	// allowed [0 5], sampled "{\""
	// allowed [2], sampled "ok"
	// allowed [1 2 3], sampled "\"}"
	// allowed [6], sampled "\xffE"
	// finished: true
}

func tokExampleIDs(mask []uint64) []int {
	var out []int
	for i, w := range mask {
		for ; w != 0; w &= w - 1 {
			out = append(out, i*64+bits.TrailingZeros64(w))
		}
	}
	return out
}
