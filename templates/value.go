package templates

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Value is a template value with Python semantics. The concrete types are
// Undefined, None, Bool, Int, Float, Str, *List, *Dict and a few internal
// callables (macros, methods, the loop object, namespaces).
//
// Values handed to Render (messages, tools, extra variables) are never
// mutated: the environment is immutable, as in transformers' sandbox.
type Value interface {
	// pyType returns the Python type name, used in error messages.
	pyType() string
}

// Undefined is Jinja's plain Undefined: falsy, prints as "", iterates as
// empty, and fails when an attribute, item, call or arithmetic is applied.
type Undefined struct{ hint string }

// None is Python's None.
type None struct{}

// Bool is a Python bool.
type Bool bool

// Int is a Python int (limited to 64 bits; JSON integers outside that range
// decode as Float).
type Int int64

// Float is a Python float; it prints with Python's repr.
type Float float64

// Str is a Python str.
type Str string

// List is a Python list, or a tuple when Tuple is set (only the printing
// differs: tuples repr with parentheses).
type List struct {
	Items []Value
	Tuple bool
	view  viewKind // set on range() results and dict views, which print differently
	rng   [3]int64 // start, stop, step of a range
}

// viewKind marks list-like values that are not lists in Python.
type viewKind uint8

const (
	viewNone viewKind = iota
	viewRange
	viewKeys
	viewValues
	viewItems
)

// iterValue is a one-shot Python iterator (the generators that map, select,
// reject, selectattr, rejectattr, unique and items return, and reversed()).
// It is always truthy, has no len(), and a second iteration sees nothing.
// Its items are computed eagerly; an error found then is kept and raised
// when the iterator is consumed, as Python's lazy generators would.
type iterValue struct {
	items []Value
	pos   int
	err   error
	name  string // Python type name, e.g. "generator"
}

func (it *iterValue) pyType() string { return it.name }

// next consumes the rest of the iterator.
func (it *iterValue) rest() ([]Value, error) {
	if it.err != nil {
		return nil, it.err
	}
	out := it.items[it.pos:]
	it.pos = len(it.items)
	return out, nil
}

// Dict is a Python dict: an insertion-ordered map with hashable scalar keys.
// The zero value is not usable; create one with NewDict.
type Dict struct {
	keys  []Value
	vals  []Value
	strs  map[string]int // positions of Str keys (the common case, no allocation)
	index map[string]int // positions of other keys, by hashKey
}

func (Undefined) pyType() string { return "Undefined" }
func (None) pyType() string      { return "NoneType" }
func (Bool) pyType() string      { return "bool" }
func (Int) pyType() string       { return "int" }
func (Float) pyType() string     { return "float" }
func (Str) pyType() string       { return "str" }
func (l *List) pyType() string {
	switch l.view {
	case viewRange:
		return "range"
	case viewKeys:
		return "dict_keys"
	case viewValues:
		return "dict_values"
	case viewItems:
		return "dict_items"
	}
	if l.Tuple {
		return "tuple"
	}
	return "list"
}
func (*Dict) pyType() string { return "dict" }

// NewDict returns an empty Dict.
func NewDict() *Dict { return &Dict{strs: map[string]int{}, index: map[string]int{}} }

// slot finds the position map and key for k.
func (d *Dict) slot(key Value) (map[string]int, string, error) {
	if s, ok := key.(Str); ok {
		return d.strs, string(s), nil
	}
	h, err := hashKey(key)
	return d.index, h, err
}

// Len returns the number of entries.
func (d *Dict) Len() int { return len(d.keys) }

// Keys returns the keys in insertion order (the slice must not be modified).
func (d *Dict) Keys() []Value { return d.keys }

// Values returns the values in insertion order (the slice must not be modified).
func (d *Dict) Values() []Value { return d.vals }

// Set inserts or replaces key → v, keeping the original position of an
// existing key as Python does. It fails on an unhashable key.
func (d *Dict) Set(key, v Value) error {
	m, h, err := d.slot(key)
	if err != nil {
		return err
	}
	if i, ok := m[h]; ok {
		d.vals[i] = v
		return nil
	}
	m[h] = len(d.keys)
	d.keys = append(d.keys, key)
	d.vals = append(d.vals, v)
	return nil
}

// SetStr is Set with a string key (which cannot fail).
func (d *Dict) SetStr(key string, v Value) { _ = d.Set(Str(key), v) }

// Get looks up key; ok is false when it is absent or unhashable.
func (d *Dict) Get(key Value) (Value, bool) {
	m, h, err := d.slot(key)
	if err != nil {
		return nil, false
	}
	i, ok := m[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// hashKey gives equal Python keys (1, 1.0, True) the same string.
func hashKey(v Value) (string, error) {
	switch x := v.(type) {
	case Str:
		return "s" + string(x), nil
	case Int:
		return "i" + strconv.FormatInt(int64(x), 10), nil
	case Bool:
		if x {
			return "i1", nil
		}
		return "i0", nil
	case Float:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return "i" + strconv.FormatInt(int64(f), 10), nil
		}
		return "f" + floatRepr(f), nil
	case None:
		return "n", nil
	case Undefined:
		return "u", nil
	case *List:
		if !x.Tuple {
			return "", errorf(CodeRuntime, 0, "unhashable type: 'list'")
		}
		var b strings.Builder
		b.WriteString("t(")
		for _, it := range x.Items {
			h, err := hashKey(it)
			if err != nil {
				return "", err
			}
			b.WriteString(strconv.Itoa(len(h)))
			b.WriteByte(':')
			b.WriteString(h)
		}
		return b.String(), nil
	}
	return "", errorf(CodeRuntime, 0, "unhashable type: '%s'", v.pyType())
}

// truthy is Python's bool(v).
func truthy(v Value) bool {
	switch x := v.(type) {
	case Undefined, None:
		return false
	case Bool:
		return bool(x)
	case Int:
		return x != 0
	case Float:
		return x != 0
	case Str:
		return x != ""
	case *List:
		return len(x.Items) > 0
	case *Dict:
		return x.Len() > 0
	}
	return true
}

// toStr is Python's str(v) with Jinja's Undefined printing as "".
func toStr(v Value) string {
	switch x := v.(type) {
	case Str:
		return string(x)
	case Undefined:
		return ""
	}
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

// reprDepthLimit bounds the nesting printed by repr; deeper data (which JSON
// decoding already bounds) prints as "...".
const reprDepthLimit = 200

// writeRepr writes Python's repr(v) (str(v) for the top level of non-strings
// is the same as repr except for strings, handled by toStr).
func writeRepr(b *strings.Builder, v Value, depth int) {
	if depth > reprDepthLimit {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case Undefined:
		// repr(Undefined()) is "Undefined"; str is "". Inside containers
		// Python calls repr.
		b.WriteString("Undefined")
	case None:
		b.WriteString("None")
	case Bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case Float:
		b.WriteString(floatRepr(float64(x)))
	case Str:
		writeStrRepr(b, string(x))
	case *List:
		switch x.view {
		case viewRange:
			b.WriteString("range(" + strconv.FormatInt(x.rng[0], 10) + ", " + strconv.FormatInt(x.rng[1], 10))
			if x.rng[2] != 1 {
				b.WriteString(", " + strconv.FormatInt(x.rng[2], 10))
			}
			b.WriteString(")")
			return
		case viewKeys, viewValues, viewItems:
			b.WriteString(x.pyType() + "(")
			writeRepr(b, &List{Items: x.Items}, depth+1)
			b.WriteString(")")
			return
		}
		open, close := "[", "]"
		if x.Tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, depth+1)
		}
		if x.Tuple && len(x.Items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	case *Dict:
		b.WriteString("{")
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], depth+1)
		}
		b.WriteString("}")
	case *Namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.d, depth+1)
		b.WriteString(">")
	case *macro:
		b.WriteString("<Macro '" + x.name + "'>")
	case *iterValue:
		b.WriteString("<" + x.name + " object>")
	case *loopValue:
		b.WriteString("<LoopContext " + strconv.Itoa(x.index0+1) + "/" + strconv.Itoa(len(x.items)) + ">")
	default:
		b.WriteString("<" + v.pyType() + " object>")
	}
}

// writeStrRepr writes Python's repr of a str: single quotes unless the text
// holds ' and no ", escaping backslash, the quote, \t \n \r and
// non-printable characters.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8 cannot come from Python; show it as a surrogate escape.
			b.WriteString(`\udc` + strconv.FormatInt(int64(s[i]), 16))
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x` + hex2(int(r)))
		case r < 0x80 || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x` + hex2(int(r)))
		case r < 0x10000:
			b.WriteString(`\u` + hexN(int(r), 4))
		default:
			b.WriteString(`\U` + hexN(int(r), 8))
		}
	}
	b.WriteByte(q)
}

func hex2(n int) string { return hexN(n, 2) }

func hexN(n, width int) string {
	s := strconv.FormatInt(int64(n), 16)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// floatRepr is Python's repr(float): the shortest round-tripping digits,
// positional for exponents in [-4, 16), otherwise d.ddde±XX.
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+06
	neg := strings.HasPrefix(e, "-")
	if neg {
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				out = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		out += "e" + sign + es
	}
	if neg {
		out = "-" + out
	}
	return out
}

// valuesEqual is Python's == (deep, numeric across int/float/bool; Jinja's
// Undefined equals only Undefined).
func valuesEqual(a, b Value) bool {
	if na, ok := numeric(a); ok {
		if nb, ok := numeric(b); ok {
			return na.eq(nb)
		}
		return false
	}
	switch x := a.(type) {
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case None:
		_, ok := b.(None)
		return ok
	case Str:
		y, ok := b.(Str)
		return ok && x == y
	case *List:
		y, ok := b.(*List)
		if !ok || x.Tuple != y.Tuple || x.view != y.view || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !valuesEqual(x.Items[i], y.Items[i]) {
				return false
			}
		}
		return true
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.Get(k)
			if !ok || !valuesEqual(x.vals[i], v) {
				return false
			}
		}
		return true
	}
	return a == b
}

// num is an int or float operand of arithmetic.
type num struct {
	isFloat bool
	i       int64
	f       float64
}

func (n num) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

func (n num) eq(m num) bool {
	if !n.isFloat && !m.isFloat {
		return n.i == m.i
	}
	return n.float() == m.float()
}

func (n num) value() Value {
	if n.isFloat {
		return Float(n.f)
	}
	return Int(n.i)
}

// numeric reports v as a number; bool counts as int, as in Python.
func numeric(v Value) (num, bool) {
	switch x := v.(type) {
	case Int:
		return num{i: int64(x)}, true
	case Bool:
		if x {
			return num{i: 1}, true
		}
		return num{}, true
	case Float:
		return num{isFloat: true, f: float64(x)}, true
	}
	return num{}, false
}

// compareValues is Python's ordering for <, <=, >, >=: numbers, strings
// (by code point) and lists/tuples lexicographically; anything else is a
// TypeError.
func compareValues(a, b Value, op string) (int, error) {
	if na, ok := numeric(a); ok {
		if nb, ok := numeric(b); ok {
			if !na.isFloat && !nb.isFloat {
				return cmpInt(na.i, nb.i), nil
			}
			fa, fb := na.float(), nb.float()
			switch {
			case fa < fb:
				return -1, nil
			case fa > fb:
				return 1, nil
			case fa == fb:
				return 0, nil
			}
			return 2, nil // NaN: every comparison is false
		}
	}
	switch x := a.(type) {
	case Str:
		if y, ok := b.(Str); ok {
			return strings.Compare(string(x), string(y)), nil
		}
	case *List:
		if y, ok := b.(*List); ok && x.Tuple == y.Tuple && x.view == viewNone && y.view == viewNone {
			for i := 0; i < len(x.Items) && i < len(y.Items); i++ {
				if valuesEqual(x.Items[i], y.Items[i]) {
					continue
				}
				return compareValues(x.Items[i], y.Items[i], op)
			}
			return cmpInt(int64(len(x.Items)), int64(len(y.Items))), nil
		}
	}
	return 0, errorf(CodeRuntime, 0, "'%s' not supported between instances of '%s' and '%s'", op, a.pyType(), b.pyType())
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
