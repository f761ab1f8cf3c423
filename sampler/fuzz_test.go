package sampler

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzSample feeds arbitrary logits (NaN, ±Inf, subnormals included),
// masks and parameters: Sample never panics, never returns a disallowed
// token, and fails only with an *Error.
func FuzzSample(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, uint64(5), uint8(0), 0.9, 0.1, int8(2))
	f.Add([]byte{0, 0, 192, 127, 0, 0, 128, 255, 0, 0, 128, 127}, uint64(7), uint8(3), 1.0, 0.0, int8(0))
	f.Fuzz(func(t *testing.T, raw []byte, maskBits uint64, temp uint8, topP, minP float64, topK int8) {
		n := len(raw) / 4
		if n == 0 || n > 64 {
			return
		}
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		mask := []uint64{maskBits}
		if n < 64 {
			mask[0] &= 1<<uint(n) - 1
		}
		p := Params{
			Temperature: Temp(float64(temp) / 64),
			TopP:        topP,
			MinP:        minP,
			TopK:        int(topK),
			TopLogprobs: int(temp) % 4,
			Seed:        maskBits,
		}
		s, err := New(n, p)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidParam {
				t.Fatalf("New(%d, %+v) = %v, want nil or CodeInvalidParam", n, p, err)
			}
			return
		}
		res, err := s.Sample(logits, mask, 0)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Sample = %v, want an *Error", err)
			}
			return
		}
		if !Allowed(mask, res.ID) {
			t.Fatalf("Sample(%v, %b) = %d, a disallowed token", logits, mask[0], res.ID)
		}
	})
}
