package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// config is the command line.
type config struct {
	conform, llamacpp string   // MaskBench runs (-json) of the two engines
	e2e               []string // bench/e2e runs (-json), one per parallel value
	out               string   // folder the SVGs are written to
}

// The files written into config.out.
const (
	fileTBM  = "tbm-cdf.svg"
	fileTTFM = "ttfm-cdf.svg"
	fileE2E  = "e2e-tok-s.svg"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.conform, "maskbench", "", "bench/maskbench -json output of the conform engine")
	flag.StringVar(&cfg.llamacpp, "maskbench-llamacpp", "", "bench/maskbench -json output of -engine llamacpp over the same schemas")
	e2e := flag.String("e2e", "", "bench/e2e -json outputs, one per -parallel value, separated by spaces or commas")
	flag.StringVar(&cfg.out, "out", "bench/plots", "folder to write the SVG files to")
	flag.Parse()
	cfg.e2e = strings.FieldsFunc(*e2e, func(r rune) bool { return r == ',' || r == ' ' })
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		var pe *Error
		if errors.As(err, &pe) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

// run draws every figure the inputs allow and names each file it writes.
func run(cfg config, w io.Writer) error {
	if (cfg.conform == "") != (cfg.llamacpp == "") {
		return errors.New("-maskbench and -maskbench-llamacpp go together: the CDFs compare the two engines")
	}
	if cfg.conform == "" && len(cfg.e2e) == 0 {
		return errors.New("nothing to draw: give -maskbench and -maskbench-llamacpp, or -e2e")
	}
	if cfg.conform != "" {
		if err := drawMaskbench(cfg, w); err != nil {
			return err
		}
	}
	if len(cfg.e2e) > 0 {
		if err := drawE2E(cfg, w); err != nil {
			return err
		}
	}
	return nil
}

// drawMaskbench draws the TBM and TTFM CDFs of the two engines.
func drawMaskbench(cfg config, w io.Writer) error {
	c, err := loadMaskbench(cfg.conform, engineConform)
	if err != nil {
		return err
	}
	l, err := loadMaskbench(cfg.llamacpp, engineLlamacpp)
	if err != nil {
		return err
	}
	if err := sameSchemas(c, l); err != nil {
		return err
	}
	cx, lx := ttfmSamples(c), ttfmSamples(l)
	for _, r := range []struct {
		xs []float64
		r  *maskbenchRun
	}{{cx, c}, {lx, l}} {
		if len(r.xs) == 0 {
			return &Error{Code: CodeContent, Path: r.r.path, Err: errors.New("no schema compiled: no TTFM to draw")}
		}
	}
	when := stampLine(c.stamp, l.stamp)
	tbm := func(r *maskbenchRun, name string) string {
		return fmt.Sprintf("%s: %d tokens, p50 %s, p99 %s", name, r.Tokens, formatUs(r.TBM["p50"]), formatUs(r.TBM["p99"]))
	}
	p, err := cdfPlot(fmt.Sprintf("Time between masks (mask + accept of a token), %d MaskBench schemas\n%s", len(c.Schemas), when),
		"time between masks (log scale)", "fraction of tokens", []series{
			{name: tbm(c, nameConform), color: colorConform, pts: histCDF(c.Hist)},
			{name: tbm(l, nameLlamacpp), color: colorLlamacpp, pts: histCDF(l.Hist)},
		})
	if err != nil {
		return &Error{Code: CodeContent, Path: cfg.conform, Err: err}
	}
	if err := saveAndSay(p, filepath.Join(cfg.out, fileTBM), w); err != nil {
		return err
	}
	ttfm := func(xs []float64, name string) string {
		return fmt.Sprintf("%s: %d schemas compiled, p50 %s, max %s", name, len(xs), formatUs(xs[(len(xs)-1)/2]), formatUs(xs[len(xs)-1]))
	}
	p, err = cdfPlot(fmt.Sprintf("Time to first mask (the compile, until a mask can be made), %d MaskBench schemas\n%s", len(c.Schemas), when),
		"time to first mask (log scale)", "fraction of compiled schemas", []series{
			{name: ttfm(cx, nameConform), color: colorConform, pts: sampleCDF(cx), step: true},
			{name: ttfm(lx, nameLlamacpp), color: colorLlamacpp, pts: sampleCDF(lx), step: true},
		})
	if err != nil {
		return &Error{Code: CodeContent, Path: cfg.conform, Err: err}
	}
	return saveAndSay(p, filepath.Join(cfg.out, fileTTFM), w)
}

// drawE2E draws bench/e2e's tokens per second by mode and parallelism.
func drawE2E(cfg config, w io.Writer) error {
	runs, err := loadE2E(cfg.e2e)
	if err != nil {
		return err
	}
	stamps := make([]stamp, len(runs))
	for i, r := range runs {
		stamps[i] = r.stamp
	}
	c := runs[0].Config
	p, err := e2ePlot(fmt.Sprintf("bench/e2e output tokens/s by mode, %d schemas, max_tokens %d, %d threads\n%s, %s",
		c.Run, c.MaxTokens, c.Threads, filepath.Base(c.Model), stampLine(stamps...)), runs)
	if err != nil {
		return &Error{Code: CodeContent, Path: runs[0].path, Err: err}
	}
	return saveAndSay(p, filepath.Join(cfg.out, fileE2E), w)
}

// saveAndSay writes f to path and says so on w.
func saveAndSay(f *figure, path string, w io.Writer) error {
	if err := save(f, path); err != nil {
		return err
	}
	fmt.Fprintln(w, "wrote", path)
	return nil
}
