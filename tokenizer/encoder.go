package tokenizer

import (
	"fmt"
	"strings"
	"sync"
)

// Encoder turns text into token ids as the HuggingFace tokenizers library
// does for a tokenizer.json with a BPE model, without adding BOS/EOS or
// other post-processing: added tokens written in the text are matched as
// their ids (leftmost, then longest), the rest is normalized,
// pre-tokenized and merged by BPE.
//
// Supported sections: normalizers Sequence, Prepend, Replace, NFC, NFD,
// NFKC, NFKD, Lowercase; pre-tokenizers Sequence, Split (string or regex,
// every behavior), ByteLevel, Metaspace; the BPE model with byte_fallback,
// unk_token, fuse_unk and ignore_merges. Anything else is a CodeUnsupported
// error from NewEncoder.
//
// An Encoder is safe for concurrent use. It caches the encoding of short
// pre-tokens.
type Encoder struct {
	added       *addedSet // added tokens matched in the raw text
	addedNorm   *addedSet // added tokens matched in the normalized text
	normalizers []normalizer
	pre         []preTokenizer
	model       bpeModel

	mu    sync.RWMutex
	cache map[string][]TokenID
}

// Cache limits: pre-tokens longer than maxCachedWord bytes are not cached
// (long runs are rare and would crowd the cache), and the cache stops
// growing at maxCacheEntries words (about 10 MB for typical pre-tokens),
// which holds the working set of a language's common words.
const (
	maxCachedWord   = 256
	maxCacheEntries = 1 << 17
)

// NewEncoder reads a HuggingFace tokenizer.json with a BPE model
// (byte-level like Llama-3 and Qwen, or SentencePiece-style like Llama-2
// and Gemma) and returns its Encoder.
func NewEncoder(path string) (*Encoder, error) {
	f, err := ReadHFFile(path)
	if err != nil {
		return nil, err
	}
	return f.Encoder()
}

// Encoder builds the Encoder of f; see NewEncoder.
func (f *HFFile) Encoder() (*Encoder, error) {
	place := f.Path + ": "
	if f.ModelType != "BPE" {
		return nil, unsupported(place+"model.type", "model type "+f.ModelType+" (only BPE is implemented)")
	}
	mr := &f.raw.Model
	if p := mr.ContinuingSubwordPrefix; p != nil && *p != "" {
		return nil, unsupported(place+"model.continuing_subword_prefix", fmt.Sprintf("%q", *p))
	}
	if s := mr.EndOfWordSuffix; s != nil && *s != "" {
		return nil, unsupported(place+"model.end_of_word_suffix", fmt.Sprintf("%q", *s))
	}
	e := &Encoder{cache: map[string][]TokenID{}}
	nc, err := parseComponent(f.raw.Normalizer)
	if err != nil {
		return nil, errorf(CodeSyntax, place+"normalizer", err, "parse")
	}
	if e.normalizers, err = buildNormalizers(nc, place+"normalizer"); err != nil {
		return nil, err
	}
	pc, err := parseComponent(f.raw.PreTokenizer)
	if err != nil {
		return nil, errorf(CodeSyntax, place+"pre_tokenizer", err, "parse")
	}
	var byteLevel bool
	if e.pre, byteLevel, err = buildPreTokenizers(pc, place+"pre_tokenizer"); err != nil {
		return nil, err
	}

	m := &e.model
	m.byteLevel = byteLevel
	m.fuseUnk = mr.FuseUnk
	m.byteFallback = mr.ByteFallback
	m.ignoreMerges = mr.IgnoreMerges
	index, merges := f.index, f.merges
	if index == nil { // an HFFile not made by ReadHFFile: build the tables on a copy
		g := *f
		g.buildIndex()
		index, merges = g.index, g.merges
	}
	m.vocab = index
	m.unk = NoToken
	if mr.UnkToken != nil {
		if id, ok := m.vocab[*mr.UnkToken]; ok {
			m.unk = id
		}
	}
	for b := range 256 {
		m.byteIDs[b] = NoToken
		key := fmt.Sprintf("<0x%02X>", b)
		if byteLevel {
			key = byteToString[b]
		}
		if id, ok := m.vocab[key]; ok {
			m.byteIDs[b] = id
		}
	}
	if byteLevel {
		m.rawVocab = make(map[string]TokenID, len(f.Vocab))
		for s, id := range m.vocab {
			if b, ok := GPT2Decode(s); ok {
				m.rawVocab[string(b)] = id
			}
		}
	}
	m.merges = make(map[uint64]uint64, len(f.Merges))
	for rank, mg := range merges {
		if mg.left == NoToken || mg.right == NoToken || mg.joint == NoToken {
			if _, _, ok := splitMerge(f.Merges[rank]); !ok {
				return nil, errorf(CodeSyntax, place+"model.merges", nil, "merge %d %q", rank, f.Merges[rank])
			}
			return nil, errorf(CodeInvalid, place+"model.merges", nil, "merge %d %q uses a token missing from the vocabulary", rank, f.Merges[rank])
		}
		k := pairKey(mg.left, mg.right)
		if _, dup := m.merges[k]; !dup {
			m.merges[k] = uint64(rank)<<32 | uint64(uint32(mg.joint))
		}
	}

	var raw, normalized []HFAddedToken
	for _, a := range f.Added {
		if a.Normalized {
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	e.added = newAddedSet(raw)
	e.addedNorm = newAddedSet(normalized)
	return e, nil
}

// Encode returns the token ids of text, with no BOS/EOS added. Added
// tokens (special or not) written in the text are matched as their ids,
// as transformers does by default. Encode never fails: a character the
// vocabulary cannot express becomes byte-fallback tokens, the unknown
// token, or (with neither) is dropped, as in the reference library.
// Invalid UTF-8 is encoded byte by byte.
func (e *Encoder) Encode(text string) []TokenID {
	out := make([]TokenID, 0, len(text)/3+1)
	var spans, spans2 []addedSpan
	var pieces, next []string
	spans = e.added.split(text, spans)
	for _, sp := range spans {
		if sp.id != NoToken {
			out = append(out, sp.id)
			continue
		}
		seg := text[sp.start:sp.end]
		for _, n := range e.normalizers {
			seg = n(seg)
		}
		spans2 = e.addedNorm.split(seg, spans2[:0])
		for k, sp2 := range spans2 {
			if sp2.id != NoToken {
				out = append(out, sp2.id)
				continue
			}
			pieces = append(pieces[:0], seg[sp2.start:sp2.end])
			atStart := sp.start == 0 && k == 0
			for _, p := range e.pre {
				next = next[:0]
				for i, piece := range pieces {
					next = p(piece, atStart && i == 0, next)
				}
				pieces, next = next, pieces
			}
			for _, piece := range pieces {
				out = e.encodeWord(piece, out)
			}
		}
	}
	return out
}

// encodeWord encodes one pre-token through the cache.
func (e *Encoder) encodeWord(w string, out []TokenID) []TokenID {
	if len(w) > maxCachedWord {
		return e.model.encodeWord(w, out)
	}
	e.mu.RLock()
	ids, ok := e.cache[w]
	e.mu.RUnlock()
	if ok {
		return append(out, ids...)
	}
	n := len(out)
	out = e.model.encodeWord(w, out)
	e.mu.Lock()
	if len(e.cache) < maxCacheEntries {
		e.cache[strings.Clone(w)] = append([]TokenID(nil), out[n:]...)
	}
	e.mu.Unlock()
	return out
}
