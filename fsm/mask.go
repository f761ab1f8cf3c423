package fsm

import (
	"math/bits"
)

// Mask storage.
//
// A Constraint computes each DFA state's mask once and keeps it for every
// later visit by any Matcher (constrained-decoding.md §1.4). Dense masks are
// 16 KB at 128k tokens, so storing one bitset per state does not scale to
// thousands of states; instead masks are
//
//   - interned (hash-consed): states with the same allowed set share one
//     entry (all unbounded string-body states, all "expect a value" states);
//   - stored sparsely when small: an id list when at most listMax tokens are
//     allowed, a list of the rejected ids when at most listMax are rejected,
//     a bitset otherwise. listMax is a quarter of the bitset's size in
//     uint32 ids (words/2: 1,002 ids at 128k tokens, close to XGrammar's
//     USE_BITSET_THRESHOLD of 1,000), so a list never costs more than a
//     quarter of a bitset and filling from it stays a few hundred ns;
//   - counted: every entry keeps its popcount (EOS included), which answers
//     "is this state forced?" and lets a sampler choose its sparse path.

// maskKind is the representation of a stored mask.
type maskKind uint8

const (
	maskBits       maskKind = iota // bits holds the mask
	maskList                       // ids holds the allowed ids
	maskComplement                 // ids holds the rejected ids below numTokens
)

// maskEntry is one interned mask. It is immutable once published.
type maskEntry struct {
	kind  maskKind
	pop   int      // number of allowed ids, EOS included
	bits  []uint64 // maskBits: TokenIndex.words words
	ids   []uint32 // maskList / maskComplement: sorted ids
	hash  uint64
	bytes int64 // memory charged to the constraint's budget
}

// maskListMax returns the largest id list stored instead of a bitset.
func maskListMax(words int) int { return max(words/2, 16) }

// hashWords hashes a bitset and counts its set bits in one pass: a
// multiplicative mix over four independent lanes (so the multiplies
// pipeline), skipping all-zero blocks of four words (most cold masks are
// sparse) and mixing in each block's position instead. Equality is always
// re-checked, so collisions cost time, never correctness.
func hashWords(w []uint64) (h uint64, pop int) {
	const m = 0x9E3779B97F4A7C15
	h0, h1, h2, h3 := uint64(len(w)), uint64(1), uint64(2), uint64(3)
	i := 0
	for ; i+4 <= len(w); i += 4 {
		b := w[i : i+4 : i+4]
		x0, x1, x2, x3 := b[0], b[1], b[2], b[3]
		if x0|x1|x2|x3 == 0 {
			continue
		}
		pop += bits.OnesCount64(x0) + bits.OnesCount64(x1) + bits.OnesCount64(x2) + bits.OnesCount64(x3)
		p := uint64(i)
		h0 = (h0 ^ x0 ^ p) * m
		h1 = (h1 ^ x1 ^ p) * m
		h2 = (h2 ^ x2 ^ p) * m
		h3 = (h3 ^ x3 ^ p) * m
	}
	for ; i < len(w); i++ {
		pop += bits.OnesCount64(w[i])
		h0 = (h0 ^ w[i]) * m
	}
	h = h0 ^ bits.RotateLeft64(h1, 17) ^ bits.RotateLeft64(h2, 31) ^ bits.RotateLeft64(h3, 47)
	h ^= h >> 29
	h *= m
	return h ^ h>>32, pop
}

// popWords returns the number of set bits in w.
func popWords(w []uint64) int {
	n := 0
	for _, x := range w {
		n += bits.OnesCount64(x)
	}
	return n
}

// newMaskEntry stores the bitset w (numTokens valid bits, pop of them set,
// hash from hashWords) in its cheapest representation. w is copied.
func newMaskEntry(w []uint64, numTokens int, hash uint64, pop int) *maskEntry {
	e := &maskEntry{pop: pop, hash: hash}
	lm := maskListMax(len(w))
	switch {
	case pop <= lm:
		e.kind = maskList
		e.ids = make([]uint32, 0, pop)
		for i, x := range w {
			for x != 0 {
				e.ids = append(e.ids, uint32(i<<6+bits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
	case numTokens-pop <= lm:
		e.kind = maskComplement
		e.ids = make([]uint32, 0, numTokens-pop)
		for i, x := range w {
			x = ^x
			if i == len(w)-1 && numTokens&63 != 0 {
				x &= 1<<(uint(numTokens)&63) - 1
			}
			for x != 0 {
				e.ids = append(e.ids, uint32(i<<6+bits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
	default:
		e.kind = maskBits
		e.bits = append([]uint64(nil), w...)
	}
	e.bytes = int64(len(e.bits))*8 + int64(len(e.ids))*4 + 96
	return e
}

// equalBits reports whether the entry holds exactly the bitset w, which
// has pop bits set.
func (e *maskEntry) equalBits(w []uint64, pop int) bool {
	if pop != e.pop {
		return false
	}
	switch e.kind {
	case maskBits:
		for i, x := range e.bits {
			if w[i] != x {
				return false
			}
		}
		return true
	case maskList:
		for _, id := range e.ids {
			if w[id>>6]&(1<<(id&63)) == 0 {
				return false
			}
		}
		return true
	default: // maskComplement
		for _, id := range e.ids {
			if w[id>>6]&(1<<(id&63)) != 0 {
				return false
			}
		}
		return true
	}
}

// fill writes the mask into dst (len ≥ TokenIndex.words): every word of dst is
// overwritten; bits at or above numTokens stay zero.
func (e *maskEntry) fill(dst []uint64, numTokens int) {
	switch e.kind {
	case maskBits:
		copy(dst, e.bits)
		clear(dst[len(e.bits):])
	case maskList:
		clear(dst)
		for _, id := range e.ids {
			dst[id>>6] |= 1 << (id & 63)
		}
	default: // maskComplement
		full := numTokens >> 6
		for i := range dst[:full] {
			dst[i] = ^uint64(0)
		}
		clear(dst[full:])
		if r := uint(numTokens) & 63; r != 0 {
			dst[full] = 1<<r - 1
		}
		for _, id := range e.ids {
			dst[id>>6] &^= 1 << (id & 63)
		}
	}
}

// has reports whether token id is allowed by the entry.
func (e *maskEntry) has(id uint32) bool {
	switch e.kind {
	case maskBits:
		return int(id>>6) < len(e.bits) && e.bits[id>>6]&(1<<(id&63)) != 0
	case maskList:
		return containsSorted(e.ids, id)
	default:
		return !containsSorted(e.ids, id)
	}
}

// first returns the smallest allowed id (for pop == 1 entries).
func (e *maskEntry) first(numTokens int) (uint32, bool) {
	switch e.kind {
	case maskList:
		if len(e.ids) > 0 {
			return e.ids[0], true
		}
		return 0, false
	case maskBits:
		for i, x := range e.bits {
			if x != 0 {
				return uint32(i<<6 + bits.TrailingZeros64(x)), true
			}
		}
		return 0, false
	default:
		for id, k := uint32(0), 0; int(id) < numTokens; id++ {
			if k < len(e.ids) && e.ids[k] == id {
				k++
				continue
			}
			return id, true
		}
		return 0, false
	}
}

// containsSorted reports whether the sorted list ids contains id.
func containsSorted(ids []uint32, id uint32) bool {
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(ids) && ids[lo] == id
}
