// Package sampler turns one row of logits into one token, under an optional
// constraint mask, with the usual OpenAI / llama.cpp sampling controls.
//
// It knows logits and bitset masks and nothing of grammars: the mask comes
// from the caller (in Conform, from an fsm matcher), as a []uint64 where bit
// i (word i/64, bit i%64) set means token i is allowed.
//
// # Pipeline
//
// For each token the chain runs in this fixed order:
//
//	logit_bias → constraint mask → repetition / presence / frequency penalties
//	→ temperature → top_k → top_p → min_p → seeded draw (argmax when greedy)
//
// In practice the first two stages are fused into a gather: the allowed
// (id, logit) pairs are collected into a scratch candidate list, and every
// later stage works on that list only. Two gathers exist:
//
//   - the sparse gather walks the set bits of the mask and reads only the
//     allowed entries of the row (it never touches the rest of it);
//   - the dense gather first applies the mask to the row in place
//     ([ApplyMask]: O(vocab/64) word tests, all-ones words skipped, zero words
//     bulk-filled with -Inf, single writes only for disallowed ids), then
//     scans the row.
//
// [Sampler.Sample] picks between them from the mask's popcount (see
// sparseDivisor for the measured threshold). Logit bias is added to the
// gathered candidates: adding it before or after the mask gives the same
// result, since a disallowed token is excluded whatever its bias.
//
// # Logprobs
//
// Logprobs are computed after masking and penalties: the log-softmax, over
// the allowed set, of the post-penalty logits divided by the temperature
// (temperature 1 when greedy), before top_k / top_p / min_p truncation. So
// the reported value is the probability of the token under the constrained,
// penalised, temperature-scaled distribution, and the logprobs of all allowed
// tokens sum (in probability) to 1. Tokens excluded by the mask are never
// reported among the top logprobs.
//
// # Sample first, mask on rejection: measured, not used
//
// Drawing from the unconstrained distribution first and building the mask
// only when the draw is rejected is exact for pure temperature sampling and
// greedy: P(a) = p(a) + (1-p(A))·p(a)/p(A) = p(a)/p(A) for every allowed a.
// With top_k, top_p or min_p it is not (the truncation would be computed
// over the unconstrained distribution), and logprobs need the mask anyway.
// BenchmarkSampleFirst (samplefirst_test.go, vocab 128k, temperature 0.8,
// a 90%-dense mask) measured it against mask-first: no gain when the model
// agrees with the mask (the softmax over the row dominates both, and the
// sparse gather makes masking nearly free), about 2x slower when it does not
// (two softmaxes). Its only possible gain is skipping the constraint's own
// mask computation, which needs a membership test the runner's Constraint
// does not offer; so Sample is mask-first and the variant stays in the test
// file for re-measurement.
//
// # Conventions
//
// A *Sampler belongs to one sequence and is not safe for concurrent use; it
// owns its RNG (seeded: same seed and same inputs give the same tokens) and
// its penalty history, and reuses its scratch buffers, so a Sample call
// allocates nothing of vocabulary size after the first.
package sampler
