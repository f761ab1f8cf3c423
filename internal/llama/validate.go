package llama

import (
	"fmt"

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
