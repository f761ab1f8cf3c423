package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"conform/bench/runinfo"
	"conform/bench/tbmhist"
)

// stamp is the date and commit a run's JSON carries, histogram
// bench/maskbench's tbm_hist: the types their writers use.
type (
	stamp     = runinfo.Stamp
	histogram = tbmhist.Histogram
)

// maskbenchRun is what plot reads of bench/maskbench's -json output.
type maskbenchRun struct {
	stamp
	Engine  string             `json:"engine"`
	Tokens  int                `json:"tokens"`
	TBM     map[string]float64 `json:"tbm_us"`
	TTFM    map[string]float64 `json:"ttfm_us"`
	Hist    *histogram         `json:"tbm_hist"`
	Schemas []maskbenchEntry   `json:"schemas"`
	path    string
}

// maskbenchEntry is one schema's line of the run.
type maskbenchEntry struct {
	ID     string  `json:"id"`
	Status string  `json:"status"`
	TTFMus float64 `json:"ttfm_us"`
}

// Engine names as bench/maskbench's -engine spells them.
const (
	engineConform  = "conform"
	engineLlamacpp = "llamacpp"
)

// maxBins bounds a histogram read from a file: bench/maskbench writes 180.
const maxBins = 1 << 16

// readJSON decodes the file at path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return &Error{Code: CodeRead, Path: path, Err: err}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Code: CodeJSON, Path: path, Err: err}
	}
	return nil
}

// loadMaskbench reads a MaskBench run of the engine want ("" when the file
// does not say, as older runs do not) and checks what the plots need.
func loadMaskbench(path, want string) (*maskbenchRun, error) {
	r := &maskbenchRun{path: path}
	if err := readJSON(path, r); err != nil {
		return nil, err
	}
	bad := func(code Code, format string, args ...any) error {
		return &Error{Code: code, Path: path, Err: fmt.Errorf(format, args...)}
	}
	if r.Engine != "" && r.Engine != want {
		return nil, bad(CodeMismatch, "a run of engine %q where one of %q is expected (are the two files swapped?)", r.Engine, want)
	}
	h := r.Hist
	switch {
	case len(r.Schemas) == 0:
		return nil, bad(CodeContent, "no schemas: not bench/maskbench -json output")
	case h == nil:
		return nil, bad(CodeContent, "no tbm_hist: written before bench/maskbench recorded the TBM histogram; run it again")
	case !(h.MinUs > 0) || math.IsInf(h.MinUs, 0) || h.BinsPerDecade <= 0 || h.Decades <= 0 || h.Decades > maxBins/h.BinsPerDecade:
		return nil, bad(CodeContent, "tbm_hist: min_us %g, %d decades of %d bins: want a positive minimum and at most %d bins", h.MinUs, h.Decades, h.BinsPerDecade, maxBins)
	case len(h.Counts) != h.Decades*h.BinsPerDecade:
		return nil, bad(CodeContent, "tbm_hist: %d counts for %d decades of %d bins", len(h.Counts), h.Decades, h.BinsPerDecade)
	case h.Under < 0 || h.Over < 0 || slices.Min(h.Counts) < 0:
		return nil, bad(CodeContent, "tbm_hist: a negative count")
	case h.Total() != r.Tokens:
		return nil, bad(CodeContent, "tbm_hist holds %d samples, the run %d tokens", h.Total(), r.Tokens)
	case r.Tokens == 0:
		return nil, bad(CodeContent, "no TBM samples (no token was masked)")
	}
	return r, nil
}

// sameSchemas checks that two runs covered the same schemas in the same
// order, the precondition of comparing their distributions.
func sameSchemas(a, b *maskbenchRun) error {
	if len(a.Schemas) != len(b.Schemas) {
		return &Error{Code: CodeMismatch, Path: b.path, Err: fmt.Errorf("%d schemas, %s %d: not the same subset (-every, -split, -limit)", len(b.Schemas), a.path, len(a.Schemas))}
	}
	for i := range a.Schemas {
		if a.Schemas[i].ID != b.Schemas[i].ID {
			return &Error{Code: CodeMismatch, Path: b.path, Err: fmt.Errorf("schema %d is %q, in %s %q: not the same subset", i, b.Schemas[i].ID, a.path, a.Schemas[i].ID)}
		}
	}
	return nil
}

// e2eRun is what plot reads of bench/e2e's -json output.
type e2eRun struct {
	stamp
	Unconstrained   *e2eMode `json:"unconstrained"`
	Conform         *e2eMode `json:"conform"`
	LlamacppGrammar *e2eMode `json:"llamacpp_grammar"`
	Config          struct {
		Model      string `json:"model"`
		Parallel   int    `json:"parallel"`
		MaxTokens  int    `json:"max_tokens"`
		Threads    int    `json:"threads"`
		Run        int    `json:"run"`
		Length     string `json:"length"`
		Whitespace string `json:"whitespace"`
	} `json:"config"`
	path string
}

// e2eMode is one mode's figures.
type e2eMode struct {
	Requests int     `json:"requests"`
	Tokens   int     `json:"tokens"`
	TokS     float64 `json:"tok_s"`
}

// modes returns the run's modes in the order of the plot's bars.
func (r *e2eRun) modes() [3]*e2eMode {
	return [3]*e2eMode{r.Unconstrained, r.Conform, r.LlamacppGrammar}
}

// loadE2E reads bench/e2e runs, one per parallel value, and returns them
// sorted by parallelism. They must differ in parallelism only.
func loadE2E(paths []string) ([]*e2eRun, error) {
	var runs []*e2eRun
	for _, path := range paths {
		r := &e2eRun{path: path}
		if err := readJSON(path, r); err != nil {
			return nil, err
		}
		if r.Config.Parallel < 1 {
			return nil, &Error{Code: CodeContent, Path: path, Err: errors.New("no config.parallel: not bench/e2e -json output")}
		}
		for i, m := range r.modes() {
			if m == nil {
				return nil, &Error{Code: CodeContent, Path: path, Err: fmt.Errorf("no %q mode", modeKeys[i])}
			}
			if !(m.TokS >= 0) || math.IsInf(m.TokS, 0) {
				return nil, &Error{Code: CodeContent, Path: path, Err: fmt.Errorf("%s: tok_s %g", modeKeys[i], m.TokS)}
			}
		}
		for _, o := range runs {
			switch {
			case o.Config.Parallel == r.Config.Parallel:
				return nil, &Error{Code: CodeMismatch, Path: path, Err: fmt.Errorf("parallel %d again (also %s): one file per parallel value", r.Config.Parallel, o.path)}
			case o.Config.Model != r.Config.Model || o.Config.MaxTokens != r.Config.MaxTokens || o.Config.Threads != r.Config.Threads ||
				o.Config.Length != r.Config.Length || o.Config.Whitespace != r.Config.Whitespace:
				return nil, &Error{Code: CodeMismatch, Path: path, Err: fmt.Errorf("model, max_tokens, threads, length or whitespace differ from %s: the bars would compare more than parallelism", o.path)}
			}
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, &Error{Code: CodeContent, Path: "-e2e", Err: errors.New("no files")}
	}
	slices.SortFunc(runs, func(a, b *e2eRun) int { return a.Config.Parallel - b.Config.Parallel })
	return runs, nil
}

// modeKeys are the e2e JSON's mode keys, in modes' order.
var modeKeys = [3]string{"unconstrained", "conform", "llamacpp_grammar"}
