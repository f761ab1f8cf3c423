package grammar

import "math/big"

// The OpenAPI formats (OpenAPI 3.1 §4.2, "Data Type Format"). Each applies
// to the instance type it is defined for and is a no-op for every other
// type, as a validator treats it:
//
//   - int32, int64: numbers in [−2^31, 2^31−1] and [−2^63, 2^63−1]. The
//     range is applied to every number (integer or not); validators that
//     know these formats check only integers, so a non-integer outside the
//     range is the one thing left out. They put no constraint on strings.
//   - float, double: any JSON number (the format only names the precision
//     a consumer should parse with); no constraint on strings either.
//   - byte: standard base64 with padding (RFC 4648 §4) and zero pad bits
//     (the canonical encoding, which strict decoders require). Exact except
//     for the non-canonical pad bits that lenient decoders also accept.
//   - binary, password: any string.
//
// santhosh-tekuri/jsonschema knows none of these names and ignores them.
// Draft-03's utc-millisec (a number of milliseconds, any JSON number) is
// here too: it constrains no string.

// base64Re: groups of four, then an optional padded group whose last
// character has its unused low bits zero (AQgw carry 4 zero bits, the
// others listed carry 2).
const base64Re = `(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?`

// formatsWithoutStringConstraint are the known formats that constrain no
// string.
var formatsWithoutStringConstraint = map[string]bool{
	"int32": true, "int64": true, "float": true, "double": true, "binary": true, "password": true,
	"utc-millisec": true,
}

// formatConstrainsStrings reports whether the format may narrow the strings
// of a schema: false only for known formats that accept every string
// (collect leaves them out of the string constraints; unknown formats
// return true so that they are still reported).
func formatConstrainsStrings(name string) bool {
	return !formatsWithoutStringConstraint[name]
}

// formatNumberBounds returns the inclusive number range a format imposes
// (int32, int64), or nil, nil.
func formatNumberBounds(name string) (lo, hi *bound) {
	var bits uint
	switch name {
	case "int32":
		bits = 31
	case "int64":
		bits = 63
	default:
		return nil, nil
	}
	p := new(big.Int).Lsh(big.NewInt(1), bits)
	lo = &bound{r: new(big.Rat).SetInt(new(big.Int).Neg(p))}
	hi = &bound{r: new(big.Rat).SetInt(new(big.Int).Sub(p, big.NewInt(1)))}
	return lo, hi
}
