package templates

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// filterFunc implements one filter: v is the piped value.
type filterFunc func(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error)

var filters map[string]filterFunc

func init() {
	filters = map[string]filterFunc{
		"abs":        fAbs,
		"attr":       fAttr,
		"capitalize": strFilter(pyCapitalize),
		"center":     fCenter,
		"count":      fLength,
		"d":          fDefault,
		"default":    fDefault,
		"dictsort":   fDictsort,
		"e":          fEscape,
		"escape":     fEscape,
		"first":      fFirst,
		"float":      fFloat,
		"format":     fFormat,
		"indent":     fIndent,
		"int":        fInt,
		"items":      fItems,
		"join":       fJoin,
		"last":       fLast,
		"length":     fLength,
		"list":       fList,
		"lower":      strFilter(strings.ToLower),
		"map":        fMap,
		"max":        fMinMax(1),
		"min":        fMinMax(-1),
		"reject":     fSelect(false, false),
		"rejectattr": fSelect(false, true),
		"replace":    fReplace,
		"reverse":    fReverse,
		"round":      fRound,
		"safe":       func(ev *evaluator, v Value, _ []Value, _ []kwv) (Value, error) { return v, nil },
		"select":     fSelect(true, false),
		"selectattr": fSelect(true, true),
		"sort":       fSort,
		"string":     func(ev *evaluator, v Value, _ []Value, _ []kwv) (Value, error) { return Str(toStr(v)), nil },
		"sum":        fSum,
		"title":      strFilter(jinjaTitle),
		"tojson":     fToJSON,
		"trim":       fTrim,
		"truncate":   fTruncate,
		"unique":     fUnique,
		"upper":      strFilter(strings.ToUpper),
		"wordcount": func(ev *evaluator, v Value, _ []Value, _ []kwv) (Value, error) {
			return Int(len(wordRE.FindAllStringIndex(toStr(v), -1))), nil
		},
	}
}

func (ev *evaluator) callFilter(f *filterExpr, v Value, sc *scope) (Value, error) {
	args, kwargs, err := ev.evalArgs(f.args, f.kwargs, sc)
	if err != nil {
		return nil, err
	}
	// jinja2 calls a stub for an unknown filter, after evaluating its
	// input and arguments (check.go).
	fn, ok := filters[f.name]
	if !ok {
		return nil, unknownFilter(f.line, f.name, true)
	}
	out, err := fn(ev, v, args, kwargs)
	return out, withLine(err, f.line)
}

func strFilter(fn func(string) string) filterFunc {
	return func(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
		if len(args)+len(kwargs) > 0 {
			return nil, errorf(CodeRuntime, 0, "filter takes no arguments")
		}
		return Str(fn(toStr(v))), nil
	}
}

// wordRE is Python's \w+ (Unicode letters, digits and underscore).
var wordRE = regexp.MustCompile(`[\p{L}\p{N}_]+`)

var wordBeginning = regexp.MustCompile(`([-\s({\[<]+)`)

// jinjaTitle is jinja2's do_title: split on runs of "-", whitespace and
// opening brackets, then capitalise each word.
func jinjaTitle(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range wordBeginning.FindAllStringIndex(s, -1) {
		b.WriteString(titleWord(s[last:m[0]]))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(titleWord(s[last:]))
	return b.String()
}

func titleWord(w string) string {
	if w == "" {
		return w
	}
	r, size := utf8.DecodeRuneInString(w)
	return strings.ToUpper(string(r)) + strings.ToLower(w[size:])
}

func fAbs(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	n, ok := numeric(v)
	if !ok {
		return nil, errorf(CodeRuntime, 0, "bad operand type for abs(): '%s'", v.pyType())
	}
	if n.isFloat {
		return Float(math.Abs(n.f)), nil
	}
	if n.i < 0 {
		if n.i == math.MinInt64 {
			return nil, errorf(CodeRuntime, 0, "integer overflow")
		}
		return Int(-n.i), nil
	}
	return Int(n.i), nil
}

func fAttr(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("attr", []string{"name"}, nil, args, kwargs)
	if err != nil {
		return nil, err
	}
	name, err := strArg("attr", a[0])
	if err != nil {
		return nil, err
	}
	if u, ok := v.(Undefined); ok {
		return nil, undefinedErr(u)
	}
	if m, ok := attrMethod(v, name); ok {
		return m, nil
	}
	if ns, ok := v.(*Namespace); ok {
		if x, ok := ns.d.Get(Str(name)); ok {
			return x, nil
		}
	}
	if lv, ok := v.(*loopValue); ok {
		return lv.attr(name), nil
	}
	return Undefined{hint: "'" + typeDesc(v) + "' has no attribute '" + name + "'"}, nil
}

func fCenter(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("center", []string{"width"}, []Value{Int(80)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	w, err := intArg("center", a[0])
	if err != nil {
		return nil, err
	}
	return ev.pad(toStr(v), w, " ", "center")
}

func fDefault(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("default", []string{"default_value", "boolean"}, []Value{Str(""), Bool(false)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(Undefined); ok || (truthy(a[1]) && !truthy(v)) {
		return a[0], nil
	}
	return v, nil
}

func fDictsort(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("dictsort", []string{"case_sensitive", "by", "reverse"}, []Value{Bool(false), Str("key"), Bool(false)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	d, ok := v.(*Dict)
	if !ok {
		return nil, errorf(CodeRuntime, 0, "You can only sort by either 'key' or 'value'")
	}
	pos := 0
	switch toStr(a[1]) {
	case "key":
	case "value":
		pos = 1
	default:
		return nil, errorf(CodeRuntime, 0, "You can only sort by either 'key' or 'value'")
	}
	caseSensitive := truthy(a[0])
	items, err := sortValues(dictItems(d).Items, func(it Value) (Value, error) {
		k := it.(*List).Items[pos]
		if s, ok := k.(Str); ok && !caseSensitive {
			return Str(strings.ToLower(string(s))), nil
		}
		return k, nil
	}, truthy(a[2]))
	if err != nil {
		return nil, err
	}
	return &List{Items: items}, nil
}

func fEscape(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return Str(r.Replace(toStr(v))), nil
}

func fFirst(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	if it, ok := v.(*iterValue); ok {
		if it.err != nil {
			return nil, it.err
		}
		if it.pos >= len(it.items) {
			return Undefined{hint: "No first item, sequence was empty."}, nil
		}
		it.pos++
		return it.items[it.pos-1], nil
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return Undefined{hint: "No first item, sequence was empty."}, nil
	}
	return items[0], nil
}

func fLast(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	var items []Value
	switch x := v.(type) {
	case *List:
		items = x.Items
	case Str:
		items, _ = ev.iterate(x)
	case *iterValue:
		return nil, errorf(CodeRuntime, 0, "'%s' object is not reversible", x.name)
	default:
		var err error
		if items, err = ev.iterate(v); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		return Undefined{hint: "No last item, sequence was empty."}, nil
	}
	return items[len(items)-1], nil
}

func fFloat(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("float", []string{"default"}, []Value{Float(0)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	if u, ok := v.(Undefined); ok {
		return nil, undefinedErr(u) // int(Undefined) fails, and do_int only catches TypeError/ValueError
	}
	if n, ok := numeric(v); ok {
		return Float(n.float()), nil
	}
	if s, ok := v.(Str); ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
			return Float(f), nil
		}
	}
	return a[0], nil
}

func fInt(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("int", []string{"default", "base"}, []Value{Int(0), Int(10)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	if u, ok := v.(Undefined); ok {
		return nil, undefinedErr(u) // int(Undefined) fails, and do_int only catches TypeError/ValueError
	}
	if n, ok := numeric(v); ok {
		if n.isFloat {
			if math.IsNaN(n.f) || math.IsInf(n.f, 0) || math.Abs(n.f) >= 1<<63 {
				return a[0], nil
			}
			return Int(int64(n.f)), nil
		}
		return Int(n.i), nil
	}
	if s, ok := v.(Str); ok {
		base, _ := indexOf(a[1])
		t := strings.ReplaceAll(strings.TrimSpace(string(s)), "_", "")
		if i, err := strconv.ParseInt(t, int(base), 64); err == nil {
			return Int(i), nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && math.Abs(f) < 1<<63 {
			return Int(int64(f)), nil
		}
	}
	return a[0], nil
}

func fFormat(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	if len(args) > 0 && len(kwargs) > 0 {
		return nil, errorf(CodeRuntime, 0, "can't handle positional and keyword arguments at the same time")
	}
	if len(kwargs) > 0 {
		d := NewDict()
		for _, k := range kwargs {
			d.SetStr(k.name, k.v)
		}
		return ev.printf(toStr(v), d)
	}
	return ev.printf(toStr(v), &List{Items: args, Tuple: true})
}

func fIndent(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("indent", []string{"width", "first", "blank"}, []Value{Int(4), Bool(false), Bool(false)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	var ind string
	switch w := a[0].(type) {
	case Str:
		ind = string(w)
	default:
		n, err := intArg("indent", w)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			n = 0
		}
		if err := ev.checkLen(int(min(n, math.MaxInt32))); err != nil {
			return nil, err
		}
		ind = strings.Repeat(" ", int(n))
	}
	// jinja2's do_indent does s += "\n" before splitlines(), so only a str
	// value works.
	str, ok := v.(Str)
	if !ok {
		if u, isU := v.(Undefined); isU {
			return nil, undefinedErr(u)
		}
		return nil, errorf(CodeRuntime, 0, "unsupported operand type(s) for +=: '%s' and 'str'", v.pyType())
	}
	lines := pySplitlines(string(str) + "\n")
	if err := ev.checkLen(len(str) + len(lines)*(len(ind)+1)); err != nil {
		return nil, err
	}
	var b strings.Builder
	if truthy(a[1]) {
		b.WriteString(ind)
	}
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
			if truthy(a[2]) || l != "" {
				b.WriteString(ind)
			}
		}
		b.WriteString(l)
	}
	return Str(b.String()), nil
}

// pySplitlines is Python's str.splitlines(): it breaks at \n, \r, \r\n,
// \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029, and drops a final empty line.
func pySplitlines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:i])
			i += size
			if r == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
			continue
		}
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func fItems(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	switch x := v.(type) {
	case Undefined:
		return generator(nil, nil)
	case *Dict:
		return generator(dictItems(x).Items, nil)
	}
	return generator(nil, errorf(CodeRuntime, 0, "Can only get item pairs from a mapping."))
}

// attrGetter is jinja2's make_attrgetter: a dotted path of items (integer
// parts index lists), resolved with getitem.
func attrGetter(attr Value, def Value) func(Value) (Value, error) {
	var parts []Value
	switch a := attr.(type) {
	case Str:
		for _, p := range strings.Split(string(a), ".") {
			if n, err := strconv.Atoi(p); err == nil {
				parts = append(parts, Int(n))
			} else {
				parts = append(parts, Str(p))
			}
		}
	default:
		parts = []Value{attr}
	}
	return func(v Value) (Value, error) {
		for _, p := range parts {
			var err error
			if v, err = getitem(v, p); err != nil {
				return nil, err
			}
		}
		if _, ok := v.(Undefined); ok && def != nil {
			return def, nil
		}
		return v, nil
	}
}

func fJoin(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("join", []string{"d", "attribute"}, []Value{Str(""), None{}}, args, kwargs)
	if err != nil {
		return nil, err
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	sep := toStr(a[0])
	var get func(Value) (Value, error)
	if _, ok := a[1].(None); !ok {
		get = attrGetter(a[1], nil)
	}
	parts := make([]string, len(items))
	total := 0
	for i, it := range items {
		if get != nil {
			if it, err = get(it); err != nil {
				return nil, err
			}
		}
		parts[i] = toStr(it)
		total += len(parts[i]) + len(sep)
		if err := ev.checkLen(total); err != nil {
			return nil, err
		}
	}
	return Str(strings.Join(parts, sep)), nil
}

func fLength(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	switch x := v.(type) {
	case Undefined:
		return Int(0), nil
	case Str:
		return Int(utf8.RuneCountInString(string(x))), nil
	case *List:
		return Int(len(x.Items)), nil
	case *Dict:
		return Int(x.Len()), nil
	case *Namespace:
		return nil, errorf(CodeRuntime, 0, "object of type 'Namespace' has no len()")
	}
	return nil, errorf(CodeRuntime, 0, "object of type '%s' has no len()", v.pyType())
}

func fList(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	return &List{Items: append([]Value(nil), items...)}, nil
}

// generator wraps an eagerly computed filter result as the one-shot Python
// generator jinja2 returns; an error is kept for when it is consumed.
func generator(items []Value, err error) (Value, error) {
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code == CodeBudget {
			return nil, err
		}
	}
	return &iterValue{items: items, err: err, name: "generator"}, nil
}

func fMap(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	return generator(mapItems(ev, v, args, kwargs))
}

func mapItems(ev *evaluator, v Value, args []Value, kwargs []kwv) ([]Value, error) {
	if !truthy(v) { // jinja2's map starts with "if value:"
		return nil, nil
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	var fn func(Value) (Value, error)
	if len(args) == 0 {
		var attr, def Value
		for _, k := range kwargs {
			switch k.name {
			case "attribute":
				attr = k.v
			case "default":
				def = k.v
			default:
				return nil, errorf(CodeRuntime, 0, "Unexpected keyword argument '%s'", k.name)
			}
		}
		if attr == nil {
			return nil, errorf(CodeRuntime, 0, "map requires a filter argument")
		}
		fn = attrGetter(attr, def)
	} else {
		name, err := strArg("map", args[0])
		if err != nil {
			return nil, err
		}
		f, ok := filters[name]
		if !ok {
			return nil, unknownFilter(0, name, false)
		}
		rest := args[1:]
		fn = func(x Value) (Value, error) { return f(ev, x, rest, kwargs) }
	}
	out := make([]Value, 0, len(items))
	for _, it := range items {
		if err := ev.step(0); err != nil {
			return nil, err
		}
		r, err := fn(it)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func fMinMax(sign int) filterFunc {
	return func(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
		a, err := bindArgs("max", []string{"case_sensitive", "attribute"}, []Value{Bool(false), None{}}, args, kwargs)
		if err != nil {
			return nil, err
		}
		items, err := ev.iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return Undefined{hint: "No aggregated item, sequence was empty."}, nil
		}
		key := sortKey(a[0], a[1])
		best := items[0]
		bk, err := key(best)
		if err != nil {
			return nil, err
		}
		for _, it := range items[1:] {
			k, err := key(it)
			if err != nil {
				return nil, err
			}
			c, err := compareValues(k, bk, "<")
			if err != nil {
				return nil, err
			}
			if c == sign {
				best, bk = it, k
			}
		}
		return best, nil
	}
}

// sortKey builds the key function of sort/unique/min/max: an optional
// attribute, lower-cased strings unless case_sensitive.
func sortKey(caseSensitive, attribute Value) func(Value) (Value, error) {
	var get func(Value) (Value, error)
	if _, ok := attribute.(None); !ok {
		get = attrGetter(attribute, nil)
	}
	cs := truthy(caseSensitive)
	return func(v Value) (Value, error) {
		if get != nil {
			var err error
			if v, err = get(v); err != nil {
				return nil, err
			}
		}
		if s, ok := v.(Str); ok && !cs {
			return Str(strings.ToLower(string(s))), nil
		}
		return v, nil
	}
}

func fSelect(keep, byAttr bool) filterFunc {
	return func(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
		return generator(selectItems(ev, v, args, kwargs, keep, byAttr))
	}
}

func selectItems(ev *evaluator, v Value, args []Value, kwargs []kwv, keep, byAttr bool) ([]Value, error) {
	{
		if !truthy(v) { // jinja2's select_or_reject starts with "if value:"
			return nil, nil
		}
		items, err := ev.iterate(v)
		if err != nil {
			return nil, err
		}
		get := func(x Value) (Value, error) { return x, nil }
		if byAttr {
			if len(args) == 0 {
				return nil, errorf(CodeRuntime, 0, "Missing parameter for attribute name")
			}
			get = attrGetter(args[0], nil)
			args = args[1:]
		}
		test := func(x Value) (bool, error) { return truthy(x), nil }
		if len(args) > 0 {
			name, err := strArg("select", args[0])
			if err != nil {
				return nil, err
			}
			rest := args[1:]
			test = func(x Value) (bool, error) { return ev.runTest(name, x, rest, kwargs) }
		}
		var out []Value
		for _, it := range items {
			if err := ev.step(0); err != nil {
				return nil, err
			}
			x, err := get(it)
			if err != nil {
				return nil, err
			}
			ok, err := test(x)
			if err != nil {
				return nil, err
			}
			if ok == keep {
				out = append(out, it)
			}
		}
		return out, nil
	}
}

func fReplace(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("replace", []string{"old", "new", "count"}, []Value{nil, nil, None{}}, args, kwargs)
	if err != nil {
		return nil, err
	}
	if _, ok := a[2].(None); ok {
		a[2] = Int(-1)
	}
	return ev.replace(toStr(v), Str(toStr(a[0])), Str(toStr(a[1])), a[2])
}

func fReverse(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	if s, ok := v.(Str); ok {
		rs := []rune(string(s))
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return Str(string(rs)), nil
	}
	name := "list_reverseiterator"
	switch x := v.(type) {
	case *Dict:
		name = "dict_reversekeyiterator"
	case *iterValue:
		// reversed() fails on an iterator; jinja2 then builds a list.
		items, err := x.rest()
		if err != nil {
			return nil, err
		}
		return &List{Items: reversedCopy(items)}, nil
	case *List:
		if x.view == viewRange {
			name = "range_iterator"
		}
	case Undefined:
		name = "reversed"
	default:
		return nil, errorf(CodeRuntime, 0, "argument must be iterable")
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	return &iterValue{items: reversedCopy(items), name: name}, nil
}

func reversedCopy(items []Value) []Value {
	out := make([]Value, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	return out
}

func fRound(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("round", []string{"precision", "method"}, []Value{Int(0), Str("common")}, args, kwargs)
	if err != nil {
		return nil, err
	}
	if u, ok := v.(Undefined); ok {
		return nil, undefinedErr(u)
	}
	n, ok := numeric(v)
	if !ok {
		return nil, errorf(CodeRuntime, 0, "type %s doesn't define __round__ method", v.pyType())
	}
	p, err := intArg("round", a[0])
	if err != nil {
		return nil, err
	}
	if p > 400 || p < -400 {
		p = max(min(p, 400), -400)
	}
	scale := math.Pow(10, float64(p))
	switch toStr(a[1]) {
	case "common":
		// Python's round(): an int stays an int (exact for p >= 0);
		// a float rounds half to even on its exact binary value.
		if !n.isFloat {
			if p >= 0 {
				return Int(n.i), nil
			}
			return Int(int64(math.RoundToEven(float64(n.i)/scale) * scale)), nil
		}
		if p >= 0 {
			f, _ := strconv.ParseFloat(strconv.FormatFloat(n.f, 'f', int(p), 64), 64)
			return Float(f), nil
		}
		return Float(math.RoundToEven(n.f/scale) * scale), nil
	case "ceil":
		return Float(math.Ceil(n.float()*scale) / scale), nil
	case "floor":
		return Float(math.Floor(n.float()*scale) / scale), nil
	}
	return nil, errorf(CodeRuntime, 0, "method must be common, ceil or floor")
}

func fSort(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("sort", []string{"reverse", "case_sensitive", "attribute"}, []Value{Bool(false), Bool(false), None{}}, args, kwargs)
	if err != nil {
		return nil, err
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	key := sortKey(a[1], a[2])
	if attrs, ok := a[2].(Str); ok && strings.Contains(string(attrs), ",") {
		// make_multi_attrgetter: "age,name" sorts by a tuple of attributes.
		var keys []func(Value) (Value, error)
		for _, part := range strings.Split(string(attrs), ",") {
			keys = append(keys, sortKey(a[1], Str(part)))
		}
		key = func(x Value) (Value, error) {
			t := &List{Tuple: true}
			for _, k := range keys {
				kv, err := k(x)
				if err != nil {
					return nil, err
				}
				t.Items = append(t.Items, kv)
			}
			return t, nil
		}
	}
	sorted, err := sortValues(items, key, truthy(a[0]))
	if err != nil {
		return nil, err
	}
	return &List{Items: sorted}, nil
}

func fSum(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("sum", []string{"attribute", "start"}, []Value{None{}, Int(0)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	items, err := ev.iterate(v)
	if err != nil {
		return nil, err
	}
	get := func(x Value) (Value, error) { return x, nil }
	if _, ok := a[0].(None); !ok {
		get = attrGetter(a[0], nil)
	}
	total := a[1]
	for _, it := range items {
		x, err := get(it)
		if err != nil {
			return nil, err
		}
		if total, err = ev.binOp("+", total, x); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// fToJSON is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=indent, separators=separators, sort_keys=sort_keys).
func fToJSON(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("tojson", []string{"ensure_ascii", "indent", "separators", "sort_keys"},
		[]Value{Bool(false), None{}, None{}, Bool(false)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	o := jsonOptions{itemSep: ", ", keySep: ": ", ensureASCII: truthy(a[0]), sortKeys: truthy(a[3])}
	switch ind := a[1].(type) {
	case None:
	case Str:
		o.hasIndent, o.indent = true, string(ind)
	default:
		n, err := intArg("tojson", ind)
		if err != nil {
			return nil, err
		}
		if n > 1<<10 {
			return nil, errorf(CodeBudget, 0, "tojson indent %d is too large", n)
		}
		o.hasIndent, o.indent = true, strings.Repeat(" ", int(max(n, 0)))
	}
	if o.hasIndent {
		o.itemSep = ","
	}
	if seps, ok := a[2].(*List); ok {
		if len(seps.Items) != 2 {
			return nil, errorf(CodeRuntime, 0, "separators must be a pair")
		}
		o.itemSep, o.keySep = toStr(seps.Items[0]), toStr(seps.Items[1])
	}
	s, err := toJSON(v, o)
	if err != nil {
		return nil, err
	}
	return Str(s), nil
}

func fTrim(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("trim", []string{"chars"}, []Value{None{}}, args, kwargs)
	if err != nil {
		return nil, err
	}
	s, err := stripChars(toStr(v), a[0], true, true)
	return Str(s), err
}

func fTruncate(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("truncate", []string{"length", "killwords", "end", "leeway"}, []Value{Int(255), Bool(false), Str("..."), Int(5)}, args, kwargs)
	if err != nil {
		return nil, err
	}
	length, err := intArg("truncate", a[0])
	if err != nil {
		return nil, err
	}
	leeway, err := intArg("truncate", a[3])
	if err != nil {
		return nil, err
	}
	var s string
	switch x := v.(type) {
	case Str:
		s = string(x)
	case Undefined:
		return v, nil // len(Undefined) is 0, so jinja2 returns it as is
	case *List, *Dict:
		// jinja2 does not stringify: a short container comes back as is,
		// a long one fails on rsplit.
		n, _ := fLength(ev, v, nil, nil)
		if int64(n.(Int)) <= length+leeway {
			return v, nil
		}
		return nil, errorf(CodeRuntime, 0, "'%s' object has no attribute 'rsplit'", v.pyType())
	default:
		return nil, errorf(CodeRuntime, 0, "object of type '%s' has no len()", v.pyType())
	}
	end := toStr(a[2])
	rs := []rune(s)
	if int64(len(rs)) <= length+leeway {
		return Str(s), nil
	}
	cut := length - int64(utf8.RuneCountInString(end))
	if cut < 0 {
		cut = 0
	}
	head := string(rs[:cut])
	if truthy(a[1]) {
		return Str(head + end), nil
	}
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return Str(head + end), nil
}

func fUnique(ev *evaluator, v Value, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("unique", []string{"case_sensitive", "attribute"}, []Value{Bool(false), None{}}, args, kwargs)
	if err != nil {
		return nil, err
	}
	items, err := ev.iterate(v)
	if err != nil {
		return generator(nil, err)
	}
	key := sortKey(a[0], a[1])
	seen := map[string]bool{}
	var out []Value
	for _, it := range items {
		k, err := key(it)
		if err != nil {
			return generator(out, err)
		}
		h, err := hashKey(k)
		if err != nil {
			return generator(out, err)
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, it)
		}
	}
	return generator(out, nil)
}

// ---- tests ----

func (ev *evaluator) runTest(name string, v Value, args []Value, kwargs []kwv) (bool, error) {
	one := func() (Value, error) {
		a, err := bindArgs(name, []string{"other"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		return a[0], nil
	}
	switch name {
	case "defined":
		_, ok := v.(Undefined)
		return !ok, nil
	case "undefined":
		_, ok := v.(Undefined)
		return ok, nil
	case "none":
		_, ok := v.(None)
		return ok, nil
	case "true":
		b, ok := v.(Bool)
		return ok && bool(b), nil
	case "false":
		b, ok := v.(Bool)
		return ok && !bool(b), nil
	case "boolean":
		_, ok := v.(Bool)
		return ok, nil
	case "string":
		_, ok := v.(Str)
		return ok, nil
	case "number":
		_, ok := numeric(v)
		return ok, nil
	case "integer":
		_, ok := v.(Int)
		return ok, nil
	case "float":
		_, ok := v.(Float)
		return ok, nil
	case "mapping":
		_, ok := v.(*Dict)
		return ok, nil
	case "iterable":
		switch v.(type) {
		case *List, *Dict, Str, Undefined, *iterValue:
			return true, nil
		}
		return false, nil
	case "sequence":
		switch x := v.(type) {
		case *List:
			return x.view == viewNone || x.view == viewRange, nil
		case *Dict, Str, Undefined:
			return true, nil
		}
		return false, nil
	case "callable":
		switch v.(type) {
		case *macro, *builtinFunc, *method, Undefined: // Undefined defines __call__
			return true, nil
		case *loopValue:
			return true, nil
		}
		return false, nil
	case "lower":
		return strIs(toStr(v), "islower"), nil
	case "upper":
		return strIs(toStr(v), "isupper"), nil
	case "escaped":
		return false, nil
	case "odd", "even":
		m, err := ev.binOp("%", v, Int(2))
		if err != nil {
			return false, err
		}
		if name == "odd" {
			return valuesEqual(m, Int(1)), nil
		}
		return valuesEqual(m, Int(0)), nil
	case "divisibleby":
		o, err := one()
		if err != nil {
			return false, err
		}
		m, err := ev.binOp("%", v, o)
		if err != nil {
			return false, err
		}
		return valuesEqual(m, Int(0)), nil
	case "eq", "equalto", "==":
		o, err := one()
		return err == nil && valuesEqual(v, o), err
	case "ne", "!=":
		o, err := one()
		return err == nil && !valuesEqual(v, o), err
	case "lt", "<", "le", "<=", "gt", ">", "ge", ">=":
		o, err := one()
		if err != nil {
			return false, err
		}
		op := map[string]string{"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[name]
		if op == "" {
			op = name
		}
		return compareOp(op, v, o)
	case "in":
		o, err := one()
		if err != nil {
			return false, err
		}
		return contains(o, v)
	case "sameas":
		o, err := one()
		if err != nil {
			return false, err
		}
		switch v.(type) {
		case *List, *Dict, *Namespace, *macro:
			return v == o, nil
		}
		return valuesEqual(v, o) && v.pyType() == o.pyType(), nil
	case "filter":
		s, err := one()
		if err != nil {
			return false, err
		}
		_, ok := filters[toStr(s)]
		return ok, nil
	case "test":
		s, err := one()
		if err != nil {
			return false, err
		}
		return knownTests[toStr(s)], nil
	}
	return false, unknownTest(0, name, false)
}

var knownTests = setOf("defined", "undefined", "none", "true", "false", "boolean", "string", "number", "integer",
	"float", "mapping", "iterable", "sequence", "callable", "lower", "upper", "escaped", "odd", "even", "divisibleby",
	"eq", "equalto", "==", "ne", "!=", "lt", "<", "le", "<=", "gt", ">", "ge", ">=", "in", "sameas", "filter", "test")
