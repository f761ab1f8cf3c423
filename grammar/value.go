package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// value is a decoded JSON value that keeps object key order (encoding/json's
// maps do not, and property order is part of what a schema means here).
type value struct {
	k    kind
	b    bool
	num  string // kNumber: the literal text
	str  string
	arr  []*value
	keys []string // kObject, in document order (a later duplicate replaces the earlier value in place)
	vals []*value
}

// get returns the member named key of an object, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.k != kObject {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// rat returns the number as an exact rational.
func (v *value) rat() (*big.Rat, bool) {
	if v == nil || v.k != kNumber {
		return nil, false
	}
	return parseRat(v.num)
}

// parseRat parses JSON number text exactly, refusing absurd exponents.
func parseRat(s string) (*big.Rat, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

var errTooDeep = errors.New("nesting too deep")

// decodeValue decodes one JSON text, refusing trailing data and nesting
// deeper than maxDepth.
func decodeValue(data []byte, maxDepth int) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeNext(dec, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeNext(dec *json.Decoder, depth int) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return decodeTok(dec, tok, depth)
}

func decodeTok(dec *json.Decoder, tok json.Token, depth int) (*value, error) {
	switch t := tok.(type) {
	case nil:
		return &value{k: kNull}, nil
	case bool:
		return &value{k: kBool, b: t}, nil
	case json.Number:
		return &value{k: kNumber, num: string(t)}, nil
	case string:
		return &value{k: kString, str: t}, nil
	case json.Delim:
		if depth <= 0 {
			return nil, errTooDeep
		}
		switch t {
		case '[':
			v := &value{k: kArray}
			for dec.More() {
				e, err := decodeNext(dec, depth-1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return v, nil
		case '{':
			v := &value{k: kObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				e, err := decodeNext(dec, depth-1)
				if err != nil {
					return nil, err
				}
				replaced := false
				for i, k := range v.keys {
					if k == key {
						v.vals[i] = e
						replaced = true
					}
				}
				if !replaced {
					v.keys = append(v.keys, key)
					v.vals = append(v.vals, e)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return v, nil
		}
	}
	return nil, errors.New("unexpected JSON token")
}

// equalValues reports JSON Schema equality: numbers compare mathematically,
// objects ignore key order.
func equalValues(a, b *value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case kNull:
		return true
	case kBool:
		return a.b == b.b
	case kNumber:
		ra, ok1 := a.rat()
		rb, ok2 := b.rat()
		if !ok1 || !ok2 {
			return a.num == b.num
		}
		return ra.Cmp(rb) == 0
	case kString:
		return a.str == b.str
	case kArray:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equalValues(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	case kObject:
		if len(a.keys) != len(b.keys) {
			return false
		}
		for i, k := range a.keys {
			bv := b.get(k)
			if bv == nil || !equalValues(a.vals[i], bv) {
				return false
			}
		}
		return true
	}
	return false
}

// isInteger reports whether a number value is mathematically an integer.
func (v *value) isInteger() bool {
	r, ok := v.rat()
	return ok && r.IsInt()
}

// escapePointer escapes one reference token for a JSON Pointer (RFC 6901).
func escapePointer(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// maxExactExponent is the largest decimal exponent parseRat reads: a number
// written with more is refused rather than expanded into a huge rational.
const maxExactExponent = 400

// checkNumbers refuses a schema holding a number that a 64-bit float cannot
// hold (|x| above about 1.8e308, or an exponent parseRat refuses), wherever
// it appears: a bound such as "minimum": 1e400 is exact here, but the
// client's own JSON stack reads it as infinity or fails, so the schema means
// something different on each side. Such a schema is invalid in every mode,
// never a keyword that lenient mode may drop. The error names the first such
// number's JSON Pointer and, when its parent is a keyword, the keyword.
func checkNumbers(v *value, ptr string) error {
	switch v.k {
	case kNumber:
		if _, ok := parseRat(v.num); !ok {
			return errorf(CodeInvalidSchema, ptr, lastToken(ptr), "number %s has an exponent beyond ±%d, which this compiler does not read", clipNumber(v.num), maxExactExponent)
		}
		if _, err := strconv.ParseFloat(v.num, 64); err != nil {
			return errorf(CodeInvalidSchema, ptr, lastToken(ptr), "number %s is outside the range of a 64-bit float (about ±1.8e308): JSON parsers read it as infinity or refuse it", clipNumber(v.num))
		}
	case kArray:
		for i, e := range v.arr {
			if err := checkNumbers(e, ptr+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case kObject:
		for i, k := range v.keys {
			if err := checkNumbers(v.vals[i], ptr+"/"+escapePointer(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lastToken is the last reference token of a JSON Pointer, unescaped ("" for
// the root or an array index under the root).
func lastToken(ptr string) string {
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return ""
	}
	t := ptr[i+1:]
	if _, err := strconv.Atoi(t); err == nil {
		// An array element: the keyword is the array's member name.
		return lastToken(ptr[:i])
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// clipNumber shortens a number's text for an error message.
func clipNumber(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
