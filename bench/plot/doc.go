// Command plot draws the benchmark results as SVG files: the JSON that
// bench/maskbench and bench/e2e write (-json) goes in, and bench/plots/
// (shown in bench/README.md) comes out.
//
//	make plots [MASKBENCH_JSON=...] [MASKBENCH_LLAMACPP_JSON=...] [E2E_JSON="p1.json p4.json"] [PLOTS_DIR=...]
//
// It draws three figures:
//
//   - tbm-cdf.svg: the distribution of the time between masks (TBM: mask +
//     accept, per token) as a CDF over a log time axis, for Conform
//     (-maskbench) and for llama.cpp's grammar engine (-maskbench-llamacpp)
//     run over the same schemas; from each run's tbm_hist, the histogram of
//     every sample (bench/tbmhist), so a point is exact at a bin's
//     upper edge (bins are 12% wide);
//   - ttfm-cdf.svg: the distribution of the time to first mask (the compile
//     call bench/maskbench times; each first mask is a TBM sample) over the
//     schemas each engine compiled, exact, from each schema's ttfm_us;
//   - e2e-tok-s.svg: bench/e2e's output tokens per second (the batch's
//     throughput, all sequences) of each mode (unconstrained, Conform,
//     llama.cpp grammar), grouped by parallelism, one -e2e file per
//     parallel value.
//
// Each title names the runs' commit and date when the JSON carries them
// (bench/runinfo). The two MaskBench runs must cover the same schemas, in
// the same order, or nothing is drawn: a CDF of one engine over other
// schemas than the other's compares nothing.
//
// The command is pure Go (gonum.org/v1/plot; fonts are not embedded: the
// SVG names Liberation Sans and a viewer without it substitutes). Bad
// input (a missing file, a file that is not such JSON, a run written
// before tbm_hist existed, runs over different schemas) is an *Error
// naming the file and the problem.
package main
