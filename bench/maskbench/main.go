// Command maskbench runs the MaskBench protocol over a JSONL file in the
// format of shared/maskbench/dev.jsonl and prints Conform's coverage,
// correctness and mask-speed figures.
//
//	go run ./bench/maskbench -data FILE -tokenizer PATH/tokenizer.json [-limit N] [-timeout 30s] [-json OUT.json]
//
// For each schema: compile (TTFM = from the start of the compile until the
// first mask is ready); then for each test: reset, tokenize `text` without
// special tokens, and for each token fill the mask, check that the token is
// allowed, accept it (TBM = time of mask + accept, per token). A schema
// passes when it compiled, every valid test was fully accepted and ended in
// an accepting state (EOS allowed), every invalid test was rejected at some
// token (MaskBench's rule), and nothing timed out.
//
// -json FILE writes the report: the counts, the TBM percentiles and a
// histogram of every TBM sample (tbm_hist, see bench/tbmhist), each schema's
// status and TTFM, the engine, and the date and commit of the run
// (bench/plot draws its CDFs from these).
//
// -unknown-formats annotate reads unknown format values as annotations (a
// plain string, as draft 2020-12 does without the format-assertion
// vocabulary) for the schemas that strict mode refuses only for them; the
// default, refuse, is strict mode, the protocol of the ratchet.
//
// -write-status FILE writes each schema's status in the format of the
// conformance ratchet (testdata/status.tsv, which TestConformanceRatchet
// compares a fresh run with).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"conform/grammar"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.data, "data", "", "MaskBench JSONL file (required)")
	flag.StringVar(&cfg.tokenizer, "tokenizer", "", "HF tokenizer.json (required)")
	flag.StringVar(&cfg.tokens, "tokens", "", "optional reference token ids (dev.tokens.*.jsonl) used instead of the encoder")
	flag.IntVar(&cfg.limit, "limit", 0, "process at most N schemas (0 = all)")
	flag.DurationVar(&cfg.timeout, "timeout", defaultTimeout, "time budget per schema (compile and all tests)")
	flag.StringVar(&cfg.jsonOut, "json", "", "write the results as JSON to this file")
	flag.StringVar(&cfg.status, "write-status", "", "write each schema's status (the conformance ratchet's format, bench/maskbench/"+statusFile+") to this file")
	flag.IntVar(&cfg.threads, "threads", 1, "schemas processed in parallel")
	flag.StringVar(&cfg.engine, "engine", "conform", "constraint engine: conform")
	flag.DurationVar(&cfg.slow, "slow", 0, "print each token whose mask took at least this long (0 = none), with the text before it")
	flag.BoolVar(&cfg.verbose, "v", false, "print one line per failing schema")
	flag.StringVar(&cfg.split, "split", "", "only schemas whose split has this prefix")
	flag.IntVar(&cfg.every, "every", 1, "take every N-th schema (a sample across all splits)")
	flag.IntVar(&cfg.maxWS, "max-ws", 0, "grammar MaxWhitespace (0 = the grammar default)")
	flag.IntVar(&cfg.anyDepth, "any-depth", 0, "grammar AnyValueDepth (0 = the grammar default)")
	flag.IntVar(&cfg.maxString, "max-string", 0, "grammar MaxStringLength (0 = the grammar default)")
	flag.IntVar(&cfg.maxDepth, "max-depth", 0, "grammar MaxDepth, recursion unrolling (0 = the grammar default)")
	flag.BoolVar(&cfg.phases, "phases", false, "print where time to first mask goes, by phase (conform engine)")
	flag.BoolVar(&cfg.eager, "eager", false, "build each schema's whole minimized DFA before the first mask (the pre-lazy path, for comparison)")
	flag.BoolVar(&cfg.noPrebuild, "no-prebuild", false, "build every deferred operand when a mask first reaches it, none in the compile (for comparison)")
	order := flag.String("property-order", "any", "object property order the constraint accepts: any (what a validator accepts, which MaskBench's instances need) or schema (the server's default)")
	unknownFormats := flag.String("unknown-formats", "refuse", "unknown format values: refuse (strict mode, the default) or annotate (read as annotations, as draft 2020-12 does, where that is the only relaxation a schema needs)")
	idsFile := flag.String("ids", "", "file of schema ids, one per line: run only those")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	cfg.slowOut = os.Stderr
	switch *order {
	case "any":
		cfg.order = grammar.OrderAny
	case "schema":
		cfg.order = grammar.OrderSchema
	default:
		fmt.Fprintln(os.Stderr, "maskbench: -property-order must be any or schema")
		os.Exit(2)
	}
	switch *unknownFormats {
	case "refuse":
	case "annotate":
		cfg.annotateFormats = true
	default:
		fmt.Fprintln(os.Stderr, "maskbench: -unknown-formats must be refuse or annotate")
		os.Exit(2)
	}
	if *idsFile != "" {
		b, err := os.ReadFile(*idsFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "maskbench:", err)
			os.Exit(2)
		}
		cfg.ids = map[string]bool{}
		for _, id := range strings.Fields(string(b)) {
			cfg.ids[id] = true
		}
	}
	if cfg.data == "" || cfg.tokenizer == "" {
		fmt.Fprintln(os.Stderr, "maskbench: -data and -tokenizer are required")
		flag.Usage()
		os.Exit(2)
	}
	if cfg.threads < 1 {
		cfg.threads = 1
	}
	runtime.GOMAXPROCS(max(cfg.threads, 1) + 1) // +1 for the GC and the timer
	// A soft memory limit keeps the heap of one big constraint from inflating
	// the peak RSS of the whole run; the default GOGC applies below it.
	debug.SetMemoryLimit(3 << 30)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "maskbench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "maskbench:", err)
		os.Exit(1)
	}
}
