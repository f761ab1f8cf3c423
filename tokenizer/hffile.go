package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind says how a vocabulary's token strings encode raw bytes.
type Kind int

// The vocabulary kinds.
const (
	// KindPlain: token strings are the token's text as is.
	KindPlain Kind = iota
	// KindByteLevel: token strings use the GPT-2 byte map (GPT2Decode).
	KindByteLevel
	// KindSentencePiece: "▁" stands for a space and "<0xNN>" tokens are
	// single raw bytes (byte fallback).
	KindSentencePiece
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindByteLevel:
		return "byte-level"
	case KindSentencePiece:
		return "sentencepiece"
	}
	return "plain"
}

// HFAddedToken is one entry of tokenizer.json's added_tokens.
type HFAddedToken struct {
	ID         TokenID `json:"id"`
	Content    string  `json:"content"`
	Special    bool    `json:"special"`
	Normalized bool    `json:"normalized"`
	LStrip     bool    `json:"lstrip"`
	RStrip     bool    `json:"rstrip"`
	SingleWord bool    `json:"single_word"`
}

// HFFile is a HuggingFace tokenizer.json (plus the tokenizer_config.json
// and config.json beside it, when present) read as data, in the form a
// GGUF writer needs: token strings exactly as the file spells them, merges,
// added tokens and the names of the BOS/EOS tokens. LoadHF and NewEncoder
// are built on it.
type HFFile struct {
	// Path is the tokenizer.json path.
	Path string
	// ModelType is model.type as written ("BPE", "Unigram", "WordPiece", ...).
	ModelType string
	// Kind is how token strings encode bytes, detected from the
	// pre-tokenizer, decoder, normalizer and model sections.
	Kind Kind
	// Vocab[id] is the model vocabulary's token string for id, exactly as
	// in tokenizer.json ("" for an id the model vocabulary lacks; added
	// tokens beyond the model vocabulary are in Added, see Tokens).
	Vocab []string
	// Scores[id] is the Unigram score, or for BPE minus the rank of the
	// merge that first produces the token (0 for tokens no merge produces),
	// so that a score-driven SentencePiece merger applies merges in BPE
	// rank order.
	Scores []float32
	// Merges are the BPE merges in rank order, each "left right" (both the
	// string and the [left, right] forms of tokenizer.json are accepted).
	Merges []string
	// Added are the added tokens, in file order.
	Added []HFAddedToken
	// Pre is the guess for GGUF tokenizer.ggml.pre: "llama-bpe" for the
	// Llama-3 pre-tokenizer regex, "qwen2" for the Qwen2/3 one, "default"
	// otherwise.
	Pre string
	// BOS and EOS are the bos_token and eos_token names from
	// tokenizer_config.json ("" when absent or null).
	BOS, EOS string
	// ChatTemplate is tokenizer_config.json's chat_template (the "default"
	// one when it is a list), or chat_template.jinja beside the file.
	ChatTemplate string
	// VocabSize is config.json's vocab_size beside the file, 0 if absent.
	VocabSize int

	raw    hfJSON
	index  map[string]TokenID // built by buildIndex
	merges []mergeIDs         // built by buildIndex
}

// hfJSON holds the sections of tokenizer.json that the loaders interpret.
type hfJSON struct {
	AddedTokens   []HFAddedToken  `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Decoder       json.RawMessage `json:"decoder"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type                    string          `json:"type"`
		Vocab                   json.RawMessage `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		FuseUnk                 bool            `json:"fuse_unk"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Dropout                 *float64        `json:"dropout"`
	} `json:"model"`
}

// component is the generic shape of a normalizer, pre-tokenizer or
// decoder entry; the fields used depend on Type.
type component struct {
	Type           string          `json:"type"`
	Normalizers    []component     `json:"normalizers"`
	Pretokenizers  []component     `json:"pretokenizers"`
	Decoders       []component     `json:"decoders"`
	Pattern        json.RawMessage `json:"pattern"`
	Content        string          `json:"content"`
	Prepend        string          `json:"prepend"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace *bool           `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
	Replacement    string          `json:"replacement"`
	PrependScheme  string          `json:"prepend_scheme"`
	Split          *bool           `json:"split"`
	IndividualDig  bool            `json:"individual_digits"`
}

// pattern is the {"String": s} or {"Regex": r} of Split and Replace.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// parseComponent decodes an optional section; a null or absent one gives nil.
func parseComponent(raw json.RawMessage) (*component, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// walk calls f on c and on every nested component.
func (c *component) walk(f func(*component)) {
	if c == nil {
		return
	}
	f(c)
	for _, list := range [][]component{c.Normalizers, c.Pretokenizers, c.Decoders} {
		for i := range list {
			list[i].walk(f)
		}
	}
}

// Regex patterns of the pre-tokenizers that GGUF names (llama.cpp's
// tokenizer.ggml.pre values "llama-bpe" and "qwen2").
const (
	llama3Regex = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2Regex  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// ReadHFFile reads a HuggingFace tokenizer.json, and tokenizer_config.json
// and config.json from the same folder when they are present.
func ReadHFFile(path string) (*HFFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf(CodeIO, path, err, "read tokenizer.json")
	}
	f, err := parseHFFile(data, path)
	if err != nil {
		return nil, err
	}
	if err := f.readConfig(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return f, nil
}

// maxTokenID bounds token ids read from files: the largest vocabularies
// have a few hundred thousand tokens, and a bound keeps a corrupt id from
// allocating gigabytes of token table.
const maxTokenID = 1 << 21

// parseHFFile parses the contents of a tokenizer.json; path is only used
// in errors.
func parseHFFile(data []byte, path string) (*HFFile, error) {
	f := &HFFile{Path: path, Pre: "default"}
	if err := json.Unmarshal(data, &f.raw); err != nil {
		return nil, errorf(CodeSyntax, path, err, "parse tokenizer.json")
	}
	f.ModelType = f.raw.Model.Type
	f.Added = f.raw.AddedTokens
	if err := f.readVocab(); err != nil {
		return nil, err
	}
	if err := f.readMerges(); err != nil {
		return nil, err
	}
	f.bpeTables()
	if err := f.detect(); err != nil {
		return nil, err
	}
	for i, a := range f.Added {
		if a.ID < 0 || a.ID > maxTokenID {
			return nil, errorf(CodeInvalid, fmt.Sprintf("%s: added_tokens[%d]", path, i), nil, "token %q has id %d", a.Content, a.ID)
		}
	}
	return f, nil
}

// readVocab fills Vocab (and Scores for Unigram) from model.vocab, which
// is an object {token: id} for BPE/WordPiece/WordLevel and a list of
// [token, score] pairs for Unigram.
func (f *HFFile) readVocab() error {
	place := f.Path + ": model.vocab"
	raw := bytes.TrimSpace(f.raw.Model.Vocab)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var m map[string]int
		if err := json.Unmarshal(raw, &m); err != nil {
			return errorf(CodeSyntax, place, err, "vocab object")
		}
		maxID := -1
		for tok, id := range m {
			if id < 0 || id > maxTokenID {
				return errorf(CodeInvalid, place, nil, "token %q has id %d", tok, id)
			}
			maxID = max(maxID, id)
		}
		f.Vocab = make([]string, maxID+1)
		seen := make([]bool, maxID+1)
		for tok, id := range m {
			if seen[id] {
				return errorf(CodeInvalid, place, nil, "id %d is used twice (%q and %q)", id, f.Vocab[id], tok)
			}
			seen[id] = true
			f.Vocab[id] = tok
		}
	case len(raw) > 0 && raw[0] == '[':
		var list [][2]json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return errorf(CodeSyntax, place, err, "vocab list")
		}
		f.Vocab = make([]string, len(list))
		f.Scores = make([]float32, len(list))
		for i, e := range list {
			var score float64
			if err := json.Unmarshal(e[0], &f.Vocab[i]); err != nil {
				return errorf(CodeSyntax, place, err, "entry %d", i)
			}
			if err := json.Unmarshal(e[1], &score); err != nil {
				return errorf(CodeSyntax, place, err, "entry %d score", i)
			}
			f.Scores[i] = float32(score)
		}
	default:
		return errorf(CodeSyntax, place, nil, "missing or not an object or list")
	}
	return nil
}

// readMerges fills Merges from model.merges in either the "a b" string
// form or the ["a", "b"] pair form.
func (f *HFFile) readMerges() error {
	place := f.Path + ": model.merges"
	raw := bytes.TrimSpace(f.raw.Model.Merges)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		for i, s := range strs {
			if strings.Count(s, " ") != 1 {
				return errorf(CodeSyntax, place, nil, "merge %d %q is not two tokens separated by one space", i, s)
			}
		}
		f.Merges = strs
	} else {
		var pairs [][]string
		if err2 := json.Unmarshal(raw, &pairs); err2 != nil {
			return errorf(CodeSyntax, place, errors.Join(err, err2), "neither strings nor pairs")
		}
		f.Merges = make([]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return errorf(CodeSyntax, place, nil, "merge %d has %d parts, want 2", i, len(p))
			}
			f.Merges[i] = p[0] + " " + p[1]
		}
	}
	return nil
}

// bpeTables builds the shared BPE lookup tables and, when the model gives
// no scores, the BPE Scores.
func (f *HFFile) bpeTables() {
	if f.ModelType != "BPE" {
		return
	}
	f.buildIndex()
	if f.Scores == nil {
		f.Scores = make([]float32, len(f.Vocab))
		set := make([]bool, len(f.Vocab))
		for rank, m := range f.merges {
			if m.joint != NoToken && !set[m.joint] {
				set[m.joint] = true
				f.Scores[m.joint] = -float32(rank)
			}
		}
	}
}

// mergeIDs is one merge as token ids; an id is NoToken when its string
// is not in the vocabulary.
type mergeIDs struct{ left, right, joint TokenID }

// buildIndex fills f.index (model vocabulary string → id) and f.merges
// (each merge as ids), once, at parse time; Scores and the Encoder share
// them. (Building them later would make HFFile's methods racy.)
func (f *HFFile) buildIndex() {
	if f.index != nil {
		return
	}
	f.index = make(map[string]TokenID, len(f.Vocab))
	for id, tok := range f.Vocab {
		if tok != "" {
			f.index[tok] = TokenID(id)
		}
	}
	look := func(s string) TokenID {
		if id, ok := f.index[s]; ok {
			return id
		}
		return NoToken
	}
	f.merges = make([]mergeIDs, len(f.Merges))
	for rank, m := range f.Merges {
		a, b, ok := splitMerge(m)
		if !ok {
			f.merges[rank] = mergeIDs{NoToken, NoToken, NoToken}
			continue
		}
		f.merges[rank] = mergeIDs{look(a), look(b), look(a + b)}
	}
}

// splitMerge splits a merge "a b" into its two tokens. Tokens in the
// string form cannot contain a space, so the first space separates them
// unless the merge starts with one (then the space is part of a).
func splitMerge(m string) (a, b string, ok bool) {
	i := strings.IndexByte(m[min(1, len(m)):], ' ')
	if i < 0 {
		return "", "", false
	}
	i += min(1, len(m))
	return m[:i], m[i+1:], true
}

// detect sets Kind and Pre from the pre-tokenizer, decoder, normalizer and
// model sections.
func (f *HFFile) detect() error {
	var byteLevel, sentencePiece bool
	var regexes []string
	for _, sec := range []struct {
		name string
		raw  json.RawMessage
	}{{"pre_tokenizer", f.raw.PreTokenizer}, {"decoder", f.raw.Decoder}, {"normalizer", f.raw.Normalizer}} {
		c, err := parseComponent(sec.raw)
		if err != nil {
			return errorf(CodeSyntax, f.Path+": "+sec.name, err, "parse")
		}
		c.walk(func(c *component) {
			switch c.Type {
			case "ByteLevel":
				byteLevel = true
			case "Metaspace", "ByteFallback", "Prepend":
				sentencePiece = true
			case "Replace":
				var p pattern
				if json.Unmarshal(c.Pattern, &p) == nil && p.String != nil &&
					(*p.String == " " && c.Content == "▁" || *p.String == "▁" && c.Content == " ") {
					sentencePiece = true
				}
			case "Split":
				var p pattern
				if json.Unmarshal(c.Pattern, &p) == nil && p.Regex != nil {
					regexes = append(regexes, *p.Regex)
				}
			}
		})
	}
	if f.raw.Model.ByteFallback {
		sentencePiece = true
	}
	switch {
	case byteLevel:
		f.Kind = KindByteLevel
	case sentencePiece:
		f.Kind = KindSentencePiece
	}
	switch {
	case slices.Contains(regexes, llama3Regex):
		f.Pre = "llama-bpe"
	case slices.Contains(regexes, qwen2Regex):
		f.Pre = "qwen2"
	}
	return nil
}

// tokenName reads a bos_token/eos_token value: a string, null, or an
// object with "content".
func tokenName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// readConfig reads tokenizer_config.json, chat_template.jinja and
// config.json from dir when they exist.
func (f *HFFile) readConfig(dir string) error {
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return errorf(CodeIO, cfgPath, err, "read")
	default:
		var cfg struct {
			BOS          json.RawMessage `json:"bos_token"`
			EOS          json.RawMessage `json:"eos_token"`
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return errorf(CodeSyntax, cfgPath, err, "parse")
		}
		f.BOS = tokenName(cfg.BOS)
		f.EOS = tokenName(cfg.EOS)
		if len(cfg.ChatTemplate) > 0 && json.Unmarshal(cfg.ChatTemplate, &f.ChatTemplate) != nil {
			var list []struct {
				Name     string `json:"name"`
				Template string `json:"template"`
			}
			if err := json.Unmarshal(cfg.ChatTemplate, &list); err != nil {
				return errorf(CodeSyntax, cfgPath+": chat_template", err, "neither a string nor a list")
			}
			for i, t := range list {
				if t.Name == "default" || i == 0 {
					f.ChatTemplate = t.Template
				}
			}
		}
	}
	if f.ChatTemplate == "" {
		if b, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
			f.ChatTemplate = string(b)
		}
	}
	mcPath := filepath.Join(dir, "config.json")
	if data, err := os.ReadFile(mcPath); err == nil {
		var mc struct {
			VocabSize  int `json:"vocab_size"`
			TextConfig struct {
				VocabSize int `json:"vocab_size"`
			} `json:"text_config"`
		}
		if err := json.Unmarshal(data, &mc); err != nil {
			return errorf(CodeSyntax, mcPath, err, "parse")
		}
		f.VocabSize = max(mc.VocabSize, mc.TextConfig.VocabSize)
	}
	return nil
}

// Tokens returns every token string by id: the model vocabulary overlaid
// with the added tokens (whose ids may extend past it). Holes are "".
func (f *HFFile) Tokens() []string {
	n := len(f.Vocab)
	for _, a := range f.Added {
		n = max(n, int(a.ID)+1)
	}
	out := make([]string, n)
	copy(out, f.Vocab)
	for _, a := range f.Added {
		if a.ID >= 0 {
			out[a.ID] = a.Content
		}
	}
	return out
}

// GGUF token types (llama.cpp's llama_token_type), as TokenTypes returns
// them and as GGUF tokenizer.ggml.token_type stores them.
const (
	TokenTypeNormal      int32 = 1
	TokenTypeUnknown     int32 = 2
	TokenTypeControl     int32 = 3
	TokenTypeUserDefined int32 = 4
	TokenTypeUnused      int32 = 5
	TokenTypeByte        int32 = 6
)

// TokenTypes returns the GGUF token type of every id of Tokens: control
// for special added tokens, user-defined for other added tokens, byte for
// SentencePiece "<0xNN>" tokens, unknown for the model's unk_token, unused
// for holes, normal otherwise.
func (f *HFFile) TokenTypes() []int32 {
	toks := f.Tokens()
	types := make([]int32, len(toks))
	for id, t := range toks {
		switch {
		case id >= len(f.Vocab) || f.Vocab[id] == "" && t == "":
			types[id] = TokenTypeUnused
		case f.Kind == KindSentencePiece && isByteToken(t):
			types[id] = TokenTypeByte
		case f.raw.Model.UnkToken != nil && t == *f.raw.Model.UnkToken:
			types[id] = TokenTypeUnknown
		default:
			types[id] = TokenTypeNormal
		}
	}
	for _, a := range f.Added {
		if a.ID < 0 {
			continue
		}
		switch {
		case f.raw.Model.UnkToken != nil && a.Content == *f.raw.Model.UnkToken:
			types[a.ID] = TokenTypeUnknown
		case a.Special:
			types[a.ID] = TokenTypeControl
		default:
			types[a.ID] = TokenTypeUserDefined
		}
	}
	return types
}

// isByteToken reports whether t is a SentencePiece byte token "<0xNN>".
func isByteToken(t string) bool {
	_, ok := byteTokenValue(t)
	return ok
}

// byteTokenValue parses "<0xNN>" (two upper- or lower-case hex digits).
func byteTokenValue(t string) (byte, bool) {
	if len(t) != 6 || t[:3] != "<0x" || t[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexDigit(t[3])
	lo, ok2 := hexDigit(t[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
