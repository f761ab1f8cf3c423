package fsm

// The token trie and its walk.
//
// A mask for DFA state q is the set of tokens t with δ*(q, bytes(t)) ≠ dead.
// Checking every token separately costs the sum of all token lengths; a trie
// shares the work of common prefixes, and, more importantly, lets the walk
// skip every token below a prefix that already leads to the dead state. A
// sparse mask (a JSON key, a number) is then computed from a few hundred
// nodes near the root; a dense one (a JSON string body) visits most of the
// trie, about 2×|V| nodes.
//
// Layout (after llguidance's toktrie, docs/toktrie.md, with the change
// described in constrained-decoding.md §1.2): the trie is flattened in
// depth-first order into one array of 8-byte nodes. There is no root node;
// the first node is the first child of the (implicit) root.
//
//	w0 = tokenID<<8 | byte      tokenID = sentinel when no token ends here
//	w1 = subtreeSize<<10 | depth
//
// subtreeSize counts the node itself and all its descendants, so the next
// sibling of node p is at p+subtreeSize. depth is the length of the node's
// byte string (1 for children of the root). Storing the depth instead of
// llguidance's "levels to pop" count makes the walk stateless apart from
// one stack of DFA states indexed by depth: in DFS order, when node p at
// depth d is visited, stack[d-1] holds the state reached by its parent.
//
// The walk (trie.walk) is then one linear scan:
//
//	s := trans[stack[d-1] + class[byte]]
//	if s == dead { p += subtreeSize; continue }   // prune the subtree
//	stack[d] = s; mask[tok] = 1; p++
//
// Non-token nodes carry a sentinel token id (the number of tokens), whose bit
// is one spare bit past the real tokens; setting it unconditionally removes
// the "does a token end here" branch, and the caller clears it afterwards.
// The DFA transition table is premultiplied (state ids are multiplied by the
// number of classes, the regex-automata trick), so there is no multiply in
// the loop, and the dead state is 0, so the liveness test is one compare.
//
// Duplicate byte strings (SentencePiece's <0x41> and A) get one extra leaf
// each, placed right after the first node of that string with the same byte
// and depth. The walk treats it as a sibling (its parent's state is still
// at stack[d-1]); it sits inside the first node's subtree range, which is
// harmless: when the first node is pruned, the duplicate, having the same
// parent and byte, would be pruned too.
//
// Limits: depth has 10 bits, so tokens longer than trieMaxDepth bytes are
// kept out of the trie and checked one by one (TokenIndex.long); GLM-4's
// 1,024-space token is the only known case. subtreeSize has 22 bits, so a
// trie holds at most trieMaxNodes nodes (4M; a 256k vocabulary needs well
// under 1M). Token ids have 24 bits (16.7M tokens).

import (
	"bytes"
	"slices"
	"sync/atomic"
)

// trieNode is one flattened trie node; see the file comment for the layout.
type trieNode struct {
	w0 uint32 // tokenID<<8 | byte
	w1 uint32 // subtreeSize<<10 | depth
}

const (
	// trieMaxDepth is the longest token kept in a trie (10 bits of depth).
	trieMaxDepth = 1<<10 - 1
	// trieMaxNodes bounds the node count (22 bits of subtree size).
	trieMaxNodes = 1<<22 - 1
	// trieMaxTokens bounds the token ids (24 bits, sentinel included).
	trieMaxTokens = 1<<24 - 1
)

// trie is a flattened token trie over a subset of a vocabulary.
type trie struct {
	nodes  []trieNode
	tokens int // number of token ids stored (duplicates included)
}

// buildTrie builds the trie of the given token ids. tokens[id] must be
// non-empty and at most trieMaxDepth bytes long for every id in ids; sentinel
// is the token id written into nodes where no token ends.
func buildTrie(tokens [][]byte, ids []TokenID, sentinel uint32) trie {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, func(a, b TokenID) int {
		if c := bytes.Compare(tokens[a], tokens[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	var (
		nodes []trieNode
		path  []int // path[i] = index of the node at depth i+1 on the current path
		prev  []byte
	)
	closeTo := func(depth int) { // finish the nodes deeper than depth
		for len(path) > depth {
			i := path[len(path)-1]
			nodes[i].w1 |= uint32(len(nodes)-i) << 10
			path = path[:len(path)-1]
		}
	}
	for k, id := range ids {
		tb := tokens[id]
		if k > 0 && bytes.Equal(tb, prev) {
			// A duplicate: one leaf of size 1 right after the last node
			// emitted for the same string (see the file comment).
			nodes = append(nodes, trieNode{
				w0: uint32(id)<<8 | uint32(tb[len(tb)-1]),
				w1: 1<<10 | uint32(len(tb)),
			})
			continue
		}
		lcp := 0
		for lcp < len(prev) && lcp < len(tb) && prev[lcp] == tb[lcp] {
			lcp++
		}
		closeTo(lcp)
		for d := lcp; d < len(tb); d++ {
			tok := sentinel
			if d == len(tb)-1 {
				tok = uint32(id)
			}
			path = append(path, len(nodes))
			nodes = append(nodes, trieNode{w0: tok<<8 | uint32(tb[d]), w1: uint32(d + 1)})
		}
		prev = tb
	}
	closeTo(0)
	return trie{nodes: nodes, tokens: len(ids)}
}

// trieStack holds the DFA state reached at each depth of a walk. Entries are
// written before they are read, so a stack is reused without clearing.
type trieStack [trieMaxDepth + 1]uint32

// walk ORs into mask the bit of every token in t whose bytes lead from the
// premultiplied state start to a live state, reading wk's table (premultiplied,
// dead = 0; unknownState where a lazy constraint has not expanded a state
// yet, which the walk then asks wk to do). mask must have room for the
// sentinel bit, which the walk sets and leaves set. After an expansion error
// (wk.err) the walk stops early and the mask is incomplete.
//
// This is the hot loop of mask computation: no interface calls, no maps, and
// the stack is a fixed array indexed by a masked depth so that its bounds
// checks disappear. Entries are read with atomic loads (plain moves on the
// usual platforms) because a lazy constraint's writer fills rows that other
// readers may be walking. stack is caller-provided scratch.
func (t *trie) walk(wk *walker, start uint32, mask []uint64, stack *trieStack) {
	stack[0] = start
	nodes := t.nodes
	trans, classes := wk.t.trans, &wk.c.classes
	for p := 0; p < len(nodes); {
		n := nodes[p]
		d := n.w1 & trieMaxDepth
		from := stack[(d-1)&trieMaxDepth]
		i := from + uint32(classes[uint8(n.w0)])
		s := atomic.LoadUint32(&trans[i])
		if s == unknownState {
			if trans = wk.expand(from); trans == nil {
				return
			}
			s = atomic.LoadUint32(&trans[i])
		}
		if s == 0 {
			p += int(n.w1 >> 10)
			continue
		}
		stack[d] = s
		tok := n.w0 >> 8
		mask[tok>>6] |= 1 << (tok & 63)
		p++
	}
}

func (t *trie) countVisited(trans []uint32, classes *[256]uint8, start uint32) int {
	var stack trieStack
	stack[0] = start
	nodes := t.nodes
	n := 0
	for p := 0; p < len(nodes); {
		nd := nodes[p]
		n++
		d := nd.w1 & trieMaxDepth
		s := trans[stack[(d-1)&trieMaxDepth]+uint32(classes[uint8(nd.w0)])]
		if s == 0 {
			p += int(nd.w1 >> 10)
			continue
		}
		stack[d] = s
		p++
	}
	return n
}
