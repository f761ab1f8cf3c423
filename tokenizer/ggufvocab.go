package tokenizer

import (
	"errors"
	"slices"
	"strings"

	"conform/gguf"
)

// GGUF metadata keys read by LoadGGUF (llama.cpp's names).
const (
	ggufKeyModel     = "tokenizer.ggml.model"
	ggufKeyTokens    = "tokenizer.ggml.tokens"
	ggufKeyTypes     = "tokenizer.ggml.token_type"
	ggufKeyEOS       = "tokenizer.ggml.eos_token_id"
	ggufKeyBOS       = "tokenizer.ggml.bos_token_id"
	ggufKeyEOT       = "tokenizer.ggml.eot_token_id"
	ggufKeyEOM       = "tokenizer.ggml.eom_token_id"
	ggufKeyArch      = "general.architecture"
	ggufOutputTensor = "output.weight"
	ggufEmbedTensor  = "token_embd.weight"
)

// LoadGGUF reads a model's vocabulary from GGUF metadata with the pure-Go
// reader in conform/gguf (no cgo, no tensor data read).
//
// tokenizer.ggml.model "gpt2" is byte-level BPE (token strings undo the
// GPT-2 byte map) and "llama" is SentencePiece-style ("▁" is a space,
// byte-type tokens "<0xNN>" are that byte). Token types decide the rest,
// following llama.cpp's token_to_piece: control tokens are special
// (SpecialPrefix + text), and so are the tokens llama.cpp treats as end
// of generation by name (<|eot_id|>, <|im_end|>, <end_of_turn>, ...)
// whatever their type; user-defined tokens are their text as written;
// unknown tokens and unused tokens with text are special too, so that
// no grammar over text can produce them; unused tokens without text are
// holes (nil).
//
// EOS holds eos_token_id, eot_token_id and eom_token_id when present, plus
// the usual end-of-turn tokens among the special tokens: llama.cpp's
// end-of-generation set but for its fill-in-the-middle tokens (see
// llamaCppEOGNames and harmonyEOG). Width is the
// larger of the token count, <arch>.vocab_size and the vocabulary
// dimension of the output (or tied embedding) tensor.
func LoadGGUF(path string) (*Vocabulary, error) {
	f, err := gguf.Open(path)
	if err != nil {
		code := CodeSyntax
		var ge *gguf.Error
		if errors.As(err, &ge) && ge.Code == gguf.CodeOpen {
			code = CodeIO
		}
		return nil, errorf(code, path, err, "read GGUF")
	}
	return vocabularyFromGGUF(f, path)
}

// llamaCppEOGNames are the tokens llama.cpp (llama-vocab.cpp, v0.24.0's
// copy) treats as end of generation, and as control tokens, by their text
// alone. "</s>" is not among them: Qwen has it as an ordinary text token.
// <|return|> and <|call|> end a gpt-oss (harmony) turn: the final answer
// and a tool call; <|end|> ends any other harmony message, which is why
// harmonyEOG takes it out again when both are present.
var llamaCppEOGNames = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
	"<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
}

// llama.cpp also counts the fill-in-the-middle pad, repository and file
// separator tokens as end of generation (Qwen2.5 and Qwen3 have
// <|fim_pad|>, <|repo_name|> and <|file_sep|>, which llama.cpp then makes
// control tokens). We do not: Qwen's own configuration makes them
// ordinary added tokens ("special": false in tokenizer.json) and ends a
// generation only at <|im_end|> and <|endoftext|> (generation_config.json),
// as transformers and vLLM do; llama.cpp's extra end points serve its
// /infill endpoint, which Conform does not have. So a GGUF vocabulary and
// its tokenizer.json agree (TestLoadGGUFMatchesHF), and
// TestGGUFEndOfGeneration pins the choice.

// harmonyEOG removes <|end|> from eos when eos also holds <|return|> and
// <|call|> (looked up in specials), as llama.cpp does for the
// o200k_harmony vocabulary: in a harmony turn <|end|> closes the analysis
// channel, and the turn goes on with the answer, which <|return|> or
// <|call|> ends. <|end|> stays a special token (llama.cpp renders it as
// text then; here the turn's detokenizer keeps it as a marker).
func harmonyEOG(eos []TokenID, specials map[string]TokenID) []TokenID {
	ret, okR := specials["<|return|>"]
	call, okC := specials["<|call|>"]
	end, okE := specials["<|end|>"]
	if !okR || !okC || !okE || !slices.Contains(eos, ret) || !slices.Contains(eos, call) {
		return eos
	}
	return slices.DeleteFunc(eos, func(id TokenID) bool { return id == end })
}

// ggufMeta is the part of *gguf.File that LoadGGUF uses.
type ggufMeta interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Int32s(key string) ([]int32, bool)
	Uint32(key string) (uint32, bool)
	Tensor(name string) (gguf.TensorInfo, bool)
}

func vocabularyFromGGUF(f ggufMeta, path string) (*Vocabulary, error) {
	model, ok := f.String(ggufKeyModel)
	if !ok {
		return nil, errorf(CodeInvalid, path+": "+ggufKeyModel, nil, "missing")
	}
	kind := KindByteLevel
	switch model {
	case "gpt2":
	case "llama":
		kind = KindSentencePiece
	default:
		return nil, errorf(CodeUnsupported, path+": "+ggufKeyModel, nil, "tokenizer model %q (only gpt2 and llama are implemented)", model)
	}
	tokens, ok := f.Strings(ggufKeyTokens)
	if !ok {
		return nil, errorf(CodeInvalid, path+": "+ggufKeyTokens, nil, "missing or not a string array")
	}
	types, ok := f.Int32s(ggufKeyTypes)
	if !ok {
		types = nil // every token normal
	} else if len(types) != len(tokens) {
		return nil, errorf(CodeInvalid, path+": "+ggufKeyTypes, nil, "%d types for %d tokens", len(types), len(tokens))
	}
	n := len(tokens)
	v := &Vocabulary{
		Tokens:  make([][]byte, n),
		Special: make([]bool, n),
		BOS:     NoToken,
		Width:   n,
		Name:    path,
	}
	specials := map[string]TokenID{}
	for id, s := range tokens {
		typ := TokenTypeNormal
		if types != nil {
			typ = types[id]
		}
		if slices.Contains(llamaCppEOGNames, s) {
			// llama.cpp makes these end-of-generation tokens control
			// tokens whatever their declared type, and so do we.
			typ = TokenTypeControl
			v.EOS = append(v.EOS, TokenID(id))
		}
		switch typ {
		case TokenTypeControl, TokenTypeUnknown:
			v.Tokens[id], v.Special[id] = specialBytes(s), true
			specials[s] = TokenID(id)
		case TokenTypeUnused:
			if s != "" {
				v.Tokens[id], v.Special[id] = specialBytes(s), true
			}
		case TokenTypeUserDefined:
			v.Tokens[id] = []byte(s)
		case TokenTypeByte:
			if b, ok := byteTokenValue(s); ok {
				v.Tokens[id] = []byte{b}
			} else {
				v.Tokens[id] = ggufNormalBytes(kind, s)
			}
		default:
			v.Tokens[id] = ggufNormalBytes(kind, s)
		}
	}
	id32 := func(key string) (TokenID, bool) {
		u, ok := f.Uint32(key)
		if !ok || int(u) >= n {
			return NoToken, false
		}
		return TokenID(u), true
	}
	eos, _ := id32(ggufKeyEOS)
	if bos, ok := id32(ggufKeyBOS); ok {
		v.BOS = bos
	}
	for _, k := range []string{ggufKeyEOT, ggufKeyEOM} {
		if id, ok := id32(k); ok {
			v.EOS = append(v.EOS, id)
		}
	}
	if arch, ok := f.String(ggufKeyArch); ok {
		if w, ok := f.Uint32(arch + ".vocab_size"); ok {
			v.Width = max(v.Width, int(w))
		}
	}
	for _, name := range []string{ggufOutputTensor, ggufEmbedTensor} {
		if t, ok := f.Tensor(name); ok && len(t.Dims) == 2 {
			v.Width = max(v.Width, int(min(t.Dims[1], 1<<31-1)))
			break
		}
	}
	v.finish(eos, specials)
	v.EOS = harmonyEOG(v.EOS, specials)
	return v, nil
}

// ggufNormalBytes decodes a normal token's string.
func ggufNormalBytes(kind Kind, s string) []byte {
	if kind == KindByteLevel {
		if b, ok := GPT2Decode(s); ok {
			return b
		}
		return []byte(s)
	}
	return []byte(strings.ReplaceAll(s, "▁", " "))
}
