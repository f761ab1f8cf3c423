package llama

import (
	"fmt"
	"slices"

	"conform/gguf"
)

// architectures are the general.architecture values of text models that the
// llama.cpp vendored by ollama v0.24.0 can load (LLM_ARCH_NAMES in its
// src/llama-arch.cpp, without "clip", "(unknown)" and the audio decoder
// "wavtokenizer-dec", which are not text models).
var architectures = map[string]bool{}

func init() {
	for _, a := range []string{
		"llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan",
		"starcoder", "refact", "bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2",
		"jina-bert-v3", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3",
		"qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "phi2", "phi3", "phimoe", "plamo", "plamo2",
		"codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3",
		"gemma3n", "gemma-embedding", "starcoder2", "mamba", "mamba2", "jamba", "falcon-h1", "xverse",
		"command-r", "cohere2", "dbrx", "olmo", "olmo2", "olmoe", "openelm", "arctic", "deepseek",
		"deepseek2", "chatglm", "glm4", "glm4moe", "bitnet", "t5", "t5encoder", "jais", "nemotron",
		"nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7",
		"granite", "granitemoe", "granitehybrid", "chameleon", "solar", "plm", "bailingmoe",
		"bailingmoe2", "dots1", "arcee", "afmoe", "ernie4_5", "ernie4_5-moe", "hunyuan-moe",
		"hunyuan-dense", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada",
		"llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-m2", "cogvlm", "rnd1",
		"pangu-embedded", "mistral3",
	} {
		architectures[a] = true
	}
}

// maxLayers is llama.cpp's LLAMA_MAX_LAYERS.
const maxLayers = 512

// Validate checks in pure Go that path is a GGUF model llama.cpp can be
// given safely: it parses (package gguf bounds every length, so a corrupt
// file is an error, not a crash), names a known text architecture, and has
// the hyperparameters, vocabulary and tensors that llama.cpp requires
// before it reads the weights. It returns the parsed header.
func Validate(path string) (*gguf.File, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, &Error{Code: CodeModelFile, Op: "validate", Path: path, Err: err}
	}
	arch, ok := f.String("general.architecture")
	if !ok {
		return nil, &Error{Code: CodeArchitecture, Op: "validate", Path: path, Msg: "no general.architecture string"}
	}
	if !architectures[arch] {
		return nil, &Error{Code: CodeArchitecture, Op: "validate", Path: path, Msg: fmt.Sprintf("%q is not an architecture llama.cpp (ollama v0.24.0) runs", arch)}
	}
	var missing []string
	for _, k := range []string{arch + ".block_count", arch + ".embedding_length", arch + ".context_length"} {
		if _, ok := f.Uint64(k); !ok {
			missing = append(missing, k)
		}
	}
	if _, ok := f.String("tokenizer.ggml.model"); !ok {
		missing = append(missing, "tokenizer.ggml.model")
	}
	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		missing = append(missing, "tokenizer.ggml.tokens")
	}
	if len(missing) > 0 {
		return nil, &Error{Code: CodeModelFile, Op: "validate", Path: path, Msg: fmt.Sprintf("missing or mistyped keys %q", missing)}
	}
	// llama.cpp aborts the process (GGML_ABORT in llama-hparams.cpp) on a
	// block count of 0, and refuses more than LLAMA_MAX_LAYERS (512).
	if n, _ := f.Uint64(arch + ".block_count"); n < 1 || n > maxLayers {
		return nil, &Error{Code: CodeModelFile, Op: "validate", Path: path, Msg: fmt.Sprintf("%s.block_count %d outside [1, %d]", arch, n, maxLayers)}
	}
	if err := checkArrays(f, arch); err != nil {
		err.Op, err.Path = "validate", path
		return nil, err
	}
	if err := checkVocab(f, tokens); err != nil {
		err.Op, err.Path = "validate", path
		return nil, err
	}
	if len(f.Tensors) == 0 {
		return nil, &Error{Code: CodeModelFile, Op: "validate", Path: path, Msg: "no tensors"}
	}
	for _, t := range f.Tensors {
		if !t.Type.Known() {
			return nil, &Error{Code: CodeModelFile, Op: "validate", Path: path, Msg: fmt.Sprintf("tensor %q has a ggml type (%d) unknown to this build", t.Name, uint32(t.Type))}
		}
	}
	return f, nil
}

// checkVocab checks what llama.cpp's vocabulary loader trusts without
// checking (llama-vocab.cpp reads scores and token types as raw float and
// int arrays of the token count, and merges with gguf_get_arr_str, which
// aborts on another type) and what it asserts (distinct token strings).
func checkVocab(f *gguf.File, tokens []string) *Error {
	n := len(tokens)
	arrayOf := func(key string, elem gguf.Type) (int, bool, bool) {
		v, ok := f.Value(key)
		if !ok {
			return 0, false, true
		}
		a, isArr := v.Data.(gguf.Array)
		if !isArr || a.Elem != elem {
			return 0, true, false
		}
		return a.Len(), true, true
	}
	for _, c := range []struct {
		key   string
		elem  gguf.Type
		sameN bool
	}{
		{"tokenizer.ggml.scores", gguf.TypeFloat32, true},
		{"tokenizer.ggml.token_type", gguf.TypeInt32, true},
		{"tokenizer.ggml.merges", gguf.TypeString, false},
	} {
		got, present, ok := arrayOf(c.key, c.elem)
		switch {
		case !present:
		case !ok:
			return &Error{Code: CodeModelFile, Msg: fmt.Sprintf("%s is not an array of %v", c.key, c.elem)}
		case c.sameN && got != n:
			return &Error{Code: CodeModelFile, Msg: fmt.Sprintf("%s has %d entries for %d tokens", c.key, got, n)}
		}
	}
	if v, ok := f.Value("tokenizer.ggml.precompiled_charsmap"); ok {
		if a, isArr := v.Data.(gguf.Array); !isArr || (a.Elem != gguf.TypeUint8 && a.Elem != gguf.TypeInt8) {
			return &Error{Code: CodeModelFile, Msg: "tokenizer.ggml.precompiled_charsmap is not a byte array"}
		}
	}
	seen := make(map[string]int, n)
	for i, t := range tokens {
		if t == "" {
			t = fmt.Sprintf("[EMPTY_%d]", i) // what llama.cpp substitutes
		}
		if j, dup := seen[t]; dup {
			return &Error{Code: CodeModelFile, Msg: fmt.Sprintf("tokens %d and %d are both %q (llama.cpp asserts distinct tokens)", j, i, t)}
		}
		seen[t] = i
	}
	return nil
}

// checkArrays refuses what ggml's GGUF reader cannot read (nested arrays)
// and arrays whose element type llama.cpp asserts on instead of reporting
// (its get_arr and get_key_or_arr, llama-model-loader.cpp).
func checkArrays(f *gguf.File, arch string) *Error {
	ints := []gguf.Type{gguf.TypeInt32, gguf.TypeUint32}
	want := map[string][]gguf.Type{
		arch + ".feed_forward_length":      ints,
		arch + ".attention.head_count":     ints,
		arch + ".attention.head_count_kv":  ints,
		arch + ".rope.dimension_sections":  ints,
		arch + ".classifier.output_labels": {gguf.TypeString},
		"xielu.alpha_n":                    {gguf.TypeFloat32},
		"xielu.alpha_p":                    {gguf.TypeFloat32},
		"xielu.beta":                       {gguf.TypeFloat32},
		"xielu.eps":                        {gguf.TypeFloat32},
	}
	for _, kv := range f.KVs {
		a, ok := kv.Value.Data.(gguf.Array)
		if !ok {
			continue
		}
		if a.Elem == gguf.TypeArray {
			return &Error{Code: CodeModelFile, Msg: fmt.Sprintf("%s is a nested array, which llama.cpp cannot read", kv.Key)}
		}
		if types, ok := want[kv.Key]; ok && !slices.Contains(types, a.Elem) {
			return &Error{Code: CodeModelFile, Msg: fmt.Sprintf("%s is an array of %v, want %v", kv.Key, a.Elem, types)}
		}
	}
	return nil
}
