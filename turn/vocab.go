package turn

import (
	"sync"

	"conform/fsm"
	"conform/sampler"
	"conform/token"
)

// TokenID names a token; it is token.ID, the id type of every stage.
type TokenID = token.ID

// VocabConfig is what NewVocab reads: a model's vocabulary as plain values
// (the fields of tokenizer.Vocabulary, which this package does not import,
// so that anything that lists token bytes can make one).
type VocabConfig struct {
	// Tokens[id] holds token id's raw bytes; a special token is
	// fsm.SpecialPrefix (0xFF) followed by its text, and a nil entry is an
	// id the vocabulary does not use.
	Tokens [][]byte
	// Special[id] is true for control and special added tokens.
	Special []bool
	// EOS lists the end-of-generation ids.
	EOS []TokenID
	// Width is the model's logits width, at least len(Tokens).
	Width int
}

// Vocab is a model's vocabulary as a turn sees it: the token index masks
// are computed over, which marker texts are special tokens, and the text of
// every token (for logprobs, and for what the detokenizer lets through).
// It is built once per model, never changes and is safe for concurrent use.
type Vocab struct {
	tokens   [][]byte
	index    *fsm.TokenIndex
	special  map[string]bool // the text of every special token
	maxBytes int
	// closers caches the tokens that go on writing a reasoning close
	// marker (reasoning_guide.go: closeKey → []uint64).
	closers sync.Map
}

// NewVocab builds the token index of c and the vocabulary's tables.
func NewVocab(c VocabConfig) (*Vocab, error) {
	ti, err := fsm.NewTokenIndex(c.Tokens, c.EOS, c.Width)
	if err != nil {
		return nil, &Error{Code: CodeInvalidConfig, Msg: "token index", Err: err}
	}
	v := &Vocab{tokens: c.Tokens, index: ti, special: map[string]bool{}}
	for id, sp := range c.Special {
		if sp && id < len(c.Tokens) && len(c.Tokens[id]) > 1 {
			v.special[string(c.Tokens[id][1:])] = true
		}
	}
	for _, t := range c.Tokens {
		n := len(t)
		if n > 0 && t[0] == fsm.SpecialPrefix {
			n--
		}
		v.maxBytes = max(v.maxBytes, n)
	}
	v.maxBytes = max(v.maxBytes, 1)
	return v, nil
}

// Index returns the token index the vocabulary's masks are computed over.
func (v *Vocab) Index() *fsm.TokenIndex { return v.index }

// Fingerprint identifies the vocabulary (fsm.TokenIndex.Fingerprint): the
// constraint cache keys on it.
func (v *Vocab) Fingerprint() fsm.Fingerprint { return v.index.Fingerprint() }

// Len returns the number of token ids.
func (v *Vocab) Len() int { return len(v.tokens) }

// IsSpecial reports whether text is the text of a special token.
func (v *Vocab) IsSpecial(text string) bool { return v.special[text] }

// MaxTokenBytes returns the most text bytes one token stands for (special
// tokens by their text), at least 1: a text of b bytes takes at least
// b/MaxTokenBytes tokens, which lets a server refuse a prompt too long for
// the context before tokenizing it.
func (v *Vocab) MaxTokenBytes() int { return v.maxBytes }

// Text returns the text of token id: its bytes, a special token's without
// the 0xFF prefix (its name, such as "<|im_end|>"); "" outside the table.
func (v *Vocab) Text(id TokenID) string { return string(v.text(id)) }

func (v *Vocab) text(id TokenID) []byte {
	if id < 0 || int(id) >= len(v.tokens) {
		return nil
	}
	t := v.tokens[id]
	if len(t) > 0 && t[0] == fsm.SpecialPrefix {
		t = t[1:]
	}
	return t
}

// Detokenizer returns the output text of each token under format f, for
// runner.Config.Detokenize: a plain token is its bytes; a special token is
// nothing, except the tool-call markers of f that are special tokens, which
// keep their 0xFF-prefixed bytes so that the turn's parser sees them (and
// cleans them from content where no call follows). The function is safe
// for concurrent use.
func (v *Vocab) Detokenizer(f Format) func(TokenID) []byte { return v.detokenizer(f.Markers()) }

// detokenizer is the detokenizer that keeps the special tokens among mks.
func (v *Vocab) detokenizer(mks []string) func(TokenID) []byte {
	markers := map[TokenID]bool{}
	for _, mk := range mks {
		if !v.special[mk] {
			continue
		}
		for id, t := range v.tokens {
			if len(t) > 1 && t[0] == fsm.SpecialPrefix && string(t[1:]) == mk {
				markers[TokenID(id)] = true
			}
		}
	}
	toks := v.tokens
	return func(id TokenID) []byte {
		if id < 0 || int(id) >= len(toks) {
			return nil
		}
		t := toks[id]
		if len(t) > 0 && t[0] == fsm.SpecialPrefix && !markers[id] {
			return nil
		}
		return t
	}
}

// logprob is the Logprob of output token tok with its logprob lp and the
// alternatives top.
func (v *Vocab) logprob(tok TokenID, lp float32, top []sampler.TokenLogprob) Logprob {
	l := Logprob{Token: v.Text(tok), Bytes: v.text(tok), Logprob: float64(lp)}
	for _, t := range top {
		l.Top = append(l.Top, Logprob{Token: v.Text(t.ID), Bytes: v.text(t.ID), Logprob: float64(t.Logprob)})
	}
	return l
}
