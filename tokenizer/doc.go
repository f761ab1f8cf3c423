// Package tokenizer turns a model's tokenizer files into a Vocabulary, the
// plain value the rest of Conform works with, and encodes text into token
// ids the way the model's reference tokenizer does.
//
// # Pipeline
//
// A tokenizer file (HuggingFace tokenizer.json, a GGUF model's metadata, or
// a tiktoken encoding name) is read into a Vocabulary: for every token id
// its exact raw bytes, whether it is special, the end-of-generation ids and
// the model's logit width. Reading undoes the text encodings that
// vocabularies use to store bytes: the GPT-2 byte map of byte-level BPE
// (Llama-3, Qwen, tiktoken) and the "▁" space and "<0xNN>" byte-fallback
// tokens of SentencePiece-style BPE (Llama-2, Gemma). Special tokens are
// stored as 0xFF followed by their text; 0xFF never occurs in UTF-8, so a
// grammar over text can never produce a special token by accident. The
// automata in package fsm are built from Vocabulary.Tokens alone.
//
// The Encoder goes the other way, for tests, benchmarks and prompt
// building, and reproduces HuggingFace tokenizers' ids exactly: added
// tokens written in the text are matched first (leftmost, longest), the
// rest is normalized, split into pre-tokens by the pre-tokenizer's regex
// (regexp2, or a hand-written scanner when the regex is exactly the
// Llama-3 or Qwen2 one; see llamasplit.go), and each pre-token is merged by
// BPE in rank order with a priority queue over a linked list of symbols
// (see bpe.go), its result cached.
//
// ReadHFFile exposes tokenizer.json as data (token strings as written,
// merges, added tokens, BOS/EOS names, chat template) for writers of GGUF
// files; TiktokenMerges recovers BPE merges from tiktoken ranks for the
// same purpose.
//
// # Conventions
//
// Token ids are TokenID. Errors are *Error with an ErrorCode and the place
// (file and section) where the problem was found. Nothing here panics on
// bad input. Vocabulary and Encoder values are immutable after loading and
// safe for concurrent use.
package tokenizer
