package runner

import "time"

// Stats are the runner-wide counters since New.
type Stats struct {
	Steps        int64 // decode steps
	BatchTokens  int64 // tokens decoded (prompt and output)
	PromptTokens int64 // prompt tokens decoded
	ReusedTokens int64 // prompt tokens skipped by KV prefix reuse
	Sampled      int64 // output tokens drawn by the sampler
	Forced       int64 // output tokens forced by constraints (jump-forward)
	// Overlapped is the masks filled during the decode before them
	// (Config.OverlapMasks), of the Sampled tokens that had a guide.
	Overlapped  int64
	Requests    int64         // requests finished, for any reason
	Panics      int64         // panics recovered (each ended its requests, CodePanic)
	StepTime    time.Duration // total time in steps (decode, mask, sampling)
	MaxStepTime time.Duration // the longest step
	DecodeTime  time.Duration // time inside Engine.Decode
	// LogitsTime is the time inside Engine.Logits, reading the rows out
	// (with a GPU backend it includes waiting for the device to finish).
	LogitsTime time.Duration
	SampleTime time.Duration // time inside the sampler
	// ConstraintTime is the time in FillMask, Accept and Forced, added when
	// each request finishes.
	ConstraintTime time.Duration
}

// Output returns the number of output tokens (sampled plus forced).
func (s Stats) Output() int64 { return s.Sampled + s.Forced }

// TokensPerSecond returns output tokens per second of step time.
func (s Stats) TokensPerSecond() float64 {
	if s.StepTime <= 0 {
		return 0
	}
	return float64(s.Output()) / s.StepTime.Seconds()
}

// MeanStepTime returns the mean time of one step.
func (s Stats) MeanStepTime() time.Duration {
	if s.Steps == 0 {
		return 0
	}
	return s.StepTime / time.Duration(s.Steps)
}

// ConstraintTimePerToken returns the constraint time (mask and accept) per
// output token.
func (s Stats) ConstraintTimePerToken() time.Duration {
	if s.Output() == 0 {
		return 0
	}
	return s.ConstraintTime / time.Duration(s.Output())
}

// ForcedShare returns the fraction of output tokens that were forced.
func (s Stats) ForcedShare() float64 {
	if s.Output() == 0 {
		return 0
	}
	return float64(s.Forced) / float64(s.Output())
}
