package main

import "math"

// The TBM histogram: the report's percentiles say little about the shape
// of the distribution, and a CDF plot (bench/plot) needs all of it. Every
// TBM sample of a run (millions in a full run) goes into one of a fixed
// set of log-spaced bins, so the JSON carries the whole distribution in a
// few hundred counts, and two runs (two engines) share their bin edges
// and can be compared bin by bin.
//
// In the JSON ("tbm_hist"): bin i of counts holds the samples v with
// min_us·10^(i/bins_per_decade) ≤ v < min_us·10^((i+1)/bins_per_decade);
// under counts the samples below min_us, over those at or above the last
// edge (min_us·10^decades).

// Histogram bounds. histMinUs is 10 ns, about the resolution of the
// clock reads around a mask; histDecades = 9 reaches 10 s, beyond the
// per-schema timeout that would cut any slower step; 20 bins per decade
// are 12% wide, finer than the run-to-run noise of a percentile here.
const (
	histMinUs         = 0.01
	histDecades       = 9
	histBinsPerDecade = 20
)

// histogram counts samples in log-spaced bins (see above).
type histogram struct {
	MinUs         float64 `json:"min_us"`
	Decades       int     `json:"decades"`
	BinsPerDecade int     `json:"bins_per_decade"`
	Counts        []int   `json:"counts"`
	Under         int     `json:"under"`
	Over          int     `json:"over"`
}

func newHistogram() *histogram {
	return &histogram{MinUs: histMinUs, Decades: histDecades, BinsPerDecade: histBinsPerDecade,
		Counts: make([]int, histDecades*histBinsPerDecade)}
}

// add counts one sample, in µs. NaN counts as under: it is no time at all.
func (h *histogram) add(us float64) {
	if !(us >= h.MinUs) {
		h.Under++
		return
	}
	if us >= h.lowerEdge(len(h.Counts)) { // +Inf too, which int() would not convert
		h.Over++
		return
	}
	i := int(math.Floor(float64(h.BinsPerDecade) * math.Log10(us/h.MinUs)))
	h.Counts[max(0, min(i, len(h.Counts)-1))]++ // the clamp only absorbs rounding at the ends
}

// lowerEdge returns the lower edge of bin i, in µs.
func (h *histogram) lowerEdge(i int) float64 {
	return h.MinUs * math.Pow(10, float64(i)/float64(h.BinsPerDecade))
}
