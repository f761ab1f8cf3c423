package main

import (
	"conform/bench/runinfo"
	"conform/bench/tbmhist"
	"conform/grammar"

	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// defaultTimeout is the per-schema budget. MaskBench itself allows 15
// minutes; 30 s is enough to flag anything pathological on this machine
// while keeping a full run bounded.
const defaultTimeout = 30 * time.Second

type config struct {
	data, tokenizer, tokens, jsonOut, engine, split, status     string
	limit, threads, every, maxWS, anyDepth, maxDepth, maxString int
	order                                                       grammar.PropertyOrder
	timeout                                                     time.Duration
	slow                                                        time.Duration   // -slow: report masks slower than this
	slowOut                                                     io.Writer       // where -slow lines go (stderr)
	ids                                                         map[string]bool // -ids: only these schemas
	verbose, phases, eager, noPrebuild                          bool
	annotateFormats                                             bool // -unknown-formats annotate
}

// entry is one line of dev.jsonl.
type entry struct {
	ID     string          `json:"id"`
	Split  string          `json:"split"`
	Schema json.RawMessage `json:"schema"`
	Tests  []struct {
		Valid bool   `json:"valid"`
		Text  string `json:"text"`
	} `json:"tests"`
	refTokens [][]int32
}

// Status is the outcome of one schema.
type Status string

// The outcomes, as MaskBench counts them.
const (
	StatusPass         Status = "pass"
	StatusCompileError Status = "compile_error"
	StatusValidation   Status = "validation_error"   // a valid instance was rejected
	StatusInvalidation Status = "invalidation_error" // an invalid instance was accepted
	StatusTimeout      Status = "timeout"
)

type schemaResult struct {
	ID     string  `json:"id"`
	Split  string  `json:"split"`
	Status Status  `json:"status"`
	Cause  string  `json:"cause,omitempty"`
	Detail string  `json:"detail,omitempty"` // the compile error's message
	TTFMus float64 `json:"ttfm_us,omitempty"`
	MaxTBM float32 `json:"max_tbm_us,omitempty"`
	Tokens int     `json:"tokens"`
	// AcceptedNotFinal counts invalid tests whose every token was accepted
	// but that did not end in an accepting state (MaskBench counts these as
	// invalidation errors too; they are included in Status).
	AcceptedNotFinal int       `json:"accepted_not_final,omitempty"`
	tbm              []float32 // µs per token
}

func loadEntries(cfg config) ([]*entry, error) {
	f, err := os.Open(cfg.data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*entry
	line := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", cfg.data, len(out)+1, err)
		}
		if cfg.split != "" && !strings.HasPrefix(e.Split, cfg.split) {
			continue
		}
		if cfg.ids != nil && !cfg.ids[e.ID] {
			continue
		}
		if line++; cfg.every > 1 && (line-1)%cfg.every != 0 {
			continue
		}
		out = append(out, &e)
		if cfg.limit > 0 && len(out) >= cfg.limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cfg.tokens != "" {
		if err := attachRefTokens(cfg.tokens, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func attachRefTokens(path string, es []*entry) error {
	byID := make(map[string]*entry, len(es))
	for _, e := range es {
		byID[e.ID] = e
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			ID     string    `json:"id"`
			Tokens [][]int32 `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if e := byID[r.ID]; e != nil {
			e.refTokens = r.Tokens
		}
	}
	return sc.Err()
}

// run executes the protocol and prints the report.
func run(cfg config, w io.Writer) error {
	entries, err := loadEntries(cfg)
	if err != nil {
		return err
	}
	eng, err := newEngine(cfg)
	if err != nil {
		return err
	}
	stamp := runinfo.Now()
	start := time.Now()
	results := runAll(eng, entries, cfg)
	rep := summarize(results, time.Since(start))
	rep.Stamp, rep.Engine = stamp, cfg.engine
	rep.print(w, cfg)
	if ce, ok := eng.(*conformEngine); ok && ce.ph != nil {
		ce.ph.print(w)
	}
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if cfg.status != "" {
		if err := writeStatusFile(cfg.status, results); err != nil {
			return err
		}
	}
	return nil
}

// runAll runs the protocol over entries on cfg.threads goroutines and
// returns the results in the entries' order.
func runAll(eng engine, entries []*entry, cfg config) []*schemaResult {
	results := make([]*schemaResult, len(entries))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for t := 0; t < max(cfg.threads, 1); t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(entries) {
					return
				}
				results[i] = runSchema(eng, entries[i], cfg)
				if cfg.verbose && results[i].Status != StatusPass {
					fmt.Fprintf(os.Stderr, "%s\t%s\t%s\t%s\n", results[i].ID, results[i].Status, results[i].Cause, results[i].Detail)
				}
			}
		}()
	}
	wg.Wait()
	return results
}

func runSchema(eng engine, e *entry, cfg config) *schemaResult {
	r := &schemaResult{ID: e.ID, Split: e.Split}
	deadline := time.Now().Add(cfg.timeout)
	t0 := time.Now()
	c, err := eng.compile(e.Schema, deadline)
	ttfm := time.Since(t0)
	if err != nil {
		if errors.Is(err, errTimeout) || time.Now().After(deadline) {
			r.Status, r.Cause = StatusTimeout, "compile: "+err.Error()
			return r
		}
		r.Status, r.Cause, r.Detail = StatusCompileError, eng.cause(err), err.Error()
		return r
	}
	r.TTFMus = float64(ttfm.Nanoseconds()) / 1e3
	s := c.newSeq()
	mask := make([]uint64, (c.width()+63)/64)
	var validationErr, invalidationErr string
	for ti, test := range e.Tests {
		var toks []int32
		if e.refTokens != nil && ti < len(e.refTokens) {
			if e.refTokens[ti] == nil {
				continue // not valid UTF-8 for the reference tokenizer
			}
			toks = e.refTokens[ti]
		} else {
			toks = eng.encode(test.Text)
		}
		s.reset()
		accepted, at, why := true, 0, ""
		for i, tok := range toks {
			at = i
			t1 := time.Now()
			ferr := s.fillMask(mask)
			ok := ferr == nil && tok >= 0 && int(tok) < len(mask)*64 && mask[tok>>6]&(1<<(uint(tok)&63)) != 0
			if ok {
				if aerr := s.accept(tok); aerr != nil {
					ok, why = false, aerr.Error()
				}
			} else if ferr != nil {
				why = "mask: " + ferr.Error()
			} else {
				why = fmt.Sprintf("token %d (%q) not in the mask", tok, eng.tokenText(tok))
			}
			took := time.Since(t1)
			if cfg.slow > 0 && took >= cfg.slow {
				reportSlow(cfg.slowOut, eng, e.ID, ti, i, toks, took)
			}
			r.tbm = append(r.tbm, float32(took.Nanoseconds())/1e3)
			r.MaxTBM = max(r.MaxTBM, r.tbm[len(r.tbm)-1])
			r.Tokens++
			if !ok {
				accepted = false
				break
			}
			if time.Now().After(deadline) {
				r.Status, r.Cause = StatusTimeout, fmt.Sprintf("test #%d", ti)
				return r
			}
		}
		final := accepted && s.isAccepting()
		switch {
		case test.Valid && !final:
			if accepted {
				validationErr = fmt.Sprintf("test #%d: valid instance fully accepted but not in an accepting state", ti)
			} else {
				validationErr = fmt.Sprintf("test #%d: valid instance rejected at token %d of %d: %s", ti, at, len(toks), why)
			}
		case !test.Valid && accepted:
			invalidationErr = fmt.Sprintf("test #%d: invalid instance accepted", ti)
			if !final {
				r.AcceptedNotFinal++
			}
		}
	}
	switch {
	case invalidationErr != "":
		r.Status, r.Cause = StatusInvalidation, invalidationErr
	case validationErr != "":
		r.Status, r.Cause = StatusValidation, validationErr
	default:
		r.Status = StatusPass
	}
	return r
}

// reportSlow prints one -slow line: the schema, test and token whose
// mask took took, and the text before it (its last 60 bytes), so a tail
// can be traced to the state that makes it.
func reportSlow(w io.Writer, eng engine, id string, test, at int, toks []int32, took time.Duration) {
	var before strings.Builder
	for _, t := range toks[:at] {
		before.WriteString(eng.tokenText(t))
	}
	b := before.String()
	if len(b) > 60 {
		b = b[len(b)-60:]
	}
	fmt.Fprintf(w, "slow mask: %s test #%d token %d (%q) %.1f ms after …%q\n",
		id, test, at, eng.tokenText(toks[at]), float64(took.Microseconds())/1e3, b)
}

// report is the summary printed as a table and written with -json.
// TBMHist is the distribution of every TBM sample (bench/tbmhist; the
// percentiles in TBM are exact, taken from the samples themselves).
type report struct {
	runinfo.Stamp
	Engine  string             `json:"engine"`
	TBM     map[string]float64 `json:"tbm_us"`
	TBMHist *tbmhist.Histogram `json:"tbm_hist"`
	TTFM    map[string]float64 `json:"ttfm_us"`
	Counts  map[string]int     `json:"counts"`
	PeakRSS float64            `json:"peak_rss_mb"`
	Wall    float64            `json:"wall_s"`
	Tokens  int                `json:"tokens"`
	Causes  map[string]int     `json:"compile_error_causes"`
	BySplit map[string][2]int  `json:"by_split"` // split → [passing, schemas]
	Schemas []*schemaResult    `json:"schemas"`
}

func summarize(rs []*schemaResult, wall time.Duration) *report {
	rep := &report{
		Counts:  map[string]int{},
		Causes:  map[string]int{},
		BySplit: map[string][2]int{},
		Schemas: rs,
		TBMHist: tbmhist.New(),
		Wall:    wall.Seconds(),
		PeakRSS: peakRSSMB(),
	}
	var tbm, ttfm []float64
	var sum float64
	for _, r := range rs {
		rep.Counts["schemas"]++
		rep.Counts[string(r.Status)]++
		if r.Status == StatusPass {
			rep.Counts["passing"]++
		}
		if r.Status == StatusCompileError {
			rep.Causes[r.Cause]++
		}
		b := rep.BySplit[r.Split]
		b[1]++
		if r.Status == StatusPass {
			b[0]++
		}
		rep.BySplit[r.Split] = b
		if r.Status != StatusCompileError && r.Status != StatusTimeout {
			ttfm = append(ttfm, r.TTFMus)
		}
		for _, v := range r.tbm {
			tbm = append(tbm, float64(v))
			rep.TBMHist.Add(float64(v))
			sum += float64(v)
		}
		rep.Tokens += len(r.tbm)
	}
	for _, k := range []string{"schemas", "passing", "compile_error", "validation_error", "invalidation_error", "timeout"} {
		rep.Counts[k] += 0
	}
	sort.Float64s(tbm)
	sort.Float64s(ttfm)
	rep.TBM = map[string]float64{"avg": 0}
	if len(tbm) > 0 {
		rep.TBM["avg"] = sum / float64(len(tbm))
	}
	for _, p := range []struct {
		k string
		q float64
	}{{"p25", .25}, {"p50", .5}, {"p75", .75}, {"p90", .9}, {"p95", .95}, {"p99", .99}, {"p999", .999}, {"max", 1}} {
		rep.TBM[p.k] = quantile(tbm, p.q)
	}
	rep.TTFM = map[string]float64{}
	for _, p := range []struct {
		k string
		q float64
	}{{"p50", .5}, {"p75", .75}, {"p90", .9}, {"p95", .95}, {"p99", .99}, {"max", 1}} {
		rep.TTFM[p.k] = quantile(ttfm, p.q)
	}
	return rep
}

// quantile returns the q-quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	i = max(0, min(i, len(xs)-1))
	return xs[i]
}

func (rep *report) print(w io.Writer, cfg config) {
	c := rep.Counts
	n := max(c["schemas"], 1)
	pct := func(k string) string { return fmt.Sprintf("%d (%.1f%%)", c[k], 100*float64(c[k])/float64(n)) }
	fmt.Fprintf(w, "MaskBench: %s, tokenizer %s, engine %s, %d thread(s), %d tokens, wall %.1fs\n\n",
		cfg.data, cfg.tokenizer, cfg.engine, cfg.threads, rep.Tokens, rep.Wall)
	fmt.Fprintf(w, "| TBM µs | avg | p25 | p50 | p75 | p90 | p95 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|---|---|---|\n")
	t := rep.TBM
	fmt.Fprintf(w, "| | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n\n", t["avg"], t["p25"], t["p50"], t["p75"], t["p90"], t["p95"], t["p99"], t["p999"], t["max"])
	fmt.Fprintf(w, "| TTFM µs | p50 | p75 | p90 | p95 | p99 | max |\n|---|---|---|---|---|---|---|\n")
	f := rep.TTFM
	fmt.Fprintf(w, "| | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n\n", f["p50"], f["p75"], f["p90"], f["p95"], f["p99"], f["max"])
	fmt.Fprintf(w, "| schemas | passing | compile error | validation error | invalidation error | timeout | peak RSS |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %.0f MB |\n\n", c["schemas"], pct("passing"), pct("compile_error"), pct("validation_error"), pct("invalidation_error"), pct("timeout"), rep.PeakRSS)
	type kv struct {
		k string
		v int
	}
	var causes []kv
	for k, v := range rep.Causes {
		causes = append(causes, kv{k, v})
	}
	sort.Slice(causes, func(i, j int) bool {
		return causes[i].v > causes[j].v || causes[i].v == causes[j].v && causes[i].k < causes[j].k
	})
	fmt.Fprintf(w, "Compile errors by cause:\n")
	for i, e := range causes {
		if i == 25 {
			fmt.Fprintf(w, "  ... %d more causes\n", len(causes)-25)
			break
		}
		fmt.Fprintf(w, "  %5d  %s\n", e.v, e.k)
	}
	var splits []string
	for s := range rep.BySplit {
		splits = append(splits, s)
	}
	sort.Strings(splits)
	fmt.Fprintf(w, "\nPassing by split:\n")
	for _, s := range splits {
		b := rep.BySplit[s]
		fmt.Fprintf(w, "  %-22s %5d / %5d (%.1f%%)\n", s, b[0], b[1], 100*float64(b[0])/float64(max(b[1], 1)))
	}
}

// peakRSSMB reads the process's peak resident set size (VmHWM) on Linux.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
