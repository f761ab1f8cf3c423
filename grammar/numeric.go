package grammar

import (
	"math/big"
	"strings"

	"conform/fsm"
)

// This file builds exact languages of JSON numbers within bounds. Integers
// are split by sign and digit count, each count a prefix-shared digit range
// (rangeDigits). Decimals fix the integer part first and then compare the
// fraction digit by digit, which is exact because a decimal fraction of a
// fixed integer part orders like its digit string padded with zeros. The
// approach follows the one described for llguidance's rx_int_range /
// rx_float_range (see the project's notes, §4.12); the code is our own.

var (
	digit    = decClass(0, 9)
	digits   = fsm.Star(digit)
	nzDigit  = decClass(1, 9)
	fracAny  = fsm.Opt(fsm.Cat(fsm.Lit("."), fsm.Plus(digit)))
	expPart  = fsm.Cat(fsm.RuneClass(fsm.RuneRange{Lo: 'e', Hi: 'e'}, fsm.RuneRange{Lo: 'E', Hi: 'E'}), fsm.Opt(fsm.RuneClass(fsm.RuneRange{Lo: '+', Hi: '+'}, fsm.RuneRange{Lo: '-', Hi: '-'})), fsm.Plus(digit))
	natAny   = fsm.Alt(fsm.Lit("0"), fsm.Cat(nzDigit, digits))
	jsonNum  = fsm.Cat(fsm.Opt(fsm.Lit("-")), natAny, fracAny, fsm.Opt(expPart))
	jsonInt  = fsm.Alt(fsm.Lit("0"), fsm.Cat(fsm.Opt(fsm.Lit("-")), nzDigit, digits))
	bigOne   = big.NewInt(1)
	bigZero  = new(big.Int)
	ratZero  = new(big.Rat)
	bigTen   = big.NewInt(10)
	maxDigit = 400 // the most fraction or integer digits a bound may need (JSON exponents are capped at ±400 by parseRat)
)

// bound is one end of a numeric interval.
type bound struct {
	r    *big.Rat
	excl bool
}

// natRange matches the decimal naturals (no leading zeros) in [lo, hi]; hi
// nil means no upper bound.
func natRange(lo, hi *big.Int) *fsm.Node {
	if lo.Sign() < 0 {
		lo = bigZero
	}
	if hi != nil && hi.Cmp(lo) < 0 {
		return fsm.NoMatch()
	}
	ls := lo.String()
	var alts []*fsm.Node
	if hi == nil {
		alts = append(alts, rangeDigits(strDigits(ls), strDigits(strings.Repeat("9", len(ls))), 10, decClass))
		alts = append(alts, fsm.Cat(nzDigit, fsm.Repeat(digit, len(ls), -1)))
		return fsm.Alt(alts...)
	}
	hs := hi.String()
	for l := len(ls); l <= len(hs); l++ {
		a := "1" + strings.Repeat("0", l-1)
		if l == len(ls) {
			a = ls
		}
		b := strings.Repeat("9", l)
		if l == len(hs) {
			b = hs
		}
		alts = append(alts, rangeDigits(strDigits(a), strDigits(b), 10, decClass))
	}
	return fsm.Alt(alts...)
}

func strDigits(s string) []int {
	d := make([]int, len(s))
	for i := range s {
		d[i] = int(s[i] - '0')
	}
	return d
}

// intRange matches JSON integers (never -0) in [lo, hi]; nil is unbounded.
func intRange(lo, hi *big.Int) *fsm.Node {
	if lo == nil && hi == nil {
		return jsonInt
	}
	var alts []*fsm.Node
	if hi == nil || hi.Sign() >= 0 {
		l := lo
		if l == nil || l.Sign() < 0 {
			l = bigZero
		}
		alts = append(alts, natRange(l, hi))
	}
	if lo == nil || lo.Sign() < 0 {
		l := bigOne
		if hi != nil && hi.Sign() < 0 {
			l = new(big.Int).Neg(hi)
		}
		var h *big.Int
		if lo != nil {
			h = new(big.Int).Neg(lo)
		}
		alts = append(alts, fsm.Cat(fsm.Lit("-"), natRange(l, h)))
	}
	return fsm.Alt(alts...)
}

// intBounds turns rational bounds into inclusive integer bounds.
func intBounds(lo, hi *bound) (l, h *big.Int) {
	if lo != nil {
		l = ceilRat(lo.r)
		if lo.excl && lo.r.IsInt() {
			l.Add(l, bigOne)
		}
	}
	if hi != nil {
		h = floorRat(hi.r)
		if hi.excl && hi.r.IsInt() {
			h.Sub(h, bigOne)
		}
	}
	return l, h
}

func floorRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // Euclidean division with a positive divisor is floor division
}

func ceilRat(r *big.Rat) *big.Int {
	q := floorRat(r)
	if !r.IsInt() {
		q.Add(q, bigOne)
	}
	return q
}

// decimal splits a non-negative rational with a finite decimal expansion
// into its integer digits and its fraction digits (trailing zeros removed).
func decimal(r *big.Rat) (string, []int, bool) {
	ip := floorRat(r)
	f := new(big.Rat).Sub(r, new(big.Rat).SetInt(ip))
	var frac []int
	for f.Sign() != 0 {
		if len(frac) >= maxDigit {
			return "", nil, false
		}
		f.Mul(f, new(big.Rat).SetInt(bigTen))
		d := floorRat(f)
		frac = append(frac, int(d.Int64()))
		f.Sub(f, new(big.Rat).SetInt(d))
	}
	return ip.String(), frac, true
}

func digitsLit(d []int) *fsm.Node {
	b := make([]byte, len(d))
	for i, x := range d {
		b[i] = byte('0' + x)
	}
	return fsm.LitBytes(b)
}

// fracGE matches the optional fraction parts ("" or "." digits) whose value
// 0.s is ≥ 0.α (> when strict).
func fracGE(alpha []int, strict bool) *fsm.Node {
	dot := fsm.Lit(".")
	if len(alpha) == 0 {
		if !strict {
			return fracAny
		}
		return fsm.Cat(dot, digits, nzDigit, digits)
	}
	var alts []*fsm.Node
	for i, a := range alpha {
		if a < 9 {
			alts = append(alts, fsm.Cat(dot, digitsLit(alpha[:i]), decClass(a+1, 9), digits))
		}
	}
	if strict {
		alts = append(alts, fsm.Cat(dot, digitsLit(alpha), digits, nzDigit, digits))
	} else {
		alts = append(alts, fsm.Cat(dot, digitsLit(alpha), digits))
	}
	return fsm.Alt(alts...)
}

// fracLE matches the optional fraction parts whose value 0.s is ≤ 0.α (<
// when strict).
func fracLE(alpha []int, strict bool) *fsm.Node {
	dot := fsm.Lit(".")
	if len(alpha) == 0 {
		if strict {
			return fsm.NoMatch()
		}
		return fsm.Opt(fsm.Cat(dot, fsm.Plus(fsm.Lit("0"))))
	}
	alts := []*fsm.Node{fsm.Empty()}
	for i, a := range alpha {
		if a > 0 {
			alts = append(alts, fsm.Cat(dot, digitsLit(alpha[:i]), decClass(0, a-1), digits))
		}
		if i > 0 {
			alts = append(alts, fsm.Cat(dot, digitsLit(alpha[:i])))
		}
	}
	if !strict {
		alts = append(alts, fsm.Cat(dot, digitsLit(alpha), fsm.Star(fsm.Lit("0"))))
	}
	return fsm.Alt(alts...)
}

// nonnegDecimals matches non-negative decimals "I" or "I.F" (no exponent)
// in the interval from lo (r ≥ 0) to hi (nil: unbounded).
func nonnegDecimals(lo bound, hi *bound) (*fsm.Node, bool) {
	if hi != nil {
		c := lo.r.Cmp(hi.r)
		if c > 0 || (c == 0 && (lo.excl || hi.excl)) {
			return fsm.NoMatch(), true
		}
	}
	a, alpha, ok := decimal(lo.r)
	if !ok {
		return nil, false
	}
	ai, _ := new(big.Int).SetString(a, 10)
	next := new(big.Int).Add(ai, bigOne)
	if hi == nil {
		return fsm.Alt(fsm.Cat(fsm.Lit(a), fracGE(alpha, lo.excl)), fsm.Cat(natRange(next, nil), fracAny)), true
	}
	b, beta, ok := decimal(hi.r)
	if !ok {
		return nil, false
	}
	if a == b {
		return fsm.Cat(fsm.Lit(a), fsm.And(fracGE(alpha, lo.excl), fracLE(beta, hi.excl))), true
	}
	bi, _ := new(big.Int).SetString(b, 10)
	prev := new(big.Int).Sub(bi, bigOne)
	return fsm.Alt(
		fsm.Cat(fsm.Lit(a), fracGE(alpha, lo.excl)),
		fsm.Cat(natRange(next, prev), fracAny),
		fsm.Cat(fsm.Lit(b), fracLE(beta, hi.excl)),
	), true
}

// decRange matches JSON numbers without exponent in the interval [lo, hi]
// (either end may be nil or exclusive). Negative zero is never produced.
func decRange(lo, hi *bound) (*fsm.Node, bool) {
	var alts []*fsm.Node
	if hi == nil || hi.r.Sign() > 0 || (hi.r.Sign() == 0 && !hi.excl) {
		l := bound{r: ratZero}
		if lo != nil && lo.r.Sign() >= 0 {
			l = *lo
		}
		n, ok := nonnegDecimals(l, hi)
		if !ok {
			return nil, false
		}
		alts = append(alts, n)
	}
	if lo == nil || lo.r.Sign() < 0 {
		l := bound{r: ratZero, excl: true}
		if hi != nil && hi.r.Sign() < 0 {
			l = bound{r: new(big.Rat).Neg(hi.r), excl: hi.excl}
		}
		var h *bound
		if lo != nil {
			h = &bound{r: new(big.Rat).Neg(lo.r), excl: lo.excl}
		}
		n, ok := nonnegDecimals(l, h)
		if !ok {
			return nil, false
		}
		alts = append(alts, fsm.Cat(fsm.Lit("-"), n))
	}
	return fsm.Alt(alts...), true
}
