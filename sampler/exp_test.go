package sampler

import (
	"math"
	"testing"
)

// TestExpNeg compares expNeg with float32(math.Exp) on a dense grid over
// [-90, 0] and at the edges: at most 2 ulp apart on the normal range, 0
// below it and for NaN, 1 at 0.
func TestExpNeg(t *testing.T) {
	ulps := func(a, b float32) int64 {
		d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
		return max(d, -d)
	}
	worst, at := int64(0), float32(0)
	for i := 0; i <= 9_000_000; i++ {
		x := float32(-90 + float64(i)*1e-5)
		got := expNeg(x)
		want := float32(math.Exp(float64(x)))
		if x < -87.33654 {
			if got != 0 {
				t.Fatalf("expNeg(%g) = %g, want 0 below the normal range", x, got)
			}
			continue
		}
		if u := ulps(got, want); u > worst {
			worst, at = u, x
		}
	}
	if worst > 2 {
		t.Errorf("expNeg: %d ulp from float32(math.Exp) at %g, want at most 2", worst, at)
	}
	t.Logf("worst: %d ulp at %g", worst, at)
	for _, tc := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Copysign(0, -1)), 1}, {1e-30, 1}, {float32(math.NaN()), 0},
		{float32(math.Inf(-1)), 0}, {-1e30, 0},
	} {
		if got := expNeg(tc.x); got != tc.want {
			t.Errorf("expNeg(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
}

func BenchmarkExp(b *testing.B) {
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = -float32(i%400) / 20
	}
	b.Run("expNeg", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for _, x := range xs {
				s += expNeg(x)
			}
		}
		_ = s
	})
	b.Run("math.Exp", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for _, x := range xs {
				s += float32(math.Exp(float64(x)))
			}
		}
		_ = s
	})
}
