package tbmhist

import (
	"math"
	"testing"
)

// TestHistogram checks which bin a sample lands in, at and around the
// edges, and the under and over counts.
func TestHistogram(t *testing.T) {
	tests := []struct {
		us               float64
		bin, under, over int // bin -1: none
	}{
		{0, -1, 1, 0},
		{-1, -1, 1, 0},
		{math.NaN(), -1, 1, 0},
		{0.0099, -1, 1, 0},
		{0.01, 0, 0, 0},
		{0.0112, 0, 0, 0},  // 10^(1/20) = 1.122: still bin 0
		{0.0113, 1, 0, 0},  // just past it
		{0.1, 20, 0, 0},    // one decade up
		{1, 40, 0, 0},      // 1 µs
		{1.5, 43, 0, 0},    // log10(150)·20 = 43.5
		{1000, 100, 0, 0},  // 1 ms
		{9.9e6, 179, 0, 0}, // just under 10 s: the last bin
		{1e7, -1, 0, 1},    // 10 s: over
		{math.Inf(1), -1, 0, 1},
	}
	for _, tt := range tests {
		h := New()
		h.Add(tt.us)
		bin := -1
		for i, c := range h.Counts {
			if c != 0 {
				if bin != -1 || c != 1 {
					t.Errorf("add(%g): counts %v, want one sample", tt.us, h.Counts)
				}
				bin = i
			}
		}
		if bin != tt.bin || h.Under != tt.under || h.Over != tt.over {
			t.Errorf("add(%g): bin %d, under %d, over %d; want bin %d, under %d, over %d", tt.us, bin, h.Under, h.Over, tt.bin, tt.under, tt.over)
		}
		if bin >= 0 && (tt.us < h.LowerEdge(bin) || tt.us >= h.LowerEdge(bin+1)) {
			t.Errorf("add(%g): bin %d is [%g, %g)", tt.us, bin, h.LowerEdge(bin), h.LowerEdge(bin+1))
		}
	}
	if h := New(); len(h.Counts) != decades*binsPerDecade || h.Total() != 0 {
		t.Errorf("New: %d bins, %d samples; want %d and 0", len(h.Counts), h.Total(), decades*binsPerDecade)
	}
}
