// Package gguf reads and writes GGUF files (version 2 and 3) in pure Go, with
// no cgo, so that the tokenizer, the model validator in internal/llama and the
// synthetic-model generator can all use it on any machine.
//
// A GGUF file is, in order: the magic "GGUF", a version, the tensor count and
// the metadata count; the metadata key/value pairs (typed scalars, strings and
// possibly nested arrays); one info record per tensor (name, dimensions in
// ggml "ne" order, ggml type, offset); padding to the alignment; and the
// tensor data. The format is specified in ggml's docs/gguf.md
// (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
//
// Reading: [Open] (a path) and [Parse] (an io.ReaderAt and its size) decode
// everything up to the start of the tensor data and return a [File]; tensor
// data is never read unless asked for with [File.TensorData]. Every count and
// length in the file is checked against the bytes that remain before anything
// is allocated, so a corrupt or hostile file yields an [*Error] (code
// [CodeTruncated], [CodeLimit], ...), never a panic or a huge allocation.
//
// Writing: a [Writer] collects key/value pairs and tensors and writes a
// version 3 file with alignment 32 (general.alignment).
//
// Conventions: f is a *File, w a *Writer, kv a KV, t a TensorInfo. Value
// types are named after the spec (TypeUint8 ... TypeFloat64); tensor types
// after ggml (TensorF32, TensorF16, ...).
package gguf
