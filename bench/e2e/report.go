package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"conform/bench/runinfo"
)

// report is the JSON output: one object per mode, keyed by the mode name,
// plus the run's date and commit, its configuration, the skipped schemas
// and setup costs.
type report struct {
	runinfo.Stamp
	Unconstrained   *modeReport `json:"unconstrained"`
	Conform         *modeReport `json:"conform"`
	LlamacppGrammar *modeReport `json:"llamacpp_grammar"`
	// ConformWarm is the conform requests run again on the constraints the
	// conform run warmed (-modes ...,conform_warm); absent otherwise.
	ConformWarm *modeReport  `json:"conform_warm,omitempty"`
	Config      reportConfig `json:"config"`
	Skipped     struct {
		ConformRefused   int `json:"conform_refused"`   // skipped in every mode
		ValidatorRefused int `json:"validator_refused"` // skipped in every mode
		LlamaRefused     int `json:"llamacpp_refused"`  // run in (a) and (b); invalid in (c)
	} `json:"skipped"`
	// Prefill is the prompt-processing speed, measured once (-prefill).
	Prefill *prefillReport `json:"prefill,omitempty"`
	Setup   struct {
		ConformCompileP50ms   float64 `json:"conform_compile_p50_ms"`       // once per schema (cached by a server)
		LlamaConvertP50ms     float64 `json:"llamacpp_convert_p50_ms"`      // SchemaToGrammar, once per schema
		LlamaGrammarInitP50ms float64 `json:"llamacpp_grammar_init_p50_ms"` // NewGrammar, once per request
	} `json:"setup"`
}

// prefillReport is the median speed of decoding a Tokens-token prompt.
type prefillReport struct {
	Tokens int     `json:"tokens"`
	Rounds int     `json:"rounds"`
	TokS   float64 `json:"tok_s"`
}

type reportConfig struct {
	Model       string  `json:"model"`
	Maskbench   string  `json:"maskbench"`
	Schemas     int     `json:"schemas"`  // picked from the file
	OfTotal     int     `json:"of_total"` // entries in the file (after -split)
	Run         int     `json:"run"`      // left after skipping
	Parallel    int     `json:"parallel"`
	MaxTokens   int     `json:"max_tokens"`
	Threads     int     `json:"threads"`
	Temperature float64 `json:"temperature"`
	Whitespace  string  `json:"whitespace"`
	Length      string  `json:"length"` // conform: unconstrained gets the Conform run's length; max: max_tokens
	// Modes are the modes run (-modes); the others' objects are zero.
	Modes        []string `json:"modes"`
	Vocab        int      `json:"vocab"`
	PromptTokens int      `json:"prompt_tokens"`
	// OverlapMasks and NoJumpForward are the runner's settings (-overlap,
	// -no-jump).
	OverlapMasks  bool `json:"overlap_masks"`
	NoJumpForward bool `json:"no_jump_forward"`
	// KVLayout is the KV cache layout the model was loaded with (-kv,
	// resolved): unified or per-sequence.
	KVLayout string `json:"kv_layout"`
	// Backend names the devices the layers run on (llama.Backends.Summary:
	// "CPU", or "CUDA: CUDA0 (NVIDIA H200, ...)"), GPULayers the layers
	// llama.cpp was asked to offload (-n-gpu-layers resolved; 0 without a
	// GPU device).
	Backend   string `json:"backend"`
	GPULayers int    `json:"gpu_layers"`
}

// modeReport is one mode's figures. ValidRate and OverheadPct are absent
// for the unconstrained mode.
type modeReport struct {
	Requests int     `json:"requests"`
	Tokens   int     `json:"tokens"`
	TokS     float64 `json:"tok_s"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	// TTFTP50ms is the time to first token of the requests that got a
	// slot at once (the prompt is mostly reused from the KV cache after
	// the first request: it is one step plus the first mask, not prefill).
	TTFTP50ms float64 `json:"ttft_p50_ms"`
	TTFTP99ms float64 `json:"ttft_p99_ms"`
	// TTFTColdP50ms and TTFTColdP99ms (conform only) add each schema's
	// compile time to its request's TTFT: a server's first request with
	// that schema (constraint cache miss). The conform TTFT itself has the
	// compiled constraint but builds its DFA states and masks as it goes;
	// conform_warm's TTFT is a cache hit.
	TTFTColdP50ms *float64 `json:"ttft_cold_p50_ms,omitempty"`
	TTFTColdP99ms *float64 `json:"ttft_cold_p99_ms,omitempty"`
	// StepUs is the mean runner step; DecodeUsPerStep and LogitsUsPerStep
	// its time inside Engine.Decode and Engine.Logits (the row copies; with
	// a GPU backend the wait for the device too).
	StepUs          float64 `json:"step_us"`
	DecodeUsPerStep float64 `json:"decode_us_per_step"`
	LogitsUsPerStep float64 `json:"logits_us_per_step"`
	// DecodeTokS is tokens per second within requests: each request's
	// tokens after its first over the time from its first token to its
	// last (per sequence; TokS is the whole batch's throughput).
	DecodeTokS float64 `json:"decode_tok_s"`
	// ConstraintUsPerToken is the constraint's time (every call) per output
	// token; ConstraintSharePct its share of the runner's step time.
	ConstraintUsPerToken float64 `json:"constraint_us_per_token"`
	ConstraintSharePct   float64 `json:"constraint_share_pct"`
	ForcedSharePct       float64 `json:"forced_share_pct"`
	// CompleteRate is the share of requests that ended on their own (EOS,
	// a terminated constraint), not cut by the token budget. ValidRate is
	// the share of those complete outputs that validate; ValidOfAll the
	// share of all requests (cut ones count as invalid).
	CompleteRate float64  `json:"complete_rate"`
	ValidRate    *float64 `json:"valid_rate,omitempty"`
	ValidOfAll   *float64 `json:"valid_of_all,omitempty"`
	// OverheadPct is the time per output token over the unconstrained
	// mode's, in percent: 100 × (unconstrained tok/s ÷ this tok/s − 1).
	OverheadPct *float64 `json:"overhead_pct,omitempty"`
	Errors      int      `json:"errors"`
	// Unchecked counts complete outputs the validator panicked on; they are
	// left out of CompleteRate and ValidRate.
	Unchecked int     `json:"unchecked"`
	Refused   int     `json:"refused,omitempty"` // llama.cpp could not make the grammar
	SetupMs   float64 `json:"setup_ms"`          // matcher / grammar creation, all requests
}

func (r *report) fill(stats [numModes]modeStats) {
	var ms [numModes]*modeReport
	for m := range numModes {
		st := stats[m]
		mr := &modeReport{Requests: st.requests, Tokens: st.tokens, Errors: st.errors, Refused: st.refused, Unchecked: st.unchecked,
			P50ms: percentile(st.intervals, 50), P99ms: percentile(st.intervals, 99), SetupMs: st.setup.Seconds() * 1e3}
		if st.wall > 0 {
			mr.TokS = float64(st.tokens) / st.wall.Seconds()
		}
		mr.TTFTP50ms = percentile(st.ttft, 50)
		mr.TTFTP99ms = percentile(st.ttft, 99)
		if len(st.ttftCold) > 0 {
			c50, c99 := percentile(st.ttftCold, 50), percentile(st.ttftCold, 99)
			mr.TTFTColdP50ms, mr.TTFTColdP99ms = &c50, &c99
		}
		if st.steps > 0 {
			mr.StepUs = float64(st.step.Microseconds()) / float64(st.steps)
			mr.DecodeUsPerStep = float64(st.decodeTime.Microseconds()) / float64(st.steps)
			mr.LogitsUsPerStep = float64(st.logitsTime.Microseconds()) / float64(st.steps)
		}
		if st.decodeMs > 0 {
			mr.DecodeTokS = float64(st.decodeTokens) / (st.decodeMs / 1e3)
		}
		if st.tokens > 0 {
			mr.ConstraintUsPerToken = float64(st.constraint.Microseconds()) / float64(st.tokens)
			mr.ForcedSharePct = 100 * float64(st.forced) / float64(st.tokens)
		}
		if st.step > 0 {
			mr.ConstraintSharePct = 100 * st.constraint.Seconds() / st.step.Seconds()
		}
		if n := st.requests - st.unchecked; n > 0 {
			mr.CompleteRate = float64(st.complete) / float64(n)
		}
		if m != modeUnconstrained && st.complete > 0 {
			vr := float64(st.valid) / float64(st.complete)
			mr.ValidRate = &vr
			vt := float64(st.valid) / float64(st.requests-st.unchecked)
			mr.ValidOfAll = &vt
		}
		ms[m] = mr
	}
	for m := modeConform; m < numModes; m++ {
		if ms[m].TokS > 0 {
			o := 100 * (ms[modeUnconstrained].TokS/ms[m].TokS - 1)
			ms[m].OverheadPct = &o
		}
	}
	r.Unconstrained, r.Conform, r.LlamacppGrammar = ms[modeUnconstrained], ms[modeConform], ms[modeLlama]
	if slices.Contains(r.Config.Modes, modeNames[modeConformWarm]) {
		r.ConformWarm = ms[modeConformWarm]
	}
}

func (r *report) print(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "model %s, vocabulary %d, %d threads, parallel %d, max tokens %d, temperature %g, whitespace %s, prompt %d tokens, length %s, overlap %v, jump-forward %v, KV %s, backend %s, GPU layers %d\n",
		c.Model, c.Vocab, c.Threads, c.Parallel, c.MaxTokens, c.Temperature, c.Whitespace, c.PromptTokens, c.Length, c.OverlapMasks, !c.NoJumpForward, c.KVLayout, c.Backend, c.GPULayers)
	if p := r.Prefill; p != nil {
		fmt.Fprintf(w, "prefill: %.1f tok/s (a %d-token prompt in one batch, median of %d)\n", p.TokS, p.Tokens, p.Rounds)
	}
	fmt.Fprintf(w, "schemas: %d picked of %d, %d run; skipped: %d refused by Conform, %d by the validator; llama.cpp refused %d (invalid in its column)\n",
		c.Schemas, c.OfTotal, c.Run, r.Skipped.ConformRefused, r.Skipped.ValidatorRefused, r.Skipped.LlamaRefused)
	fmt.Fprintf(w, "setup p50: Conform compile %.1f ms/schema, llama.cpp SchemaToGrammar %.1f ms/schema, NewGrammar %.1f ms/request\n\n",
		r.Setup.ConformCompileP50ms, r.Setup.LlamaConvertP50ms, r.Setup.LlamaGrammarInitP50ms)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\trequests\ttokens\ttok/s\tdecode tok/s\tTTFT ms\tp50 ms\tp99 ms\tconstraint µs/tok\tconstraint share\tforced\tcomplete\tvalid (of complete)\tvalid (of all)\toverhead\t")
	rows := []*modeReport{r.Unconstrained, r.Conform, r.LlamacppGrammar, r.ConformWarm}
	for i, mr := range rows {
		if mr == nil || !slices.Contains(c.Modes, modeNames[i]) {
			continue
		}
		valid, validAll, over := "-", "-", "-"
		if mr.ValidRate != nil {
			valid = fmt.Sprintf("%.1f%%", 100**mr.ValidRate)
			validAll = fmt.Sprintf("%.1f%%", 100**mr.ValidOfAll)
		}
		if mr.OverheadPct != nil {
			over = fmt.Sprintf("%+.1f%%", *mr.OverheadPct)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f%%\t%.1f%%\t%.1f%%\t%s\t%s\t%s\t\n",
			modeNames[i], mr.Requests, mr.Tokens, mr.TokS, mr.DecodeTokS, mr.TTFTP50ms, mr.P50ms, mr.P99ms, mr.ConstraintUsPerToken,
			mr.ConstraintSharePct, mr.ForcedSharePct, 100*mr.CompleteRate, valid, validAll, over)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tTTFT p50 ms\tTTFT p99 ms\tcold TTFT p50 ms\tcold TTFT p99 ms\tstep µs\tdecode µs/step\tlogits µs/step\t")
	for i, mr := range rows {
		if mr == nil || !slices.Contains(c.Modes, modeNames[i]) {
			continue
		}
		c50, c99 := "-", "-"
		if mr.TTFTColdP50ms != nil {
			c50, c99 = fmt.Sprintf("%.1f", *mr.TTFTColdP50ms), fmt.Sprintf("%.1f", *mr.TTFTColdP99ms)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%s\t%s\t%.0f\t%.0f\t%.0f\t\n", modeNames[i], mr.TTFTP50ms, mr.TTFTP99ms, c50, c99, mr.StepUs, mr.DecodeUsPerStep, mr.LogitsUsPerStep)
	}
	tw.Flush()
	if n := r.Conform.Unchecked + r.LlamacppGrammar.Unchecked; n > 0 {
		fmt.Fprintf(w, "\n%d complete outputs left unchecked: the validator panicked on them (Conform %d, llama.cpp %d)\n", n, r.Conform.Unchecked, r.LlamacppGrammar.Unchecked)
	}
	if r.Conform.ConstraintUsPerToken > 0 {
		fmt.Fprintf(w, "\nconstraint time per token: llama.cpp grammar / Conform = %.1f×\n", r.LlamacppGrammar.ConstraintUsPerToken/r.Conform.ConstraintUsPerToken)
	}
}
