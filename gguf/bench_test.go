package gguf

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkParseVocab parses the metadata of a file holding a 151k-token
// vocabulary and its merges, the size of Qwen's: the cost the tokenizer
// loader pays per model load.
func BenchmarkParseVocab(b *testing.B) {
	const n = 151_669
	tokens := make([]string, n)
	merges := make([]string, n)
	types := make([]int32, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("Ġtok%d", i)
		merges[i] = fmt.Sprintf("Ġt ok%d", i)
		types[i] = 1
	}
	w := NewWriter()
	w.AddStrings("tokenizer.ggml.tokens", tokens)
	w.AddStrings("tokenizer.ggml.merges", merges)
	w.AddInt32s("tokenizer.ggml.token_type", types)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
