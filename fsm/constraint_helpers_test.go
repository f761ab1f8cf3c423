package fsm

// Test helpers of the token side: a tiny DFA builder (so these tests do not
// depend on Compile), a few DFAs shaped like JSON, random DFAs, and the
// cl100k_base vocabulary loaded offline.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// tokDFABuilder builds a DFA from byte-range transitions. States are ints
// from 1; state 0 is the dead state. build trims and renumbers.
type tokDFABuilder struct {
	n      int
	edges  []tokEdge
	accept map[int]bool
}

type tokEdge struct {
	from   int
	lo, hi byte
	to     int
}

func newTokDFABuilder() *tokDFABuilder { return &tokDFABuilder{accept: map[int]bool{}} }

func (b *tokDFABuilder) state() int { b.n++; return b.n }

func (b *tokDFABuilder) add(from int, lo, hi byte, to int) {
	b.edges = append(b.edges, tokEdge{from, lo, hi, to})
}

func (b *tokDFABuilder) addByte(from int, c byte, to int) { b.add(from, c, c, to) }

// lit adds a chain for s from `from` and returns the last state.
func (b *tokDFABuilder) lit(from int, s string) int {
	for i := 0; i < len(s); i++ {
		t := b.state()
		b.addByte(from, s[i], t)
		from = t
	}
	return from
}

// utf8Char adds every valid UTF-8 encoded scalar value from `from` to `to`,
// except the ASCII bytes for which skip returns true.
func (b *tokDFABuilder) utf8Char(from, to int, skip func(byte) bool) {
	for c := 0; c < 0x80; c++ {
		if !skip(byte(c)) {
			b.addByte(from, byte(c), to)
		}
	}
	t1 := b.state()
	t2 := b.state()
	t3 := b.state()
	e0, ed, f0, f4 := b.state(), b.state(), b.state(), b.state()
	b.add(t1, 0x80, 0xBF, to)
	b.add(t2, 0x80, 0xBF, t1)
	b.add(t3, 0x80, 0xBF, t2)
	b.add(e0, 0xA0, 0xBF, t1)
	b.add(ed, 0x80, 0x9F, t1)
	b.add(f0, 0x90, 0xBF, t2)
	b.add(f4, 0x80, 0x8F, t2)
	b.add(from, 0xC2, 0xDF, t1)
	b.addByte(from, 0xE0, e0)
	b.add(from, 0xE1, 0xEC, t2)
	b.addByte(from, 0xED, ed)
	b.add(from, 0xEE, 0xEF, t2)
	b.addByte(from, 0xF0, f0)
	b.add(from, 0xF1, 0xF3, t3)
	b.addByte(from, 0xF4, f4)
}

func tokJSONUnsafe(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }

// jsonString adds a JSON string (quotes included) from `from` to `to`, with
// escapes. maxLen < 0 means unbounded; otherwise at most maxLen characters
// (an escape counts as one).
func (b *tokDFABuilder) jsonString(from, to int, maxLen int) {
	open := b.state()
	b.addByte(from, '"', open)
	body := func(cur, nxt int) {
		b.utf8Char(cur, nxt, tokJSONUnsafe)
		esc := b.state()
		b.addByte(cur, '\\', esc)
		for _, c := range []byte("\"\\/bfnrt") {
			b.addByte(esc, c, nxt)
		}
		u := b.lit(esc, "u")
		for i := 0; i < 4; i++ {
			h := b.state()
			if i == 3 {
				h = nxt
			}
			b.add(u, '0', '9', h)
			b.add(u, 'a', 'f', h)
			b.add(u, 'A', 'F', h)
			u = h
		}
		b.addByte(cur, '"', to)
	}
	if maxLen < 0 {
		body(open, open)
		return
	}
	cur := open
	for i := 0; i < maxLen; i++ {
		nxt := b.state()
		body(cur, nxt)
		cur = nxt
	}
	b.addByte(cur, '"', to)
}

// jsonInt adds -?(0|[1-9][0-9]*) from `from` to `to` (ending in `to` only
// through the continuation bytes, so `to` must be entered via follow).
func (b *tokDFABuilder) jsonInt(from int, follow string, to int) {
	sign := b.state()
	zero := b.state()
	digs := b.state()
	b.addByte(from, '-', sign)
	for _, s := range []int{from, sign} {
		b.addByte(s, '0', zero)
		b.add(s, '1', '9', digs)
	}
	b.add(digs, '0', '9', digs)
	for _, s := range []int{zero, digs} {
		end := b.lit(s, follow[:len(follow)-1])
		b.addByte(end, follow[len(follow)-1], to)
	}
}

func (b *tokDFABuilder) build(start int) *DFA {
	// Byte classes: split 0..255 at every range boundary.
	var cut [257]bool
	cut[0], cut[256] = true, true
	for _, e := range b.edges {
		cut[e.lo] = true
		cut[int(e.hi)+1] = true
	}
	var classes [256]uint8
	k := -1
	for c := 0; c < 256; c++ {
		if cut[c] {
			k++
		}
		classes[c] = uint8(k)
	}
	nc := k + 1
	n := b.n + 1
	tr := make([]int, n*nc)
	for _, e := range b.edges {
		for c := int(e.lo); c <= int(e.hi); c++ {
			tr[e.from*nc+int(classes[c])] = e.to
		}
	}
	// Trim: live = can reach accept.
	live := make([]bool, n)
	for s := range b.accept {
		live[s] = true
	}
	for changed := true; changed; {
		changed = false
		for s := 1; s < n; s++ {
			if live[s] {
				continue
			}
			for c := 0; c < nc; c++ {
				if t := tr[s*nc+c]; t != 0 && live[t] {
					live[s], changed = true, true
					break
				}
			}
		}
	}
	// Merge classes with identical columns (as a real DFA builder would).
	colID := map[string]int{}
	remap := make([]int, nc)
	for c := 0; c < nc; c++ {
		col := make([]byte, 0, n*4)
		for s := 0; s < n; s++ {
			col = fmt.Appendf(col, "%d,", tr[s*nc+c])
		}
		if id, ok := colID[string(col)]; ok {
			remap[c] = id
		} else {
			remap[c] = len(colID)
			colID[string(col)] = remap[c]
		}
	}
	if len(colID) < nc {
		nc2 := len(colID)
		tr2 := make([]int, n*nc2)
		for s := 0; s < n; s++ {
			for c := 0; c < nc; c++ {
				tr2[s*nc2+remap[c]] = tr[s*nc+c]
			}
		}
		for b := range classes {
			classes[b] = uint8(remap[classes[b]])
		}
		tr, nc = tr2, nc2
	}
	id := make([]StateID, n)
	m := 1
	for s := 1; s < n; s++ {
		if live[s] {
			id[s] = StateID(m)
			m++
		}
	}
	d := &DFA{Classes: classes, NumClasses: nc, Trans: make([]StateID, m*nc), Accept: make([]bool, m)}
	for s := 1; s < n; s++ {
		if !live[s] {
			continue
		}
		d.Accept[id[s]] = b.accept[s]
		for c := 0; c < nc; c++ {
			if t := tr[s*nc+c]; t != 0 && live[t] {
				d.Trans[int(id[s])*nc+c] = id[t]
			}
		}
	}
	if live[start] {
		d.Start = id[start]
	}
	return d
}

// testDFAFromStrings returns a DFA accepting exactly strs.
func testDFAFromStrings(strs ...string) *DFA {
	b := newTokDFABuilder()
	start := b.state()
	for _, s := range strs {
		cur := start
		for i := 0; i < len(s); i++ {
			nxt := 0
			for _, e := range b.edges {
				if e.from == cur && e.lo == s[i] {
					nxt = e.to
				}
			}
			if nxt == 0 {
				nxt = b.state()
				b.addByte(cur, s[i], nxt)
			}
			cur = nxt
		}
		b.accept[cur] = true
	}
	return b.build(start)
}

// tokJSONObjectDFA: {"name":STR,"code":STR≤12,"age":INT,"tags":[STR(,STR)*]}
// with an optional space after ':' and ','.
func tokJSONObjectDFA() *DFA {
	b := newTokDFABuilder()
	start := b.state()
	s := b.lit(start, `{"name":`)
	sp := b.state()
	b.addByte(s, ' ', sp)
	a := b.state()
	b.jsonString(s, a, -1)
	b.jsonString(sp, a, -1)
	s = b.lit(a, `,"code":`)
	a = b.state()
	b.jsonString(s, a, 12)
	s = b.lit(a, `,"age":`)
	a = b.state()
	b.jsonInt(s, `,"tags":[`, a)
	end := b.state()
	b.addByte(a, ']', end)
	item := b.state()
	b.jsonString(a, item, -1)
	b.addByte(item, ']', end)
	comma := b.state()
	b.addByte(item, ',', comma)
	b.addByte(comma, ' ', a)
	b.jsonString(comma, item, -1)
	fin := b.lit(end, "}")
	b.accept[fin] = true
	return b.build(start)
}

// tokStringDFA is one JSON string, unbounded or bounded.
func tokStringDFA(maxLen int) *DFA {
	b := newTokDFABuilder()
	start := b.state()
	end := b.state()
	b.jsonString(start, end, maxLen)
	b.accept[end] = true
	return b.build(start)
}

// tokRandomDFA builds a random trimmed DFA over all bytes: each state sends
// most bytes to one "default" successor (so masks are dense) and a few
// bytes elsewhere or to dead.
func tokRandomDFA(rng *rand.Rand, n int) *DFA {
	b := newTokDFABuilder()
	for range n {
		b.state()
	}
	for s := 1; s <= n; s++ {
		if rng.IntN(3) == 0 {
			b.accept[s] = true
		}
		def := 1 + rng.IntN(n)
		if rng.IntN(4) == 0 {
			def = 0
		}
		if def != 0 {
			b.add(s, 0, 255, def)
		}
		for range 1 + rng.IntN(8) {
			lo := byte(rng.IntN(256))
			hi := lo + byte(rng.IntN(min(40, 256-int(lo))))
			b.add(s, lo, hi, rng.IntN(n+1)) // may be dead
		}
	}
	b.accept[1+rng.IntN(n)] = true
	return b.build(1)
}

// cl100k vocabulary: 100,277 ids (ranks, with the five specials 0xFF-marked
// at their ids and the gaps left empty) plus 256 byte-fallback duplicates of
// the single-byte tokens (as SentencePiece has), width padded to 100,608.
var (
	tokCl100kOnce   sync.Once
	tokCl100kTokens [][]byte
	tokCl100kErr    error
)

const (
	tokCl100kEOS   = TokenID(100257)
	tokCl100kWidth = 100608
)

func tokCl100k(tb testing.TB) ([][]byte, []TokenID, int) {
	tb.Helper()
	tokCl100kOnce.Do(func() {
		ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe("cl100k_base.tiktoken")
		if err != nil {
			tokCl100kErr = err
			return
		}
		toks := make([][]byte, 100277+256)
		for s, r := range ranks {
			toks[r] = []byte(s)
		}
		for id, name := range map[int]string{100257: "<|endoftext|>", 100258: "<|fim_prefix|>", 100259: "<|fim_middle|>", 100260: "<|fim_suffix|>", 100276: "<|endofprompt|>"} {
			toks[id] = append([]byte{SpecialPrefix}, name...)
		}
		for b := 0; b < 256; b++ {
			toks[100277+b] = []byte{byte(b)}
		}
		tokCl100kTokens = toks
	})
	if tokCl100kErr != nil {
		tb.Fatalf("loading cl100k_base: %v", tokCl100kErr)
	}
	return tokCl100kTokens, []TokenID{tokCl100kEOS}, tokCl100kWidth
}

var (
	tokCl100kIndexOnce sync.Once
	tokCl100kIndexV    *TokenIndex
)

func tokCl100kIndex(tb testing.TB) *TokenIndex {
	tb.Helper()
	toks, eos, width := tokCl100k(tb)
	tokCl100kIndexOnce.Do(func() {
		ti, err := NewTokenIndex(toks, eos, width)
		if err != nil {
			tb.Fatalf("NewTokenIndex(cl100k) = %v", err)
		}
		tokCl100kIndexV = ti
	})
	if tokCl100kIndexV == nil {
		tb.Fatal("cl100k index unavailable")
	}
	return tokCl100kIndexV
}

// tokBruteMask is the reference: token t allowed iff Run(q, bytes) is live;
// EOS iff q accepting.
func tokBruteMask(d *DFA, ti *TokenIndex, q StateID) []uint64 {
	w := make([]uint64, ti.MaskWords())
	for id, t := range ti.tokens {
		if len(t) > 0 && d.Run(q, t) != DeadState {
			w[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	if d.Accept[q] {
		for _, e := range ti.eos {
			w[e>>6] |= 1 << (uint(e) & 63)
		}
	}
	return w
}

// tokDiffMasks describes the first few differing ids of two masks.
func tokDiffMasks(ti *TokenIndex, got, want []uint64) string {
	var out []string
	for i := range max(len(got), len(want)) {
		var g, w uint64
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		for x := g ^ w; x != 0; x &= x - 1 {
			id := i*64 + tokBitsTZ(x)
			out = append(out, fmt.Sprintf("%d(%q got=%v)", id, ti.TokenBytes(TokenID(id)), g&(x&-x) != 0))
			if len(out) == 8 {
				return fmt.Sprint(out)
			}
		}
	}
	return fmt.Sprint(out)
}

func tokBitsTZ(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// tokAllowedIDs lists the set bits of w.
func tokAllowedIDs(w []uint64) []TokenID {
	var ids []TokenID
	for i, x := range w {
		for ; x != 0; x &= x - 1 {
			ids = append(ids, TokenID(i*64+tokBitsTZ(x)))
		}
	}
	return ids
}

// tokLiveStates returns the non-dead states of d, sorted.
func tokLiveStates(d *DFA) []StateID {
	var s []StateID
	for q := 1; q < d.NumStates(); q++ {
		s = append(s, StateID(q))
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return slices.Clip(s)
}
