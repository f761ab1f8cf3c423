// Package mkmodel writes synthetic GGUF models: a llama-architecture file
// with random F16 weights of a chosen shape ([Preset]) and a real
// vocabulary ([Vocab]: tokens, merges, token types, pre-tokenizer, special
// ids, chat template), so that tests and benchmarks can load a model
// through llama.cpp without downloading weights. The output is nonsense
// text, but tokenization, chat markup, decoding speed and the shape of the
// logits are those of the real model family.
//
// Pipeline: a tokenizer source (an HF tokenizer.json, or a tiktoken
// encoding) → [Vocab] (GGUF-ready strings, from package conform/tokenizer)
// → [Write] (metadata keys and tensor shapes per
// shared/notes/synthetic-gguf.md, weights streamed from a seeded PCG so
// that a 1 GB model never sits in memory) → a GGUF file via conform/gguf.
//
// The same seed, preset and vocabulary give the same bytes.
package mkmodel
