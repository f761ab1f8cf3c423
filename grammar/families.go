package grammar

import (
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"conform/fsm"
)

// numberNode builds the numbers of r: integers only when r allows no
// fractions, bounded and multipleOf numbers without exponent.
func (c *compiler) numberNode(r *ir, ex excl) (*fsm.Node, error) {
	if len(ex.ranges) > 0 {
		// What the nots' intervals leave of r's interval, one number
		// language per piece.
		ivs := []numRange{{r.lo, r.hi}}
		for _, e := range ex.ranges {
			ivs = subtractRange(ivs, e)
		}
		ex.ranges = nil
		alts := make([]*fsm.Node, 0, len(ivs))
		for _, iv := range ivs {
			piece := *r
			piece.lo, piece.hi = iv.lo, iv.hi
			n, err := c.numberNode(&piece, ex)
			if err != nil {
				return nil, err
			}
			alts = append(alts, n)
		}
		return fsm.Alt(alts...), nil
	}
	exclVals := ex.vals
	intOnly := intOnlyNumbers(r) // a multiple of an integer is an integer
	var intMults []*big.Int
	var fracMults []*fsm.Node // fraction languages of decimal multipleOf values (fracMultiple)
	for _, m := range r.mult {
		switch {
		case intOnly:
			// An integer is a multiple of p/q (lowest terms) exactly
			// when it is a multiple of p: every integer when p is 1.
			if k := new(big.Int).Abs(m.Num()); k.Cmp(bigOne) != 0 {
				intMults = append(intMults, k)
			}
		default:
			if f, ok := decMultipleLang(m); ok {
				fracMults = append(fracMults, f)
				continue
			}
			if err := c.unsupportedKw(r.ptr+"/multipleOf", "multipleOf", "multipleOf "+decMultipleLimits(m)); err != nil {
				return nil, err
			}
		}
	}
	var n *fsm.Node
	if intOnly {
		if r.types&tInt == 0 {
			return fsm.NoMatch(), nil
		}
		lo, hi := intBounds(r.lo, r.hi)
		n = intRange(lo, hi)
		exInts := ex.ints
		if res, ok := residueLang(intMults, exInts); ok && !smallRange(lo, hi) {
			// One remainder automaton for every divisor at once.
			n, intMults, exInts = fsm.And(n, res), nil, boundedExcls(exInts)
		}
		for _, k := range intMults {
			mn, err := c.intMultiple(r, k, lo, hi)
			if err != nil {
				return nil, err
			}
			n = fsm.And(n, mn)
		}
		var ex []*fsm.Node
		for _, v := range exclVals {
			if v.k == kNumber && v.isInteger() {
				q, _ := v.rat()
				ex = append(ex, fsm.Lit(q.Num().String()))
			}
		}
		for _, e := range exInts {
			out, err := c.exclLang(e, lo, hi)
			if err != nil {
				return nil, err
			}
			if out != nil {
				ex = append(ex, out)
			}
		}
		if len(ex) > 0 {
			n = fsm.Diff(n, fsm.Alt(ex...))
		}
		return n, nil
	}
	if r.lo != nil || r.hi != nil {
		d, ok := decRange(r.lo, r.hi)
		if !ok {
			return nil, errorf(CodeTooLarge, r.ptr, "minimum", "numeric bound needs more than %d digits", maxDigit)
		}
		n = d
	} else if len(fracMults) > 0 {
		n = fsm.Cat(fsm.Opt(fsm.Lit("-")), natAny, fracAny)
	} else {
		n = jsonNum
	}
	if len(ex.decs) > 0 {
		// The multiples are subtracted in exponent-free form, so only
		// that form is written (5e0 would survive not multipleOf 5).
		n = fsm.And(n, expFree)
		var out []*fsm.Node
		for _, e := range ex.decs {
			l, err := c.decExclLang(e)
			if err != nil {
				return nil, err
			}
			if l != nil {
				out = append(out, l)
			}
		}
		if len(out) > 0 {
			n = fsm.Diff(n, fsm.Alt(out...))
		}
	}
	if r.types&tInt == 0 {
		// Only non-integers (a number minus integer, for instance): plain
		// decimals with a non-zero fraction digit. Exponent forms, some
		// of which are integers (1.5e1), are left out.
		n = fsm.And(n, fracOnly)
	}
	for _, f := range fracMults {
		n = fsm.And(n, f)
	}
	return n, nil
}

// expFree is the JSON numbers written without exponent.
var expFree = fsm.Cat(fsm.Opt(fsm.Lit("-")), natAny, fracAny)

// negZero is the exponent-free spellings of 0 with a minus sign.
var negZero = fsm.Cat(fsm.Lit("-0"), fsm.Opt(fsm.Cat(fsm.Lit("."), fsm.Plus(fsm.Lit("0")))))

// decExcl is what a not with multipleOf removes from numbers that have
// fractions: the numbers in the not's interval that are multiples of
// every divisor. ptr is the not's.
type decExcl struct {
	lo, hi *bound
	mults  []*big.Rat
	ptr    string
}

// decExclLang is the exponent-free texts e removes: every spelling of each
// such value (trailing zeros, -0), which the multiple languages hold. A
// divisor without one is refused (in lenient mode, warned and the
// exclusion dropped: nil).
func (c *compiler) decExclLang(e decExcl) (*fsm.Node, error) {
	out := expFree
	if e.lo != nil || e.hi != nil {
		d, ok := decRange(e.lo, e.hi)
		if !ok {
			return nil, errorf(CodeTooLarge, e.ptr, "minimum", "numeric bound needs more than %d digits", maxDigit)
		}
		out = d
		if (numRange{e.lo, e.hi}).holdsZero() {
			// decRange writes 0 only as 0 (0.0, …); the record may
			// write it -0 too.
			out = fsm.Alt(out, negZero)
		}
	}
	for _, m := range e.mults {
		ml, ok := decMultipleLang(m)
		if !ok {
			return nil, c.unsupportedKw(e.ptr, "not", "not multipleOf "+decMultipleLimits(m))
		}
		out = fsm.And(out, ml)
	}
	return out, nil
}

// decMultipleLang is the exponent-free numbers that are multiples of m
// (not an integer): by the fraction digits alone (fracMultiple), else by
// a remainder automaton on the integer part (ratMultiple).
func decMultipleLang(m *big.Rat) (*fsm.Node, bool) {
	if f, ok := fracMultiple(m); ok {
		return fsm.Cat(fsm.Opt(fsm.Lit("-")), natAny, f), true
	}
	return ratMultiple(m)
}

// decMultipleLimits says, after "multipleOf ", why decMultipleLang has no
// language for m.
func decMultipleLimits(m *big.Rat) string {
	return m.RatString() + " needs a denominator of at most " + strconv.Itoa(maxRatDenominator) + " and a numerator of at most " + strconv.Itoa(fsm.MaxModulus)
}

// intMultipleLimits says, after "multipleOf ", why intMultipleLang has no
// language for k.
func intMultipleLimits(k *big.Int) string {
	return k.String() + " is over " + strconv.Itoa(fsm.MaxModulus) + " (a remainder automaton has a state per remainder) and its range holds more than " + strconv.Itoa(maxEnumMultiples) + " multiples"
}

// signedInts is the integers whose absolute value nat writes (0 once,
// never -0).
func signedInts(nat *fsm.Node) *fsm.Node {
	return fsm.Alt(nat, fsm.Cat(fsm.Lit("-"), fsm.Diff(nat, fsm.Lit("0"))))
}

// maxRatDenominator bounds q in ratMultiple: a language alternative per
// fraction j/q.
const maxRatDenominator = 1000

// ratMultiple returns the exponent-free numbers that are multiples of
// m = p/q (lowest terms, m > 0): x = I + F (integer part, fraction) is
// one exactly when qF is an integer j (F = j/q, which must be a finite
// decimal) and qI + j ≡ 0 (mod p), that is I ≡ -j·q⁻¹ (mod p), a
// remainder automaton on I's digits (fsm.Residues). So 2.5 = 5/2 takes
// 0, 2.5, 5, 7.5: I ≡ 0 (mod 5) with no fraction, I ≡ 2 with .5. ok is
// false past maxRatDenominator or fsm.MaxModulus, or for m ≤ 0.
func ratMultiple(m *big.Rat) (*fsm.Node, bool) {
	if m.Sign() <= 0 || !m.Num().IsInt64() || !m.Denom().IsInt64() {
		return nil, false
	}
	p, q := m.Num().Int64(), m.Denom().Int64()
	if p > fsm.MaxModulus || q > maxRatDenominator {
		return nil, false
	}
	var qinv int64 // q⁻¹ mod p (gcd(p, q) = 1); any value when p = 1
	if p > 1 {
		qinv = new(big.Int).ModInverse(big.NewInt(q%p), big.NewInt(p)).Int64()
	}
	zeros := fsm.Star(fsm.Lit("0"))
	var alts []*fsm.Node
	for j := int64(0); j < q; j++ {
		frac, ok := finiteFraction(j, q)
		if !ok {
			continue
		}
		rem := (p - (j%p)*qinv%p) % p
		accept := make([]bool, p)
		accept[rem] = true
		intPart := fsm.And(natAny, fsm.Residues(int(p), accept))
		var f *fsm.Node
		if j == 0 {
			f = fsm.Opt(fsm.Cat(fsm.Lit("."), fsm.Plus(fsm.Lit("0"))))
		} else {
			f = fsm.Cat(fsm.Lit("."+frac), zeros)
		}
		alts = append(alts, fsm.Cat(intPart, f))
	}
	// x and -x are multiples together.
	nat := fsm.Alt(alts...)
	return fsm.Cat(fsm.Opt(fsm.Lit("-")), nat), true
}

// finiteFraction returns the decimal digits of j/q (0 ≤ j < q) after the
// point, shortest form ("" for 0), when j/q is a finite decimal.
func finiteFraction(j, q int64) (string, bool) {
	var b strings.Builder
	for r, n := j, 0; r != 0; n++ {
		if n >= 64 {
			return "", false // q has a prime factor other than 2 and 5
		}
		r *= 10
		b.WriteByte(byte('0' + r/q))
		r %= q
	}
	return b.String(), true
}

// fracMultiple returns the fraction part (after the integer digits) of the
// exponent-free numbers that are multiples of m, when m = a/10^k with a
// dividing 10^j for some j ≤ k (0.1 and 0.01, where a = 1 and j = 0: at
// most k fraction digits; 0.25, 0.05, 0.125): x is a multiple of m
// exactly when the last j of its first k fraction digits (zero-padded) are
// a j-digit multiple of a and every later fraction digit is 0, so the
// integer part is free. ok is false for other m (2.5, 0.3), which need
// digits of the integer part.
func fracMultiple(m *big.Rat) (*fsm.Node, bool) {
	k := 0
	a := new(big.Rat).Set(m)
	for !a.IsInt() {
		if k >= maxDigit {
			return nil, false
		}
		a.Mul(a, new(big.Rat).SetInt(bigTen))
		k++
	}
	an := a.Num()
	if !an.IsInt64() || an.Int64() <= 0 {
		return nil, false
	}
	av := an.Int64()
	j, p := 0, int64(1)
	for p%av != 0 {
		if j >= k || j >= 3 {
			return nil, false
		}
		j++
		p *= 10
	}
	var alts []*fsm.Node
	zeros := fsm.Star(fsm.Lit("0"))
	if k > j {
		// Fewer than k-j+1 digits: the last j of the padded k are 0.
		alts = append(alts, fsm.Cat(fsm.Repeat(digit, 1, k-j), zeros))
	}
	for v := int64(0); v < p; v += av {
		s := leftPad(strconv.FormatInt(v, 10), j)
		for i := 1; i <= j; i++ {
			if strings.Trim(s[i:], "0") == "" {
				alts = append(alts, fsm.Cat(fsm.Repeat(digit, k-j, k-j), fsm.Lit(s[:i]), zeros))
			}
		}
	}
	return fsm.Opt(fsm.Cat(fsm.Lit("."), fsm.Alt(alts...))), true
}

// fracOnly is the numbers written without exponent whose fraction has a
// non-zero digit: exactly the exponent-free texts of non-integers.
var fracOnly = fsm.Cat(fsm.Opt(fsm.Lit("-")), fsm.Alt(fsm.Lit("0"), fsm.Cat(nzDigit, fsm.Star(digit))),
	fsm.Lit("."), fsm.Star(digit), fsm.ByteClass(fsm.ByteRange{Lo: '1', Hi: '9'}), fsm.Star(digit))

// maxEnumMultiples bounds the multiples listed when a multipleOf range is
// small enough to enumerate.
const maxEnumMultiples = 1000

// intExcl is what a not with multipleOf removes from integers: the
// integers in [lo, hi] (nil: unbounded) that are multiples of every
// divisor (all > 1). ptr is the not's.
type intExcl struct {
	lo, hi *big.Int
	divs   []*big.Int
	ptr    string
}

// exclLang is the canonical decimals e removes, within [lo, hi] (the
// record's bounds). A divisor without an exact language is refused (in
// lenient mode, warned and the exclusion dropped: nil).
func (c *compiler) exclLang(e intExcl, lo, hi *big.Int) (*fsm.Node, error) {
	l, h := e.lo, e.hi
	if l == nil || lo != nil && lo.Cmp(l) > 0 {
		l = lo
	}
	if h == nil || hi != nil && hi.Cmp(h) < 0 {
		h = hi
	}
	out := intRange(e.lo, e.hi)
	for _, d := range e.divs {
		mn, ok := intMultipleLang(d, l, h)
		if !ok {
			return nil, c.unsupportedKw(e.ptr, "not", "not multipleOf "+intMultipleLimits(d))
		}
		out = fsm.And(out, mn)
	}
	return out, nil
}

// residueLang is the integers (canonical decimals) that are multiples of
// every k in mults and, for each unbounded exclusion of excls, not a
// multiple of all its divisors: a single remainder automaton modulo the
// least common multiple of every divisor, which stays one DFA of that
// many states where the intersection and differences of one automaton
// per divisor would multiply their states. ok is false when every
// divisor divides 1000 (the suffix languages are cheaper) or the modulus
// would pass fsm.MaxModulus.
func residueLang(mults []*big.Int, excls []intExcl) (*fsm.Node, bool) {
	var divs []*big.Int
	divs = append(divs, mults...)
	var sets [][]int // each unbounded exclusion's divisors
	for _, e := range excls {
		if e.lo == nil && e.hi == nil {
			divs = append(divs, e.divs...)
			var s []int
			for _, d := range e.divs {
				s = append(s, int(d.Int64()))
			}
			sets = append(sets, s)
		}
	}
	need := false
	m := big.NewInt(1)
	limit := big.NewInt(fsm.MaxModulus)
	for _, d := range divs {
		need = need || new(big.Int).Mod(big.NewInt(1000), d).Sign() != 0
		g := new(big.Int).GCD(nil, nil, m, d)
		m.Mul(m, new(big.Int).Quo(d, g))
		if m.Cmp(limit) > 0 {
			return nil, false
		}
	}
	if !need {
		return nil, false
	}
	mod := int(m.Int64())
	accept := make([]bool, mod)
	for rem := range accept {
		ok := true
		for _, k := range mults {
			ok = ok && rem%int(k.Int64()) == 0
		}
		for _, s := range sets {
			all := true
			for _, d := range s {
				all = all && rem%d == 0
			}
			ok = ok && !all
		}
		accept[rem] = ok
	}
	// Every condition is divisibility, which holds for -x as for x.
	nat := fsm.And(natAny, fsm.Residues(mod, accept))
	return signedInts(nat), true
}

// smallRange reports whether [lo, hi] holds at most maxEnumMultiples
// integers: their multiples are listed (intMultipleLang), which costs
// less than a remainder automaton of a large modulus.
func smallRange(lo, hi *big.Int) bool {
	return lo != nil && hi != nil && new(big.Int).Sub(hi, lo).Cmp(big.NewInt(maxEnumMultiples)) < 0
}

// boundedExcls returns the exclusions of excls that have a bound (those
// residueLang leaves out).
func boundedExcls(excls []intExcl) []intExcl {
	var out []intExcl
	for _, e := range excls {
		if e.lo != nil || e.hi != nil {
			out = append(out, e)
		}
	}
	return out
}

// intMultiple matches the integers that are multiples of k (intMultipleLang).
func (c *compiler) intMultiple(r *ir, k *big.Int, lo, hi *big.Int) (*fsm.Node, error) {
	if n, ok := intMultipleLang(k, lo, hi); ok {
		return n, nil
	}
	if err := c.unsupportedKw(r.ptr+"/multipleOf", "multipleOf", "multipleOf "+intMultipleLimits(k)); err != nil {
		return nil, err
	}
	return jsonInt, nil
}

// intMultipleLang is the canonical decimals of the multiples of k (> 1)
// in [lo, hi] (nil: unbounded): by the last j digits when k divides 10^j
// (j ≤ 3), else by listing them when the range is small (smallRange),
// else by a remainder automaton (fsm.Multiple) when k is at most
// fsm.MaxModulus, else by listing them when the range holds at most
// maxEnumMultiples multiples. ok is false otherwise.
func intMultipleLang(k *big.Int, lo, hi *big.Int) (*fsm.Node, bool) {
	pow := big.NewInt(1)
	for j := 1; j <= 3; j++ {
		pow.Mul(pow, bigTen)
		if new(big.Int).Mod(pow, k).Sign() != 0 {
			continue
		}
		// Short numbers (fewer than j+1 digits) are listed; longer ones
		// end in a j-digit multiple of k.
		kk := int(k.Int64())
		p := int(pow.Int64())
		var short, suffix []string
		for v := 0; v < p; v += kk {
			short = append(short, strconv.Itoa(v))
			suffix = append(suffix, leftPad(strconv.Itoa(v), j))
		}
		long := fsm.Cat(nzDigit, digits, trie(suffix))
		nat := fsm.Alt(trie(short), long)
		return signedInts(nat), true
	}
	if k.IsInt64() && k.Int64() <= fsm.MaxModulus && !smallRange(lo, hi) {
		// A remainder automaton on the digits (a state per remainder);
		// a small range lists its multiples below, which is cheaper.
		return signedInts(fsm.And(natAny, fsm.Multiple(int(k.Int64())))), true
	}
	if lo != nil && hi != nil {
		span := new(big.Int).Sub(hi, lo)
		cnt := new(big.Int).Quo(span, k)
		if cnt.Cmp(big.NewInt(maxEnumMultiples)) <= 0 {
			first := new(big.Int).Set(lo)
			if m := new(big.Int).Mod(first, k); m.Sign() != 0 {
				first.Add(first, new(big.Int).Sub(k, m))
			}
			var list []string
			for v := first; v.Cmp(hi) <= 0; v = new(big.Int).Add(v, k) {
				list = append(list, v.String())
			}
			return trie(list), true
		}
	}
	return nil, false
}

func leftPad(s string, w int) string {
	for len(s) < w {
		s = "0" + s
	}
	return s
}

// trie returns the prefix-factored alternation of the byte strings ss.
func trie(ss []string) *fsm.Node {
	v := append([]string(nil), ss...)
	sort.Strings(v)
	out := v[:0]
	for i, s := range v {
		if i == 0 || s != v[i-1] {
			out = append(out, s)
		}
	}
	return trieSorted(out)
}

func trieSorted(ss []string) *fsm.Node {
	if len(ss) == 0 {
		return fsm.NoMatch()
	}
	var alts []*fsm.Node
	if ss[0] == "" {
		alts = append(alts, fsm.Empty())
		ss = ss[1:]
	}
	for i := 0; i < len(ss); {
		j := i + 1
		for j < len(ss) && ss[j][0] == ss[i][0] {
			j++
		}
		grp := ss[i:j]
		lcp := grp[0]
		for _, s := range grp[1:] {
			k := 0
			for k < len(lcp) && k < len(s) && lcp[k] == s[k] {
				k++
			}
			lcp = lcp[:k]
		}
		rest := make([]string, len(grp))
		for k, s := range grp {
			rest[k] = s[len(lcp):]
		}
		alts = append(alts, fsm.Cat(fsm.Lit(lcp), trieSorted(rest)))
		i = j
	}
	return fsm.Alt(alts...)
}

// stringNode builds the JSON strings of r (quotes included). Constraints on
// the decoded text (lengths, pattern, format, not) are intersected at code
// point level and then encoded, so they combine exactly.
func (c *compiler) stringNode(r *ir, exclStr []*fsm.Node) (*fsm.Node, error) {
	limit := c.opts.MaxStringLength
	if len(r.patterns) == 0 && len(r.formats) == 0 && len(exclStr) == 0 {
		limit = max(limit, maxPlainStringLength) // counted in chunks (lengthRepeat)
	}
	if r.maxLen > limit && r.minLen <= c.opts.MaxStringLength {
		r = r.clone()
		r.maxLen = limit // sound: only shorter strings are produced
	}
	cp, err := c.stringCP(r, exclStr)
	if err != nil {
		return nil, err
	}
	var body *fsm.Node
	if cp == nil {
		body = c.lengthRepeat(strLang[c.esc()].char, r.minLen, r.maxLen)
	} else {
		body, err = c.encodeString(cp)
		if err != nil {
			return nil, errorf(CodeBadPattern, r.ptr, "pattern", "%v", err)
		}
	}
	return fsm.Cat(fsm.Lit(`"`), body, fsm.Lit(`"`)), nil
}

// maxPlainStringLength is the maxLength a string with no pattern, format
// or not is counted to (larger ones are lowered to it, soundly): its
// optional characters are built in deferred chunks (lengthRepeat), so a
// description field with maxLength 32767 costs nothing until a generation
// writes that much (MaskBench o9772: a 1,000-character certificate under
// maxLength 32767 was rejected at 256).
const maxPlainStringLength = 1 << 16

// firstChunk is the length of the first deferred chunk of a plain
// string's optional characters (lengthRepeat); each later chunk is twice
// the one before, up to MaxStringLength.
const firstChunk = 64

// lengthRepeat is Repeat(ch, lo, hi) for a plain string. The lo required
// characters are built up front; the optional ones come in chunks, each
// deferred behind the one before (fsm.Defer), so a lazy constraint builds
// a chunk only when a generation has written the ones before it, where one
// bounded repeat would build every position up front. A level of s
// characters is "fewer than s, or s and then the next level", which fsm
// builds as one chain of s positions (builder.chain); the first is short
// (firstChunk) and each later one doubles, up to MaxStringLength. So a
// string value costs at most 2·firstChunk positions wherever a mask
// reaches it (each subset state of an object stamps its own copy),
// whatever its maxLength (it cost up to 2·MaxStringLength before), and a
// generation writing a long one builds the chunks as it goes.
func (c *compiler) lengthRepeat(ch *fsm.Node, lo, hi int) *fsm.Node {
	k := c.opts.MaxStringLength
	if hi < 0 || lo > k || hi < lo {
		return fsm.Repeat(ch, lo, hi) // hi < lo: ∅
	}
	s := min(firstChunk, k)
	var levels []int
	rest := hi - lo
	for ; rest >= 2*s; s = min(2*s, k) {
		levels = append(levels, s)
		rest -= s
	}
	if len(levels) == 0 {
		return fsm.Repeat(ch, lo, hi)
	}
	// The last level: at most rest characters, fewer than two chunks.
	opt := fsm.Repeat(ch, 0, rest)
	for i := len(levels) - 1; i >= 0; i-- {
		n := levels[i]
		opt = fsm.Alt(fsm.Repeat(ch, 0, n-1), fsm.Cat(fsm.Repeat(ch, n, n), fsm.Defer(opt)))
	}
	return fsm.Cat(fsm.Repeat(ch, lo, lo), opt)
}

// stringCP returns the code-point language of r's strings, or nil when only
// the lengths constrain them.
func (c *compiler) stringCP(r *ir, exclStr []*fsm.Node) (*fsm.Node, error) {
	if len(r.patterns) == 0 && len(r.formats) == 0 && len(exclStr) == 0 {
		return nil, nil
	}
	var parts []*fsm.Node
	for _, p := range r.patterns {
		n, err := c.pattern(p)
		if err != nil {
			return nil, err
		}
		if n != nil {
			parts = append(parts, n)
		}
	}
	for _, f := range r.formats {
		n, err := c.format(f)
		if err != nil {
			return nil, err
		}
		if n != nil {
			parts = append(parts, n)
		}
	}
	// The length keywords are intersected only where the other parts do
	// not already imply them (a format such as email or ipv4 bounds its own
	// length; intersecting with maxLength 1024 would only cost a product).
	lo, hi := r.minLen, r.maxLen
	if len(parts) > 0 {
		pmin, pmax := 0, -1
		for _, p := range parts {
			a, b := lengthBounds(p)
			pmin = max(pmin, a)
			if b >= 0 && (pmax < 0 || b < pmax) {
				pmax = b
			}
		}
		if lo <= pmin {
			lo = 0
		}
		if hi >= 0 && pmax >= 0 && pmax <= hi {
			hi = -1
		}
	}
	if lo > 0 || hi >= 0 {
		parts = append(parts, fsm.Repeat(lengthAlphabet(parts), lo, hi))
	}
	// Each excluded language but literals gets a complement of its own:
	// a pattern excluded here that another oneOf branch enforces is then
	// one node (encodeString's memo) and one DFA, where the complement of
	// their union would be determinized anew. Literals go together, a few
	// strings subtracted at once.
	var lits []*fsm.Node
	for _, x := range exclStr {
		if x.Op == fsm.OpLiteral {
			lits = append(lits, x)
		} else {
			parts = append(parts, fsm.Not(x))
		}
	}
	if len(lits) > 0 {
		parts = append(parts, fsm.Not(fsm.Alt(lits...)))
	}
	if len(parts) == 0 {
		return fsm.Star(fsm.AnyRune()), nil
	}
	allNot := true
	for _, p := range parts {
		allNot = allNot && p.Op == fsm.OpNot
	}
	if allNot {
		parts = append([]*fsm.Node{fsm.Star(fsm.AnyRune())}, parts...)
	}
	return fsm.And(parts...), nil
}

// canonicalString is the JSON text a model most likely writes for s: raw
// UTF-8, short escapes, \u00XX for other control characters (Python's
// json.dumps with ensure_ascii=False).
func canonicalString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&15])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// valueNode matches the JSON text of v with the grammar's whitespace
// between tokens and v's own key order.
func (c *compiler) valueNode(v *value) *fsm.Node {
	switch v.k {
	case kNull:
		return fsm.Lit("null")
	case kBool:
		return fsm.Lit(strconv.FormatBool(v.b))
	case kNumber:
		if short := shortestNumber(v); short != "" && short != v.num {
			return fsm.Alt(fsm.Lit(v.num), fsm.Lit(short))
		}
		return fsm.Lit(v.num)
	case kString:
		return fsm.Lit(canonicalString(v.str))
	case kArray:
		parts := []*fsm.Node{fsm.Lit("["), c.ws}
		for i, e := range v.arr {
			if i > 0 {
				parts = append(parts, c.sep)
			}
			parts = append(parts, c.valueNode(e))
		}
		if len(v.arr) > 0 {
			parts = append(parts, c.ws)
		}
		return fsm.Cat(append(parts, fsm.Lit("]"))...)
	default:
		parts := []*fsm.Node{fsm.Lit("{"), c.ws}
		for i, k := range v.keys {
			if i > 0 {
				parts = append(parts, c.sep)
			}
			parts = append(parts, fsm.Lit(canonicalString(k)), c.colon, c.valueNode(v.vals[i]))
		}
		if len(v.keys) > 0 {
			parts = append(parts, c.ws)
		}
		return fsm.Cat(append(parts, fsm.Lit("}"))...)
	}
}

// shortestNumber returns the shortest plain spelling of the number v (no
// exponent, no trailing fraction zeros: "2" for 2.0 and 2e0, "0.25" for
// 25e-2), or "" when it has none within the digit bound. JSON Schema
// compares numbers by value, so an enum or const written 2.0 is matched
// by 2 as well; the shortest spelling of an integer is an integer
// literal, which every draft's "integer" accepts.
func shortestNumber(v *value) string {
	q, ok := v.rat()
	if !ok {
		return ""
	}
	neg := q.Sign() < 0
	ip, frac, ok := decimal(new(big.Rat).Abs(q))
	if !ok {
		return ""
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(ip)
	if len(frac) > 0 {
		b.WriteByte('.')
		for _, d := range frac {
			b.WriteByte(byte('0' + d))
		}
	}
	return b.String()
}

func typeOf(v *value) tset {
	switch v.k {
	case kNull:
		return tNull
	case kBool:
		return tBool
	case kNumber:
		if v.isInteger() {
			return tInt
		}
		return tFrac
	case kString:
		return tStr
	case kArray:
		return tArr
	}
	return tObj
}

// hasStructure reports whether r constrains arrays or objects.
func (r *ir) hasStructure() bool {
	return len(r.props) > 0 || len(r.required) > 0 || r.addlSet || r.closed || r.minProps > 0 || r.maxProps >= 0 ||
		len(r.prefix) > 0 || r.itemsSet || r.minItems > 0 || r.maxItems >= 0 || len(r.propNames) > 0 || r.uniqueItems || len(r.patProps) > 0 ||
		len(r.contains) > 0
}

// leafCheck decides whether the scalar v satisfies r's type, enum, length
// and numeric keywords. known is false when r has keywords leafCheck cannot
// decide for v (pattern, format, structure).
func leafCheck(r *ir, v *value) (ok, known bool) {
	t := typeOf(v)
	if r.types&t == 0 {
		return false, true
	}
	if r.hasEnum && !excluded(r.enum, v) {
		return false, true
	}
	switch v.k {
	case kString:
		n := utf8.RuneCountInString(v.str)
		if n < r.minLen || (r.maxLen >= 0 && n > r.maxLen) {
			return false, true
		}
		if len(r.patterns) > 0 || len(r.formats) > 0 {
			return false, false
		}
	case kNumber:
		q, good := v.rat()
		if !good {
			return false, false
		}
		if r.lo != nil {
			if cmp := q.Cmp(r.lo.r); cmp < 0 || (cmp == 0 && r.lo.excl) {
				return false, true
			}
		}
		if r.hi != nil {
			if cmp := q.Cmp(r.hi.r); cmp > 0 || (cmp == 0 && r.hi.excl) {
				return false, true
			}
		}
		for _, m := range r.mult {
			if !new(big.Rat).Quo(q, m).IsInt() {
				return false, true
			}
		}
	case kArray, kObject:
		if r.hasStructure() {
			return false, false
		}
	}
	if len(r.groups) > 0 || len(r.nots) > 0 {
		return false, false
	}
	return true, true
}

// emitEnum builds the allowed enum values of r: scalars as one
// prefix-factored trie of their canonical text, containers with whitespace.
func (c *compiler) emitEnum(r *ir) (*fsm.Node, error) {
	var scalars, strs []string
	var alts []*fsm.Node
	var stringCons bool
	// probe is r without its enum and combinators, for checking each
	// number against the other keywords: made once (one clone per value
	// made a 100,000-value enum quadratic, minutes of work).
	var probe *ir
	for _, v := range r.enum {
		if r.types&typeOf(v) == 0 {
			continue
		}
		switch v.k {
		case kString:
			n := utf8.RuneCountInString(v.str)
			if n < r.minLen || (r.maxLen >= 0 && n > r.maxLen) {
				continue
			}
			if len(r.patterns) > 0 || len(r.formats) > 0 {
				stringCons = true
				strs = append(strs, canonicalString(v.str))
				continue
			}
			scalars = append(scalars, canonicalString(v.str))
		case kNumber:
			if probe == nil {
				probe = r.clone()
				probe.hasEnum, probe.enum = false, nil
				probe.groups, probe.nots = nil, nil
			}
			if ok, _ := leafCheck(probe, v); !ok {
				continue
			}
			scalars = append(scalars, v.num)
			if short := shortestNumber(v); short != "" && short != v.num {
				scalars = append(scalars, short)
			}
		case kNull:
			scalars = append(scalars, "null")
		case kBool:
			scalars = append(scalars, strconv.FormatBool(v.b))
		default:
			if r.hasStructure() {
				if err := c.unsupportedKw(r.ptr+"/enum", "enum", "enum or const of arrays/objects next to array/object keywords is not supported"); err != nil {
					return nil, err
				}
			}
			alts = append(alts, c.valueNode(v))
		}
	}
	if len(scalars) > 0 {
		alts = append(alts, trie(scalars))
	}
	if stringCons {
		probe := r.clone()
		probe.minLen, probe.maxLen = 0, -1
		cp, err := c.stringCP(probe, nil)
		if err != nil {
			return nil, err
		}
		body, err := c.encodeString(cp)
		if err != nil {
			return nil, errorf(CodeBadPattern, r.ptr, "pattern", "%v", err)
		}
		alts = append(alts, fsm.And(trie(strs), fsm.Cat(fsm.Lit(`"`), body, fsm.Lit(`"`))))
	}
	return fsm.Alt(alts...), nil
}

// lengthAlphabet returns the class a length repeat intersected with parts
// counts: the smallest alphabet one of them is known to be written in
// (runeAlphabet), else any code point. The intersection is the same
// language either way, since every string of it is one of each part's;
// a narrow class makes each counted character one NFA state instead of a
// UTF-8 automaton (minLength 10000 over ([a-z][0-9])+: 410k NFA states
// and 0.6 s to the first mask with any code point).
func lengthAlphabet(parts []*fsm.Node) *fsm.Node {
	var best []fsm.RuneRange
	found := false
	for _, p := range parts {
		if a, ok := runeAlphabet(p); ok && (!found || runeCount(a) < runeCount(best)) {
			best, found = a, true
		}
	}
	if !found {
		return fsm.AnyRune()
	}
	return fsm.RuneClass(best...)
}

// runeAlphabet returns a set of code points every string of the
// code-point language n is written in, when it can tell (no complement,
// no raw bytes, no any-order nodes).
func runeAlphabet(n *fsm.Node) ([]fsm.RuneRange, bool) {
	switch n.Op {
	case fsm.OpEmpty, fsm.OpNoMatch:
		return nil, true
	case fsm.OpLiteral:
		var rs []fsm.RuneRange
		for _, r := range string(n.Lit) {
			rs = append(rs, fsm.RuneRange{Lo: r, Hi: r})
		}
		return rs, true
	case fsm.OpRunes:
		return n.Runes, true
	case fsm.OpConcat, fsm.OpAlt, fsm.OpRepeat, fsm.OpAnd, fsm.OpDefer:
		var rs []fsm.RuneRange
		for _, s := range n.Subs {
			a, ok := runeAlphabet(s)
			if !ok {
				return nil, false
			}
			rs = append(rs, a...)
		}
		return rs, true
	}
	return nil, false
}

// runeCount returns how many code points rs holds (ranges may overlap).
func runeCount(rs []fsm.RuneRange) int {
	n := 0
	for _, r := range rs {
		n += int(r.Hi-r.Lo) + 1
	}
	return n
}

// lengthBounds returns a lower bound on the length in characters of every
// string of a code-point language, and an upper bound (-1: unbounded).
func lengthBounds(n *fsm.Node) (lo, hi int) {
	const inf = -1
	switch n.Op {
	case fsm.OpEmpty:
		return 0, 0
	case fsm.OpNoMatch:
		return 0, 0
	case fsm.OpLiteral:
		k := utf8.RuneCount(n.Lit)
		return k, k
	case fsm.OpRunes:
		return 1, 1
	case fsm.OpConcat:
		for _, s := range n.Subs {
			a, b := lengthBounds(s)
			lo += a
			if hi != inf {
				if b == inf {
					hi = inf
				} else {
					hi += b
				}
			}
		}
		return lo, hi
	case fsm.OpAlt:
		lo = -1
		for _, s := range n.Subs {
			a, b := lengthBounds(s)
			if lo < 0 || a < lo {
				lo = a
			}
			if hi != inf && (b == inf || b > hi) {
				hi = b
			}
		}
		return max(lo, 0), hi
	case fsm.OpRepeat:
		a, b := lengthBounds(n.Subs[0])
		lo = a * n.Min
		if n.Max < 0 {
			if b == 0 {
				return lo, 0
			}
			return lo, inf
		}
		if b == inf {
			return lo, inf
		}
		return lo, b * n.Max
	case fsm.OpAnd:
		hi = inf
		for _, s := range n.Subs {
			a, b := lengthBounds(s)
			lo = max(lo, a)
			if b != inf && (hi == inf || b < hi) {
				hi = b
			}
		}
		return lo, hi
	}
	return 0, inf
}
