package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure size: wide enough for a two-line title and a legend beside the
// curves, at a readable size when bench/README.md shows it at its width.
const (
	figWidth  = 18 * vg.Centimeter
	figHeight = 12 * vg.Centimeter
)

// Series colours: Conform blue, llama.cpp's grammar orange in every
// figure, the unconstrained bars grey.
var (
	colorConform  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorLlamacpp = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorNone     = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
)

// Legend names: the same spelling in every figure (and in bench/README).
const (
	nameConform  = "Conform"
	nameLlamacpp = "llama.cpp grammar"
	nameNone     = "unconstrained"
)

// The figures' text is in Liberation Sans (gonum's default is its Serif),
// named in the SVG and not embedded.
func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// series is one curve of a CDF plot.
type series struct {
	name  string
	color color.Color
	pts   plotter.XYs
	step  bool // a step function (an empirical CDF), not straight segments
}

// figure is a plot and, for the CDFs, its legend in a strip below it:
// inside, it would cover a curve (the two engines' CDFs rise through the
// whole height, decades apart, and leave no corner empty).
type figure struct {
	*plot.Plot
	below   plot.Legend
	entries int
}

// legendIndent lines the legend strip up with the plot's data area, right
// of the y axis's label and tick labels.
const legendIndent = 12 * vg.Millimeter

// draw draws the figure on c.
func (f *figure) draw(c draw.Canvas) {
	if f.entries == 0 {
		f.Plot.Draw(c)
		return
	}
	h := vg.Length(f.entries)*f.below.TextStyle.Font.Size*1.25 + 2*vg.Millimeter
	f.Plot.Draw(draw.Crop(c, 0, 0, h, 0))
	f.below.Draw(draw.Crop(c, legendIndent, 0, vg.Millimeter, h-(c.Max.Y-c.Min.Y)))
}

// cdfPlot draws CDFs over a log time axis (values in µs).
func cdfPlot(title, xLabel, yLabel string, ss []series) (*figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = timeTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = linearTicks{}
	f := &figure{Plot: p, below: plot.NewLegend()}
	f.below.Top, f.below.Left = true, true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = s.color, vg.Points(1.5)
		if s.step {
			l.StepStyle = plotter.PostStep
		}
		p.Add(l)
		f.below.Add(s.name, l)
		f.entries++
		for _, pt := range s.pts {
			lo, hi = min(lo, pt.X), max(hi, pt.X)
		}
	}
	if !(lo > 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("no positive times to draw on a log axis")
	}
	// Whole decades at both ends, so that every tick has a label.
	p.X.Min, p.X.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if p.X.Max <= p.X.Min {
		p.X.Max = p.X.Min * 10
	}
	return f, nil
}

// timeTicks marks a log axis of µs with a labelled tick at each decade
// ("10 ns" … "1 s") and unlabelled ones at 2–9 times it.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for d := math.Floor(math.Log10(lo)); d <= math.Ceil(math.Log10(hi)); d++ {
		v := math.Pow(10, d)
		if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			ts = append(ts, plot.Tick{Value: v, Label: formatUs(v)})
		}
		for i := 2.0; i < 10; i++ {
			if w := v * i; w > lo && w < hi {
				ts = append(ts, plot.Tick{Value: w})
			}
		}
	}
	return ts
}

// linearTicks labels a linear axis at 1, 2 or 5 times a power of ten,
// four to ten of them, with no more digits than the step needs.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)}}
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/4)))
	for _, m := range []float64{5, 2} {
		if (hi-lo)/(step*m) >= 4 {
			step *= m
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi*(1+1e-9); i++ {
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', max(0, -int(math.Floor(math.Log10(step)))), 64)})
	}
	return ts
}

// formatUs writes a time in µs to three significant digits with the unit
// that keeps it short: "10 ns", "1 µs", "171 µs", "1.97 ms", "10 s".
func formatUs(us float64) string {
	us, _ = strconv.ParseFloat(strconv.FormatFloat(us, 'g', 3, 64), 64) // round first: 999.6 µs is 1 ms
	switch {
	case us < 1:
		return strconv.FormatFloat(us*1e3, 'g', 3, 64) + " ns"
	case us < 1e3:
		return strconv.FormatFloat(us, 'g', 3, 64) + " µs"
	case us < 1e6:
		return strconv.FormatFloat(us/1e3, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(us/1e6, 'g', 3, 64) + " s"
}

// e2ePlot draws bench/e2e's output tokens per second, one group of bars
// per parallel value, one bar per mode.
func e2ePlot(title string, runs []*e2eRun) (*figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "output tokens/s (all sequences, wall time)"
	p.X.Label.Text = "runner slots decoding together"
	p.Legend.Top = true
	g := plotter.NewGrid()
	g.Vertical.Color = nil // no lines through the groups
	p.Add(g)
	names := [3]string{nameNone, nameConform, nameLlamacpp}
	colors := [3]color.Color{colorNone, colorConform, colorLlamacpp}
	const barWidth = 1 * vg.Centimeter
	top := 0.0
	for m := range 3 {
		vs := make(plotter.Values, len(runs))
		for i, r := range runs {
			vs[i] = r.modes()[m].TokS
			top = max(top, vs[i])
		}
		b, err := plotter.NewBarChart(vs, barWidth)
		if err != nil {
			return nil, err
		}
		b.Color, b.LineStyle.Width = colors[m], 0
		b.Offset = vg.Length(m-1) * barWidth
		p.Add(b)
		p.Legend.Add(names[m], b)
		xys := make(plotter.XYs, len(runs))
		texts := make([]string, len(runs))
		for i, v := range vs {
			xys[i] = plotter.XY{X: float64(i), Y: v}
			texts[i] = strconv.FormatFloat(v, 'f', 1, 64)
		}
		ls, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
		if err != nil {
			return nil, err
		}
		ls.Offset = vg.Point{X: b.Offset, Y: vg.Millimeter}
		for i := range ls.TextStyle {
			ls.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(ls)
	}
	groups := make([]string, len(runs))
	for i, r := range runs {
		groups[i] = fmt.Sprintf("parallel %d", r.Config.Parallel)
	}
	p.NominalX(groups...)
	p.X.Min, p.X.Max = -0.6, float64(len(runs))-0.4
	p.Y.Min, p.Y.Max = 0, max(top, 1)*1.3 // room for the legend above the bars
	p.Y.Tick.Marker = linearTicks{}
	return &figure{Plot: p}, nil
}

// stampLine says when and from which commit the runs were taken, for a
// title's second line: "commit ea253dd, 2026-12-02 02:19–02:31 UTC".
func stampLine(ss ...stamp) string {
	var commits []string
	var times []time.Time
	missing := false
	for _, s := range ss {
		c := s.Commit
		if c != "" && s.Dirty {
			c += " + uncommitted changes"
		}
		t, err := time.Parse(time.RFC3339, s.Date)
		if c == "" || err != nil {
			missing = true
		}
		if c != "" && !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
		if err == nil {
			times = append(times, t.UTC())
		}
	}
	var parts []string
	if len(commits) > 0 {
		parts = append(parts, "commit "+strings.Join(commits, " / "))
	}
	if len(times) > 0 {
		lo, hi := slices.MinFunc(times, time.Time.Compare), slices.MaxFunc(times, time.Time.Compare)
		switch {
		case lo.Equal(hi):
			parts = append(parts, lo.Format("2006-01-02 15:04 UTC"))
		case lo.YearDay() == hi.YearDay() && lo.Year() == hi.Year():
			parts = append(parts, lo.Format("2006-01-02 15:04")+"–"+hi.Format("15:04 UTC"))
		default:
			parts = append(parts, lo.Format("2006-01-02 15:04")+" – "+hi.Format("2006-01-02 15:04 UTC"))
		}
	}
	if missing {
		parts = append(parts, "(a run without its date or commit)")
	}
	return strings.Join(parts, ", ")
}

// save writes f as an SVG file.
func save(f *figure, path string) error {
	c, err := draw.NewFormattedCanvas(figWidth, figHeight, "svg")
	if err != nil {
		return &Error{Code: CodeWrite, Path: path, Err: err}
	}
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return &Error{Code: CodeWrite, Path: path, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &Error{Code: CodeWrite, Path: path, Err: err}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return &Error{Code: CodeWrite, Path: path, Err: err}
	}
	return nil
}
