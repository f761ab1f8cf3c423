package templates

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxRange bounds range(): the list is built eagerly.
const maxRange = 1 << 20

// globals are the functions every template sees (transformers adds
// raise_exception and strftime_now to jinja2's defaults).
var globals map[string]Value

func init() {
	globals = map[string]Value{
		"range":           &builtinFunc{name: "range", fn: fnRange},
		"dict":            &builtinFunc{name: "dict", fn: fnDict},
		"namespace":       &builtinFunc{name: "namespace", fn: fnNamespace},
		"raise_exception": &builtinFunc{name: "raise_exception", fn: fnRaise},
		"strftime_now":    &builtinFunc{name: "strftime_now", fn: fnStrftimeNow},
	}
}

// bindArgs matches positional and keyword arguments to params; defs[i] is
// the default of params[i] (nil: required).
func bindArgs(fname string, params []string, defs []Value, args []Value, kwargs []kwv) ([]Value, error) {
	if len(args) > len(params) {
		return nil, errorf(CodeRuntime, 0, "%s() takes at most %d arguments (%d given)", fname, len(params), len(args))
	}
	out := make([]Value, len(params))
	copy(out, args)
	for _, k := range kwargs {
		found := false
		for i, p := range params {
			if p == k.name {
				if out[i] != nil {
					return nil, errorf(CodeRuntime, 0, "%s() got multiple values for argument '%s'", fname, k.name)
				}
				out[i] = k.v
				found = true
			}
		}
		if !found {
			return nil, errorf(CodeRuntime, 0, "%s() got an unexpected keyword argument '%s'", fname, k.name)
		}
	}
	for i := range out {
		if out[i] == nil {
			if defs == nil || defs[i] == nil {
				return nil, errorf(CodeRuntime, 0, "%s() missing required argument '%s'", fname, params[i])
			}
			out[i] = defs[i]
		}
	}
	return out, nil
}

func intArg(fname string, v Value) (int64, error) {
	if n, ok := indexOf(v); ok {
		return n, nil
	}
	if f, ok := v.(Float); ok && fname == "" {
		return int64(f), nil
	}
	return 0, errorf(CodeRuntime, 0, "%s(): '%s' object cannot be interpreted as an integer", fname, v.pyType())
}

func fnRange(ev *evaluator, args []Value, kwargs []kwv) (Value, error) {
	if len(kwargs) > 0 || len(args) == 0 || len(args) > 3 {
		return nil, errorf(CodeRuntime, 0, "range expected 1 to 3 integer arguments")
	}
	var n [3]int64
	for i, a := range args {
		v, err := intArg("range", a)
		if err != nil {
			return nil, err
		}
		n[i] = v
	}
	start, stop, step := int64(0), n[0], int64(1)
	if len(args) >= 2 {
		start, stop = n[0], n[1]
	}
	if len(args) == 3 {
		step = n[2]
	}
	if step == 0 {
		return nil, errorf(CodeRuntime, 0, "range() arg 3 must not be zero")
	}
	var count int64
	if step > 0 && stop > start {
		count = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		count = (start - stop - step - 1) / -step
	}
	if count > maxRange || count < 0 {
		return nil, errorf(CodeBudget, 0, "range of %d items exceeds the %d limit", count, maxRange)
	}
	l := &List{Items: make([]Value, count), view: viewRange, rng: [3]int64{start, stop, step}}
	for i := range count {
		l.Items[i] = Int(start + i*step)
	}
	return l, nil
}

func fnDict(ev *evaluator, args []Value, kwargs []kwv) (Value, error) {
	d := NewDict()
	if len(args) > 1 {
		return nil, errorf(CodeRuntime, 0, "dict expected at most 1 argument, got %d", len(args))
	}
	if len(args) == 1 {
		if err := dictUpdate(d, args[0]); err != nil {
			return nil, err
		}
	}
	for _, k := range kwargs {
		d.SetStr(k.name, k.v)
	}
	return d, nil
}

func dictUpdate(d *Dict, src Value) error {
	switch s := src.(type) {
	case *Dict:
		for i, k := range s.keys {
			if err := d.Set(k, s.vals[i]); err != nil {
				return err
			}
		}
		return nil
	case *List:
		for _, it := range s.Items {
			pair, ok := it.(*List)
			if !ok || len(pair.Items) != 2 {
				return errorf(CodeRuntime, 0, "dictionary update sequence element has wrong length")
			}
			if err := d.Set(pair.Items[0], pair.Items[1]); err != nil {
				return err
			}
		}
		return nil
	}
	return errorf(CodeRuntime, 0, "'%s' object is not iterable", src.pyType())
}

func fnNamespace(ev *evaluator, args []Value, kwargs []kwv) (Value, error) {
	d, err := fnDict(ev, args, kwargs)
	if err != nil {
		return nil, err
	}
	return &Namespace{d: d.(*Dict)}, nil
}

func fnRaise(ev *evaluator, args []Value, kwargs []kwv) (Value, error) {
	if len(args) != 1 || len(kwargs) > 0 {
		return nil, errorf(CodeRuntime, 0, "raise_exception() takes exactly one argument")
	}
	return nil, &Error{Code: CodeRaised, Msg: toStr(args[0])}
}

func fnStrftimeNow(ev *evaluator, args []Value, kwargs []kwv) (Value, error) {
	a, err := bindArgs("strftime_now", []string{"format"}, nil, args, kwargs)
	if err != nil {
		return nil, err
	}
	f, ok := a[0].(Str)
	if !ok {
		return nil, errorf(CodeRuntime, 0, "strftime() argument 1 must be str, not %s", a[0].pyType())
	}
	return Str(strftime(ev.now(), string(f))), nil
}

// ---- methods ----

func (ev *evaluator) callMethod(m *method, args []Value, kwargs []kwv) (Value, error) {
	switch r := m.recv.(type) {
	case *Dict:
		return dictMethod(r, m.name, args, kwargs)
	case *List:
		return listMethod(r, m.name, args, kwargs)
	case Str:
		return ev.strMethod(string(r), m.name, args, kwargs)
	case *loopValue:
		switch m.name {
		case "cycle":
			if len(args) == 0 {
				return nil, errorf(CodeRuntime, 0, "no items for cycling given")
			}
			return args[r.index0%len(args)], nil
		case "changed":
			if r.hasLast && len(r.changed) == len(args) {
				same := true
				for i := range args {
					if !valuesEqual(args[i], r.changed[i]) {
						same = false
					}
				}
				if same {
					return Bool(false), nil
				}
			}
			r.changed, r.hasLast = args, true
			return Bool(true), nil
		}
	}
	return nil, errorf(CodeRuntime, 0, "'%s' object has no method '%s'", m.recv.pyType(), m.name)
}

func dictMethod(d *Dict, name string, args []Value, kwargs []kwv) (Value, error) {
	switch name {
	case "items":
		if len(args)+len(kwargs) > 0 {
			return nil, errorf(CodeRuntime, 0, "dict.items() takes no arguments")
		}
		l := dictItems(d)
		l.view = viewItems
		return l, nil
	case "keys":
		return &List{Items: append([]Value(nil), d.keys...), view: viewKeys}, nil
	case "values":
		return &List{Items: append([]Value(nil), d.vals...), view: viewValues}, nil
	case "get":
		a, err := bindArgs("get", []string{"key", "default"}, []Value{nil, None{}}, args, kwargs)
		if err != nil {
			return nil, err
		}
		if _, err := hashKey(a[0]); err != nil {
			return nil, err
		}
		if v, ok := d.Get(a[0]); ok {
			return v, nil
		}
		return a[1], nil
	case "copy":
		c := NewDict()
		_ = dictUpdate(c, d)
		return c, nil
	}
	return nil, errorf(CodeRuntime, 0, "'dict' object has no attribute '%s'", name)
}

func dictItems(d *Dict) *List {
	l := &List{Items: make([]Value, d.Len())}
	for i, k := range d.keys {
		l.Items[i] = &List{Items: []Value{k, d.vals[i]}, Tuple: true}
	}
	return l
}

func listMethod(l *List, name string, args []Value, kwargs []kwv) (Value, error) {
	switch name {
	case "count":
		if len(args) != 1 {
			return nil, errorf(CodeRuntime, 0, "count() takes exactly one argument")
		}
		n := 0
		for _, it := range l.Items {
			if valuesEqual(it, args[0]) {
				n++
			}
		}
		return Int(n), nil
	case "index":
		if len(args) < 1 {
			return nil, errorf(CodeRuntime, 0, "index expected at least 1 argument")
		}
		for i, it := range l.Items {
			if valuesEqual(it, args[0]) {
				return Int(i), nil
			}
		}
		return nil, errorf(CodeRuntime, 0, "%s is not in list", toStr(args[0]))
	case "copy":
		if l.view != viewNone {
			break
		}
		return &List{Items: append([]Value(nil), l.Items...), Tuple: l.Tuple}, nil
	}
	return nil, errorf(CodeRuntime, 0, "'%s' object has no attribute '%s'", l.pyType(), name)
}

// stripChars is str.strip/lstrip/rstrip with Python's chars argument (a set
// of characters; None means whitespace).
func stripChars(s string, chars Value, left, right bool) (string, error) {
	var f func(rune) bool
	switch c := chars.(type) {
	case None, Undefined, nil:
		f = pyIsSpace
	case Str:
		set := string(c)
		f = func(r rune) bool { return strings.ContainsRune(set, r) }
	default:
		return "", errorf(CodeRuntime, 0, "strip arg must be None or str")
	}
	if left {
		s = strings.TrimLeftFunc(s, f)
	}
	if right {
		s = strings.TrimRightFunc(s, f)
	}
	return s, nil
}

func strArg(fname string, v Value) (string, error) {
	s, ok := v.(Str)
	if !ok {
		return "", errorf(CodeRuntime, 0, "%s() argument must be str, not %s", fname, v.pyType())
	}
	return string(s), nil
}

// pySplit is str.split(sep, maxsplit).
func pySplit(s string, sep Value, maxsplit int64) ([]string, error) {
	if _, ok := sep.(None); ok {
		var out []string
		rest := strings.TrimLeftFunc(s, pyIsSpace)
		for rest != "" {
			if maxsplit >= 0 && int64(len(out)) == maxsplit {
				out = append(out, rest)
				break
			}
			i := strings.IndexFunc(rest, pyIsSpace)
			if i < 0 {
				out = append(out, rest)
				break
			}
			out = append(out, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], pyIsSpace)
		}
		return out, nil
	}
	sp, err := strArg("split", sep)
	if err != nil {
		return nil, err
	}
	if sp == "" {
		return nil, errorf(CodeRuntime, 0, "empty separator")
	}
	n := -1
	if maxsplit >= 0 {
		n = int(min(maxsplit, math.MaxInt32)) + 1
	}
	return strings.SplitN(s, sp, n), nil
}

func strList(ss []string) *List {
	l := &List{Items: make([]Value, len(ss))}
	for i, s := range ss {
		l.Items[i] = Str(s)
	}
	return l
}

// pyTitle is str.title: the first cased letter after a non-letter is
// upper-cased, the rest lower-cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prevCased = unicode.IsLetter(r)
	}
	return b.String()
}

func pyCapitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(s[size:])
}

func (ev *evaluator) strMethod(s, name string, args []Value, kwargs []kwv) (Value, error) {
	switch name {
	case "strip", "lstrip", "rstrip":
		a, err := bindArgs(name, []string{"chars"}, []Value{None{}}, args, kwargs)
		if err != nil {
			return nil, err
		}
		out, err := stripChars(s, a[0], name != "rstrip", name != "lstrip")
		return Str(out), err
	case "split", "rsplit":
		a, err := bindArgs(name, []string{"sep", "maxsplit"}, []Value{None{}, Int(-1)}, args, kwargs)
		if err != nil {
			return nil, err
		}
		n, err := intArg(name, a[1])
		if err != nil {
			return nil, err
		}
		if name == "rsplit" && n >= 0 {
			return nil, errorf(CodeUnsupported, 0, "rsplit with maxsplit is not supported")
		}
		parts, err := pySplit(s, a[0], n)
		if err != nil {
			return nil, err
		}
		return strList(parts), nil
	case "splitlines":
		return strList(pySplitlines(s)), nil
	case "startswith", "endswith":
		a, err := bindArgs(name, []string{"prefix"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		var cands []Value
		switch p := a[0].(type) {
		case Str:
			cands = []Value{p}
		case *List:
			if !p.Tuple {
				return nil, errorf(CodeRuntime, 0, "%s first arg must be str or a tuple of str, not list", name)
			}
			cands = p.Items
		default:
			return nil, errorf(CodeRuntime, 0, "%s first arg must be str or a tuple of str, not %s", name, p.pyType())
		}
		for _, c := range cands {
			cs, err := strArg(name, c)
			if err != nil {
				return nil, err
			}
			if (name == "startswith" && strings.HasPrefix(s, cs)) || (name == "endswith" && strings.HasSuffix(s, cs)) {
				return Bool(true), nil
			}
		}
		return Bool(false), nil
	case "upper":
		return Str(strings.ToUpper(s)), nil
	case "lower", "casefold":
		return Str(strings.ToLower(s)), nil
	case "title":
		return Str(pyTitle(s)), nil
	case "capitalize":
		return Str(pyCapitalize(s)), nil
	case "swapcase":
		return Str(strings.Map(func(r rune) rune {
			if unicode.IsUpper(r) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, s)), nil
	case "replace":
		a, err := bindArgs(name, []string{"old", "new", "count"}, []Value{nil, nil, Int(-1)}, args, kwargs)
		if err != nil {
			return nil, err
		}
		return ev.replace(s, a[0], a[1], a[2])
	case "find", "rfind", "index", "rindex", "count":
		a, err := bindArgs(name, []string{"sub"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		sub, err := strArg(name, a[0])
		if err != nil {
			return nil, err
		}
		var i int
		switch name {
		case "count":
			if sub == "" {
				return Int(utf8.RuneCountInString(s) + 1), nil
			}
			return Int(strings.Count(s, sub)), nil
		case "find", "index":
			i = strings.Index(s, sub)
		default:
			i = strings.LastIndex(s, sub)
		}
		if i < 0 {
			if name == "index" || name == "rindex" {
				return nil, errorf(CodeRuntime, 0, "substring not found")
			}
			return Int(-1), nil
		}
		return Int(utf8.RuneCountInString(s[:i])), nil
	case "join":
		a, err := bindArgs(name, []string{"iterable"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		items, err := ev.iterate(a[0])
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		total := 0
		for i, it := range items {
			str, ok := it.(Str)
			if !ok {
				return nil, errorf(CodeRuntime, 0, "sequence item %d: expected str instance, %s found", i, it.pyType())
			}
			parts[i] = string(str)
			total += len(str) + len(s)
		}
		if err := ev.checkLen(total); err != nil {
			return nil, err
		}
		return Str(strings.Join(parts, s)), nil
	case "center", "ljust", "rjust":
		a, err := bindArgs(name, []string{"width", "fillchar"}, []Value{nil, Str(" ")}, args, kwargs)
		if err != nil {
			return nil, err
		}
		w, err := intArg(name, a[0])
		if err != nil {
			return nil, err
		}
		fill, err := strArg(name, a[1])
		if err != nil || utf8.RuneCountInString(fill) != 1 {
			return nil, errorf(CodeRuntime, 0, "The fill character must be exactly one character long")
		}
		return ev.pad(s, w, fill, name)
	case "zfill":
		a, err := bindArgs(name, []string{"width"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		w, err := intArg(name, a[0])
		if err != nil {
			return nil, err
		}
		n := int64(utf8.RuneCountInString(s))
		if w <= n {
			return Str(s), nil
		}
		if err := ev.checkLen(int(min(w, math.MaxInt32))); err != nil {
			return nil, err
		}
		sign := ""
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			sign, s = s[:1], s[1:]
		}
		return Str(sign + strings.Repeat("0", int(w-n)) + s), nil
	case "isalpha", "isdigit", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle":
		return Bool(strIs(s, name)), nil
	case "removeprefix":
		a, err := bindArgs(name, []string{"prefix"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		p, err := strArg(name, a[0])
		return Str(strings.TrimPrefix(s, p)), err
	case "removesuffix":
		a, err := bindArgs(name, []string{"suffix"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		p, err := strArg(name, a[0])
		return Str(strings.TrimSuffix(s, p)), err
	case "partition", "rpartition":
		a, err := bindArgs(name, []string{"sep"}, nil, args, kwargs)
		if err != nil {
			return nil, err
		}
		sep, err := strArg(name, a[0])
		if err != nil {
			return nil, err
		}
		if sep == "" {
			return nil, errorf(CodeRuntime, 0, "empty separator")
		}
		i := strings.Index(s, sep)
		if name == "rpartition" {
			i = strings.LastIndex(s, sep)
		}
		if i < 0 {
			if name == "rpartition" {
				return &List{Tuple: true, Items: []Value{Str(""), Str(""), Str(s)}}, nil
			}
			return &List{Tuple: true, Items: []Value{Str(s), Str(""), Str("")}}, nil
		}
		return &List{Tuple: true, Items: []Value{Str(s[:i]), Str(sep), Str(s[i+len(sep):])}}, nil
	}
	return nil, errorf(CodeUnsupported, 0, "str.%s() is not supported", name)
}

func strIs(s, name string) bool {
	if s == "" && name != "istitle" {
		return false
	}
	cased := false
	for _, r := range s {
		switch name {
		case "isalpha":
			if !unicode.IsLetter(r) {
				return false
			}
		case "isdigit", "isnumeric", "isdecimal":
			if !unicode.IsDigit(r) && !(name == "isnumeric" && unicode.IsNumber(r)) {
				return false
			}
		case "isalnum":
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				return false
			}
		case "isspace":
			if !pyIsSpace(r) {
				return false
			}
		case "islower":
			if unicode.IsUpper(r) || unicode.IsTitle(r) {
				return false
			}
			cased = cased || unicode.IsLower(r)
		case "isupper":
			if unicode.IsLower(r) || unicode.IsTitle(r) {
				return false
			}
			cased = cased || unicode.IsUpper(r)
		}
	}
	switch name {
	case "islower", "isupper":
		return cased
	case "istitle":
		return s != "" && pyTitle(s) == s && strings.IndexFunc(s, unicode.IsLetter) >= 0
	}
	return true
}

func (ev *evaluator) replace(s string, oldV, newV, countV Value) (Value, error) {
	old, err := strArg("replace", oldV)
	if err != nil {
		return nil, err
	}
	nw, err := strArg("replace", newV)
	if err != nil {
		return nil, err
	}
	n, err := intArg("replace", countV)
	if err != nil {
		return nil, err
	}
	occ := int64(strings.Count(s, old))
	if old == "" {
		occ = int64(utf8.RuneCountInString(s)) + 1
	}
	if n >= 0 && n < occ {
		occ = n
	}
	if err := ev.checkLen(len(s) + int(min(occ*int64(len(nw)), math.MaxInt32))); err != nil {
		return nil, err
	}
	if n < 0 {
		return Str(strings.ReplaceAll(s, old, nw)), nil
	}
	return Str(strings.Replace(s, old, nw, int(min(n, math.MaxInt32)))), nil
}

func (ev *evaluator) pad(s string, w int64, fill, how string) (Value, error) {
	n := int64(utf8.RuneCountInString(s))
	if w <= n {
		return Str(s), nil
	}
	if err := ev.checkLen(int(min(w*int64(len(fill)), math.MaxInt32))); err != nil {
		return nil, err
	}
	total := w - n
	var left int64
	switch how {
	case "center":
		left = total/2 + (total & w & 1) // CPython's pad() split
	case "rjust":
		left = total
	}
	return Str(strings.Repeat(fill, int(left)) + s + strings.Repeat(fill, int(total-left))), nil
}

// printf is Python's "fmt % args" for the conversions templates use
// (%s %r %d %i %f %x %o %e %g %% with flags, width and precision).
func (ev *evaluator) printf(format string, arg Value) (Value, error) {
	var args []Value
	var named *Dict
	mappingLike := false // Python skips the leftover-argument check for any object with __getitem__
	switch a := arg.(type) {
	case *List:
		if a.Tuple {
			args = a.Items
		} else {
			args = []Value{a}
			mappingLike = true
		}
	case *Dict:
		named = a
		mappingLike = true
		args = []Value{a}
	case Undefined:
		mappingLike = true // Undefined has __getitem__
		args = []Value{a}
	default:
		args = []Value{a}
	}
	var b strings.Builder
	ai := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return nil, errorf(CodeRuntime, 0, "incomplete format")
		}
		var cur Value
		if format[i] == '(' {
			j := strings.IndexByte(format[i:], ')')
			if j < 0 || named == nil {
				return nil, errorf(CodeRuntime, 0, "format requires a mapping")
			}
			v, ok := named.Get(Str(format[i+1 : i+j]))
			if !ok {
				return nil, errorf(CodeRuntime, 0, "KeyError: %s", format[i+1:i+j])
			}
			cur = v
			i += j + 1
		}
		start := i
		for i < len(format) && strings.IndexByte("-+ #0123456789.", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			return nil, errorf(CodeRuntime, 0, "incomplete format")
		}
		spec := format[start:i]
		verb := format[i]
		if verb == '%' {
			b.WriteByte('%')
			continue
		}
		if cur == nil {
			if ai >= len(args) {
				return nil, errorf(CodeRuntime, 0, "not enough arguments for format string")
			}
			cur = args[ai]
			ai++
		}
		s, err := formatOne(spec, verb, cur)
		if err != nil {
			return nil, err
		}
		if err := ev.checkLen(b.Len() + len(s)); err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	if !mappingLike && ai < len(args) {
		return nil, errorf(CodeRuntime, 0, "not all arguments converted during string formatting")
	}
	return Str(b.String()), nil
}

func formatOne(spec string, verb byte, v Value) (string, error) {
	flags := strings.TrimLeft(spec, "-+ #0")
	flagPart := spec[:len(spec)-len(flags)]
	width, prec := 0, -1
	w, p, hasPrec := strings.Cut(flags, ".")
	if w != "" {
		width, _ = strconv.Atoi(w)
	}
	if hasPrec {
		prec, _ = strconv.Atoi(p)
	}
	if width > 1<<16 || prec > 1<<10 {
		return "", errorf(CodeBudget, 0, "format width or precision too large")
	}
	var s string
	switch verb {
	case 's':
		s = toStr(v)
		if prec >= 0 && prec < utf8.RuneCountInString(s) {
			s = string([]rune(s)[:prec])
		}
	case 'r', 'a':
		var b strings.Builder
		writeRepr(&b, v, 0)
		s = b.String()
	case 'd', 'i', 'x', 'X', 'o':
		n, ok := numeric(v)
		if !ok {
			return "", errorf(CodeRuntime, 0, "%%%c format: a real number is required, not %s", verb, v.pyType())
		}
		i := n.i
		if n.isFloat {
			i = int64(n.f)
		}
		base := map[byte]int{'d': 10, 'i': 10, 'x': 16, 'X': 16, 'o': 8}[verb]
		s = strconv.FormatInt(i, base)
		if verb == 'X' {
			s = strings.ToUpper(s)
		}
		if i >= 0 && strings.Contains(flagPart, "+") {
			s = "+" + s
		} else if i >= 0 && strings.Contains(flagPart, " ") {
			s = " " + s
		}
	case 'f', 'F', 'e', 'E', 'g', 'G':
		n, ok := numeric(v)
		if !ok {
			return "", errorf(CodeRuntime, 0, "must be real number, not %s", v.pyType())
		}
		if prec < 0 {
			prec = 6
		}
		s = strconv.FormatFloat(n.float(), verb|0x20, prec, 64)
		if verb == 'E' || verb == 'G' {
			s = strings.ToUpper(s)
		}
		if n.float() >= 0 && strings.Contains(flagPart, "+") {
			s = "+" + s
		}
	default:
		return "", errorf(CodeRuntime, 0, "unsupported format character '%c'", verb)
	}
	if pad := width - utf8.RuneCountInString(s); pad > 0 {
		switch {
		case strings.Contains(flagPart, "-"):
			s += strings.Repeat(" ", pad)
		case strings.Contains(flagPart, "0") && verb != 's' && verb != 'r':
			sign := ""
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				sign, s = s[:1], s[1:]
			}
			s = sign + strings.Repeat("0", pad) + s
		default:
			s = strings.Repeat(" ", pad) + s
		}
	}
	return s, nil
}

// sortValues sorts a copy of items stably by key (Python's sorted).
func sortValues(items []Value, key func(Value) (Value, error), reverse bool) ([]Value, error) {
	type kv struct{ k, v Value }
	pairs := make([]kv, len(items))
	for i, it := range items {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		pairs[i] = kv{k, it}
	}
	var sortErr error
	sort.SliceStable(pairs, func(i, j int) bool {
		a, b := pairs[i].k, pairs[j].k
		if reverse {
			a, b = b, a
		}
		c, err := compareValues(a, b, "<")
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return c == -1
	})
	if sortErr != nil {
		return nil, sortErr
	}
	out := make([]Value, len(pairs))
	for i, p := range pairs {
		out[i] = p.v
	}
	return out, nil
}
