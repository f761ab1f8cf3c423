// Package hub resolves a model reference such as "org/repo:Q4_K_M" (the
// --hf flag, as in llama-server -hf) to a verified GGUF file on the local
// disk, downloading it from Hugging Face (or a compatible mirror) once and
// using the cache without the network after that.
//
// # Pipeline
//
// ParseRef reads the reference into a Ref. Resolve then:
//
//  1. looks in the cache, <CacheDir>/<org>/<repo>/<path in repo>: a file
//     counts as cached when its sidecar <file>.json exists and records the
//     file's size (Options.Verify re-hashes it too). A quantization finds its
//     file through the repository's index (.conform-refs.json). No request is
//     made on a hit, so a second start works with the network down.
//  2. lists the repository: GET {endpoint}/api/models/{repo}/tree/main?recursive=true,
//     following Link rel="next" pages. Each file has a size and, for LFS
//     files (all GGUF files in practice), the SHA-256 of its content.
//  3. chooses the model: the named file, or the GGUF files whose path names
//     the quantization as a whole token (default DefaultQuant, ignoring case;
//     a single file before a split one; projector files excluded). A split
//     model (-00001-of-0000N.gguf) is downloaded whole and its first part is
//     returned, since llama.cpp finds the other parts beside it.
//  4. downloads each file with GET {endpoint}/{repo}/resolve/main/{file} into
//     <file>.part, resuming an existing part with a Range request (a 200
//     answer restarts from zero, a 206 must start where asked, a 416 drops a
//     part that no longer fits), retrying a broken or stalled connection
//     (Options.StallTimeout) while it makes progress, hashing as it writes.
//  5. verifies size and SHA-256, writes the sidecar, then renames the part to
//     the final name: a file under its final name is always complete and
//     verified; anything else ends in .part.
//
// # Errors
//
// Every failure is an *Error whose Code says what happened (network
// unreachable, not found, gated, no GGUF, unknown quantization, checksum
// mismatch, disk full, cache folder not writable, cancelled, …) and whose
// Hint says in one sentence what to do. A cancelled or broken download keeps
// its .part for the next start; a checksum mismatch or a full disk removes it.
//
// # Conventions
//
// The package reads no environment variable (the caller reads HF_ENDPOINT,
// HF_TOKEN and flags into Options) except DefaultCacheDir, which reads
// XDG_CACHE_HOME. It never logs the token. Two processes (or goroutines)
// resolving the same model into the same cache at once take turns on an
// advisory lock per file (<file>.lock, flock; not coordinated on systems
// without flock, such as Windows): the second finds the first one's
// download in the cache.
package hub
