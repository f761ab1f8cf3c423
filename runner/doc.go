// Package runner is the generation loop: continuous batching of many
// requests over one inference engine, with per-request sampling and an
// optional [Guide] (the request's output constraint) that guarantees the
// output's shape.
//
// # Pipeline
//
// One goroutine ([Runner.Run]) owns the [Engine]. Each step it:
//
//  1. frees the slots of cancelled requests (their KV cells are removed);
//  2. admits waiting requests into free slots, reusing the longest KV prefix
//     a free slot still holds for the new prompt;
//  3. builds one [Batch]: the pending tokens of generating slots first (the
//     last sampled token plus any forced continuation), then prompt chunks of
//     at most Config.PrefillChunk tokens from prefilling slots, up to
//     Config.BatchSize tokens in all;
//  4. decodes it, and for each slot whose pending tokens are all in the KV
//     cache, takes its logits row and runs
//     guide mask (FillMask, or FillMaskWithin the remaining budget)
//     → sampler chain → Accept → Forced,
//     where forced tokens (the only way forward under the constraint) are
//     accepted and queued without sampling, so several of them go through
//     one decode (jump-forward); a constraint that forces its whole output
//     finishes without any decode. With Config.ParallelSampling the slots
//     run this concurrently, one goroutine each; with Config.OverlapMasks
//     the masks are filled during the decode, on another goroutine, and
//     applied when the rows arrive (overlap.go);
//  5. streams one [Event] per output token, and a final one with the
//     [FinishReason] (EOS, stop sequence, terminated constraint, max tokens,
//     context end, cancellation, or error).
//
// A request with a Guide never gets an unconstrained token: an error
// from the Guide or an empty mask ends that request with the error.
//
// A Guide that is a [BudgetGuide] (an fsm matcher) also keeps the
// output closable within the request's budget, the lesser of what
// MaxTokens and the context leave: before the first token the request
// ends with an error if even the shortest output does not fit (MinTokens),
// and each step's mask is FillMaskWithin(budget), which keeps only the
// tokens after which the output can still be completed in time. So an
// output cut by the budget is complete. When the budget removed a token at
// some step, the budget closed the output, and the final reason is
// FinishLength even if the constraint then terminated or EOS came.
//
// # Conventions
//
// Names: a [Guide] is the runner's view of a request's output constraint,
// one walker per request (*fsm.Matcher); fsm.Constraint is the compiled
// automaton such walkers share, and the runner never sees it. [TokenID] is
// token.ID, the one id type of every stage (fsm, tokenizer, sampler,
// internal/llama alias it too), so ids cross the sampler and the engine as
// they are.
//
// Slots are numbered 0..Config.Slots-1 and slot i uses KV sequence id i.
// A slot's cache is the list of tokens its KV sequence holds (positions 0..);
// its queue is the tokens to decode next. Stats are kept runner-wide
// ([Runner.Stats]) and per request ([Usage] in the final event).
package runner
