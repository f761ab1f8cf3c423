// Command e2e measures what Conform's guarantee costs in real generation:
// for each MaskBench schema, with the same prompt, seed and token budget in
// one run, it generates (a) unconstrained, (b) constrained by Conform
// (grammar → fsm → token masks, with jump-forward) and (c) constrained by
// llama.cpp's own grammar sampler through the same binding
// (llama.SchemaToGrammar + NewGrammar, applied to the whole vocabulary at
// every step, as Ollama does), all through the same runner and model.
//
//	make e2e ARGS="[-limit N] [-parallel P] [-max-tokens T] [-json OUT.json] [-jsonl OUT.jsonl]"
//
// (a cgo build: the make target gives it llama.cpp's headers and CPU flags
// and makes the synthetic model; the flags are those below.)
//
// Like with like: with -length conform (the default) the unconstrained
// request of each schema is given exactly the token count its Conform run
// produced, so that (a) and (b) generate the same number of tokens per
// request and their tokens per second and per-token latency differ by the
// constraint only, not by sequence length and KV-cache size (a model with
// random weights rarely samples EOS unconstrained, so it runs to that
// budget; the token counts are printed). -length max gives every mode
// -max-tokens. llama.cpp's
// grammar (c) keeps -max-tokens: it completes at its own lengths.
//
// It prints the prefill speed (-prefill N: an N-token prompt decoded as one
// batch, median of rounds, once: it does not depend on the mode) and, per
// mode: output tokens per second of wall time (the batch's throughput),
// decode tokens per second within requests (each request's tokens after
// its first over the time from its first token to its last), the time to
// first token of requests that got a slot at once (one step and the first
// mask: the short prompt is reused from the KV cache), the per-token
// latency p50/p99 (intervals between a request's consecutive token events,
// as a streaming client sees them; forced tokens released in one step come
// out together), the constraint's share of the runner's step time and its
// time per output token (every Constraint call, timed by a wrapper), the
// forced-token share, and for (b) and (c) the validity rate of the outputs
// checked with santhosh-tekuri/jsonschema (formats asserted): valid_rate
// is the share of the outputs that completed (ended on EOS or a terminated
// constraint) that validate, complete_rate says how many completed, and
// valid_of_all is the share of all requests that completed and validate (a
// request cut by the token budget counts as invalid even when its prefix
// happens to validate). -jsonl FILE writes one line per schema with every
// mode's request (tokens, finish, valid, TTFT, decode time, constraint
// time) for plots. A model with random weights
// rambles inside strings, so many outputs are cut; what the guarantee
// promises is that every output that completes validates.
//
// With -whitespace compact (the default) both constrained modes allow no
// whitespace between JSON tokens: Conform compiles with grammar.Compact,
// and llama.cpp's grammar gets its "space" rule replaced by the empty
// string. A synthetic model with random weights picks whitespace tokens
// often, and with flexible whitespace most outputs would run out of token
// budget before completing; -whitespace flexible keeps both engines'
// defaults (Conform: at most 20 characters per gap; llama.cpp: a space, or
// up to two newlines and 20 blanks).
//
// -modes ...,conform_warm runs each chunk's conform requests a second
// time on the same compiled constraints, whose DFA states and masks the
// first run built: a server's constraint-cache hit. The second table
// gives TTFT p50/p99 per mode, the conform run's cold TTFT (each schema's
// compile time added to its first request's TTFT: a cache miss), and the
// mean step with its time inside Engine.Decode and Engine.Logits (the row
// copy; with a GPU backend also the wait for the device, as llama_decode
// returns once the graph is queued).
//
// GPU: -n-gpu-layers -1 offloads every layer to the GPU of the backend
// library in -backend-dir (make build-cuda writes build/lib); without one
// the run warns and stays on the CPU, and the header names the backend.
// bench/gpu.sh runs the GPU measurement (batch sizes 1 to 64, a Llama-3.1-
// 8B-shaped Q4_0 model) in one command.
//
// Schemas are taken evenly spaced through the file (-limit N of them).
// Schemas Conform refuses, or the validator cannot compile, are skipped for
// all three modes and counted. Schemas llama.cpp's converter refuses still
// run in (a) and (b), and count as invalid outputs of (c).
//
// To keep slow drift of a shared machine out of the comparison, schemas run
// in chunks of -chunk requests; within a chunk the three modes run one
// after the other, each with the runner's continuous batching over
// -parallel slots.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.model, "model", "", "GGUF model file (required)")
	flag.StringVar(&cfg.maskbench, "maskbench", "", "MaskBench JSONL file (required)")
	flag.IntVar(&cfg.limit, "limit", 20, "schemas to run, evenly spaced through the file (0 = all)")
	flag.IntVar(&cfg.parallel, "parallel", 1, "sequences decoded together (runner slots)")
	flag.IntVar(&cfg.maxTokens, "max-tokens", 64, "token budget of every request")
	flag.StringVar(&cfg.jsonOut, "json", "", "write the summary as JSON to this file")
	flag.IntVar(&cfg.threads, "threads", runtime.NumCPU(), "llama.cpp decode threads")
	flag.IntVar(&cfg.chunk, "chunk", 0, "requests per mode and round (0 = 4×parallel, at least 4)")
	flag.Float64Var(&cfg.temperature, "temperature", 1, "sampling temperature")
	flag.Uint64Var(&cfg.seed, "seed", 1, "base seed; request i uses seed+i in every mode")
	flag.StringVar(&cfg.split, "split", "", "only schemas whose split has this prefix")
	flag.StringVar(&cfg.whitespace, "whitespace", "compact", "whitespace between JSON tokens in (b) and (c): compact (none) or flexible (each engine's default)")
	flag.StringVar(&cfg.length, "length", "conform", "unconstrained request length: conform (each schema's Conform run's token count) or max (-max-tokens)")
	flag.StringVar(&cfg.jsonlOut, "jsonl", "", "write one JSON line per schema, every mode's request, to this file")
	flag.IntVar(&cfg.prefill, "prefill", 128, "measure prefill on a prompt of this many tokens (0: skip)")
	flag.BoolVar(&cfg.verbose, "v", false, "print every output")
	flag.StringVar(&cfg.overlap, "overlap", "auto", "fill the masks during the decode (runner.Config.OverlapMasks): auto (llamaengine's choice), on or off")
	flag.StringVar(&cfg.kv, "kv", "auto", "KV cache layout (llama.Params.KVLayout): auto (unified at -parallel > 1), unified or per-sequence")
	flag.BoolVar(&cfg.noJump, "no-jump", false, "no jump-forward: forced tokens are sampled one a step (runner.Config.NoJumpForward)")
	modes := flag.String("modes", "all", "modes to run: all (unconstrained, conform, llamacpp_grammar), or a comma-separated list of those and conform_warm (conform again on the warmed constraints: a cache hit)")
	flag.IntVar(&cfg.gpuLayers, "n-gpu-layers", 0, "layers offloaded to a GPU (-1: all; needs a backend library in -backend-dir)")
	flag.StringVar(&cfg.backendDir, "backend-dir", "", "folder of llama.cpp backend libraries (libggml-cuda.so: make build-cuda writes build/lib)")
	flag.Parse()
	if cfg.model == "" || cfg.maskbench == "" {
		fmt.Fprintln(os.Stderr, "e2e: -model and -maskbench are required")
		flag.Usage()
		os.Exit(2)
	}
	if cfg.parallel < 1 || cfg.maxTokens < 1 || cfg.threads < 1 || cfg.limit < 0 || cfg.chunk < 0 || cfg.prefill < 0 {
		fmt.Fprintln(os.Stderr, "e2e: -parallel, -max-tokens and -threads must be positive, -limit, -chunk and -prefill not negative")
		os.Exit(2)
	}
	if cfg.overlap != "auto" && cfg.overlap != "on" && cfg.overlap != "off" {
		fmt.Fprintln(os.Stderr, "e2e: -overlap must be auto, on or off")
		os.Exit(2)
	}
	if cfg.length != "conform" && cfg.length != "max" {
		fmt.Fprintln(os.Stderr, "e2e: -length must be conform or max")
		os.Exit(2)
	}
	var err error
	if cfg.modes, err = parseModes(*modes, cfg.length); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	if cfg.whitespace != "compact" && cfg.whitespace != "flexible" {
		fmt.Fprintln(os.Stderr, "e2e: -whitespace must be compact or flexible")
		os.Exit(2)
	}
	if cfg.chunk == 0 {
		cfg.chunk = max(4*cfg.parallel, 4)
	}
	// llama.cpp logs through slog at its level: keep warnings only.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}
