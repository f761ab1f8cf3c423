package tokenizer

import "unicode"

// addedMatcher finds added tokens written in text, the way HuggingFace's
// AddedVocabulary does: leftmost match first, and the longest token at
// that position. It is a byte trie; matching walks it from each position
// whose first byte starts some token, so the cost is the text length
// times the depth actually walked.
type addedMatcher struct {
	nodes []addedNode
	first [256]bool
}

type addedNode struct {
	next map[byte]int32
	tok  int32 // index into toks, or -1
}

// addedTok is one matchable added token.
type addedTok struct {
	id                        TokenID
	lstrip, rstrip, singleWrd bool
}

// addedSpan is one piece of a split: an added token (id >= 0) over
// text[start:end], or plain text (id == NoToken).
type addedSpan struct {
	start, end int
	id         TokenID
}

type addedSet struct {
	m    addedMatcher
	toks []addedTok
}

// newAddedSet builds a matcher over tokens; it returns nil when there are none.
func newAddedSet(tokens []HFAddedToken) *addedSet {
	if len(tokens) == 0 {
		return nil
	}
	s := &addedSet{m: addedMatcher{nodes: []addedNode{{tok: -1}}}}
	for _, a := range tokens {
		if a.Content == "" {
			continue
		}
		n := int32(0)
		for i := 0; i < len(a.Content); i++ {
			c := a.Content[i]
			nd := &s.m.nodes[n]
			nx, ok := nd.next[c]
			if !ok {
				if nd.next == nil {
					nd.next = map[byte]int32{}
				}
				nx = int32(len(s.m.nodes))
				nd.next[c] = nx
				s.m.nodes = append(s.m.nodes, addedNode{tok: -1})
			}
			n = nx
		}
		s.m.nodes[n].tok = int32(len(s.toks))
		s.toks = append(s.toks, addedTok{id: a.ID, lstrip: a.LStrip, rstrip: a.RStrip, singleWrd: a.SingleWord})
		s.m.first[a.Content[0]] = true
	}
	if len(s.toks) == 0 {
		return nil
	}
	return s
}

// longestAt returns the index into toks and the end of the longest added
// token starting at text[i], or -1.
func (s *addedSet) longestAt(text string, i int) (int32, int) {
	n, best, end := int32(0), int32(-1), -1
	for j := i; j < len(text); j++ {
		nx, ok := s.m.nodes[n].next[text[j]]
		if !ok {
			break
		}
		n = nx
		if t := s.m.nodes[n].tok; t >= 0 {
			best, end = t, j+1
		}
	}
	return best, end
}

// split cuts text into plain spans and added-token spans, appending to out.
// An lstrip (rstrip) token also takes the whitespace before (after) it; a
// single_word token matches only when it is not inside a word.
func (s *addedSet) split(text string, out []addedSpan) []addedSpan {
	if s == nil {
		return append(out, addedSpan{0, len(text), NoToken})
	}
	plain := 0
	for i := 0; i < len(text); {
		if !s.m.first[text[i]] {
			i++
			continue
		}
		t, end := s.longestAt(text, i)
		if t < 0 {
			i++
			continue
		}
		tok := s.toks[t]
		if tok.singleWrd && (isWordBefore(text, i) || isWordAfter(text, end)) {
			i++
			continue
		}
		start := i
		if tok.lstrip {
			for start > plain {
				r, w := lastRune(text[plain:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= w
			}
		}
		if tok.rstrip {
			for end < len(text) {
				r, w := firstRune(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += w
			}
		}
		if start > plain {
			out = append(out, addedSpan{plain, start, NoToken})
		}
		out = append(out, addedSpan{start, end, tok.id})
		plain, i = end, end
	}
	if plain < len(text) {
		out = append(out, addedSpan{plain, len(text), NoToken})
	}
	return out
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func isWordBefore(text string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := lastRune(text[:i])
	return isWordRune(r)
}

func isWordAfter(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	r, _ := firstRune(text[i:])
	return isWordRune(r)
}
