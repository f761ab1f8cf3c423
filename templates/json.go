package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting DecodeJSON accepts, so that hostile input
// cannot exhaust the stack of the recursive printers (Python's json module
// stops near 1000 for the same reason).
const maxJSONDepth = 512

// DecodeJSON decodes one JSON document into a Value the way Python's
// json.loads would: objects become *Dict in file order, arrays *List,
// integers Int (Float when outside int64), other numbers Float.
func DecodeJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf(CodeInput, 0, "invalid JSON: trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxJSONDepth {
		return nil, errorf(CodeInput, 0, "JSON nested deeper than %d", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, errorf(CodeInput, 0, "invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, errorf(CodeInput, 0, "invalid JSON: %v", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errorf(CodeInput, 0, "invalid JSON: object key %v", kt)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.SetStr(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, errorf(CodeInput, 0, "invalid JSON: %v", err)
			}
			return d, nil
		case '[':
			l := &List{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l.Items = append(l.Items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, errorf(CodeInput, 0, "invalid JSON: %v", err)
			}
			return l, nil
		}
		return nil, errorf(CodeInput, 0, "invalid JSON: unexpected %v", t)
	case string:
		return Str(t), nil
	case bool:
		return Bool(t), nil
	case nil:
		return None{}, nil
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return Int(i), nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errorf(CodeInput, 0, "invalid JSON number %q", s)
		}
		return Float(f), nil
	}
	return nil, errorf(CodeInput, 0, "invalid JSON token %v", tok)
}

// FromGo converts plain Go data (nil, bool, ints, floats, string,
// json.Number, []any, map[string]any, and Values) into a Value. Go maps have
// no order, so their keys are sorted; use DecodeJSON when order matters.
func FromGo(x any) (Value, error) {
	switch t := x.(type) {
	case nil:
		return None{}, nil
	case Value:
		return t, nil
	case bool:
		return Bool(t), nil
	case int:
		return Int(t), nil
	case int64:
		return Int(t), nil
	case int32:
		return Int(t), nil
	case float64:
		return Float(t), nil
	case float32:
		return Float(t), nil
	case string:
		return Str(t), nil
	case json.Number:
		return DecodeJSON([]byte(t))
	case json.RawMessage:
		return DecodeJSON(t)
	case []any:
		l := &List{Items: make([]Value, 0, len(t))}
		for _, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return nil, err
			}
			l.Items = append(l.Items, v)
		}
		return l, nil
	case []string:
		l := &List{Items: make([]Value, 0, len(t))}
		for _, e := range t {
			l.Items = append(l.Items, Str(e))
		}
		return l, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := NewDict()
		for _, k := range keys {
			v, err := FromGo(t[k])
			if err != nil {
				return nil, err
			}
			d.SetStr(k, v)
		}
		return d, nil
	}
	return nil, errorf(CodeInput, 0, "cannot convert %T to a template value", x)
}

// jsonOptions are the keyword arguments of transformers' tojson filter
// (json.dumps with ensure_ascii=False by default).
type jsonOptions struct {
	indent      string // "" and hasIndent=false: one line
	hasIndent   bool
	itemSep     string
	keySep      string
	sortKeys    bool
	ensureASCII bool
}

// toJSON is Python's json.dumps(v, ensure_ascii=o.ensureASCII,
// indent=o.indent, separators=..., sort_keys=o.sortKeys).
func toJSON(v Value, o jsonOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v Value, o jsonOptions, depth int) error {
	if depth > maxJSONDepth {
		return errorf(CodeRuntime, 0, "maximum recursion depth exceeded while encoding a JSON object")
	}
	newline := func(level int) {
		if o.hasIndent {
			b.WriteByte('\n')
			for range level {
				b.WriteString(o.indent)
			}
		}
	}
	switch x := v.(type) {
	case None:
		b.WriteString("null")
	case Bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case Int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case Float:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			b.WriteString("NaN")
		case math.IsInf(f, 1):
			b.WriteString("Infinity")
		case math.IsInf(f, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatRepr(f))
		}
	case Str:
		writeJSONString(b, string(x), o.ensureASCII)
	case *List:
		if x.view != viewNone {
			return errorf(CodeRuntime, 0, "Object of type %s is not JSON serializable", x.pyType())
		}
		if len(x.Items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(depth + 1)
			if err := writeJSON(b, it, o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte(']')
	case *Dict:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		order := make([]int, x.Len())
		for i := range order {
			order[i] = i
		}
		keys := make([]string, x.Len())
		for i, k := range x.keys {
			switch kk := k.(type) {
			case Str:
				keys[i] = string(kk)
			case Int:
				keys[i] = strconv.FormatInt(int64(kk), 10)
			case Float:
				keys[i] = floatRepr(float64(kk))
			case Bool:
				keys[i] = map[bool]string{true: "true", false: "false"}[bool(kk)]
			case None:
				keys[i] = "null"
			default:
				return errorf(CodeRuntime, 0, "keys must be str, int, float, bool or None, not %s", k.pyType())
			}
		}
		if o.sortKeys {
			for _, k := range x.keys {
				if _, ok := k.(Str); !ok {
					return errorf(CodeRuntime, 0, "'<' not supported between instances of '%s' and 'str'", k.pyType())
				}
			}
			sort.SliceStable(order, func(a, c int) bool { return keys[order[a]] < keys[order[c]] })
		}
		b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				b.WriteString(o.itemSep)
			}
			newline(depth + 1)
			writeJSONString(b, keys[i], o.ensureASCII)
			b.WriteString(o.keySep)
			if err := writeJSON(b, x.vals[i], o, depth+1); err != nil {
				return err
			}
		}
		newline(depth)
		b.WriteByte('}')
	default:
		return errorf(CodeRuntime, 0, "Object of type %s is not JSON serializable", v.pyType())
	}
	return nil
}

// writeJSONString writes s as Python's json module does: only '"', '\\' and
// control characters are escaped (plus all non-ASCII with ensureASCII).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			b.WriteString(`\u` + hexN(int(r), 4))
		case ensureASCII && r >= 0x7f:
			if r == 0x7f {
				b.WriteRune(r)
			} else if r < 0x10000 {
				b.WriteString(`\u` + hexN(int(r), 4))
			} else {
				r -= 0x10000
				b.WriteString(`\u` + hexN(0xd800+int(r>>10), 4) + `\u` + hexN(0xdc00+int(r&0x3ff), 4))
			}
		default:
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\udc` + hex2(int(s[i-1])))
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// String returns Python's str(v) (repr for containers).
func String(v Value) string { return toStr(v) }
