package main

import (
	"testing"
)

// TestHistogramReport checks that summarize puts every TBM sample of every
// schema in the report's histogram, the failing schemas' too, as it does
// for the percentiles.
func TestHistogramReport(t *testing.T) {
	rs := []*schemaResult{
		{ID: "a", Status: StatusPass, tbm: []float32{0.5, 1, 2000}},
		{ID: "b", Status: StatusValidation, tbm: []float32{0.001, 30}},
		{ID: "c", Status: StatusCompileError},
	}
	rep := summarize(rs, 0)
	h := rep.TBMHist
	if n := h.Total(); n != rep.Tokens || n != 5 {
		t.Errorf("histogram holds %d samples, report %d tokens; want 5", h.Total(), rep.Tokens)
	}
	if h.Under != 1 || h.Counts[40] != 1 || h.Counts[69] != 1 {
		t.Errorf("histogram: under %d, bin 40 (1 µs) %d, bin 69 (30 µs) %d; want 1 each", h.Under, h.Counts[40], h.Counts[69])
	}
}
