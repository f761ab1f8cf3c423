package gguf_test

import (
	"bytes"
	"fmt"

	"conform/gguf"
)

func Example() {
	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddUint32("llama.block_count", 2)
	w.AddStrings("tokenizer.ggml.tokens", []string{"a", "b", "ab"})
	w.AddTensor("output_norm.weight", gguf.TensorF32, []uint64{2}, make([]byte, 8))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		fmt.Println(err)
		return
	}

	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	arch, _ := f.String("general.architecture")
	blocks, _ := f.Uint32("llama.block_count")
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	fmt.Println(arch, blocks, tokens, f.Keys())
	fmt.Println(f.Tensors[0].Name, f.Tensors[0].Type, f.Tensors[0].Dims)
	// Output:
	// llama 2 [a b ab] [general.architecture llama.block_count tokenizer.ggml.tokens general.alignment]
	// output_norm.weight F32 [2]
}
