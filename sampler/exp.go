package sampler

import "math"

// expNeg returns e^x in float32 for x <= 0 (the sampler's weights are
// exp(l - max)), to within 2 ulp of float32(math.Exp(x)) over the normal
// range, and 0 below it (x < -87.3, where float32 has only subnormals:
// weights under 1e-38 that no draw can tell from 0).
//
// Why not math.Exp: it is float64 and, over a 128k-token row, took a
// quarter of an unconstrained draw (BenchmarkSample, 2.7 ms at
// temperature 1). Here: x = n·ln2 + r with n = round(x/ln2) and
// |r| <= ln2/2, r computed with ln2 split in two (Cody-Waite) so that it
// is exact to float32; e^r by its Taylor series to degree 7 (truncation
// error r^8/8! < 6e-9, under float32's 6e-8); 2^n put into the exponent
// bits.
func expNeg(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375 // ln2's leading bits: n·ln2hi is exact
		ln2lo = -2.12194440e-4
		lo    = -87.33654 // ln of float32's smallest normal
	)
	if !(x >= lo) { // also NaN
		return 0
	}
	if x > 0 {
		x = 0
	}
	// x*log2e is in [-126, 0]: truncating y-0.5 towards zero rounds it to
	// an integer within 0.5 (+1 ulp) of it, and one conversion is cheaper
	// than math.Floor's call.
	n := float32(int32(x*log2e - 0.5))
	r := x - n*ln2hi
	r -= n * ln2lo
	p := float32(1.0 / 5040)
	p = p*r + 1.0/720
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	// p is in [0.70, 1.42]; n in [-126, 0].
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
