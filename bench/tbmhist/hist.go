package tbmhist

import "math"

// The bounds of New. minUs is 10 ns, about the resolution of the
// clock reads around a mask; decades = 9 reaches 10 s, beyond the
// per-schema timeout that would cut any slower step; 20 bins per decade
// are 12% wide, finer than the run-to-run noise of a percentile here.
const (
	minUs         = 0.01
	decades       = 9
	binsPerDecade = 20
)

// Histogram counts samples in log-spaced bins (see the package doc); its
// fields are the JSON (bench/maskbench's "tbm_hist").
type Histogram struct {
	MinUs         float64 `json:"min_us"`
	Decades       int     `json:"decades"`
	BinsPerDecade int     `json:"bins_per_decade"`
	Counts        []int   `json:"counts"`
	Under         int     `json:"under"`
	Over          int     `json:"over"`
}

// New returns an empty histogram with the bounds above.
func New() *Histogram {
	return &Histogram{MinUs: minUs, Decades: decades, BinsPerDecade: binsPerDecade,
		Counts: make([]int, decades*binsPerDecade)}
}

// Add counts one sample, in µs. NaN counts as under: it is no time at all.
func (h *Histogram) Add(us float64) {
	if !(us >= h.MinUs) {
		h.Under++
		return
	}
	if us >= h.LowerEdge(len(h.Counts)) { // +Inf too, which int() would not convert
		h.Over++
		return
	}
	i := int(math.Floor(float64(h.BinsPerDecade) * math.Log10(us/h.MinUs)))
	h.Counts[max(0, min(i, len(h.Counts)-1))]++ // the clamp only absorbs rounding at the ends
}

// LowerEdge returns the lower edge of bin i, in µs.
func (h *Histogram) LowerEdge(i int) float64 {
	return h.MinUs * math.Pow(10, float64(i)/float64(h.BinsPerDecade))
}

// Total returns the number of samples.
func (h *Histogram) Total() int {
	n := h.Under + h.Over
	for _, c := range h.Counts {
		n += c
	}
	return n
}
