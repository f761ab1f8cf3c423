package sampler

import (
	"math"
	"math/bits"
)

// allOnes is a mask word in which every token is allowed.
const allOnes = ^uint64(0)

var negInf = float32(math.Inf(-1))

// MaskWords returns the number of words of a mask over vocab tokens.
func MaskWords(vocab int) int { return (vocab + 63) / 64 }

// Popcount returns the number of allowed tokens in mask.
func Popcount(mask []uint64) int {
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	return n
}

// Allowed reports whether mask allows token id. Ids outside the mask are not
// allowed.
func Allowed(mask []uint64, id TokenID) bool {
	w := int(id) >> 6
	if id < 0 || w >= len(mask) {
		return false
	}
	return mask[w]>>(uint(id)&63)&1 != 0
}

// checkMask verifies that mask has exactly MaskWords(len(logits)) words and no
// bit set past the vocabulary.
func checkMask(logits []float32, mask []uint64) error {
	n := len(logits)
	if len(mask) != MaskWords(n) {
		return errorf(CodeBadInput, "mask", "%d words for %d logits, want %d", len(mask), n, MaskWords(n))
	}
	if r := n & 63; r != 0 && mask[len(mask)-1]>>uint(r) != 0 {
		return errorf(CodeBadInput, "mask", "bits set past the vocabulary of %d", n)
	}
	return nil
}

// ApplyMask sets logits[i] to -Inf for every token i that mask disallows, in
// place. It costs O(len(logits)/64) word tests plus one write per disallowed
// token: all-ones words are skipped and zero words are bulk-filled. The mask
// must have MaskWords(len(logits)) words.
func ApplyMask(logits []float32, mask []uint64) error {
	if err := checkMask(logits, mask); err != nil {
		return err
	}
	n := len(logits)
	for w, word := range mask {
		if word == allOnes {
			continue
		}
		base := w << 6
		end := min(base+64, n)
		if word == 0 {
			row := logits[base:end]
			for i := range row {
				row[i] = negInf
			}
			continue
		}
		for inv := ^word; inv != 0; inv &= inv - 1 {
			i := base + bits.TrailingZeros64(inv)
			if i >= end {
				break
			}
			logits[i] = negInf
		}
	}
	return nil
}

// cand is one candidate token: its id, its working logit and, once computed,
// its unnormalised weight exp(logit - max).
type cand struct {
	id TokenID
	l  float32
	w  float32
}

// gatherAll appends every token of the row (no mask).
func gatherAll(dst []cand, logits []float32) []cand {
	k := len(dst)
	dst = grow(dst, len(logits))
	out := dst[k : k+len(logits)]
	for i, l := range logits {
		out[i] = cand{id: TokenID(i), l: l}
	}
	return dst[:k+len(logits)]
}

// grow returns dst with room for n more elements, its length unchanged.
func grow(dst []cand, n int) []cand {
	if cap(dst)-len(dst) < n {
		dst = append(dst[:cap(dst)], make([]cand, n)...)[:len(dst)]
	}
	return dst
}

// gatherSparse appends the allowed tokens by walking the mask's set bits; it
// reads only allowed entries of the row. The mask must have been checked.
func gatherSparse(dst []cand, logits []float32, mask []uint64) []cand {
	k := len(dst)
	dst = grow(dst, len(logits))
	out := dst[:cap(dst)]
	for w, word := range mask {
		if word == 0 {
			continue
		}
		base := w << 6
		if word == allOnes {
			o := out[k : k+64]
			for i, l := range logits[base : base+64] {
				o[i] = cand{id: TokenID(base + i), l: l}
			}
			k += 64
			continue
		}
		for ; word != 0; word &= word - 1 {
			i := base + bits.TrailingZeros64(word)
			out[k] = cand{id: TokenID(i), l: logits[i]}
			k++
		}
	}
	return out[:k]
}

// gatherDense applies the mask to the row in place, then appends every
// entry that is not -Inf. The mask must have been checked.
func gatherDense(dst []cand, logits []float32, mask []uint64) []cand {
	_ = ApplyMask(logits, mask)
	k := len(dst)
	dst = grow(dst, len(logits))
	out := dst[:cap(dst)]
	for i, l := range logits {
		if l > negInf {
			out[k] = cand{id: TokenID(i), l: l}
			k++
		}
	}
	return out[:k]
}
