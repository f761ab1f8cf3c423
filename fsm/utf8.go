package fsm

import "unicode/utf8"

// UTF-8 range splitting.
//
// A range of code points is compiled to an alternation of byte-range
// sequences, each sequence one byte range per encoded byte, such that the
// sequences together accept exactly the UTF-8 encodings of the range: no
// overlong forms (the ranges never start below the first code point of
// their length) and no surrogates (U+D800–U+DFFF are cut out first). The
// method is the one RE2 and regex-automata use (see regex-automata
// src/util/utf8.rs, Utf8Sequences): split at the encoded-length boundaries,
// then split further until every continuation byte position spans a full
// 0x80–0xBF range or the two ends share all higher bytes, at which point
// the byte-wise ranges of the encoded ends describe the range exactly.

// utf8Seq is one sequence: n byte ranges.
type utf8Seq struct {
	n int
	r [utf8.UTFMax]ByteRange
}

// appendUTF8Seqs appends the sequences for [lo, hi] to dst in increasing
// code point order.
func appendUTF8Seqs(dst []utf8Seq, lo, hi rune) []utf8Seq {
	if lo < 0 {
		lo = 0
	}
	if hi > utf8.MaxRune {
		hi = utf8.MaxRune
	}
	if lo > hi {
		return dst
	}
	if lo <= 0xDFFF && hi >= 0xD800 {
		dst = appendUTF8Seqs(dst, lo, min(hi, 0xD7FF))
		return appendUTF8Seqs(dst, max(lo, 0xE000), hi)
	}
	for _, b := range [...]rune{0x7F, 0x7FF, 0xFFFF} {
		if lo <= b && b < hi {
			dst = appendUTF8Seqs(dst, lo, b)
			return appendUTF8Seqs(dst, b+1, hi)
		}
	}
	if hi <= 0x7F {
		return append(dst, utf8Seq{n: 1, r: [4]ByteRange{{byte(lo), byte(hi)}}})
	}
	for i := 1; i < utf8.UTFMax; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				dst = appendUTF8Seqs(dst, lo, lo|m)
				return appendUTF8Seqs(dst, (lo|m)+1, hi)
			}
			if hi&m != m {
				dst = appendUTF8Seqs(dst, lo, (hi&^m)-1)
				return appendUTF8Seqs(dst, hi&^m, hi)
			}
		}
	}
	var a, b [utf8.UTFMax]byte
	n := utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	s := utf8Seq{n: n}
	for i := range n {
		s.r[i] = ByteRange{a[i], b[i]}
	}
	return append(dst, s)
}
