package tokenizer

import "strings"

// LoadHF reads a HuggingFace tokenizer.json (and the tokenizer_config.json
// and config.json beside it, when present) into a Vocabulary.
//
// Token strings are turned into raw bytes according to the detected Kind:
// byte-level vocabularies (Llama-3, Qwen) undo the GPT-2 byte map;
// SentencePiece-style ones (Llama-2, Gemma) turn "▁" into a space and
// "<0xNN>" into that byte. Added tokens are plain text, never byte-mapped:
// special ones are stored as SpecialPrefix + text, non-special ones as their
// text (or as the model vocabulary's bytes when the model vocabulary holds
// the same string at the same id).
//
// BOS and EOS come from tokenizer_config.json's bos_token and eos_token;
// EOS also gets the usual end-of-turn tokens present as special tokens.
// Width is config.json's vocab_size when that is larger than the table.
func LoadHF(path string) (*Vocabulary, error) {
	f, err := ReadHFFile(path)
	if err != nil {
		return nil, err
	}
	return f.Vocabulary()
}

// Vocabulary builds the Vocabulary of f; see LoadHF.
func (f *HFFile) Vocabulary() (*Vocabulary, error) {
	n := len(f.Vocab)
	for _, a := range f.Added {
		if a.ID < 0 || a.ID > maxTokenID {
			return nil, errorf(CodeInvalid, f.Path+": added_tokens", nil, "token %q has id %d", a.Content, a.ID)
		}
		n = max(n, int(a.ID)+1)
	}
	v := &Vocabulary{
		Tokens:  make([][]byte, n),
		Special: make([]bool, n),
		BOS:     NoToken,
		Width:   max(n, f.VocabSize),
		Name:    f.Path,
	}
	byName := make(map[string]TokenID, n)
	for id, s := range f.Vocab {
		if s == "" {
			continue
		}
		v.Tokens[id] = f.tokenBytes(s)
		byName[s] = TokenID(id)
	}
	specials := map[string]TokenID{}
	for _, a := range f.Added {
		byName[a.Content] = a.ID
		switch {
		case a.Special:
			v.Tokens[a.ID] = specialBytes(a.Content)
			v.Special[a.ID] = true
			specials[a.Content] = a.ID
		case int(a.ID) < len(f.Vocab) && f.Vocab[a.ID] == a.Content:
			// Already decoded from the model vocabulary.
		default:
			v.Tokens[a.ID] = []byte(a.Content)
		}
	}
	eos := NoToken
	if id, ok := byName[f.EOS]; ok && f.EOS != "" {
		eos = id
	}
	if id, ok := byName[f.BOS]; ok && f.BOS != "" {
		v.BOS = id
	}
	v.finish(eos, specials)
	return v, nil
}

// tokenBytes turns a model vocabulary string into the token's raw bytes.
func (f *HFFile) tokenBytes(s string) []byte {
	switch f.Kind {
	case KindByteLevel:
		if b, ok := GPT2Decode(s); ok {
			return b
		}
	case KindSentencePiece:
		if b, ok := byteTokenValue(s); ok {
			return []byte{b}
		}
		return []byte(strings.ReplaceAll(s, "▁", " "))
	}
	return []byte(s)
}
