package main

import (
	"slices"

	"gonum.org/v1/plot/plotter"
)

// histCDF returns the CDF of a histogram's samples as points at the bin
// edges, from the lower edge of the first non-empty bin to the upper edge
// of the last: exact at each edge, drawn straight between. Samples under
// the first edge start the curve above 0; samples over the last edge keep
// it below 1.
func histCDF(h *histogram) plotter.XYs {
	first := slices.IndexFunc(h.Counts, func(c int) bool { return c > 0 })
	if first < 0 {
		return nil
	}
	last := len(h.Counts) - 1
	for h.Counts[last] == 0 {
		last--
	}
	n := float64(h.Total())
	cum := h.Under
	pts := plotter.XYs{{X: h.LowerEdge(first), Y: float64(cum) / n}}
	for i := first; i <= last; i++ {
		cum += h.Counts[i]
		pts = append(pts, plotter.XY{X: h.LowerEdge(i + 1), Y: float64(cum) / n})
	}
	return pts
}

// ttfmSamples returns the TTFM of every schema the engine compiled, in µs,
// sorted: what bench/maskbench's ttfm_us percentiles are taken over
// (compile errors and timeouts have none).
func ttfmSamples(r *maskbenchRun) []float64 {
	var xs []float64
	for _, s := range r.Schemas {
		if s.Status != "compile_error" && s.Status != "timeout" && s.TTFMus > 0 {
			xs = append(xs, s.TTFMus)
		}
	}
	slices.Sort(xs)
	return xs
}

// sampleCDF returns the empirical CDF of sorted xs as the corners of its
// steps (drawn with plotter.PostStep): 0 up to the first sample, then
// (i+1)/n from sample i on.
func sampleCDF(xs []float64) plotter.XYs {
	if len(xs) == 0 {
		return nil
	}
	n := float64(len(xs))
	pts := plotter.XYs{{X: xs[0], Y: 0}}
	for i, x := range xs {
		pts = append(pts, plotter.XY{X: x, Y: float64(i+1) / n})
	}
	return pts
}
