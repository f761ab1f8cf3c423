package tokenizer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"conform/token"
)

// TokenID is the id of a token in a model's vocabulary: an index into
// Vocabulary.Tokens and into the model's logits. It is token.ID, the id
// type every stage shares.
type TokenID = token.ID

// NoToken is the TokenID used where a vocabulary has no such token
// (for example Vocabulary.BOS when the model has no BOS token).
const NoToken TokenID = -1

// SpecialPrefix is the byte that starts the stored bytes of every special
// token. Valid UTF-8 never contains 0xFF, so no grammar over text can
// produce a special token by accident; a constraint that wants one names
// the 0xFF-prefixed bytes explicitly.
const SpecialPrefix = 0xFF

// Vocabulary is the plain value this package hands to the rest of the
// pipeline: for each token id its exact raw bytes, whether it is special,
// the end-of-generation ids and the width of the model's logits.
//
// A Vocabulary is never modified after loading and is safe for concurrent
// use.
type Vocabulary struct {
	// Tokens[id] holds the raw bytes of token id, with the GPT-2 byte map,
	// SentencePiece "▁" and "<0xNN>" byte fallback already undone. A special
	// token is stored as SpecialPrefix followed by its text. A nil entry
	// marks an id the vocabulary does not use (a hole below Width); no
	// text ever produces it.
	Tokens [][]byte
	// Special[id] is true for control and special added tokens (those that
	// are not plain text).
	Special []bool
	// EOS lists the end-of-generation ids, sorted: the tokenizer's own EOS
	// token plus the usual end-of-turn tokens present as special tokens.
	EOS []TokenID
	// BOS is the beginning-of-sequence id, or NoToken.
	BOS TokenID
	// Width is the model's logit width, at least len(Tokens). Ids in
	// [len(Tokens), Width) exist in the logits but not in the vocabulary.
	Width int
	// Name says where the vocabulary came from: a file path or an encoding
	// name such as "cl100k_base".
	Name string
}

// eosNames are the end-of-turn tokens that count as EOS whenever a
// vocabulary has them as special tokens, whatever its declared eos_token.
var eosNames = []string{
	"<|eot_id|>", "<|im_end|>", "<|endoftext|>", "<end_of_turn>", "</s>",
	"<|end_of_text|>", "<|eom_id|>", "<eos>",
}

// Len returns the number of token ids in the vocabulary, len(v.Tokens).
func (v *Vocabulary) Len() int { return len(v.Tokens) }

// IsEOS reports whether id is one of the vocabulary's EOS ids.
func (v *Vocabulary) IsEOS(id TokenID) bool {
	_, ok := slices.BinarySearch(v.EOS, id)
	return ok
}

// Text returns the text of token id: its raw bytes, with a special token's
// SpecialPrefix removed. It returns nil for an id outside the table.
func (v *Vocabulary) Text(id TokenID) []byte {
	if id < 0 || int(id) >= len(v.Tokens) {
		return nil
	}
	t := v.Tokens[id]
	if len(t) > 0 && t[0] == SpecialPrefix && id < TokenID(len(v.Special)) && v.Special[id] {
		return t[1:]
	}
	return t
}

// Decode concatenates the raw bytes of ids. Special tokens are rendered as
// their text (without SpecialPrefix); ids outside the table are skipped.
func (v *Vocabulary) Decode(ids []TokenID) []byte {
	n := 0
	for _, id := range ids {
		n += len(v.Text(id))
	}
	out := make([]byte, 0, n)
	for _, id := range ids {
		out = append(out, v.Text(id)...)
	}
	return out
}

// Fingerprint returns a hex SHA-256 over everything that decides what a
// token mask means: every token's bytes, the special flags, the EOS ids
// and the width. Two vocabularies with the same fingerprint give the same
// masks for the same constraint, so it keys caches of compiled automata.
// Name and BOS are not included.
func (v *Vocabulary) Fingerprint() string {
	h := sha256.New()
	var buf [8]byte
	put := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		h.Write(buf[:])
	}
	put(uint64(len(v.Tokens)))
	for i, t := range v.Tokens {
		if t == nil {
			put(^uint64(0)) // a hole differs from an empty token
			continue
		}
		put(uint64(len(t)))
		h.Write(t)
		sp := byte(0)
		if i < len(v.Special) && v.Special[i] {
			sp = 1
		}
		h.Write([]byte{sp})
	}
	put(uint64(len(v.EOS)))
	for _, e := range v.EOS {
		put(uint64(uint32(e)))
	}
	put(uint64(v.Width))
	return hex.EncodeToString(h.Sum(nil))
}

// finish sorts and deduplicates EOS and adds the usual end-of-turn tokens
// found among the special tokens; text maps each special token's text to
// its id.
func (v *Vocabulary) finish(eosID TokenID, specials map[string]TokenID) {
	if eosID >= 0 {
		v.EOS = append(v.EOS, eosID)
	}
	for _, name := range eosNames {
		if id, ok := specials[name]; ok {
			v.EOS = append(v.EOS, id)
		}
	}
	slices.Sort(v.EOS)
	v.EOS = slices.Compact(v.EOS)
	if v.Width < len(v.Tokens) {
		v.Width = len(v.Tokens)
	}
}

// specialBytes returns the stored form of a special token's text.
func specialBytes(text string) []byte {
	b := make([]byte, 0, len(text)+1)
	b = append(b, SpecialPrefix)
	return append(b, text...)
}
