package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// fixtures is the command line over testdata's runs.
func fixtures(out string) config {
	return config{
		conform:  "testdata/maskbench-conform.json",
		llamacpp: "testdata/maskbench-llamacpp.json",
		e2e:      []string{"testdata/e2e-p4.json", "testdata/e2e-p1.json"},
		out:      out,
	}
}

// svgTexts parses an SVG file as XML and returns its root element's name
// and the content of every text element.
func svgTexts(t *testing.T, path string) (root string, texts []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		}
	}
	return root, texts
}

// TestRun draws the three figures from the fixtures and checks each SVG:
// well-formed, an svg root, and the title, legend, axis and tick texts.
func TestRun(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	if err := run(fixtures(out), &log); err != nil {
		t.Fatalf("run: %v", err)
	}
	tests := []struct {
		file string
		want []string
	}{
		{fileTBM, []string{
			"Time between masks (mask + accept of a token), 3 MaskBench schemas",
			"commit abc1234, 2026-12-02 02:19–02:31 UTC",
			"Conform: 6 tokens, p50 500 ns, p99 30 µs",
			"llama.cpp grammar: 4 tokens, p50 35 ms, p99 90 ms",
			"time between masks (log scale)", "fraction of tokens",
			"100 ns", "1 µs", "1 ms", "100 ms", "0.4", "1.0",
		}},
		{fileTTFM, []string{
			"Time to first mask (the compile, until a mask can be made), 3 MaskBench schemas",
			"Conform: 2 schemas compiled, p50 480 µs, max 950 µs",
			"llama.cpp grammar: 3 schemas compiled, p50 52 ms, max 160 ms",
			"time to first mask (log scale)", "fraction of compiled schemas",
			"100 µs", "1 s",
		}},
		{fileE2E, []string{
			"bench/e2e output tokens/s by mode, 4 schemas, max_tokens 32, 2 threads",
			"qwen2.5-0.5b-llama3_1.gguf, commit abc1234, 2026-12-02 02:40–02:45 UTC",
			nameNone, nameConform, nameLlamacpp, "parallel 1", "parallel 4",
			"output tokens/s (all sequences, wall time)", "runner slots decoding together",
			"16.8", "22.0", "9.5",
		}},
	}
	for _, tt := range tests {
		path := filepath.Join(out, tt.file)
		if !strings.Contains(log.String(), "wrote "+path) {
			t.Errorf("run's log %q does not name %s", log.String(), path)
		}
		root, texts := svgTexts(t, path)
		if root != "svg" {
			t.Errorf("%s: root element %q, want svg", tt.file, root)
		}
		for _, w := range tt.want {
			if !slices.Contains(texts, w) {
				t.Errorf("%s: no text %q in %q", tt.file, w, texts)
			}
		}
	}
	// The e2e bars are ordered by parallelism whatever the order of -e2e.
	_, texts := svgTexts(t, filepath.Join(out, fileE2E))
	if i, j := slices.Index(texts, "parallel 1"), slices.Index(texts, "parallel 4"); i > j {
		t.Errorf("parallel 4 is drawn before parallel 1: %q", texts)
	}
}

// TestRunDeterministic: the committed SVGs change only when the data do.
func TestRunDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := run(fixtures(dir), io.Discard); err != nil {
			t.Fatalf("run: %v", err)
		}
	}
	for _, f := range []string{fileTBM, fileTTFM, fileE2E} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: two runs over the same data wrote different files (%d and %d bytes)", f, len(x), len(y))
		}
	}
}

// variant writes a copy of the JSON fixture base with edit applied.
func variant(t *testing.T, base string, edit func(m map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(base))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// write writes content to a new file and returns its path.
func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInput: every bad input is an *Error with its code and file (or,
// for a bad command line, a plain error), never a panic, and nothing is
// drawn from a MaskBench pair that fails.
func TestBadInput(t *testing.T) {
	const mc, ml, e1, e4 = "testdata/maskbench-conform.json", "testdata/maskbench-llamacpp.json", "testdata/e2e-p1.json", "testdata/e2e-p4.json"
	hist := func(m map[string]any) map[string]any { return m["tbm_hist"].(map[string]any) }
	tests := []struct {
		name string
		cfg  func(t *testing.T) config
		code Code // 0: a plain error
		file string
	}{
		{"missing file", func(t *testing.T) config { return config{conform: "testdata/none.json", llamacpp: ml} }, CodeRead, "testdata/none.json"},
		{"not JSON", func(t *testing.T) config {
			return config{conform: write(t, "x.json", "MaskBench: ...\n| TBM µs |"), llamacpp: ml}
		}, CodeJSON, "x.json"},
		{"JSON of another shape", func(t *testing.T) config { return config{conform: write(t, "x.json", "[1, 2]"), llamacpp: ml} }, CodeJSON, "x.json"},
		{"wrong field type", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { m["tokens"] = "six" }), llamacpp: ml}
		}, CodeJSON, "maskbench-conform.json"},
		{"empty object", func(t *testing.T) config { return config{conform: write(t, "x.json", "{}"), llamacpp: ml} }, CodeContent, "x.json"},
		{"run without a histogram", func(t *testing.T) config {
			return config{conform: mc, llamacpp: variant(t, ml, func(m map[string]any) { delete(m, "tbm_hist"); delete(m, "engine") })}
		}, CodeContent, "maskbench-llamacpp.json"},
		{"histogram of the wrong length", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { hist(m)["decades"] = 8.0 }), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"histogram without bins", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { hist(m)["bins_per_decade"] = 0.0 }), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"histogram too large", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { hist(m)["decades"] = 1e9 }), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"histogram and tokens disagree", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { m["tokens"] = 7.0 }), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"negative count", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) { hist(m)["under"] = -1.0; m["tokens"] = 4.0 }), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"no tokens", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) {
				hist(m)["counts"], hist(m)["under"], m["tokens"] = make([]int, 180), 0.0, 0.0
			}), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"no schema compiled", func(t *testing.T) config {
			return config{conform: variant(t, mc, func(m map[string]any) {
				for _, s := range m["schemas"].([]any) {
					s.(map[string]any)["status"] = "compile_error"
				}
			}), llamacpp: ml}
		}, CodeContent, "maskbench-conform.json"},
		{"files swapped", func(t *testing.T) config { return config{conform: ml, llamacpp: mc} }, CodeMismatch, ml},
		{"other schemas", func(t *testing.T) config {
			return config{conform: mc, llamacpp: variant(t, ml, func(m map[string]any) { m["schemas"].([]any)[1].(map[string]any)["id"] = "o9" })}
		}, CodeMismatch, "maskbench-llamacpp.json"},
		{"fewer schemas", func(t *testing.T) config {
			return config{conform: mc, llamacpp: variant(t, ml, func(m map[string]any) { m["schemas"] = m["schemas"].([]any)[:2] })}
		}, CodeMismatch, "maskbench-llamacpp.json"},
		{"e2e missing", func(t *testing.T) config { return config{e2e: []string{e1, "testdata/e2e-p8.json"}} }, CodeRead, "testdata/e2e-p8.json"},
		{"e2e of a MaskBench run", func(t *testing.T) config { return config{e2e: []string{mc}} }, CodeContent, mc},
		{"e2e without a mode", func(t *testing.T) config {
			return config{e2e: []string{variant(t, e1, func(m map[string]any) { delete(m, "llamacpp_grammar") })}}
		}, CodeContent, "e2e-p1.json"},
		{"e2e parallel twice", func(t *testing.T) config { return config{e2e: []string{e1, e4, e1}} }, CodeMismatch, e1},
		{"e2e other settings", func(t *testing.T) config {
			return config{e2e: []string{e1, variant(t, e4, func(m map[string]any) { m["config"].(map[string]any)["max_tokens"] = 64.0 })}}
		}, CodeMismatch, "e2e-p4.json"},
		{"e2e negative rate", func(t *testing.T) config {
			return config{e2e: []string{variant(t, e1, func(m map[string]any) { m["conform"].(map[string]any)["tok_s"] = -1.0 })}}
		}, CodeContent, "e2e-p1.json"},
		{"one MaskBench run only", func(t *testing.T) config { return config{conform: mc} }, 0, ""},
		{"nothing to draw", func(t *testing.T) config { return config{} }, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			cfg.out = t.TempDir()
			err := run(cfg, io.Discard)
			if err == nil {
				t.Fatal("run: no error")
			}
			var pe *Error
			switch {
			case tt.code == 0 && errors.As(err, &pe):
				t.Errorf("run: %v, want a plain error", err)
			case tt.code == 0:
			case !errors.As(err, &pe):
				t.Errorf("run: %v (%T), want an *Error", err, err)
			case pe.Code != tt.code || !strings.HasSuffix(pe.Path, tt.file):
				t.Errorf("run: %v: code %v in %s, want %v in %s", err, pe.Code, pe.Path, tt.code, tt.file)
			}
			if cfg.conform != "" {
				if _, err := os.Stat(filepath.Join(cfg.out, fileTBM)); err == nil {
					t.Errorf("%s written from bad input", fileTBM)
				}
			}
		})
	}
}

// TestHistCDF checks the CDF points at the bin edges, with samples under
// and over the histogram's range.
func TestHistCDF(t *testing.T) {
	h := &histogram{MinUs: 1, Decades: 1, BinsPerDecade: 4, Counts: []int{0, 2, 0, 1}, Under: 1, Over: 1}
	e := func(i int) float64 { return math.Pow(10, float64(i)/4) }
	want := plotter.XYs{{X: e(1), Y: .2}, {X: e(2), Y: .6}, {X: e(3), Y: .6}, {X: e(4), Y: .8}}
	got := histCDF(h)
	if len(got) != len(want) {
		t.Fatalf("histCDF = %v, want %v", got, want)
	}
	for i := range got {
		if math.Abs(got[i].X-want[i].X) > 1e-9 || math.Abs(got[i].Y-want[i].Y) > 1e-9 {
			t.Errorf("histCDF point %d = %v, want %v", i, got[i], want[i])
		}
	}
	if got := histCDF(&histogram{MinUs: 1, Decades: 1, BinsPerDecade: 2, Counts: []int{0, 0}, Under: 3}); got != nil {
		t.Errorf("histCDF of samples all under the range = %v, want nothing to draw", got)
	}
}

func TestSampleCDF(t *testing.T) {
	got := sampleCDF([]float64{1, 2, 2, 8})
	want := plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: .25}, {X: 2, Y: .5}, {X: 2, Y: .75}, {X: 8, Y: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("sampleCDF = %v, want %v", got, want)
	}
	if got := sampleCDF(nil); got != nil {
		t.Errorf("sampleCDF(nil) = %v, want nil", got)
	}
}

func TestFormatUs(t *testing.T) {
	tests := []struct {
		us   float64
		want string
	}{
		{0.01, "10 ns"}, {0.5, "500 ns"}, {0.9996, "1 µs"}, {1, "1 µs"}, {171.5, "172 µs"},
		{999.6, "1 ms"}, {1973.1, "1.97 ms"}, {28426.4, "28.4 ms"}, {1e6, "1 s"}, {1.5e7, "15 s"},
	}
	for _, tt := range tests {
		if got := formatUs(tt.us); got != tt.want {
			t.Errorf("formatUs(%g) = %q, want %q", tt.us, got, tt.want)
		}
	}
}

func TestTicks(t *testing.T) {
	var got []string
	for _, tk := range (timeTicks{}).Ticks(0.1, 1000) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"100 ns", "1 µs", "10 µs", "100 µs", "1 ms"}; !slices.Equal(got, want) {
		t.Errorf("timeTicks(0.1, 1000) labels = %q, want %q", got, want)
	}
	got = nil
	for _, tk := range (linearTicks{}).Ticks(0, 1) {
		got = append(got, tk.Label)
	}
	if want := []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}; !slices.Equal(got, want) {
		t.Errorf("linearTicks(0, 1) = %q, want %q", got, want)
	}
	got = nil
	for _, tk := range (linearTicks{}).Ticks(0, 28.6) {
		got = append(got, tk.Label)
	}
	if want := []string{"0", "5", "10", "15", "20", "25"}; !slices.Equal(got, want) {
		t.Errorf("linearTicks(0, 28.6) = %q, want %q", got, want)
	}
}

func TestStampLine(t *testing.T) {
	a := stamp{Date: "2026-12-02T02:19:22Z", Commit: "abc1234"}
	tests := []struct {
		name string
		in   []stamp
		want string
	}{
		{"one run", []stamp{a}, "commit abc1234, 2026-12-02 02:19 UTC"},
		{"same commit", []stamp{a, {Date: "2026-12-02T03:01:00Z", Commit: "abc1234"}}, "commit abc1234, 2026-12-02 02:19–03:01 UTC"},
		{"two commits, two days", []stamp{a, {Date: "2026-12-03T01:00:00Z", Commit: "def5678", Dirty: true}},
			"commit abc1234 / def5678 + uncommitted changes, 2026-12-02 02:19 – 2026-12-03 01:00 UTC"},
		{"no stamp", []stamp{{}}, "(a run without its date or commit)"},
		{"one without", []stamp{a, {}}, "commit abc1234, 2026-12-02 02:19 UTC, (a run without its date or commit)"},
	}
	for _, tt := range tests {
		if got := stampLine(tt.in...); got != tt.want {
			t.Errorf("%s: stampLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestPureGo: the plot step builds anywhere, so neither it nor anything
// it imports may need cgo (llama.cpp above all), even with cgo on.
func TestPureGo(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, n, _ := strings.Cut(line, " ")
		if n != "0" || strings.HasPrefix(path, "conform/internal/llama") {
			t.Errorf("bench/plot depends on %s (%s cgo files)", path, n)
		}
	}
}
