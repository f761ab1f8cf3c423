// Package llama is Conform's only door to llama.cpp: it is the single
// importer of github.com/ollama/ollama/llama (v0.24.0), and exposes just what
// the decode loop needs — load a GGUF model, tokenize, decode a batch across
// sequences, copy logits out, edit the per-sequence KV cache, close — plus a
// thin wrapper over llama.cpp's own grammar sampler for benchmarks.
//
// Pipeline of a Load: the path is first checked in pure Go with package
// gguf ([Validate]: the file exists, parses, names an architecture the
// vendored llama.cpp knows and carries the keys and tensors a text model
// needs), because llama.cpp may abort the process on some malformed files;
// only then is it handed to llama_model_load_from_file, and a context
// (KV cache for Params.Parallel sequences) and a reusable C batch are made.
//
// Boundary rules: C status codes become errors of this package's one error
// type, [*Error], right where they are returned (decode status 1 becomes
// [ErrKVCacheFull]); logits are copied into Go memory before they are
// returned; token ids and sequence ids are range-checked in Go before they
// reach C, where an out-of-range id is undefined behaviour; Close is
// idempotent. A Model serialises its calls with a mutex: llama.cpp contexts
// are not safe for concurrent use.
//
// Without cgo (CGO_ENABLED=0) the package still builds: Load and the grammar
// functions return [ErrUnavailable], and [Validate] works, so
// `CGO_ENABLED=0 go test ./...` passes on any machine.
//
// Build: the module proxy strips llama.cpp's vendor/ headers, so cgo builds
// need nlohmann/json and stb (Debian nlohmann-json3-dev, libstb-dev) and
// miniaudio.h under a directory named in CGO_CPPFLAGS, and this package
// reads llama_context_params through the pinned module's llama.h, linked
// with the ggml headers into build/include/ollama; `make llama-deps`
// prepares all of it and `make test` sets CGO_CPPFLAGS.
//
// KV layout: with several sequences the cache is one unified buffer by
// default ([KVUnified], llama-server's default too). llama.cpp then decodes
// any batch as one graph; with a stream per sequence ([KVPerSequence]) it
// splits a batch whose sequences are not consecutive ids with equal token
// counts (an idle slot, a prompt chunk beside one-token decodes) into
// several. Either way each sequence holds ContextSize/Parallel positions.
//
// Decode thread: on unix each Model runs llama_decode on a C thread of its
// own while the calling goroutine waits on a pipe in Go's poller, not in a
// cgo call. A goroutine in a long cgo call keeps the Go scheduler's monitor
// waking every 20 µs for its first milliseconds, on the cores the forward
// pass is using (decoder_unix.go has the numbers); parked on the poller it
// leaves every P idle and the monitor asleep. The logits are the cgo
// call's, bit for bit (TestDecodeThread); where ollama's batch layout does
// not read back, or the thread cannot start, Decode calls llama.cpp
// directly.
//
// Logging: llama.cpp's log lines go to stderr when slog's default logger is
// enabled at the matching level (ollama's hook); raise the default level to
// quieten them.
//
// Conventions: m is a *Model, b a Batch; TokenID and SeqID are the typed ids
// of tokens and sequences.
package llama
