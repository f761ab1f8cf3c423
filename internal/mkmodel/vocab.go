package mkmodel

import (
	"fmt"
	"os"
	"strings"

	"conform/tokenizer"
)

// Vocab is a vocabulary in the form GGUF stores it.
type Vocab struct {
	// Model is tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama"
	// (SentencePiece-style, scored).
	Model string
	// Pre is tokenizer.ggml.pre ("llama-bpe", "qwen2", "gpt-4o", "default").
	Pre string
	// Tokens are the token strings by id: GPT-2-mapped for byte-level
	// normal tokens, raw text for added tokens.
	Tokens []string
	// Types are llama.cpp token types (1 normal, 3 control, 4 user-defined,
	// 5 unused, 6 byte), one per token.
	Types []int32
	// Scores are per-token scores (SentencePiece-style vocabularies only).
	Scores []float32
	// Merges are the BPE merges "left right" in rank order.
	Merges []string
	// BOS and EOS are token ids; BOS is EOS when the vocabulary has none
	// (llama.cpp would otherwise default to id 11). AddBOS says whether a
	// BOS starts each prompt.
	BOS, EOS int
	AddBOS   bool
	// ChatTemplate is the vocabulary's own chat template, if any.
	ChatTemplate string
	// Source names where the vocabulary came from.
	Source string
}

// LoadVocab reads a vocabulary: "cl100k" or "o200k" (tiktoken, offline),
// or the path of an HF tokenizer.json.
func LoadVocab(spec string) (*Vocab, error) {
	switch spec {
	case "cl100k", "cl100k_base":
		return TiktokenVocab("cl100k_base")
	case "o200k", "o200k_base":
		return TiktokenVocab("o200k_base")
	}
	return HFVocab(spec)
}

// HFVocab converts an HF tokenizer.json (read by tokenizer.ReadHFFile)
// into a GGUF vocabulary. Byte-level BPE becomes "gpt2", SentencePiece-style
// BPE "llama"; AddBOS is set when tokenizer_config.json names a bos_token.
// Token types are tokenizer.HFFile.TokenTypes (control for special added
// tokens, user-defined for the others), except that non-special added
// tokens that look special (<|...|>) are control, as in GGUF files made by
// llama.cpp's converter.
func HFVocab(path string) (*Vocab, error) {
	f, err := tokenizer.ReadHFFile(path)
	if err != nil {
		return nil, &Error{Code: CodeVocab, Source: path, Err: err}
	}
	v := &Vocab{
		Tokens:       f.Tokens(),
		Types:        f.TokenTypes(),
		Merges:       f.Merges,
		Pre:          f.Pre,
		ChatTemplate: f.ChatTemplate,
		Source:       path,
		BOS:          -1,
		EOS:          -1,
	}
	switch f.Kind {
	case tokenizer.KindByteLevel:
		v.Model = "gpt2"
	case tokenizer.KindSentencePiece:
		v.Model = "llama"
		v.Scores = make([]float32, len(v.Tokens))
		copy(v.Scores, f.Scores)
	default:
		return nil, &Error{Code: CodeVocab, Source: path, Msg: fmt.Sprintf("%v vocabularies are not supported (want byte-level or SentencePiece-style BPE)", f.Kind)}
	}
	// Added tokens that look special are control tokens even when
	// tokenizer.json says special=false (Qwen's <|fim_prefix|> and the
	// like), as llama.cpp's converter does; llama.cpp would otherwise
	// override their type at load time, with a warning.
	for _, a := range f.Added {
		if a.ID >= 0 && int(a.ID) < len(v.Types) && v.Types[a.ID] == tokenizer.TokenTypeUserDefined && looksSpecial(a.Content) {
			v.Types[a.ID] = tokenizer.TokenTypeControl
		}
	}
	// Holes (ids no token uses) get a unique placeholder: llama.cpp maps
	// token text to ids and would otherwise see many "" tokens.
	for id, t := range v.Tokens {
		if t == "" {
			v.Tokens[id] = fmt.Sprintf("<|unused_%d|>", id)
			v.Types[id] = tokenizer.TokenTypeUnused
		}
	}
	find := func(name string) int {
		if name == "" {
			return -1
		}
		for _, a := range f.Added {
			if a.Content == name {
				return int(a.ID)
			}
		}
		for id, t := range v.Tokens {
			if t == name {
				return id
			}
		}
		return -1
	}
	v.BOS, v.EOS = find(f.BOS), find(f.EOS)
	if v.EOS < 0 {
		for _, name := range []string{"<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>"} {
			if v.EOS = find(name); v.EOS >= 0 {
				break
			}
		}
	}
	if v.EOS < 0 {
		return nil, &Error{Code: CodeVocab, Source: path, Msg: "no EOS token found"}
	}
	v.AddBOS = v.BOS >= 0
	if v.BOS < 0 {
		v.BOS = v.EOS
	}
	return v, nil
}

// looksSpecial is llama.cpp convert_hf_to_gguf.py's does_token_look_special
// for text tokens: <|...|> (ASCII or full-width bars) and a few names.
func looksSpecial(t string) bool {
	switch t {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return strings.HasPrefix(t, "<|") && strings.HasSuffix(t, "|>") && len(t) > 4 ||
		strings.HasPrefix(t, "<｜") && strings.HasSuffix(t, "｜>") && len(t) > len("<｜｜>")
}

// chatMLTokens are appended to tiktoken vocabularies so that the default
// ChatML template renders to special tokens.
var chatMLTokens = []string{"<|im_start|>", "<|im_end|>"}

// TiktokenVocab converts a tiktoken encoding ("cl100k_base", "o200k_base")
// into a byte-level BPE vocabulary: the ranks as tokens with merges
// recovered by tokenizer.TiktokenMerges, the encoding's special tokens at
// their ids, holes between them as unused placeholders, and <|im_start|>,
// <|im_end|> appended as control tokens for ChatML.
func TiktokenVocab(name string) (*Vocab, error) {
	tokens, merges, err := tokenizer.TiktokenMerges(name)
	if err != nil {
		return nil, &Error{Code: CodeVocab, Source: name, Err: err}
	}
	tv, err := tokenizer.LoadTiktoken(name)
	if err != nil {
		return nil, &Error{Code: CodeVocab, Source: name, Err: err}
	}
	n := max(len(tokens), tv.Len())
	v := &Vocab{Model: "gpt2", Merges: merges, Source: name, BOS: -1, EOS: -1}
	switch name {
	case "cl100k_base":
		v.Pre = "llama-bpe" // Llama-3's pre-tokenizer regex is cl100k's
	case "o200k_base":
		v.Pre = "gpt-4o"
	default:
		v.Pre = "default"
	}
	v.Tokens = make([]string, n, n+len(chatMLTokens))
	v.Types = make([]int32, n, n+len(chatMLTokens))
	copy(v.Tokens, tokens)
	for id := range v.Tokens {
		switch {
		case id < len(tokens):
			v.Types[id] = tokenizer.TokenTypeNormal
		case tv.Special[id]:
			v.Tokens[id] = string(tv.Text(tokenizer.TokenID(id)))
			v.Types[id] = tokenizer.TokenTypeControl
		default:
			v.Tokens[id] = fmt.Sprintf("<|unused_%d|>", id)
			v.Types[id] = tokenizer.TokenTypeUnused
		}
	}
	for _, s := range chatMLTokens {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, tokenizer.TokenTypeControl)
	}
	for _, id := range tv.EOS {
		v.EOS = int(id)
		break
	}
	if v.EOS < 0 {
		return nil, &Error{Code: CodeVocab, Source: name, Msg: "no EOS token"}
	}
	v.BOS = v.EOS
	return v, nil
}

// DefaultChatTemplate is a minimal ChatML template, used when neither the
// caller nor the vocabulary gives one.
const DefaultChatTemplate = `{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{%- endif %}`

// ReadChatTemplate reads a chat template file (a Jinja template).
func ReadChatTemplate(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &Error{Code: CodeOptions, Source: path, Msg: "chat template", Err: err}
	}
	s := string(b)
	if strings.TrimSpace(s) == "" {
		return "", &Error{Code: CodeOptions, Source: path, Msg: "chat template is empty"}
	}
	return s, nil
}
