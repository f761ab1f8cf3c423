package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"conform/gguf"
	"conform/hub"
	"conform/internal/llama"
	"conform/internal/llamaengine"
	"conform/internal/mkmodel"
	"conform/runner"
)

// DemoTemplate is the chat template of the --demo model: ChatML with the
// hermes tool-call convention (tools in the system prompt, calls in
// <tool_call> tags, results as <tool_response>), as Qwen2.5 writes it.
const DemoTemplate = `{%- if tools %}<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}{% else %}You are a helpful assistant.{% endif %}

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0]['role'] == 'system' %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' and loop.first %}
{%- elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{{ message.content }}
{%- for tc in message.tool_calls or [] %}
<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// makeDemo writes the --demo model (tiny llama shape, cl100k vocabulary read
// offline, DemoTemplate) into dir and returns its path.
func makeDemo(dir string) (string, error) {
	v, err := mkmodel.LoadVocab("cl100k")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "conform-demo.gguf")
	if err := mkmodel.Write(path, mkmodel.Options{Preset: mkmodel.Presets["tiny"], Vocab: v, ChatTemplate: DemoTemplate, Seed: 1}); err != nil {
		return "", err
	}
	return path, nil
}

// resolveModelPath returns the GGUF file to load: --model, the --demo model,
// or --hf through the hub cache.
func resolveModelPath(ctx context.Context, cfg Config, progress io.Writer, tmpDir string) (string, error) {
	switch {
	case cfg.Demo:
		return makeDemo(tmpDir)
	case cfg.Model != "":
		if _, err := os.Stat(cfg.Model); err != nil {
			return "", fmt.Errorf("--model %s: %w (give the path of a local .gguf file, --hf org/repo to download one, or --demo)", cfg.Model, err)
		}
		return cfg.Model, nil
	}
	ref, err := hub.ParseRef(cfg.HF)
	if err != nil {
		return "", err
	}
	path, err := hub.Resolve(ctx, ref, hub.Options{Endpoint: cfg.HFEndpoint, Token: cfg.HFToken, CacheDir: cfg.ModelsDir, Progress: progress, Offline: cfg.Offline})
	if err != nil {
		var he *hub.Error
		if errors.As(err, &he) && (he.Code == hub.CodeNetwork || he.Code == hub.CodeOffline) {
			return "", fmt.Errorf("%w\n  serve a local file with --model FILE.gguf, or try the API without any download with --demo", err)
		}
		return "", err
	}
	return path, nil
}

// fileTypes names GGUF general.file_type values (llama.cpp's llama_ftype).
var fileTypes = map[uint32]string{0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M",
	13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}

// describe summarises a GGUF file for the startup line, and returns its chat
// template.
func describe(path string) (info, template string) {
	f, err := gguf.Open(path)
	if err != nil {
		return "unreadable metadata: " + err.Error(), ""
	}
	arch, _ := f.String("general.architecture")
	var params int64
	for _, t := range f.Tensors {
		params += t.Elements()
	}
	quant := "unknown"
	if ft, ok := f.Uint32("general.file_type"); ok {
		if q, ok := fileTypes[ft]; ok {
			quant = q
		} else {
			quant = fmt.Sprintf("type %d", ft)
		}
	}
	template, _ = f.String("tokenizer.chat_template")
	return fmt.Sprintf("architecture %s, %s parameters, %s, %.1f MB", arch, humanCount(params), quant, float64(f.Size)/1e6), template
}

// trainedContext is the model's training context from its GGUF metadata
// (<arch>.context_length), 0 when the file does not say.
func trainedContext(path string) int {
	f, err := gguf.Open(path)
	if err != nil {
		return 0
	}
	arch, _ := f.String("general.architecture")
	if n, ok := f.Uint32(arch + ".context_length"); ok {
		return int(n)
	}
	return 0
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%d", n)
}

// gpuLayers formats the layers llama.cpp was asked to offload: "all" for
// the resolved -1.
func gpuLayers(n int) string {
	if n >= 999 {
		return "all"
	}
	return fmt.Sprint(n)
}

// backendDir is --backend-dir, or lib/ beside the executable when that
// exists (where `make build-cuda` puts the libraries for
// build/conform-serve), or "". A folder named explicitly must exist.
func (c Config) backendDir() (string, error) {
	if c.BackendDir != "" {
		if st, err := os.Stat(c.BackendDir); err != nil || !st.IsDir() {
			return "", fmt.Errorf("--backend-dir %s: not a folder (it holds llama.cpp backend libraries such as libggml-cuda.so; `make build-cuda` writes build/lib)", c.BackendDir)
		}
		return c.BackendDir, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil
	}
	dir := filepath.Join(filepath.Dir(exe), "lib")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	return "", nil
}

// loadModel resolves, loads and wraps the model. The returned close frees it.
func loadModel(ctx context.Context, cfg Config, log *slog.Logger, progress io.Writer) (*Model, func() error, error) {
	tmp, err := os.MkdirTemp("", "conform-serve-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	path, err := resolveModelPath(ctx, cfg, progress, tmp)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	info, tmpl := describe(path)
	tmplFrom := "GGUF tokenizer.chat_template"
	if cfg.ChatTemplate != "" {
		b, err := os.ReadFile(cfg.ChatTemplate)
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("--chat-template: %w", err)
		}
		tmpl, tmplFrom = string(b), cfg.ChatTemplate
	}
	if tmpl == "" {
		tmpl, tmplFrom = mkmodel.DefaultChatTemplate, "none in the file: minimal ChatML"
	}
	// A binary whose kernels use extensions this CPU lacks would die of
	// SIGILL in the first decode; one that leaves some out is slow.
	cpuInfo := llama.CPU()
	if err := cpuInfo.Check(); err != nil {
		cleanup()
		return nil, nil, err
	}
	if w := cpuInfo.Warning(); w != "" {
		log.Warn(w)
	}
	log.Info("loading model", "path", path)
	bar := newLoadBar(progress)
	kv, _ := cfg.kvLayout() // checked by ParseConfig
	backendDir, err := cfg.backendDir()
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	eng, err := llamaengine.Load(path, llama.Params{ContextSize: cfg.contextSize(trainedContext(path)), Parallel: cfg.Parallel, Threads: cfg.Threads, GPULayers: cfg.NGPULayers, BackendDir: backendDir, KVLayout: kv, Progress: bar.update})
	bar.done(err == nil)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	placement := eng.Model().Placement()
	if placement.Warning != "" {
		log.Warn("--n-gpu-layers: "+placement.Warning, "fix", "build the CUDA backend with `make build-cuda` (it writes build/lib) and name its folder with --backend-dir, or leave --n-gpu-layers at 0")
	}
	if placement.Warning == "" { // the warning already names the libraries that failed
		for _, f := range placement.Backends.Failed {
			log.Warn("backend library not loaded", "path", f.Path, "error", f.Err)
		}
	}
	name := cfg.ServedModelName
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".gguf")
	}
	vocab := eng.Vocabulary()
	tokenize := func(text string) ([]runner.TokenID, error) {
		toks, err := eng.Tokenize(text, true, true)
		if err != nil {
			return nil, err
		}
		// A template that writes bos_token itself plus the tokenizer's
		// own BOS would give two.
		if len(toks) >= 2 && vocab.BOS >= 0 && toks[0] == runner.TokenID(vocab.BOS) && toks[1] == toks[0] {
			toks = toks[1:]
		}
		return toks, nil
	}
	threads := "all CPUs"
	if cfg.Threads > 0 {
		threads = fmt.Sprint(cfg.Threads)
	}
	info += fmt.Sprintf(", threads %s, backend %s, GPU layers %s, KV %s, %s", threads, placement.Backends.Summary(), gpuLayers(placement.GPULayers), eng.Model().Params().KVLayout, cpuInfo)
	m, err := NewModel(ModelSpec{Name: name, Vocab: vocab, EOS: eng.EOS(), Template: tmpl, TemplateFrom: tmplFrom, Parser: cfg.ToolCallParser, Reasoning: cfg.ReasoningFormat,
		Tokenize: tokenize, Engine: eng, Runner: eng.RunnerConfig(), Info: info})
	if err != nil {
		eng.Close()
		cleanup()
		return nil, nil, err
	}
	return m, func() error { err := eng.Close(); cleanup(); return err }, nil
}
