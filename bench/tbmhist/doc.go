// Package tbmhist is the TBM histogram that bench/maskbench writes and
// bench/plot reads: the report's percentiles say little about the shape of
// the distribution, and a CDF plot needs all of it. Every TBM sample of a
// run (millions in a full run) goes into one of a fixed set of log-spaced
// bins, so the JSON carries the whole distribution in a few hundred
// counts, and two runs (two engines) share their bin edges and can be
// compared bin by bin.
//
// In the JSON ("tbm_hist"): bin i of counts holds the samples v with
// min_us·10^(i/bins_per_decade) ≤ v < min_us·10^((i+1)/bins_per_decade);
// under counts the samples below min_us, over those at or above the last
// edge (min_us·10^decades).
package tbmhist
