package sampler

import (
	"math"

	"conform/token"
)

// TokenID names a token: an index into the model's logit row. It is
// token.ID, the id type every stage shares.
type TokenID = token.ID

// Limits on parameters. They follow the OpenAI API where it has one.
const (
	// MaxLogitBias is the largest |bias| accepted, as in the OpenAI API
	// (±100 is enough to ban or force a token against any realistic logit).
	MaxLogitBias = 100
	// MaxPenalty bounds |presence| and |frequency| penalties, as in the OpenAI API.
	MaxPenalty = 2
	// MaxTopLogprobs is the most alternatives reported per token, as in the
	// OpenAI API; it also bounds the per-token work of the logprob stage.
	MaxTopLogprobs = 20
)

// Params are the sampling controls of one request. The zero value is
// sensible: temperature 1, top_p 1, top_k off, min_p off, no penalties, no
// bias, seed 0, no logprobs.
type Params struct {
	// Temperature divides the logits. nil means 1; 0 (or anything below
	// MinTemperature) means greedy: argmax, ties to the lowest id. Must be
	// >= 0. Use [Temp] to set it inline.
	Temperature *float64
	// TopK keeps the k most likely tokens; 0 means off. Must be >= 0.
	TopK int
	// TopP keeps the smallest most-likely set whose mass reaches TopP; 0
	// means 1 (off). Must be in (0, 1] when set.
	TopP float64
	// MinP drops tokens whose probability is below MinP times the top
	// token's; 0 means off. Must be in [0, 1].
	MinP float64
	// RepetitionPenalty (llama.cpp / CTRL style) divides positive and
	// multiplies negative logits of tokens seen in the penalty window; 0
	// means 1 (off). Must be > 0 when set.
	RepetitionPenalty float64
	// PresencePenalty is subtracted once from the logit of every token seen
	// in the window (OpenAI semantics). Must be in [-2, 2].
	PresencePenalty float64
	// FrequencyPenalty is subtracted once per occurrence in the window
	// (OpenAI semantics). Must be in [-2, 2].
	FrequencyPenalty float64
	// PenaltyLastN is the window, in most recent observed tokens, over which
	// penalties count; 0 means every token observed so far. Must be >= 0.
	PenaltyLastN int
	// LogitBias adds a bias to a token's logit before anything else (OpenAI
	// logit_bias). Each bias must be finite and within ±MaxLogitBias; ids
	// must be inside the vocabulary.
	LogitBias map[TokenID]float64
	// Seed seeds the sampler's RNG: equal seeds and inputs give equal tokens.
	Seed uint64
	// Logprobs asks for the chosen token's logprob in [Result.Logprob].
	Logprobs bool
	// TopLogprobs is how many most likely alternatives to report (0..20);
	// a non-zero value implies Logprobs.
	TopLogprobs int
}

// Temp returns a pointer to t, for [Params.Temperature].
func Temp(t float64) *float64 { return &t }

// Validate checks every field against its range, for a vocabulary of vocab
// tokens (vocab <= 0 skips the logit-bias id check). It returns an *Error with
// CodeInvalidParam naming the first bad field.
func (p *Params) Validate(vocab int) error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	if t := p.Temperature; t != nil && (bad(*t) || *t < 0) {
		return errorf(CodeInvalidParam, "temperature", "%v is not a finite number >= 0", *t)
	}
	if p.TopK < 0 {
		return errorf(CodeInvalidParam, "top_k", "%d is negative", p.TopK)
	}
	if bad(p.TopP) || p.TopP < 0 || p.TopP > 1 {
		return errorf(CodeInvalidParam, "top_p", "%v is outside (0, 1]", p.TopP)
	}
	if bad(p.MinP) || p.MinP < 0 || p.MinP > 1 {
		return errorf(CodeInvalidParam, "min_p", "%v is outside [0, 1]", p.MinP)
	}
	if bad(p.RepetitionPenalty) || p.RepetitionPenalty < 0 {
		return errorf(CodeInvalidParam, "repetition_penalty", "%v is not a finite number > 0", p.RepetitionPenalty)
	}
	if bad(p.PresencePenalty) || math.Abs(p.PresencePenalty) > MaxPenalty {
		return errorf(CodeInvalidParam, "presence_penalty", "%v is outside [-2, 2]", p.PresencePenalty)
	}
	if bad(p.FrequencyPenalty) || math.Abs(p.FrequencyPenalty) > MaxPenalty {
		return errorf(CodeInvalidParam, "frequency_penalty", "%v is outside [-2, 2]", p.FrequencyPenalty)
	}
	if p.PenaltyLastN < 0 {
		return errorf(CodeInvalidParam, "penalty_last_n", "%d is negative", p.PenaltyLastN)
	}
	if p.TopLogprobs < 0 || p.TopLogprobs > MaxTopLogprobs {
		return errorf(CodeInvalidParam, "top_logprobs", "%d is outside [0, %d]", p.TopLogprobs, MaxTopLogprobs)
	}
	for id, b := range p.LogitBias {
		if id < 0 || (vocab > 0 && int(id) >= vocab) {
			return errorf(CodeInvalidParam, "logit_bias", "token %d is outside the vocabulary of %d", id, vocab)
		}
		if bad(b) || math.Abs(b) > MaxLogitBias {
			return errorf(CodeInvalidParam, "logit_bias", "bias %v for token %d is outside [-100, 100]", b, id)
		}
	}
	return nil
}

// MinTemperature is the smallest temperature sampled as such; a smaller
// one (0 included) is greedy. Dividing logits by less would overflow
// float32, and at 1e-4 a logit gap of 0.01 is already a factor e^100.
const MinTemperature = 1e-4

// greedy reports whether the temperature is below MinTemperature.
func (p *Params) greedy() bool { return p.Temperature != nil && *p.Temperature < MinTemperature }

// temperature returns the effective temperature (1 when unset).
func (p *Params) temperature() float64 {
	if p.Temperature == nil {
		return 1
	}
	return *p.Temperature
}

// pureTemperature reports whether no truncation stage is active, the case in
// which sample-first-then-verify is exact.
func (p *Params) pureTemperature() bool {
	return p.TopK == 0 && (p.TopP == 0 || p.TopP == 1) && p.MinP == 0
}
