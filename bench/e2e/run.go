package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/bench/runinfo"
	"conform/fsm"
	"conform/grammar"
	"conform/internal/llama"
	"conform/internal/llamaengine"
	"conform/runner"
	"conform/sampler"
)

type config struct {
	model, maskbench, jsonOut, split    string
	whitespace                          string
	limit, parallel, maxTokens, threads int
	chunk                               int
	length                              string // "conform" or "max"
	jsonlOut                            string
	prefill                             int // tokens of the prefill measurement (0: none)
	temperature                         float64
	seed                                uint64
	verbose                             bool
	overlap                             string         // auto, on, off: runner.Config.OverlapMasks
	noJump                              bool           // runner.Config.NoJumpForward
	kv                                  string         // auto, unified, per-sequence: llama.Params.KVLayout
	modes                               [numModes]bool // the modes to run (-modes)
	gpuLayers                           int            // llama.Params.GPULayers (-n-gpu-layers)
	backendDir                          string         // llama.Params.BackendDir (-backend-dir)
}

// parseModes reads -modes: "all" or a comma-separated list of mode names.
// The unconstrained mode alone needs -length max: with -length conform its
// lengths come from the Conform run.
func parseModes(list, length string) ([numModes]bool, error) {
	var on [numModes]bool
	if list == "all" {
		on[modeUnconstrained], on[modeConform], on[modeLlama] = true, true, true
		return on, nil
	}
	for _, name := range strings.Split(list, ",") {
		i := slices.Index(modeNames[:], strings.TrimSpace(name))
		if i < 0 {
			return on, fmt.Errorf("-modes: unknown mode %q (want all, or some of %s)", name, strings.Join(modeNames[:], ","))
		}
		on[i] = true
	}
	if on[modeConformWarm] && !on[modeConform] {
		return on, fmt.Errorf("-modes: conform_warm needs conform (it reuses the constraints conform warmed)")
	}
	if on[modeUnconstrained] && !on[modeConform] && length == "conform" {
		return on, fmt.Errorf("-modes: unconstrained without conform needs -length max (with -length conform it takes the Conform run's lengths)")
	}
	return on, nil
}

// modeList names the modes run, in modeNames order.
func (cfg *config) modeList() []string {
	var l []string
	for m, on := range cfg.modes {
		if on {
			l = append(l, modeNames[m])
		}
	}
	return l
}

// compileTimeout bounds Conform's compile of one schema; a schema that
// needs longer is counted as refused.
const compileTimeout = 20 * time.Second

// prompt is the same for every request. It is short (a few tokens), so
// that prefill is negligible next to generation, and after the first
// request the runner reuses its KV cells.
const prompt = "Reply with one JSON value that matches the schema.\n"

// mode is one of the three ways of generating.
type mode int

const (
	modeUnconstrained mode = iota
	modeConform
	modeLlama
	// modeConformWarm runs the conform requests again on the same compiled
	// constraints, whose lazily built DFA states and masks the conform
	// run made: a server's constraint cache hit. Not in "all".
	modeConformWarm
	numModes
)

var modeNames = [numModes]string{"unconstrained", "conform", "llamacpp_grammar", "conform_warm"}

// runOrder is the order of the modes within a chunk: Conform first, so
// that with -length conform the unconstrained run of each schema can be
// given exactly the Conform run's token count, and its warm run next.
var runOrder = [numModes]mode{modeConform, modeConformWarm, modeLlama, modeUnconstrained}

// job is one schema, ready for the three modes.
type job struct {
	id, split string
	index     int // request index: the seed is cfg.seed+index in every mode
	schema    json.RawMessage
	conform   *fsm.Constraint
	compileMs float64 // Conform's compile of the schema (CompileSchema and CompileConstraint)
	gbnf      string  // llama.cpp's grammar; "" when its converter refused
	validator *jsonschema.Schema
}

// outcome is one finished request.
type outcome struct {
	tokens, forced int
	finish         runner.FinishReason
	err            error
	text           string
	intervals      []float64 // ms between consecutive token events
	ttft           float64   // ms from Submit to the first token event
	decode         float64   // ms from the first token event to the last
	queued         bool      // submitted while every slot was taken: ttft includes the wait
	constraint     time.Duration
	valid          bool
	unchecked      bool // the validator failed on it (see errUnchecked)
}

// modeStats accumulates one mode over the run.
type modeStats struct {
	requests, complete, valid, tokens, forced, errors, refused int
	unchecked                                                  int
	wall, step, constraint, setup                              time.Duration
	steps                                                      int64
	decodeTime, logitsTime                                     time.Duration // inside Engine.Decode and Engine.Logits
	intervals                                                  []float64
	ttft                                                       []float64 // of requests that did not queue
	ttftCold                                                   []float64 // conform: compile + ttft, of those
	decodeTokens                                               int       // tokens after each request's first
	decodeMs                                                   float64   // the time they took
}

// timed wraps a Guide and adds the time of every call (IsTerminated
// and IsAccepting included: llama.cpp's grammar computes its mask there).
// Only the runner's loop goroutine calls it; the total is read after the
// request's final event.
type timed struct {
	c runner.Guide
	d atomic.Int64
}

func (t *timed) since(t0 time.Time) { t.d.Add(int64(time.Since(t0))) }

func (t *timed) FillMask(dst []uint64) error {
	defer t.since(time.Now())
	return t.c.FillMask(dst)
}

func (t *timed) Accept(tok runner.TokenID) error {
	defer t.since(time.Now())
	return t.c.Accept(tok)
}

func (t *timed) IsAccepting() bool {
	defer t.since(time.Now())
	return t.c.IsAccepting()
}

func (t *timed) IsTerminated() bool {
	defer t.since(time.Now())
	return t.c.IsTerminated()
}

func (t *timed) Forced(n int) []runner.TokenID {
	defer t.since(time.Now())
	return t.c.Forced(n)
}

func (t *timed) Rollback(n int) error { return t.c.Rollback(n) }

func run(cfg config, w io.Writer) error {
	entries, total, err := readEntries(cfg)
	if err != nil {
		return err
	}
	seqCtx := max(256, cfg.maxTokens+128)
	kv, err := llama.ParseKVLayout(cfg.kv)
	if err != nil {
		return fmt.Errorf("-kv: %w", err)
	}
	eng, err := llamaengine.Load(cfg.model, llama.Params{ContextSize: cfg.parallel * seqCtx, Parallel: cfg.parallel, Threads: cfg.threads, KVLayout: kv,
		GPULayers: cfg.gpuLayers, BackendDir: cfg.backendDir})
	if err != nil {
		return err
	}
	defer eng.Close()
	v := eng.Vocabulary()
	idx, err := fsm.NewTokenIndex(v.Tokens, eng.EOS(), v.Width)
	if err != nil {
		return err
	}
	gv := eng.GrammarVocab()
	promptIDs, err := eng.Tokenize(prompt, true, false)
	if err != nil {
		return err
	}

	rep := &report{Stamp: runinfo.Now(), Config: reportConfig{
		Model: cfg.model, Maskbench: cfg.maskbench, Schemas: len(entries), OfTotal: total,
		Parallel: cfg.parallel, MaxTokens: cfg.maxTokens, Threads: cfg.threads, Temperature: cfg.temperature, Whitespace: cfg.whitespace,
		Vocab: v.Width, PromptTokens: len(promptIDs), Length: cfg.length, NoJumpForward: cfg.noJump, Modes: cfg.modeList(),
		GPULayers: eng.Model().Placement().GPULayers, Backend: eng.Model().Placement().Backends.Summary(),
	}}
	if w := eng.Model().Placement().Warning; w != "" {
		fmt.Fprintln(os.Stderr, "e2e: warning:", w)
	}
	var jobs []*job
	var conformCompile, llamaConvert []float64
	for _, e := range entries {
		j := &job{id: e.ID, split: e.Split, index: len(jobs), schema: e.Schema}
		t0 := time.Now()
		c, err := compileConform(e.Schema, idx, cfg.whitespace == "compact")
		if err != nil {
			rep.Skipped.ConformRefused++
			if cfg.verbose {
				fmt.Fprintf(w, "skip %s: conform: %v\n", e.ID, err)
			}
			continue
		}
		j.compileMs = ms(time.Since(t0))
		conformCompile = append(conformCompile, j.compileMs)
		j.conform = c
		if j.validator, err = compileValidator(e.Schema); err != nil {
			rep.Skipped.ValidatorRefused++
			if cfg.verbose {
				fmt.Fprintf(w, "skip %s: validator: %v\n", e.ID, err)
			}
			continue
		}
		t0 = time.Now()
		if g, err := llama.SchemaToGrammar(e.Schema); err == nil {
			j.gbnf = string(g)
			if cfg.whitespace == "compact" {
				j.gbnf = compactGBNF(j.gbnf)
			}
			llamaConvert = append(llamaConvert, ms(time.Since(t0)))
		} else {
			rep.Skipped.LlamaRefused++
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return errors.New("no schema left to run")
	}
	rep.Config.Run = len(jobs)
	rep.Setup.ConformCompileP50ms = percentile(conformCompile, 50)
	rep.Setup.LlamaConvertP50ms = percentile(llamaConvert, 50)

	if cfg.prefill > 0 {
		if rep.Prefill, err = measurePrefill(eng, promptIDs, min(cfg.prefill, seqCtx-1)); err != nil {
			return err
		}
	}

	rcfg := eng.RunnerConfig()
	switch cfg.overlap {
	case "on":
		rcfg.OverlapMasks = true
	case "off":
		rcfg.OverlapMasks = false
	}
	rcfg.NoJumpForward = cfg.noJump
	rep.Config.OverlapMasks = rcfg.OverlapMasks
	rep.Config.KVLayout = eng.Model().Params().KVLayout.String()
	r, err := runner.New(eng, rcfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	var stats [numModes]modeStats
	var llamaInit []float64
	var jsonl *json.Encoder
	if cfg.jsonlOut != "" {
		f, err := os.Create(cfg.jsonlOut)
		if err != nil {
			return err
		}
		defer f.Close()
		jsonl = json.NewEncoder(f)
	}
	params := func(j *job) sampler.Params {
		return sampler.Params{Temperature: sampler.Temp(cfg.temperature), Seed: cfg.seed + uint64(j.index)}
	}
	for lo := 0; lo < len(jobs); lo += cfg.chunk {
		chunk := jobs[lo:min(lo+cfg.chunk, len(jobs))]
		lines := make([]schemaLine, len(chunk))
		conformTokens := make([]int, len(chunk))
		for i, j := range chunk {
			lines[i] = schemaLine{ID: j.id, Split: j.split}
		}
		for _, m := range runOrder {
			if !cfg.modes[m] {
				continue
			}
			st := &stats[m]
			reqs := make([]runner.Request, 0, len(chunk))
			wrappers := make([]*timed, 0, len(chunk))
			var grammars []*llamaengine.GrammarConstraint
			var owners []int // chunk index of each request
			for ci, j := range chunk {
				req := runner.Request{Prompt: promptIDs, MaxTokens: cfg.maxTokens, Params: params(j)}
				switch m {
				case modeConform, modeConformWarm:
					t0 := time.Now()
					tw := &timed{c: j.conform.NewMatcher()}
					st.setup += time.Since(t0)
					req.Guide, wrappers = tw, append(wrappers, tw)
				case modeLlama:
					if j.gbnf == "" {
						st.requests++
						st.refused++
						continue
					}
					t0 := time.Now()
					gc, err := llamaengine.NewGrammarConstraint(j.gbnf, gv)
					d := time.Since(t0)
					st.setup += d
					llamaInit = append(llamaInit, ms(d))
					if err != nil {
						st.requests++
						st.refused++
						if cfg.verbose {
							fmt.Fprintf(w, "%s: llama.cpp grammar: %v\n", j.id, err)
						}
						continue
					}
					grammars = append(grammars, gc)
					tw := &timed{c: gc}
					req.Guide, wrappers = tw, append(wrappers, tw)
				default:
					if cfg.length == "conform" {
						// Exactly the Conform run's length, so that tok/s
						// and per-token latency differ by the constraint
						// only, not by sequence length and KV size.
						req.MaxTokens = max(1, conformTokens[ci])
					}
					wrappers = append(wrappers, nil)
				}
				reqs = append(reqs, req)
				owners = append(owners, ci)
			}
			before := r.Stats()
			t0 := time.Now()
			outs, err := generate(r, reqs, cfg.parallel)
			wall := time.Since(t0)
			after := r.Stats()
			for _, gc := range grammars {
				gc.Close()
			}
			if err != nil {
				return err
			}
			st.wall += wall
			st.step += after.StepTime - before.StepTime
			st.steps += after.Steps - before.Steps
			st.decodeTime += after.DecodeTime - before.DecodeTime
			st.logitsTime += after.LogitsTime - before.LogitsTime
			for i, o := range outs {
				if tw := wrappers[i]; tw != nil {
					o.constraint = time.Duration(tw.d.Load())
				}
				ci := owners[i]
				j := chunk[ci]
				if m != modeUnconstrained {
					err := validate(j.validator, o.text)
					o.valid, o.unchecked = err == nil, errors.Is(err, errUnchecked)
				}
				if m == modeConform {
					conformTokens[ci] = o.tokens
				}
				st.add(o)
				if m == modeConform && !o.queued && o.tokens > 0 {
					st.ttftCold = append(st.ttftCold, j.compileMs+o.ttft)
				}
				lines[ci].set(m, o, reqs[i].MaxTokens)
				if cfg.verbose {
					fmt.Fprintf(w, "%-16s %-40s %-6s %3d tok valid=%-5v unchecked=%-5v %q\n", modeNames[m], j.id, o.finish, o.tokens, o.valid, o.unchecked, clip(o.text, 120))
				}
			}
		}
		if jsonl != nil {
			for _, l := range lines {
				if err := jsonl.Encode(l); err != nil {
					return err
				}
			}
		}
		fmt.Fprintf(os.Stderr, "e2e: %d/%d schemas done\n", min(lo+cfg.chunk, len(jobs)), len(jobs))
	}
	rep.Setup.LlamaGrammarInitP50ms = percentile(llamaInit, 50)
	rep.fill(stats)
	rep.print(w)
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (st *modeStats) add(o outcome) {
	st.requests++
	st.tokens += o.tokens
	st.forced += o.forced
	st.constraint += o.constraint
	st.intervals = append(st.intervals, o.intervals...)
	if o.tokens > 0 && !o.queued {
		st.ttft = append(st.ttft, o.ttft)
	}
	if o.tokens > 1 {
		st.decodeTokens += o.tokens - 1
		st.decodeMs += o.decode
	}
	if o.complete() && o.unchecked {
		st.unchecked++ // neither valid nor invalid: left out of the rates
	} else if o.complete() {
		st.complete++
		if o.valid {
			// Valid among the complete only: an output cut by the token
			// budget that happens to validate (a number, a prefix that is
			// itself a value) is not a guarantee kept.
			st.valid++
		}
	}
	if o.finish == runner.FinishError {
		st.errors++
	}
}

// complete reports whether the request ended on its own (EOS, a stop
// sequence, a terminated constraint) rather than by the token budget, an
// error or a cancellation.
func (o outcome) complete() bool {
	switch o.finish {
	case runner.FinishEOS, runner.FinishConstraint, runner.FinishStop:
		return true
	}
	return false
}

// schemaLine is one line of -jsonl: a schema with every mode's request.
type schemaLine struct {
	ID            string       `json:"id"`
	Split         string       `json:"split"`
	Unconstrained *lineRequest `json:"unconstrained,omitempty"`
	Conform       *lineRequest `json:"conform,omitempty"`
	Llama         *lineRequest `json:"llamacpp_grammar,omitempty"`
	ConformWarm   *lineRequest `json:"conform_warm,omitempty"`
}

// lineRequest is one request's figures in a schemaLine.
type lineRequest struct {
	MaxTokens    int     `json:"max_tokens"`
	Tokens       int     `json:"tokens"`
	Forced       int     `json:"forced"`
	Finish       string  `json:"finish"`
	Complete     bool    `json:"complete"`
	Valid        *bool   `json:"valid,omitempty"` // absent for unconstrained output
	TTFTms       float64 `json:"ttft_ms"`
	Queued       bool    `json:"queued"` // ttft includes waiting for a slot
	DecodeMs     float64 `json:"decode_ms"`
	ConstraintUs float64 `json:"constraint_us"`
}

func (l *schemaLine) set(m mode, o outcome, maxTokens int) {
	lr := &lineRequest{MaxTokens: maxTokens, Tokens: o.tokens, Forced: o.forced, Finish: string(o.finish), Complete: o.complete(),
		TTFTms: o.ttft, Queued: o.queued, DecodeMs: o.decode, ConstraintUs: float64(o.constraint.Nanoseconds()) / 1e3}
	switch m {
	case modeUnconstrained:
		l.Unconstrained = lr
	case modeConform:
		lr.Valid = &o.valid
		l.Conform = lr
	case modeConformWarm:
		lr.Valid = &o.valid
		l.ConformWarm = lr
	case modeLlama:
		lr.Valid = &o.valid
		l.Llama = lr
	}
}

// generate submits every request at once (the runner keeps its slots full
// and queues the rest) and collects the outcomes in order. Requests past
// the first parallel ones are marked queued: their time to first token
// includes the wait for a slot.
func generate(r *runner.Runner, reqs []runner.Request, parallel int) ([]outcome, error) {
	outs := make([]outcome, len(reqs))
	chans := make([]<-chan runner.Event, len(reqs))
	starts := make([]time.Time, len(reqs))
	for i, req := range reqs {
		starts[i] = time.Now()
		ch, err := r.Submit(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("submit: %w", err)
		}
		chans[i] = ch
	}
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Go(func() {
			outs[i] = collect(ch, starts[i])
			outs[i].queued = i >= parallel
		})
	}
	wg.Wait()
	return outs, nil
}

func collect(ch <-chan runner.Event, start time.Time) outcome {
	var o outcome
	var text strings.Builder
	var first, last time.Time
	for ev := range ch {
		now := time.Now()
		text.WriteString(ev.Text)
		if ev.Finish != "" {
			o.finish, o.err = ev.Finish, ev.Err
			if ev.Usage != nil {
				o.forced = ev.Usage.ForcedTokens
			}
			break
		}
		if !last.IsZero() {
			o.intervals = append(o.intervals, ms(now.Sub(last)))
		} else {
			first = now
			o.ttft = ms(now.Sub(start))
		}
		last = now
		o.tokens++
	}
	if o.tokens > 0 {
		o.decode = ms(last.Sub(first))
	}
	o.text = text.String()
	return o
}

// prefillRounds is how often the prefill batch is decoded; the median is
// reported, and the first round (cold caches) is left out.
const prefillRounds = 4

// measurePrefill decodes an n-token prompt (the bench prompt repeated) as
// one batch on sequence 0, logits for the last token only, as a server's
// prefill does; the same for every mode, so it is measured once, before
// the runner owns the engine.
func measurePrefill(eng runner.Engine, prompt []runner.TokenID, n int) (*prefillReport, error) {
	b := runner.Batch{}
	for i := range n {
		b.Tokens = append(b.Tokens, prompt[i%len(prompt)])
		b.Pos = append(b.Pos, i)
		b.Seq = append(b.Seq, 0)
		b.Logits = append(b.Logits, i == n-1)
	}
	var rates []float64
	for round := range prefillRounds {
		t0 := time.Now()
		if err := eng.Decode(b); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		if _, err := eng.Logits(n - 1); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		d := time.Since(t0)
		if err := eng.RemoveKV(0, 0, -1); err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		if round > 0 {
			rates = append(rates, float64(n)/d.Seconds())
		}
	}
	return &prefillReport{Tokens: n, Rounds: len(rates), TokS: percentile(rates, 50)}, nil
}

// compileConform is the compile a server does once per schema (and
// caches): JSON Schema → regex AST → DFA → constraint over the vocabulary.
func compileConform(schema []byte, idx *fsm.TokenIndex, compact bool) (*fsm.Constraint, error) {
	// Closed objects, as llama.cpp's converter makes them: a property the
	// schema does not name is allowed only when additionalProperties says
	// so. Both constrained modes then generate the same language of objects.
	opts := grammar.Options{Extras: grammar.ExtrasForbidden}
	if compact {
		opts.Whitespace = grammar.Compact
	}
	res, err := grammar.CompileSchema(schema, opts)
	if err != nil {
		return nil, err
	}
	return fsm.CompileConstraint(context.Background(), res.Node, idx, fsm.Options{Timeout: compileTimeout}, fsm.ConstraintOptions{})
}

// compactGBNF replaces the "space" rule of a grammar from llama.cpp's
// json-schema-to-grammar (every gap between JSON tokens refers to it) with
// the empty string.
func compactGBNF(g string) string {
	lines := strings.Split(g, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "space ::=") {
			lines[i] = `space ::= ""`
		}
	}
	return strings.Join(lines, "\n")
}

func compileValidator(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("schema.json")
}

// errUnchecked marks an output the validator could not check: it panicked
// (santhosh-tekuri/jsonschema v6.0.3 dereferences a nil big.Rat for some
// numbers, such as exponents too large for big.Rat.SetString).
var errUnchecked = errors.New("validator panicked")

func validate(v *jsonschema.Schema, text string) (err error) {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errUnchecked, p)
		}
	}()
	return v.Validate(inst)
}

type entry struct {
	ID     string          `json:"id"`
	Split  string          `json:"split"`
	Schema json.RawMessage `json:"schema"`
}

// readEntries reads the file and keeps cfg.limit entries evenly spaced
// through it (after the split filter), so that a short run still covers
// the splits. It also returns how many entries passed the filter.
func readEntries(cfg config) ([]entry, int, error) {
	f, err := os.Open(cfg.maskbench)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var all []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, 0, fmt.Errorf("%s line %d: %w", cfg.maskbench, len(all)+1, err)
		}
		if strings.HasPrefix(e.Split, cfg.split) {
			all = append(all, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	if cfg.limit == 0 || cfg.limit >= len(all) {
		return all, len(all), nil
	}
	out := make([]entry, 0, cfg.limit)
	for i := range cfg.limit {
		out = append(out, all[i*len(all)/cfg.limit])
	}
	return out, len(all), nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// percentile returns the p-th percentile (nearest rank) of xs, 0 if empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}
