// Package llamaengine adapts the llama.cpp binding (conform/internal/llama)
// to the generation loop's engine interface (runner.Engine), and bundles
// what a caller needs beside it to serve a GGUF model: the vocabulary read
// from the same file by conform/tokenizer, the end-of-generation ids, a
// detokenizer, and a runner.Config that fits the loaded context.
//
// # Pipeline
//
// A GGUF file is loaded twice, once per side of the cgo boundary: llama.cpp
// loads the weights and makes the context ([llama.Load]), and the pure-Go
// reader in conform/tokenizer reads the vocabulary ([tokenizer.LoadGGUF]),
// from which fsm builds token indexes. [Load] checks that the two agree on
// the vocabulary size. The runner then drives the [Engine]: each step's
// runner.Batch becomes a llama.Batch (one reused slice), Decode runs it,
// Logits copies a row out, and RemoveKV edits a sequence's KV cells.
//
// For comparison, [GrammarConstraint] runs llama.cpp's own grammar sampler
// (a GBNF grammar, usually from llama.SchemaToGrammar, over a
// [GrammarVocab]) behind the same runner.Guide interface that
// Conform's *fsm.Matcher implements; bench/e2e and bench/maskbench
// (-engine llamacpp) use it as their baseline.
//
// Without cgo the package still builds (the binding has stubs), and [Load]
// fails with the binding's llama.ErrUnavailable (as does
// NewGrammarConstraint), so callers such as cmd/serve compile and test
// everywhere.
//
// # Threads
//
// llama.cpp's worker threads spin while they wait for each other. On a
// machine whose cores are busy with other work, Threads above the number
// of idle cores is much slower than fewer threads: on the shared 2-core
// development machine the end-to-end tests ran 8× faster with Threads 1
// than with 2.
//
// # Conventions
//
// e is an *Engine. Slot i of the runner is KV sequence i of the model, so
// Config.Slots equals the model's Params.Parallel. Errors are *Error with a
// Code; llama.cpp's own errors are wrapped unchanged (errors.Is against the
// llama sentinels still works).
package llamaengine
