package fsm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sync"
	"unicode/utf8"

	"conform/token"
)

// TokenID names a token of a vocabulary: an index into the list of byte
// strings a TokenIndex is built from, and a bit index in a mask. It is
// token.ID, the id type every stage shares.
type TokenID = token.ID

// Fingerprint identifies a vocabulary: the SHA-256 of every token's bytes,
// the EOS ids and the logits width. Two TokenIndexes with the same
// fingerprint give the same masks for every DFA.
type Fingerprint [32]byte

// String returns the fingerprint in hexadecimal.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// SpecialPrefix is the byte that marks special (control) tokens in a
// vocabulary. Valid UTF-8 never contains 0xFF, so a DFA over text rejects
// every special token at its first byte; a constraint that wants a special
// token names its 0xFF-prefixed bytes explicitly (llguidance's convention).
const SpecialPrefix = 0xFF

// Slices of the vocabulary, after llguidance's slicer (constrained-decoding.md
// §1.5). A token is string-safe when it is complete, valid UTF-8 and every
// character is allowed inside a JSON string body without escaping. The
// string-safe tokens are split by length in characters; every other token is
// in the "rest" trie. llguidance uses three slices (1–10, 11–30, 31+), which
// suit unbounded strings; a DFA also unrolls bounded strings (maxLength) into
// one state per remaining character, so short lengths get a slice each: with
// r characters left, the slices up to r are ORed in and the longer ones are
// skipped outright (mask_slicer.go), and nothing but the rest trie is walked.
// sliceLimits are the upper bounds (in characters) of all slices but the
// last, which is unbounded.
var sliceLimits = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 24, 32, 48}

// stringSafeRune reports whether r may appear unescaped in a JSON string body
// under every string policy this project uses: not '"', not '\\', not a C0
// control, and not DEL or a C1 control (U+007F–U+009F, which some string
// policies exclude; tokens holding them are rare, so leaving them to the rest
// trie costs little and keeps the slices usable under those policies).
func stringSafeRune(r rune) bool {
	return r >= 0x20 && r != '"' && r != '\\' && (r < 0x7F || r > 0x9F) && r != utf8.RuneError
}

// tokenSlice is one slice of string-safe tokens of minChars to maxChars
// characters, with its trie, its mask, and the OR of its mask with those of
// every shorter slice (so that a prefix of the slices costs one OR).
type tokenSlice struct {
	minChars, maxChars int
	trie               trie
	bits               []uint64 // the slice's tokens; len = TokenIndex.words
	cum                []uint64 // the tokens of this slice and all shorter ones
}

// TokenIndex is a vocabulary prepared for mask computation: the raw bytes of
// every token, a token trie (trie.go), the string-safe slices and the EOS
// ids. It is built once per vocabulary, is immutable, and is safe for
// concurrent use by any number of Constraints.
type TokenIndex struct {
	tokens    [][]byte // tokens[id]; nil for unused ids and EOS ids
	raw       [][]byte // tokens[id] as given (EOS ids included)
	numTokens int      // len(tokens): bits at or above are never set
	width     int      // logits width (≥ numTokens)
	words     int      // (numTokens+63)/64: words of a stored bitset
	eos       []TokenID
	isEOS     []bool
	fp        Fingerprint

	full      trie      // every non-EOS token of at most trieMaxDepth bytes
	long      []TokenID // non-EOS tokens longer than trieMaxDepth bytes
	slices    []tokenSlice
	rest      trie // tokens of full that are in no slice
	maxChars  int  // the largest maxChars over slices (0 if none)
	trieBytes int64
	scratch   sync.Pool // *maskScratch, shared by every Constraint on this index
}

// newScratch returns fresh mask scratch sized for this vocabulary.
func (ti *TokenIndex) newScratch() *maskScratch {
	return &maskScratch{bits: make([]uint64, (ti.numTokens+64)/64)}
}

// getScratch returns pooled mask scratch (put it back in ti.scratch).
func (ti *TokenIndex) getScratch() *maskScratch {
	if sc, ok := ti.scratch.Get().(*maskScratch); ok {
		return sc
	}
	return ti.newScratch()
}

// NewTokenIndex builds the index of a vocabulary. tokens[id] is the raw byte
// string of token id (special tokens already prefixed with SpecialPrefix);
// nil or empty entries are unused ids, never allowed. eos lists the ids that
// end generation: they are not matched by bytes but allowed exactly in
// accepting states. width is the logits width (the mask length in bits); it
// may exceed len(tokens), and bits at or above len(tokens) are never set.
//
// NewTokenIndex copies tokens; the caller may reuse them.
func NewTokenIndex(tokens [][]byte, eos []TokenID, width int) (*TokenIndex, error) {
	n := len(tokens)
	switch {
	case n == 0:
		return nil, tokError(ErrBadVocabulary, "empty vocabulary")
	case n >= trieMaxTokens:
		return nil, tokLimitError(ErrBadVocabulary, "vocabulary size", trieMaxTokens-1, int64(n))
	case width < n:
		return nil, tokError(ErrBadVocabulary, "logits width %d is smaller than the vocabulary (%d tokens)", width, n)
	}
	ti := &TokenIndex{
		numTokens: n,
		width:     width,
		words:     (n + 63) / 64,
		isEOS:     make([]bool, n),
	}
	for _, e := range eos {
		if e < 0 || int(e) >= n {
			return nil, tokError(ErrBadVocabulary, "EOS token %d is outside the vocabulary (%d tokens)", e, n)
		}
		if !ti.isEOS[e] {
			ti.isEOS[e] = true
			ti.eos = append(ti.eos, e)
		}
	}
	// One backing array for all token bytes.
	total := 0
	for _, t := range tokens {
		total += len(t)
	}
	buf := make([]byte, 0, total)
	ti.raw = make([][]byte, n)
	ti.tokens = make([][]byte, n)
	for id, t := range tokens {
		if len(t) == 0 || !markerShaped(t) {
			continue
		}
		start := len(buf)
		buf = append(buf, t...)
		ti.raw[id] = buf[start:len(buf):len(buf)]
		if !ti.isEOS[id] {
			ti.tokens[id] = ti.raw[id]
		}
	}
	ti.fp = fingerprint(ti.raw, ti.eos, width)

	// Partition the trie tokens: full trie, long list, slices, rest.
	sentinel := uint32(n)
	var fullIDs, restIDs []TokenID
	sliceIDs := make([][]TokenID, len(sliceLimits)+1)
	sliceMin := make([]int, len(sliceLimits)+1)
	sliceMax := make([]int, len(sliceLimits)+1)
	for id, t := range ti.tokens {
		switch {
		case len(t) == 0:
			continue
		case len(t) > trieMaxDepth:
			ti.long = append(ti.long, TokenID(id))
			continue
		}
		fullIDs = append(fullIDs, TokenID(id))
		chars, ok := stringSafeChars(t)
		if !ok {
			restIDs = append(restIDs, TokenID(id))
			continue
		}
		k, _ := slices.BinarySearch(sliceLimits, chars)
		if len(sliceIDs[k]) == 0 || chars < sliceMin[k] {
			sliceMin[k] = chars
		}
		sliceIDs[k] = append(sliceIDs[k], TokenID(id))
		sliceMax[k] = max(sliceMax[k], chars)
	}
	ti.full = buildTrie(ti.tokens, fullIDs, sentinel)
	ti.rest = buildTrie(ti.tokens, restIDs, sentinel)
	if len(ti.full.nodes) > trieMaxNodes {
		return nil, tokLimitError(ErrBadVocabulary, "token trie nodes", trieMaxNodes, int64(len(ti.full.nodes)))
	}
	cum := make([]uint64, ti.words)
	for k, ids := range sliceIDs {
		if len(ids) == 0 {
			continue
		}
		s := tokenSlice{minChars: sliceMin[k], maxChars: sliceMax[k], trie: buildTrie(ti.tokens, ids, sentinel), bits: make([]uint64, ti.words)}
		for _, id := range ids {
			s.bits[id>>6] |= 1 << (uint(id) & 63)
		}
		for i, x := range s.bits {
			cum[i] |= x
		}
		s.cum = slices.Clone(cum)
		ti.slices = append(ti.slices, s)
		ti.maxChars = max(ti.maxChars, s.maxChars)
		ti.trieBytes += int64(len(s.trie.nodes))*8 + int64(len(s.bits)+len(s.cum))*8
	}
	ti.trieBytes += int64(len(ti.full.nodes)+len(ti.rest.nodes)) * 8
	return ti, nil
}

// markerShaped reports whether t may enter the index. Byte 0xFF never
// occurs in valid UTF-8, so this package reserves it for the special-token
// marker: a token holding 0xFF is kept only when it is exactly the marker
// followed by the special token's text (0xFF first, nothing else 0xFF, at
// least one byte of text). Anything else holding 0xFF — byte-level
// vocabularies have a plain one-byte token 0xFF — can never be part of valid
// text, and letting it in would let a sequence of plain tokens spell a
// special token's marker ("\xFF" then "<tool_call>"), so it is never
// allowed.
func markerShaped(t []byte) bool {
	i := bytes.IndexByte(t, SpecialPrefix)
	return i < 0 || i == 0 && len(t) > 1 && bytes.IndexByte(t[1:], SpecialPrefix) < 0
}

// stringSafeChars returns the number of characters of t when t is complete,
// valid UTF-8 made only of string-safe characters (see stringSafeRune).
func stringSafeChars(t []byte) (int, bool) {
	n := 0
	for len(t) > 0 {
		r, size := utf8.DecodeRune(t)
		if !stringSafeRune(r) {
			return 0, false
		}
		t = t[size:]
		n++
	}
	return n, true
}

// fingerprint hashes every token (length-prefixed), the EOS ids and width.
func fingerprint(tokens [][]byte, eos []TokenID, width int) Fingerprint {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(len(tokens)))
	for _, t := range tokens {
		put(uint64(len(t)))
		h.Write(t)
	}
	put(uint64(len(eos)))
	for _, e := range eos {
		put(uint64(e))
	}
	put(uint64(width))
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

// NumTokens returns the number of token ids (len of the tokens given to
// NewTokenIndex); no mask bit at or above it is ever set.
func (ti *TokenIndex) NumTokens() int { return ti.numTokens }

// Width returns the logits width: masks have (Width()+63)/64 words.
func (ti *TokenIndex) Width() int { return ti.width }

// MaskWords returns the number of uint64 words a mask for this vocabulary
// needs: (Width()+63)/64.
func (ti *TokenIndex) MaskWords() int { return (ti.width + 63) / 64 }

// EOS returns the end-of-sequence token ids (a copy).
func (ti *TokenIndex) EOS() []TokenID { return append([]TokenID(nil), ti.eos...) }

// IsEOS reports whether t is one of the EOS ids.
func (ti *TokenIndex) IsEOS(t TokenID) bool { return t >= 0 && int(t) < ti.numTokens && ti.isEOS[t] }

// TokenBytes returns the raw bytes of token t (nil for an unused id or one
// outside the vocabulary). The caller must not modify them.
func (ti *TokenIndex) TokenBytes(t TokenID) []byte {
	if t < 0 || int(t) >= ti.numTokens {
		return nil
	}
	return ti.raw[t]
}

// Fingerprint returns the vocabulary's fingerprint (a hash of every token's
// bytes, the EOS ids and the width), the key under which compiled
// constraints are cached.
func (ti *TokenIndex) Fingerprint() Fingerprint { return ti.fp }

// MemoryBytes returns an estimate of the index's memory: token bytes, tries
// and slice masks.
func (ti *TokenIndex) MemoryBytes() int64 {
	b := ti.trieBytes + int64(len(ti.raw))*24*2 + int64(len(ti.isEOS))
	for _, t := range ti.raw {
		b += int64(len(t))
	}
	return b
}
