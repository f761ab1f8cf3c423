package templates

import (
	"math"
	"strings"
	"unicode/utf8"
)

// kwv is an evaluated keyword argument.
type kwv struct {
	name string
	v    Value
}

// method is a bound method: recv.name, callable.
type method struct {
	recv Value
	name string
}

func (m *method) pyType() string { return "builtin_function_or_method" }

// builtinFunc is a global function (range, namespace, raise_exception, ...).
type builtinFunc struct {
	name string
	fn   func(ev *evaluator, args []Value, kwargs []kwv) (Value, error)
}

func (*builtinFunc) pyType() string { return "builtin_function_or_method" }

// Namespace is the mutable attribute bag created by namespace(...), the only
// value {% set ns.attr = … %} may change.
type Namespace struct{ d *Dict }

func (*Namespace) pyType() string { return "Namespace" }

func undefinedErr(u Undefined) error {
	if u.hint != "" {
		return errorf(CodeRuntime, 0, "%s", u.hint)
	}
	return errorf(CodeRuntime, 0, "value is undefined")
}

func (ev *evaluator) eval(x expr, sc *scope) (Value, error) {
	if err := ev.step(x.exprLine()); err != nil {
		return nil, err
	}
	v, err := ev.eval1(x, sc)
	if err != nil {
		return nil, withLine(err, x.exprLine())
	}
	if s, ok := v.(Str); ok && len(s) > ev.limits.MaxOutput {
		return nil, outputBudget(x.exprLine(), "string of %d bytes exceeds the %d-byte limit", len(s), ev.limits.MaxOutput)
	}
	return v, nil
}

func (ev *evaluator) evalArgs(args []expr, kwargs []kwarg, sc *scope) ([]Value, []kwv, error) {
	av := make([]Value, len(args))
	for i, a := range args {
		v, err := ev.eval(a, sc)
		if err != nil {
			return nil, nil, err
		}
		av[i] = v
	}
	var kv []kwv
	for _, k := range kwargs {
		v, err := ev.eval(k.x, sc)
		if err != nil {
			return nil, nil, err
		}
		kv = append(kv, kwv{name: k.name, v: v})
	}
	return av, kv, nil
}

func (ev *evaluator) eval1(x expr, sc *scope) (Value, error) {
	switch x := x.(type) {
	case *constExpr:
		return x.v, nil
	case *nameExpr:
		if ev.folding {
			return nil, errImpossible
		}
		if v, ok := sc.lookup(x.name); ok {
			if _, m := v.(missingValue); m {
				return Undefined{hint: "'" + x.name + "' is undefined"}, nil
			}
			return v, nil
		}
		if g, ok := globals[x.name]; ok {
			return g, nil
		}
		return Undefined{hint: "'" + x.name + "' is undefined"}, nil
	case *listExpr:
		l := &List{Tuple: x.tuple, Items: make([]Value, len(x.items))}
		for i, it := range x.items {
			v, err := ev.eval(it, sc)
			if err != nil {
				return nil, err
			}
			l.Items[i] = v
		}
		return l, nil
	case *dictExpr:
		d := NewDict()
		for i, k := range x.keys {
			kv, err := ev.eval(k, sc)
			if err != nil {
				return nil, err
			}
			vv, err := ev.eval(x.vals[i], sc)
			if err != nil {
				return nil, err
			}
			if err := d.Set(kv, vv); err != nil {
				return nil, err
			}
		}
		return d, nil
	case *getattrExpr:
		obj, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		return getattr(obj, x.name)
	case *getitemExpr:
		obj, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		key, err := ev.eval(x.key, sc)
		if err != nil {
			return nil, err
		}
		return getitem(obj, key)
	case *sliceExpr:
		obj, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		var parts [3]Value
		for i, e := range []expr{x.start, x.stop, x.step} {
			if e == nil {
				parts[i] = None{}
				continue
			}
			if parts[i], err = ev.eval(e, sc); err != nil {
				return nil, err
			}
		}
		v, err := sliceValue(obj, parts)
		if _, isU := obj.(Undefined); err != nil && ev.folding && !isU {
			// jinja2's as_const subscripts through the sandbox's getitem:
			// a failing slice becomes Undefined there, not a TypeError.
			return Undefined{hint: err.Error()}, nil
		}
		return v, err
	case *callExpr:
		if ev.folding {
			return nil, errImpossible
		}
		fn, err := ev.eval(x.fn, sc)
		if err != nil {
			return nil, err
		}
		args, kwargs, err := ev.evalArgs(x.args, x.kwargs, sc)
		if err != nil {
			return nil, err
		}
		return ev.call(fn, args, kwargs, x.line)
	case *filterExpr:
		if ev.folding && contextFilters[x.name] {
			return nil, errImpossible
		}
		v, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		return ev.callFilter(x, v, sc)
	case *testExpr:
		v, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		args, kwargs, err := ev.evalArgs(x.args, x.kwargs, sc)
		if err != nil {
			return nil, err
		}
		if !knownTests[x.name] {
			return nil, unknownTest(x.line, x.name, true)
		}
		ok, err := ev.runTest(x.name, v, args, kwargs)
		if err != nil {
			return nil, err
		}
		return Bool(ok != x.negate), nil
	case *unaryExpr:
		v, err := ev.eval(x.x, sc)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case "not":
			return Bool(!truthy(v)), nil
		case "-":
			if u, ok := v.(Undefined); ok {
				return nil, undefinedErr(u)
			}
			n, ok := numeric(v)
			if !ok {
				return nil, errorf(CodeRuntime, 0, "bad operand type for unary -: '%s'", v.pyType())
			}
			if n.isFloat {
				return Float(-n.f), nil
			}
			if n.i == math.MinInt64 {
				return nil, errorf(CodeRuntime, 0, "integer overflow")
			}
			return Int(-n.i), nil
		case "+":
			if u, ok := v.(Undefined); ok {
				return nil, undefinedErr(u)
			}
			n, ok := numeric(v)
			if !ok {
				return nil, errorf(CodeRuntime, 0, "bad operand type for unary +: '%s'", v.pyType())
			}
			return n.value(), nil
		}
	case *binExpr:
		l, err := ev.eval(x.l, sc)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case "and":
			if !truthy(l) {
				return l, nil
			}
			return ev.eval(x.r, sc)
		case "or":
			if truthy(l) {
				return l, nil
			}
			return ev.eval(x.r, sc)
		}
		r, err := ev.eval(x.r, sc)
		if err != nil {
			return nil, err
		}
		return ev.binOp(x.op, l, r)
	case *compareExpr:
		l, err := ev.eval(x.first, sc)
		if err != nil {
			return nil, err
		}
		for i, op := range x.ops {
			r, err := ev.eval(x.rest[i], sc)
			if err != nil {
				return nil, err
			}
			ok, err := compareOp(op, l, r)
			if err != nil {
				return nil, err
			}
			if !ok {
				return Bool(false), nil
			}
			l = r
		}
		return Bool(true), nil
	case *condExpr:
		c, err := ev.eval(x.cond, sc)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return ev.eval(x.then, sc)
		}
		if x.else_ == nil {
			if ev.folding {
				return nil, errImpossible // CondExpr.as_const leaves this to run time
			}
			return Undefined{hint: "the inline if-expression evaluated to false and no else section was defined."}, nil
		}
		return ev.eval(x.else_, sc)
	}
	return nil, errorf(CodeUnsupported, x.exprLine(), "expression %T", x)
}

func compareOp(op string, l, r Value) (bool, error) {
	switch op {
	case "==":
		return valuesEqual(l, r), nil
	case "!=":
		return !valuesEqual(l, r), nil
	case "in":
		return contains(r, l)
	case "notin":
		ok, err := contains(r, l)
		return !ok, err
	}
	for _, v := range []Value{l, r} {
		if u, ok := v.(Undefined); ok {
			return false, undefinedErr(u)
		}
	}
	c, err := compareValues(l, r, op)
	if err != nil {
		return false, err
	}
	if c == 2 {
		return false, nil
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, errorf(CodeRuntime, 0, "unknown comparison %s", op)
}

// contains is Python's "item in container".
func contains(container, item Value) (bool, error) {
	switch c := container.(type) {
	case Str:
		s, ok := item.(Str)
		if !ok {
			return false, errorf(CodeRuntime, 0, "'in <string>' requires string as left operand, not %s", item.pyType())
		}
		return strings.Contains(string(c), string(s)), nil
	case *List:
		for _, it := range c.Items {
			if valuesEqual(it, item) {
				return true, nil
			}
		}
		return false, nil
	case *iterValue:
		if c.err != nil {
			return false, c.err
		}
		for c.pos < len(c.items) {
			c.pos++
			if valuesEqual(c.items[c.pos-1], item) {
				return true, nil
			}
		}
		return false, nil
	case *Dict:
		if _, err := hashKey(item); err != nil {
			return false, err
		}
		_, ok := c.Get(item)
		return ok, nil
	case Undefined:
		return false, nil
	}
	return false, errorf(CodeRuntime, 0, "argument of type '%s' is not iterable", container.pyType())
}

// iterate lists the items a for loop over v visits.
func (ev *evaluator) iterate(v Value) ([]Value, error) {
	switch x := v.(type) {
	case *List:
		return x.Items, nil
	case *iterValue:
		return x.rest()
	case *Dict:
		return x.keys, nil
	case Str:
		out := make([]Value, 0, utf8.RuneCountInString(string(x)))
		for _, r := range string(x) {
			out = append(out, Str(string(r)))
		}
		return out, nil
	case Undefined:
		return nil, nil
	}
	return nil, errorf(CodeRuntime, 0, "'%s' object is not iterable", v.pyType())
}

func (ev *evaluator) binOp(op string, l, r Value) (Value, error) {
	if op == "~" {
		s := toStr(l) + toStr(r)
		return Str(s), nil
	}
	if s, ok := l.(Str); ok && op == "%" {
		// str.__mod__ runs before Undefined's __rmod__ could fail.
		return ev.printf(string(s), r)
	}
	for _, v := range []Value{l, r} {
		if u, ok := v.(Undefined); ok {
			return nil, undefinedErr(u)
		}
	}
	nl, lnum := numeric(l)
	nr, rnum := numeric(r)
	if lnum && rnum {
		return arith(op, nl, nr)
	}
	switch op {
	case "+":
		switch a := l.(type) {
		case Str:
			if b, ok := r.(Str); ok {
				if err := ev.checkLen(len(a) + len(b)); err != nil {
					return nil, err
				}
				return a + b, nil
			}
			return nil, errorf(CodeRuntime, 0, "can only concatenate str (not \"%s\") to str", r.pyType())
		case *List:
			if b, ok := r.(*List); ok && a.Tuple == b.Tuple && a.view == viewNone && b.view == viewNone {
				if err := ev.checkLen(len(a.Items) + len(b.Items)); err != nil {
					return nil, err
				}
				items := make([]Value, 0, len(a.Items)+len(b.Items))
				items = append(append(items, a.Items...), b.Items...)
				return &List{Items: items, Tuple: a.Tuple}, nil
			}
			return nil, errorf(CodeRuntime, 0, "can only concatenate %s (not \"%s\") to %s", a.pyType(), r.pyType(), a.pyType())
		}
	case "*":
		if s, n, ok := seqTimes(l, r); ok {
			return ev.repeat(s, n)
		}
		if s, n, ok := seqTimes(r, l); ok {
			return ev.repeat(s, n)
		}
	case "%":
		if s, ok := l.(Str); ok {
			return ev.printf(string(s), r)
		}
	}
	return nil, errorf(CodeRuntime, 0, "unsupported operand type(s) for %s: '%s' and '%s'", op, l.pyType(), r.pyType())
}

func seqTimes(a, b Value) (Value, int64, bool) {
	if l, ok := a.(*List); ok && l.view != viewNone {
		return nil, 0, false
	}
	switch a.(type) {
	case Str, *List:
		switch n := b.(type) {
		case Int:
			return a, int64(n), true
		case Bool:
			if n {
				return a, 1, true
			}
			return a, 0, true
		}
	}
	return nil, 0, false
}

func (ev *evaluator) repeat(s Value, n int64) (Value, error) {
	if n < 0 {
		n = 0
	}
	switch x := s.(type) {
	case Str:
		if len(x) > 0 && n > int64(ev.limits.MaxOutput/len(x)) {
			return nil, ev.checkLen(ev.limits.MaxOutput + 1)
		}
		return Str(strings.Repeat(string(x), int(n))), nil
	case *List:
		if len(x.Items) > 0 && n > int64(ev.limits.MaxOutput/len(x.Items)) {
			return nil, ev.checkLen(ev.limits.MaxOutput + 1)
		}
		items := make([]Value, 0, len(x.Items)*int(n))
		for range n {
			items = append(items, x.Items...)
		}
		return &List{Items: items, Tuple: x.Tuple}, nil
	}
	return nil, errorf(CodeRuntime, 0, "cannot repeat %s", s.pyType())
}

// arith applies a numeric operator with Python semantics (floor division
// and modulo round toward negative infinity; / is true division).
func arith(op string, a, b num) (Value, error) {
	if !a.isFloat && !b.isFloat {
		x, y := a.i, b.i
		switch op {
		case "+":
			s := x + y
			if (s > x) != (y > 0) {
				return nil, errorf(CodeRuntime, 0, "integer overflow")
			}
			return Int(s), nil
		case "-":
			s := x - y
			if (s < x) != (y > 0) {
				return nil, errorf(CodeRuntime, 0, "integer overflow")
			}
			return Int(s), nil
		case "*":
			if x != 0 && y != 0 {
				p := x * y
				if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
					return nil, errorf(CodeRuntime, 0, "integer overflow")
				}
				return Int(p), nil
			}
			return Int(0), nil
		case "//", "%":
			if y == 0 {
				return nil, errorf(CodeRuntime, 0, "integer division or modulo by zero")
			}
			if x == math.MinInt64 && y == -1 {
				return nil, errorf(CodeRuntime, 0, "integer overflow")
			}
			q, m := x/y, x%y
			if m != 0 && (m < 0) != (y < 0) {
				q--
				m += y
			}
			if op == "//" {
				return Int(q), nil
			}
			return Int(m), nil
		case "**":
			if y < 0 {
				return Float(math.Pow(float64(x), float64(y))), nil
			}
			result := int64(1)
			base := x
			for e := y; e > 0; e >>= 1 {
				if e&1 == 1 {
					r := result * base
					if base != 0 && r/base != result {
						return nil, errorf(CodeRuntime, 0, "integer overflow")
					}
					result = r
				}
				if e > 1 {
					nb := base * base
					if base != 0 && nb/base != base {
						return nil, errorf(CodeRuntime, 0, "integer overflow")
					}
					base = nb
				}
			}
			return Int(result), nil
		}
	}
	x, y := a.float(), b.float()
	switch op {
	case "+":
		return Float(x + y), nil
	case "-":
		return Float(x - y), nil
	case "*":
		return Float(x * y), nil
	case "/":
		if y == 0 {
			return nil, errorf(CodeRuntime, 0, "division by zero")
		}
		return Float(x / y), nil
	case "//":
		if y == 0 {
			return nil, errorf(CodeRuntime, 0, "float floor division by zero")
		}
		return Float(math.Floor(x / y)), nil
	case "%":
		if y == 0 {
			return nil, errorf(CodeRuntime, 0, "float modulo")
		}
		m := math.Mod(x, y)
		if m != 0 && (m < 0) != (y < 0) {
			m += y
		}
		return Float(m), nil
	case "**":
		if x == 0 && y < 0 {
			return nil, errorf(CodeRuntime, 0, "0.0 cannot be raised to a negative power")
		}
		return Float(math.Pow(x, y)), nil
	}
	return nil, errorf(CodeRuntime, 0, "unsupported operator %s", op)
}

// getattr is jinja2's sandboxed getattr for a.b: the attribute (a method)
// first, then the item; unsafe (mutating) methods give Undefined.
func getattr(obj Value, name string) (Value, error) {
	switch o := obj.(type) {
	case Undefined:
		return nil, undefinedErr(o)
	case *Dict:
		if m, ok := attrMethod(obj, name); ok {
			return m, nil
		}
		if v, ok := o.Get(Str(name)); ok {
			return v, nil
		}
	case *Namespace:
		if v, ok := o.d.Get(Str(name)); ok {
			return v, nil
		}
	case *loopValue:
		return o.attr(name), nil
	default:
		if m, ok := attrMethod(obj, name); ok {
			return m, nil
		}
	}
	return Undefined{hint: "'" + typeDesc(obj) + "' has no attribute '" + name + "'"}, nil
}

func typeDesc(v Value) string {
	if _, ok := v.(None); ok {
		return "None"
	}
	return v.pyType() + " object"
}

var (
	dictMethods   = setOf("items", "keys", "values", "get", "copy")
	dictUnsafe    = setOf("pop", "popitem", "update", "clear", "setdefault")
	listMethods   = setOf("count", "index", "copy")
	listUnsafe    = setOf("append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear")
	stringMethods = setOf("strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
		"upper", "lower", "title", "capitalize", "swapcase", "casefold", "replace", "find", "rfind", "index", "rindex",
		"count", "join", "center", "ljust", "rjust", "zfill", "isalpha", "isdigit", "isalnum", "isspace", "islower",
		"isupper", "isnumeric", "isdecimal", "istitle", "removeprefix", "removesuffix", "partition", "rpartition",
		"expandtabs", "format")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// attrMethod resolves a method name on a value.
func attrMethod(obj Value, name string) (Value, bool) {
	switch obj.(type) {
	case *Dict:
		if dictMethods[name] {
			return &method{recv: obj, name: name}, true
		}
		if dictUnsafe[name] {
			return Undefined{hint: "access to attribute '" + name + "' of 'dict' object is unsafe."}, true
		}
	case *List:
		if o := obj.(*List); o.view != viewNone && (o.view != viewRange || (name != "count" && name != "index")) {
			return nil, false
		}
		if listMethods[name] {
			return &method{recv: obj, name: name}, true
		}
		if listUnsafe[name] {
			return Undefined{hint: "access to attribute '" + name + "' of '" + obj.pyType() + "' object is unsafe."}, true
		}
	case Str:
		if stringMethods[name] {
			return &method{recv: obj, name: name}, true
		}
	}
	return nil, false
}

// getitem is jinja2's getitem for a[key]: the item first, then (for string
// keys) the attribute; a missing one is Undefined.
func getitem(obj, key Value) (Value, error) {
	switch o := obj.(type) {
	case Undefined:
		return nil, undefinedErr(o)
	case *Dict:
		if v, ok := o.Get(key); ok {
			return v, nil
		}
	case *List:
		if n, ok := indexOf(key); ok && (o.view == viewNone || o.view == viewRange) {
			if n < 0 {
				n += int64(len(o.Items))
			}
			if n >= 0 && n < int64(len(o.Items)) {
				return o.Items[n], nil
			}
			return Undefined{hint: o.pyType() + " index out of range"}, nil
		}
	case Str:
		if n, ok := indexOf(key); ok {
			rs := []rune(string(o))
			if n < 0 {
				n += int64(len(rs))
			}
			if n >= 0 && n < int64(len(rs)) {
				return Str(string(rs[n])), nil
			}
			return Undefined{hint: "string index out of range"}, nil
		}
	}
	if s, ok := key.(Str); ok {
		return getattr(obj, string(s))
	}
	return Undefined{hint: "'" + typeDesc(obj) + "' has no item " + toStr(key)}, nil
}

func indexOf(v Value) (int64, bool) {
	switch x := v.(type) {
	case Int:
		return int64(x), true
	case Bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// sliceIndices is Python's slice.indices(n) for validated parts.
func sliceIndices(n int, parts [3]Value) (start, stop, step int64) {
	var idx [3]*int64
	for i, p := range parts {
		if v, ok := indexOf(p); ok {
			idx[i] = &v
		}
	}
	step = 1
	if idx[2] != nil {
		step = *idx[2]
	}
	ln := int64(n)
	clamp := func(p *int64, def, lo, hi int64) int64 {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += ln
			if v < lo {
				v = lo
			}
		} else if v > hi {
			v = hi
		}
		return v
	}
	if step > 0 {
		return clamp(idx[0], 0, 0, ln), clamp(idx[1], ln, 0, ln), step
	}
	return clamp(idx[0], ln-1, -1, ln-1), clamp(idx[1], -1, -1, ln-1), step
}

// sliceBounds validates the parts of a slice and lists the indices it
// selects from a sequence of length n.
func sliceBounds(n int, parts [3]Value) ([]int, error) {
	for _, p := range parts {
		if _, ok := p.(None); ok {
			continue
		}
		if _, ok := indexOf(p); !ok {
			return nil, errorf(CodeRuntime, 0, "slice indices must be integers or None or have an __index__ method")
		}
	}
	if n, ok := indexOf(parts[2]); ok && n == 0 {
		return nil, errorf(CodeRuntime, 0, "slice step cannot be zero")
	}
	start, stop, step := sliceIndices(n, parts)
	var out []int
	if step > 0 {
		for i := start; i < stop; i += step {
			out = append(out, int(i))
		}
	} else {
		for i := start; i > stop; i += step {
			out = append(out, int(i))
		}
	}
	return out, nil
}

func sliceValue(obj Value, parts [3]Value) (Value, error) {
	switch o := obj.(type) {
	case Undefined:
		return nil, undefinedErr(o)
	case *List:
		if o.view != viewNone && o.view != viewRange {
			return nil, errorf(CodeRuntime, 0, "'%s' object is not subscriptable", o.pyType())
		}
		idx, err := sliceBounds(len(o.Items), parts)
		if err != nil {
			return nil, err
		}
		out := &List{Tuple: o.Tuple, Items: make([]Value, len(idx))}
		if o.view == viewRange {
			// A sliced range is a range: r[i:j:k] = range(r[i], r[j], step*k).
			start, stop, step := sliceIndices(len(o.Items), parts)
			out.view = viewRange
			out.rng = [3]int64{o.rng[0] + start*o.rng[2], o.rng[0] + stop*o.rng[2], o.rng[2] * step}
		}
		for i, j := range idx {
			out.Items[i] = o.Items[j]
		}
		return out, nil
	case Str:
		rs := []rune(string(o))
		idx, err := sliceBounds(len(rs), parts)
		if err != nil {
			return nil, err
		}
		out := make([]rune, len(idx))
		for i, j := range idx {
			out[i] = rs[j]
		}
		return Str(string(out)), nil
	}
	// jinja2 compiles a[i:j] to a plain Python subscript (no sandbox
	// getitem), so slicing anything else fails.
	return nil, errorf(CodeRuntime, 0, "'%s' object is not subscriptable", obj.pyType())
}

// call invokes a callable value.
func (ev *evaluator) call(fn Value, args []Value, kwargs []kwv, line int) (Value, error) {
	switch f := fn.(type) {
	case Undefined:
		return nil, undefinedErr(f)
	case *macro:
		return ev.callMacro(f, args, kwargs, line)
	case *builtinFunc:
		return f.fn(ev, args, kwargs)
	case *method:
		return ev.callMethod(f, args, kwargs)
	case *loopValue:
		if f.recurse == nil {
			return nil, errorf(CodeRuntime, line, "Tried to call non recursive loop. Maybe you forgot the 'recursive' modifier.")
		}
		if len(args) != 1 {
			return nil, errorf(CodeRuntime, line, "loop() takes exactly one argument")
		}
		return f.recurse(args[0])
	}
	return nil, errorf(CodeRuntime, line, "'%s' object is not callable", fn.pyType())
}
