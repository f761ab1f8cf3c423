package tokenizer

// BPE merging (Sennrich et al. 2016, "Neural Machine Translation of Rare
// Words with Subword Units"; the rank-ordered variant of GPT-2 and of
// HuggingFace tokenizers' models/bpe/word.rs).
//
// A word starts as a sequence of symbols, one per byte (byte-level) or per
// character (SentencePiece-style, with "<0xNN>" byte fallback for
// characters the vocabulary lacks). The merge table maps an adjacent pair
// (left id, right id) to the merge's rank and the id of the joined token.
// Merging repeatedly joins the adjacent pair of lowest rank, the leftmost
// one among equals, until no adjacent pair is in the table.
//
// Rescanning the word for the best pair after every join is quadratic,
// which matters for SentencePiece-style tokenizers where a whole paragraph
// is one word. Instead the symbols form a doubly linked list over an array
// and every mergeable pair sits in a binary min-heap keyed by (rank,
// position). Joining two symbols makes the right one dead and pushes the
// two new pairs it forms with its neighbours; heap entries whose pair no
// longer exists (a neighbour was joined away, or the pair now makes a
// different token) are recognised when popped and dropped. Each join
// pushes at most two entries, so a word of n symbols costs O(n log n).

import "sync"

// bpeModel is the BPE model section of a tokenizer: vocabulary, merges and
// how unknown characters are handled.
type bpeModel struct {
	vocab        map[string]TokenID // token string as written in the file
	rawVocab     map[string]TokenID // byte-level: token raw bytes → id
	merges       map[uint64]uint64  // left<<32|right → rank<<32|joined
	byteLevel    bool
	byteIDs      [256]TokenID // byte-level: the byte's token; else "<0xNN>" or NoToken
	unk          TokenID
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
}

type symbol struct {
	id         TokenID
	prev, next int32 // -1 at the ends; a dead symbol has id NoToken
}

type mergeItem struct {
	rank  uint32
	pos   int32
	joint TokenID
}

// bpeScratch holds the buffers of one encodeWord call; it is pooled.
type bpeScratch struct {
	syms []symbol
	heap []mergeItem
}

var scratchPool = sync.Pool{New: func() any { return new(bpeScratch) }}

func pairKey(a, b TokenID) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// encodeWord appends the BPE encoding of one pre-token w to out.
func (m *bpeModel) encodeWord(w string, out []TokenID) []TokenID {
	if w == "" {
		return out
	}
	if m.ignoreMerges {
		if m.byteLevel {
			if id, ok := m.rawVocab[w]; ok {
				return append(out, id)
			}
		} else if id, ok := m.vocab[w]; ok {
			return append(out, id)
		}
	}
	sc := scratchPool.Get().(*bpeScratch)
	defer scratchPool.Put(sc)
	syms := m.initialSymbols(w, sc.syms[:0])
	sc.syms = syms
	if len(syms) == 0 {
		return out
	}
	h := sc.heap[:0]
	for i := 0; i+1 < len(syms); i++ {
		if v, ok := m.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			h = heapPush(h, mergeItem{uint32(v >> 32), int32(i), TokenID(uint32(v))})
		}
	}
	for len(h) > 0 {
		var top mergeItem
		top, h = heapPop(h)
		s := &syms[top.pos]
		if s.id == NoToken || s.next < 0 {
			continue
		}
		r := &syms[s.next]
		v, ok := m.merges[pairKey(s.id, r.id)]
		if !ok || TokenID(uint32(v)) != top.joint {
			continue // stale: this pair was changed by an earlier join
		}
		s.id = top.joint
		r.id = NoToken
		s.next = r.next
		if s.next >= 0 {
			syms[s.next].prev = top.pos
		}
		if s.prev >= 0 {
			if v, ok := m.merges[pairKey(syms[s.prev].id, s.id)]; ok {
				h = heapPush(h, mergeItem{uint32(v >> 32), s.prev, TokenID(uint32(v))})
			}
		}
		if s.next >= 0 {
			if v, ok := m.merges[pairKey(s.id, syms[s.next].id)]; ok {
				h = heapPush(h, mergeItem{uint32(v >> 32), top.pos, TokenID(uint32(v))})
			}
		}
	}
	sc.heap = h
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

// initialSymbols splits w into its starting symbols, linked in order.
func (m *bpeModel) initialSymbols(w string, syms []symbol) []symbol {
	add := func(id TokenID) {
		n := int32(len(syms))
		syms = append(syms, symbol{id: id, prev: n - 1, next: n + 1})
	}
	if m.byteLevel {
		for i := 0; i < len(w); i++ {
			if id := m.byteIDs[w[i]]; id != NoToken {
				add(id)
			} else if m.unk != NoToken {
				add(m.unk)
			}
		}
	} else {
		pendingUnk := false
		for i := 0; i < len(w); {
			_, size := firstRune(w[i:])
			ch := w[i : i+size]
			i += size
			if id, ok := m.vocab[ch]; ok {
				if pendingUnk {
					add(m.unk)
					pendingUnk = false
				}
				add(id)
				continue
			}
			if m.byteFallback && m.hasBytes(ch) {
				if pendingUnk {
					add(m.unk)
					pendingUnk = false
				}
				for j := 0; j < len(ch); j++ {
					add(m.byteIDs[ch[j]])
				}
				continue
			}
			if m.unk == NoToken {
				continue // no unk token: the character is dropped, as HuggingFace does
			}
			if pendingUnk && !m.fuseUnk {
				add(m.unk)
			}
			pendingUnk = true
		}
		if pendingUnk {
			add(m.unk)
		}
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// hasBytes reports whether every byte of ch has a byte-fallback token.
func (m *bpeModel) hasBytes(ch string) bool {
	for j := 0; j < len(ch); j++ {
		if m.byteIDs[ch[j]] == NoToken {
			return false
		}
	}
	return true
}

func mergeLess(a, b mergeItem) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

func heapPush(h []mergeItem, x mergeItem) []mergeItem {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !mergeLess(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []mergeItem) (mergeItem, []mergeItem) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && mergeLess(h[r], h[l]) {
			c = r
		}
		if !mergeLess(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top, h
}
