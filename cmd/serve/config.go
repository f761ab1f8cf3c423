package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"conform/hub"
	"conform/internal/llama"
	"conform/turn"
)

// DefaultModel is what `conform serve` runs when no model is named: a small
// instruct model that is good at tool calls (hermes format), fetched from
// Hugging Face on first use (see models/README.md).
const DefaultModel = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M"

// Config is every setting of the server, read once from flags and the
// environment (a flag wins over its variable, the variable over the default).
type Config struct {
	Model           string // --model: a local GGUF file
	HF              string // --hf: org/repo[:quant] or org/repo/file.gguf
	ModelsDir       string // --models-dir: the download cache
	HFEndpoint      string // --hf-endpoint (HF_ENDPOINT): a hub mirror
	HFToken         string // HF_TOKEN: for gated repositories (never logged)
	Offline         bool   // --offline: use the cache only
	Demo            bool   // --demo: a synthetic model made on the fly
	Host            string
	Port            int
	ServedModelName string
	CtxSize         int
	Parallel        int
	Threads         int
	NGPULayers      int
	BackendDir      string // --backend-dir: backend libraries (libggml-cuda.so); "": lib/ beside the executable
	KVLayout        string // --kv-layout: auto | unified | per-sequence (llama.KVLayout)
	ChatTemplate    string // --chat-template FILE
	ToolCallParser  string // auto | a turn.Formats() name
	// ReasoningFormat is --reasoning-format: auto (from the chat
	// template), none, think or harmony.
	ReasoningFormat string
	// ReasoningBudget is --reasoning-budget: the tokens a reasoning block
	// may take when a request sets no budget; -1 is no limit but the
	// request's max tokens, 0 no thinking.
	ReasoningBudget int
	PropertyOrder   string // schema | any: the order of object properties constrained output may take
	APIKey          string // never logged
	MaxQueue        int    // requests waiting beyond the busy slots before 429
	MaxBodyBytes    int64
	// The per-request input limits (see Limits): each is checked before the
	// step it protects and refused with a 400 that names its flag.
	MaxMessages    int // --max-messages
	MaxTools       int // --max-tools
	MaxPromptBytes int // --max-prompt-bytes
	MaxSchemaBytes int // --max-schema-bytes
	MaxSchemaDepth int // --max-schema-depth
	// DefaultMaxOutput caps the output of a Responses request that sets no
	// max_output_tokens (--default-max-output-tokens).
	DefaultMaxOutput int
	LogLevel         string
	ShutdownTimeout  time.Duration
	// NoUI is --no-ui: GET / does not serve the playground (ui.go).
	NoUI bool
}

// autoSlotContext is each slot's context when --ctx-size is 0 (the
// default), unless the model was trained on less: room for an agent's
// first request (Codex's and Claude Code's hold 10–20k tokens of
// instructions and tools) at a KV cost of 16384 × 28 KB ≈ 460 MB per slot
// for Qwen2.5-1.5B (f16 cache).
const autoSlotContext = 16384

// contextSize is the KV cache size to load with: --ctx-size, or when it is
// 0 autoSlotContext per slot, capped by the model's training context
// (trained, 0 when the file does not say).
func (c Config) contextSize(trained int) int {
	if c.CtxSize > 0 {
		return c.CtxSize
	}
	per := autoSlotContext
	if trained > 0 && trained < per {
		per = trained
	}
	return per * c.Parallel
}

// kvLayout reads --kv-layout.
func (c Config) kvLayout() (llama.KVLayout, error) {
	k, err := llama.ParseKVLayout(c.KVLayout)
	if err != nil {
		return 0, fmt.Errorf("--kv-layout %q: want auto, unified or per-sequence", c.KVLayout)
	}
	return k, nil
}

// errHelp is returned when -h or --help was asked (usage already printed).
var errHelp = errors.New("help requested")

// envName is the environment variable of a flag: CONFORM_ and the flag name
// in upper case with '-' as '_'.
func envName(flagName string) string {
	return "CONFORM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ParseConfig reads args (without the program name) and the environment
// through getenv. Errors name the flag or variable at fault.
func ParseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	c := Config{
		Host: "127.0.0.1", Port: 8080, CtxSize: 0, Parallel: 4, NGPULayers: 0, KVLayout: "auto",
		ToolCallParser: "auto", ReasoningFormat: "auto", ReasoningBudget: turn.NoBudget, PropertyOrder: "schema", MaxQueue: 64, MaxBodyBytes: 8 << 20, LogLevel: "info",
		ShutdownTimeout: 10 * time.Second,
		MaxMessages:     DefaultMaxMessages, MaxTools: DefaultMaxTools, MaxPromptBytes: DefaultMaxPromptBytes,
		MaxSchemaBytes: DefaultMaxSchemaBytes, MaxSchemaDepth: DefaultMaxSchemaDepth, DefaultMaxOutput: DefaultMaxOutputTokens,
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.Model, "model", c.Model, "local GGUF model file")
	fs.StringVar(&c.HF, "hf", c.HF, "Hugging Face model: org/repo[:QUANT] or org/repo/file.gguf (default "+DefaultModel+" when neither --model nor --demo is given)")
	fs.StringVar(&c.ModelsDir, "models-dir", c.ModelsDir, "download cache folder (default "+hub.DefaultCacheDir()+")")
	fs.StringVar(&c.HFEndpoint, "hf-endpoint", c.HFEndpoint, "Hugging Face endpoint or mirror (also HF_ENDPOINT)")
	fs.BoolVar(&c.Offline, "offline", c.Offline, "use the model cache only, never the network")
	fs.BoolVar(&c.Demo, "demo", c.Demo, "serve a tiny synthetic model made on the fly (no download; nonsense text, valid structure)")
	fs.StringVar(&c.Host, "host", c.Host, "listen address")
	fs.IntVar(&c.Port, "port", c.Port, "listen port")
	fs.StringVar(&c.ServedModelName, "served-model-name", c.ServedModelName, "model name in the API (default: the file name without .gguf)")
	fs.IntVar(&c.CtxSize, "ctx-size", c.CtxSize, fmt.Sprintf("KV cache size in tokens, shared by the parallel slots (0: %d per slot, or the model's training context if smaller)", autoSlotContext))
	fs.IntVar(&c.Parallel, "parallel", c.Parallel, "sequences decoded together (slots)")
	fs.IntVar(&c.Threads, "threads", c.Threads, "CPU threads (0: all)")
	fs.IntVar(&c.NGPULayers, "n-gpu-layers", c.NGPULayers, "layers offloaded to the GPU (-1: all); without a GPU backend a warning, and the CPU runs them")
	fs.StringVar(&c.BackendDir, "backend-dir", c.BackendDir, "folder of llama.cpp backend libraries such as libggml-cuda.so (`make build-cuda` puts them in build/lib; default: lib/ beside the executable, if it exists)")
	fs.StringVar(&c.KVLayout, "kv-layout", c.KVLayout, "KV cache of the slots: unified (one buffer; a batch of any mix of slots is one graph), per-sequence (a stream each) or auto (unified when --parallel > 1, as llama-server's default); each slot holds --ctx-size/--parallel tokens either way")
	fs.StringVar(&c.ChatTemplate, "chat-template", c.ChatTemplate, "Jinja chat template file (default: the model's)")
	fs.StringVar(&c.ToolCallParser, "tool-call-parser", c.ToolCallParser, "tool-call format: auto (from what the chat template renders) or one of "+formatNames())
	fs.StringVar(&c.ReasoningFormat, "reasoning-format", c.ReasoningFormat, "reasoning (thinking) format: auto (from the chat template), none, think or harmony")
	fs.IntVar(&c.ReasoningBudget, "reasoning-budget", c.ReasoningBudget, "tokens a reasoning block may take when a request sets no thinking_token_budget (-1: no limit but max_tokens; 0: no thinking)")
	fs.StringVar(&c.PropertyOrder, "property-order", c.PropertyOrder, "object properties in constrained output: schema (the schema's order, as OpenAI does) or any (any order, each at most once)")
	fs.StringVar(&c.APIKey, "api-key", c.APIKey, "require this bearer token on /v1 endpoints")
	fs.IntVar(&c.MaxQueue, "max-queue", c.MaxQueue, "requests allowed to wait for a slot; more get 429")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest request body; larger gets 413")
	fs.IntVar(&c.MaxMessages, "max-messages", c.MaxMessages, "most messages in one chat request")
	fs.IntVar(&c.MaxTools, "max-tools", c.MaxTools, "most tools in one chat request")
	fs.IntVar(&c.MaxPromptBytes, "max-prompt-bytes", c.MaxPromptBytes, "largest rendered chat prompt (and completions prompt) in bytes")
	fs.IntVar(&c.MaxSchemaBytes, "max-schema-bytes", c.MaxSchemaBytes, "largest JSON schema, regex or choice list of one request field, in bytes")
	fs.IntVar(&c.MaxSchemaDepth, "max-schema-depth", c.MaxSchemaDepth, "deepest JSON nesting of a schema")
	fs.IntVar(&c.DefaultMaxOutput, "default-max-output-tokens", c.DefaultMaxOutput, "output cap of a /v1/responses request without max_output_tokens")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long a shutdown waits for requests in flight")
	fs.BoolVar(&c.NoUI, "no-ui", c.NoUI, "do not serve the web playground at GET / (it answers 404 then)")
	fs.Usage = func() {
		fmt.Fprintf(usage, "Usage: serve [flags]\n\nEach flag can also be set by its environment variable CONFORM_<FLAG> (e.g. CONFORM_CTX_SIZE); HF_TOKEN and HF_ENDPOINT are read too.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" && f.Name == "hf-endpoint" {
			v = getenv("HF_ENDPOINT")
		}
		if v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %v", envName(f.Name), v, err))
		}
	})
	c.HFToken = getenv("HF_TOKEN")
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	return c, c.validate()
}

func (c *Config) validate() error {
	n := 0
	for _, s := range []bool{c.Model != "", c.HF != "", c.Demo} {
		if s {
			n++
		}
	}
	if n > 1 {
		return errors.New("give only one of --model, --hf and --demo")
	}
	if n == 0 {
		c.HF = DefaultModel
	}
	if c.HF != "" {
		if _, err := hub.ParseRef(c.HF); err != nil {
			return fmt.Errorf("--hf: %w", err)
		}
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port %d: want 0..65535", c.Port)
	}
	if c.Parallel < 1 {
		return fmt.Errorf("--parallel %d: want at least 1", c.Parallel)
	}
	if c.CtxSize != 0 && c.CtxSize < 16*c.Parallel {
		return fmt.Errorf("--ctx-size %d: want at least %d (16 tokens per slot)", c.CtxSize, 16*c.Parallel)
	}
	if c.Threads < 0 {
		return fmt.Errorf("--threads %d: want ≥ 0", c.Threads)
	}
	if c.MaxQueue < 0 {
		return fmt.Errorf("--max-queue %d: want ≥ 0", c.MaxQueue)
	}
	if c.MaxBodyBytes < 1024 {
		return fmt.Errorf("--max-body-bytes %d: want at least 1024", c.MaxBodyBytes)
	}
	for _, l := range []struct {
		flag string
		v    int
	}{{"max-messages", c.MaxMessages}, {"max-tools", c.MaxTools}, {"max-prompt-bytes", c.MaxPromptBytes}, {"max-schema-bytes", c.MaxSchemaBytes}, {"max-schema-depth", c.MaxSchemaDepth}, {"default-max-output-tokens", c.DefaultMaxOutput}} {
		if l.v < 1 {
			return fmt.Errorf("--%s %d: want at least 1", l.flag, l.v)
		}
	}
	if _, err := c.kvLayout(); err != nil {
		return err
	}
	if c.PropertyOrder != "schema" && c.PropertyOrder != "any" {
		return fmt.Errorf("--property-order %q: want schema or any", c.PropertyOrder)
	}
	if c.ToolCallParser != "auto" {
		if _, err := turn.ParseFormat(c.ToolCallParser); err != nil {
			return fmt.Errorf("--tool-call-parser %q: want auto or one of %s", c.ToolCallParser, formatNames())
		}
	}
	if c.ReasoningFormat != "auto" {
		if _, err := turn.ParseReasoningFormat(c.ReasoningFormat); err != nil {
			return fmt.Errorf("--reasoning-format %q: want auto, none, think or harmony", c.ReasoningFormat)
		}
	}
	if c.ReasoningBudget < -1 {
		return fmt.Errorf("--reasoning-budget %d: want -1 (no limit), 0 (no thinking) or a token count", c.ReasoningBudget)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// Addr is the listen address host:port.
func (c Config) Addr() string { return c.Host + ":" + strconv.Itoa(c.Port) }

// The defaults of the per-request input limits.
const (
	// DefaultMaxMessages is OpenAI's limit on messages per chat request.
	// Rendering and tokenizing grow with the count (llama.cpp's special-
	// token split is superlinear in it), so 100,000 one-word messages once
	// kept a core busy for minutes; 2048 render in milliseconds.
	DefaultMaxMessages = 2048
	// DefaultMaxTools is OpenAI's limit on tools per request.
	DefaultMaxTools = turn.DefaultMaxTools
	// DefaultMaxPromptBytes bounds the rendered prompt: 2 MiB is about
	// 500k tokens of English, above the context any GGUF model is served
	// with here, so it only stops a runaway template or input.
	DefaultMaxPromptBytes = 2 << 20
	// DefaultMaxSchemaBytes bounds each schema (and each regex or choice
	// list): 1 MiB is above the largest schema of the MaskBench corpus
	// (938 KB of 5,700 real-world schemas).
	DefaultMaxSchemaBytes = 1 << 20
	// DefaultMaxSchemaDepth bounds a schema's JSON nesting: twice the
	// deepest MaskBench schema (34 levels), far below the depth where
	// compiling it would cost (grammar stops at 256).
	DefaultMaxSchemaDepth = 64
)

// defaultMaxOutput is the Responses output cap, DefaultMaxOutputTokens
// when unset (a Config built in code).
func (c Config) defaultMaxOutput() int {
	if c.DefaultMaxOutput > 0 {
		return c.DefaultMaxOutput
	}
	return DefaultMaxOutputTokens
}

// Limits returns the per-request input limits of the configuration.
func (c Config) Limits() Limits {
	return Limits{MaxMessages: c.MaxMessages, MaxTools: c.MaxTools, MaxPromptBytes: c.MaxPromptBytes,
		MaxSchemaBytes: c.MaxSchemaBytes, MaxSchemaDepth: c.MaxSchemaDepth}
}

// pickReasoning returns the reasoning format of a model for the
// --reasoning-format flag ("auto" or "" detect it from the chat
// template) and how it was chosen: "flag", "detected" or "default" (none,
// when the template shows no reasoning).
func pickReasoning(flag, template string) (turn.ReasoningFormat, string, error) {
	if flag != "" && flag != "auto" {
		f, err := turn.ParseReasoningFormat(flag)
		return f, "flag", err
	}
	if f, ok := turn.DetectReasoningFormat(template); ok {
		return f, "detected", nil
	}
	return turn.ReasoningNone, "default", nil
}

// formatNames lists the registered tool-call formats, for the flag's help
// and errors.
func formatNames() string {
	var names []string
	for _, f := range turn.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}
