package templates

import "strings"

// Constant folding, as jinja2's optimizer does it at compile time.
//
// It matters for one observable behaviour only: jinja2 evaluates constant
// subexpressions with as_const, where a subscript goes through the
// sandbox's getitem (a failing slice gives Undefined), while compiled code
// slices with a plain Python subscript (a failing slice is a TypeError).
// as_const fails (Impossible) on names, calls and context filters; it
// short-circuits like the run-time operators, so "x if false else 1" is
// constant. A subexpression is replaced by its value when that value has a
// "safe repr" (None, bools, numbers, strings and containers of them); a
// whole {{ … }} is folded whatever its value (visit_Output prints it).
// Anything that fails is left for run time.

// errImpossible is jinja2's nodes.Impossible: the expression is not
// constant.
var errImpossible = &Error{Code: CodeUnsupported, Msg: "expression is not constant"}

// contextFilters are the filters jinja2 marks pass_context, which as_const
// refuses to fold.
var contextFilters = setOf("map", "select", "reject", "selectattr", "rejectattr")

// foldEval evaluates x as as_const would.
func foldEval(x expr) (Value, bool) {
	ev := &evaluator{limits: foldLimits.withDefaults(), folding: true}
	var b strings.Builder
	ev.out = &b
	v, err := ev.eval(x, newScope(nil))
	return v, err == nil
}

// foldLimits keep folding cheap: a constant too big to fold here is left to
// the render-time budgets.
var foldLimits = Limits{MaxSteps: 10_000, MaxOutput: 64 << 10, MaxDepth: 8}

func foldBody(body []stmt) {
	for _, s := range body {
		foldStmt(s)
	}
}

func foldStmt(s stmt) {
	switch s := s.(type) {
	case *outputStmt:
		if v, ok := foldEval(s.x); ok {
			s.folded = v
		} else {
			s.x = fold(s.x)
		}
	case *ifStmt:
		for i := range s.conds {
			s.conds[i] = fold(s.conds[i])
			foldBody(s.bodies[i])
		}
		foldBody(s.orelse)
	case *forStmt:
		s.iter = fold(s.iter)
		if s.cond != nil {
			s.cond = fold(s.cond)
		}
		foldBody(s.body)
		foldBody(s.orelse)
	case *setStmt:
		s.x = fold(s.x)
	case *setBlockStmt:
		foldBody(s.body)
	case *macroStmt:
		for i := range s.params {
			if s.params[i].def != nil {
				s.params[i].def = fold(s.params[i].def)
			}
		}
		foldBody(s.body)
	case *callBlockStmt:
		foldBody(s.body)
	case *filterBlockStmt:
		foldBody(s.body)
	case *withStmt:
		for i := range s.values {
			s.values[i] = fold(s.values[i])
		}
		foldBody(s.body)
	}
}

// fold returns x with its maximal constant subexpressions folded.
func fold(x expr) expr {
	if x == nil {
		return nil
	}
	if _, ok := x.(*constExpr); ok {
		return x
	}
	if v, ok := foldEval(x); ok && safeRepr(v, 0) {
		return &constExpr{line: x.exprLine(), v: v}
	}
	switch e := x.(type) {
	case *listExpr:
		for i := range e.items {
			e.items[i] = fold(e.items[i])
		}
	case *dictExpr:
		for i := range e.keys {
			e.keys[i] = fold(e.keys[i])
			e.vals[i] = fold(e.vals[i])
		}
	case *getattrExpr:
		e.x = fold(e.x)
	case *getitemExpr:
		e.x = fold(e.x)
		e.key = fold(e.key)
	case *sliceExpr:
		e.x, e.start, e.stop, e.step = fold(e.x), fold(e.start), fold(e.stop), fold(e.step)
	case *callExpr:
		e.fn = fold(e.fn)
		foldArgs(e.args, e.kwargs)
	case *filterExpr:
		e.x = fold(e.x)
		foldArgs(e.args, e.kwargs)
	case *testExpr:
		e.x = fold(e.x)
		foldArgs(e.args, e.kwargs)
	case *unaryExpr:
		e.x = fold(e.x)
	case *binExpr:
		e.l, e.r = fold(e.l), fold(e.r)
	case *compareExpr:
		e.first = fold(e.first)
		for i := range e.rest {
			e.rest[i] = fold(e.rest[i])
		}
	case *condExpr:
		e.cond, e.then, e.else_ = fold(e.cond), fold(e.then), fold(e.else_)
	}
	return x
}

func foldArgs(args []expr, kwargs []kwarg) {
	for i := range args {
		args[i] = fold(args[i])
	}
	for i := range kwargs {
		kwargs[i].x = fold(kwargs[i].x)
	}
}

// safeRepr is jinja2's has_safe_repr: values that can be written back as
// literals.
func safeRepr(v Value, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case None, Bool, Int, Float, Str:
		return true
	case *List:
		if x.view != viewNone {
			return false
		}
		for _, it := range x.Items {
			if !safeRepr(it, depth+1) {
				return false
			}
		}
		return true
	case *Dict:
		for i, k := range x.keys {
			if !safeRepr(k, depth+1) || !safeRepr(x.vals[i], depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
