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
// Without cgo the package still builds (the binding has stubs), and [Load]
// fails with the binding's llama.ErrUnavailable, so callers such as
// cmd/serve compile and test everywhere.
//
// # Conventions
//
// e is an *Engine. Slot i of the runner is KV sequence i of the model, so
// Config.Slots equals the model's Params.Parallel. Errors are *Error with a
// Code; llama.cpp's own errors are wrapped unchanged (errors.Is against the
// llama sentinels still works).
package llamaengine
