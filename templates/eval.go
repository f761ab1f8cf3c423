package templates

import (
	"strings"
	"time"
)

// scope is one frame of variables. Jinja2 creates a new frame for each for
// loop iteration, macro call, with block and set-block body; if blocks share
// their parent's frame. Lookups fall through to the parent, so a
// {% set %} inside a loop shadows the outer name for that iteration only.
type scope struct {
	vars   map[string]Value
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vars: map[string]Value{}, parent: parent} }

func (s *scope) lookup(name string) (Value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type ctrl uint8

const (
	ctrlNone ctrl = iota
	ctrlBreak
	ctrlContinue
)

// evaluator holds the state of one Render call.
type evaluator struct {
	out     *strings.Builder
	limits  Limits
	steps   int
	written int // bytes written to every output buffer, captures included
	depth   int // macro and recursive-loop call depth
	now     func() time.Time
	// folding is set while Parse folds constants (see fold.go).
	folding bool
}

func (ev *evaluator) step(line int) error {
	ev.steps++
	if ev.steps > ev.limits.MaxSteps {
		return errorf(CodeBudget, line, "template exceeded %d evaluation steps", ev.limits.MaxSteps)
	}
	return nil
}

func (ev *evaluator) write(s string, line int) error {
	ev.written += len(s)
	if ev.written > ev.limits.MaxOutput {
		return outputBudget(line, "template output exceeded %d bytes", ev.limits.MaxOutput)
	}
	ev.out.WriteString(s)
	return nil
}

// checkLen fails when a string or list about to be built would exceed the
// limits; call it before allocating.
func (ev *evaluator) checkLen(n int) error {
	if n > ev.limits.MaxOutput || n < 0 {
		return outputBudget(0, "value of %d bytes or items exceeds the %d limit", n, ev.limits.MaxOutput)
	}
	return nil
}

// capture runs fn with output redirected and returns what it wrote.
func (ev *evaluator) capture(fn func() error) (string, error) {
	saved := ev.out
	var b strings.Builder
	ev.out = &b
	err := fn()
	ev.out = saved
	return b.String(), err
}

// withLine gives a line to an error that has none.
func withLine(err error, line int) error {
	if e, ok := err.(*Error); ok && e.Line == 0 {
		e.Line = line
	}
	return err
}

func (ev *evaluator) execBody(body []stmt, sc *scope) (ctrl, error) {
	for _, s := range body {
		c, err := ev.exec(s, sc)
		if err != nil {
			return ctrlNone, withLine(err, s.stmtLine())
		}
		if c != ctrlNone {
			return c, nil
		}
	}
	return ctrlNone, nil
}

func (ev *evaluator) exec(s stmt, sc *scope) (ctrl, error) {
	if err := ev.step(s.stmtLine()); err != nil {
		return ctrlNone, err
	}
	switch s := s.(type) {
	case *textStmt:
		return ctrlNone, ev.write(s.text, s.line)
	case *outputStmt:
		if s.folded != nil {
			return ctrlNone, ev.write(toStr(s.folded), s.line)
		}
		v, err := ev.eval(s.x, sc)
		if err != nil {
			return ctrlNone, err
		}
		return ctrlNone, ev.write(toStr(v), s.line)
	case *ifStmt:
		for i, c := range s.conds {
			v, err := ev.eval(c, sc)
			if err != nil {
				return ctrlNone, err
			}
			if truthy(v) {
				return ev.execBody(s.bodies[i], sc)
			}
		}
		return ev.execBody(s.orelse, sc)
	case *forStmt:
		return ctrlNone, ev.execFor(s, sc)
	case *setStmt:
		v, err := ev.eval(s.x, sc)
		if err != nil {
			return ctrlNone, err
		}
		return ctrlNone, ev.assign(s.target, v, sc)
	case *setBlockStmt:
		text, err := ev.capture(func() error {
			_, err := ev.execBody(s.body, declare(newScope(sc), s.missing))
			return err
		})
		if err != nil {
			return ctrlNone, err
		}
		var v Value = Str(text)
		if s.filter != nil {
			if v, err = ev.applyFilterChain(s.filter, v, sc); err != nil {
				return ctrlNone, err
			}
		}
		return ctrlNone, ev.assign(s.target, v, sc)
	case *macroStmt:
		sc.vars[s.name] = &macro{name: s.name, params: s.params, body: s.body, closure: sc, missing: s.missing}
		return ctrlNone, nil
	case *callBlockStmt:
		caller := &macro{name: "caller", params: s.params, body: s.body, closure: sc}
		call := *s.call
		call.kwargs = append(append([]kwarg(nil), call.kwargs...), kwarg{name: "caller", x: &constExpr{line: s.line, v: caller}})
		v, err := ev.eval(&call, sc)
		if err != nil {
			return ctrlNone, err
		}
		return ctrlNone, ev.write(toStr(v), s.line)
	case *filterBlockStmt:
		text, err := ev.capture(func() error {
			_, err := ev.execBody(s.body, declare(newScope(sc), s.missing))
			return err
		})
		if err != nil {
			return ctrlNone, err
		}
		v, err := ev.applyFilterChain(s.filter, Str(text), sc)
		if err != nil {
			return ctrlNone, err
		}
		return ctrlNone, ev.write(toStr(v), s.line)
	case *withStmt:
		inner := newScope(sc)
		for i, t := range s.targets {
			v, err := ev.eval(s.values[i], sc)
			if err != nil {
				return ctrlNone, err
			}
			if err := ev.assign(t, v, inner); err != nil {
				return ctrlNone, err
			}
		}
		return ev.execBody(s.body, inner)
	case *breakStmt:
		return ctrlBreak, nil
	case *continueStmt:
		return ctrlContinue, nil
	}
	return ctrlNone, errorf(CodeUnsupported, s.stmtLine(), "statement %T", s)
}

// applyFilterChain applies a parsed filter chain whose innermost argument is
// a placeholder (nil) to v.
func (ev *evaluator) applyFilterChain(f *filterExpr, v Value, sc *scope) (Value, error) {
	if f.x != nil {
		inner, ok := f.x.(*filterExpr)
		if !ok {
			return nil, errorf(CodeSyntax, f.line, "malformed filter chain")
		}
		var err error
		if v, err = ev.applyFilterChain(inner, v, sc); err != nil {
			return nil, err
		}
	}
	return ev.callFilter(f, v, sc)
}

func (ev *evaluator) assign(t target, v Value, sc *scope) error {
	switch t := t.(type) {
	case *nameTarget:
		sc.vars[t.name] = v
		return nil
	case *attrTarget:
		obj, ok := sc.lookup(t.name)
		ns, isNS := obj.(*Namespace)
		if !ok || !isNS {
			return errorf(CodeRuntime, 0, "cannot assign attribute on non-namespace object")
		}
		ns.d.SetStr(t.attr, v)
		return nil
	case *tupleTarget:
		items, err := ev.iterate(v)
		if err != nil {
			return err
		}
		if len(items) < len(t.items) {
			return errorf(CodeRuntime, 0, "not enough values to unpack (expected %d, got %d)", len(t.items), len(items))
		}
		if len(items) > len(t.items) {
			return errorf(CodeRuntime, 0, "too many values to unpack (expected %d)", len(t.items))
		}
		for i, sub := range t.items {
			if err := ev.assign(sub, items[i], sc); err != nil {
				return err
			}
		}
		return nil
	}
	return errorf(CodeRuntime, 0, "cannot assign to %T", t)
}

// loopValue is the "loop" variable of a for loop.
type loopValue struct {
	items   []Value
	index0  int
	depth0  int
	recurse func(Value) (Value, error) // nil unless the loop is recursive
	changed []Value                    // last arguments of loop.changed
	hasLast bool
}

func (*loopValue) pyType() string { return "LoopContext" }

func (ev *evaluator) execFor(s *forStmt, sc *scope) error {
	iv, err := ev.eval(s.iter, sc)
	if err != nil {
		return err
	}
	return ev.runLoop(s, iv, sc, 0)
}

func (ev *evaluator) runLoop(s *forStmt, iv Value, sc *scope, depth0 int) error {
	items, err := ev.iterate(iv)
	if err != nil {
		return err
	}
	if s.cond != nil {
		kept := make([]Value, 0, len(items))
		for _, it := range items {
			if err := ev.step(s.line); err != nil {
				return err
			}
			fs := newScope(sc)
			if err := ev.assign(s.target, it, fs); err != nil {
				return err
			}
			c, err := ev.eval(s.cond, fs)
			if err != nil {
				return err
			}
			if truthy(c) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	lv := &loopValue{items: items, depth0: depth0}
	if s.recursive {
		lv.recurse = func(v Value) (Value, error) {
			ev.depth++
			defer func() { ev.depth-- }()
			if ev.depth > ev.limits.MaxDepth {
				return nil, errorf(CodeBudget, s.line, "recursion deeper than %d", ev.limits.MaxDepth)
			}
			text, err := ev.capture(func() error { return ev.runLoop(s, v, sc, depth0+1) })
			return Str(text), err
		}
	}
	// jinja2 clears its "else" indicator at the end of the loop body, so
	// the else block runs unless some iteration ran to the end of the body
	// (an iteration left by break or continue does not count).
	completed := false
	for i, it := range items {
		if err := ev.step(s.line); err != nil {
			return err
		}
		lv.index0 = i
		is := declare(newScope(sc), s.missing)
		is.vars["loop"] = lv
		if err := ev.assign(s.target, it, is); err != nil {
			return err
		}
		c, err := ev.execBody(s.body, is)
		if err != nil {
			return err
		}
		if c == ctrlNone {
			completed = true
		}
		if c == ctrlBreak {
			break
		}
	}
	if !completed && s.orelse != nil {
		_, err := ev.execBody(s.orelse, newScope(sc))
		return err
	}
	return nil
}

func (lv *loopValue) attr(name string) Value {
	n := len(lv.items)
	switch name {
	case "index0":
		return Int(lv.index0)
	case "index":
		return Int(lv.index0 + 1)
	case "revindex":
		return Int(n - lv.index0)
	case "revindex0":
		return Int(n - lv.index0 - 1)
	case "first":
		return Bool(lv.index0 == 0)
	case "last":
		return Bool(lv.index0 == n-1)
	case "length":
		return Int(n)
	case "depth":
		return Int(lv.depth0 + 1)
	case "depth0":
		return Int(lv.depth0)
	case "previtem":
		if lv.index0 == 0 {
			return Undefined{hint: "there is no previous item"}
		}
		return lv.items[lv.index0-1]
	case "nextitem":
		if lv.index0 >= n-1 {
			return Undefined{hint: "there is no next item"}
		}
		return lv.items[lv.index0+1]
	case "cycle", "changed":
		return &method{recv: lv, name: name}
	}
	return Undefined{hint: "'LoopContext' object has no attribute '" + name + "'"}
}

// macro is a {% macro %} (or a call block's caller); calling it renders
// its body in a fresh frame whose parent is the frame it was defined in.
type macro struct {
	name    string
	params  []param
	body    []stmt
	closure *scope
	missing []string
}

func (*macro) pyType() string { return "Macro" }

func (ev *evaluator) callMacro(m *macro, args []Value, kwargs []kwv, line int) (Value, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > ev.limits.MaxDepth {
		return nil, errorf(CodeBudget, line, "macro recursion deeper than %d", ev.limits.MaxDepth)
	}
	ms := declare(newScope(m.closure), m.missing)
	var extra []Value
	for i, a := range args {
		if i < len(m.params) {
			ms.vars[m.params[i].name] = a
		} else {
			extra = append(extra, a)
		}
	}
	kw := NewDict()
	for _, k := range kwargs {
		found := false
		for i, p := range m.params {
			if p.name == k.name {
				if i < len(args) {
					return nil, errorf(CodeRuntime, line, "macro '%s' got multiple values for argument '%s'", m.name, k.name)
				}
				ms.vars[p.name] = k.v
				found = true
			}
		}
		if !found {
			if k.name == "caller" {
				ms.vars["caller"] = k.v
			} else {
				kw.SetStr(k.name, k.v)
			}
		}
	}
	for _, p := range m.params {
		if v, ok := ms.vars[p.name]; ok {
			if _, m := v.(missingValue); !m {
				continue
			}
		}
		if p.def != nil {
			v, err := ev.eval(p.def, ms)
			if err != nil {
				return nil, err
			}
			ms.vars[p.name] = v
		} else {
			ms.vars[p.name] = Undefined{hint: "parameter '" + p.name + "' was not provided"}
		}
	}
	ms.vars["varargs"] = &List{Items: extra, Tuple: true}
	ms.vars["kwargs"] = kw
	text, err := ev.capture(func() error {
		_, err := ev.execBody(m.body, ms)
		return err
	})
	if err != nil {
		return nil, err
	}
	return Str(text), nil
}
