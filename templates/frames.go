package templates

// jinja2 compiles every frame (the template root, a for-loop body, a macro
// body, a set/filter block body) to Python locals. A name whose first use
// at a frame's own level is an unconditional {% set %} is "stored first".
// In the root frame it starts as missing: nested frames that read it before
// the set see Undefined, not the context variable of the same name. In a
// nested frame it starts as the enclosing frames' variable when one of them
// has a symbol for the name (uses it at its own level), and as missing
// otherwise. A name first read at a frame's level is resolved from outside
// until it is set. (See jinja2's idtracking.py; stores inside if branches
// count as first uses but do not make a name stored first.) annotateFrames
// computes the missing names of every frame at parse time.

// missingValue marks a frame variable that is declared but not yet set.
type missingValue struct{}

func (missingValue) pyType() string { return "missing" }

// frameSymbols returns the names stored first at body's level and every
// name body uses at its level.
func frameSymbols(body []stmt) (storedFirst []string, seen map[string]bool) {
	seen = map[string]bool{}
	var out []string
	load := func(x expr) {
		walkNames(x, func(n string) { seen[n] = true })
	}
	store := func(t target, top bool) {
		switch t := t.(type) {
		case *attrTarget:
			seen[t.name] = true
			return
		}
		for _, n := range t.targetNames() {
			if !seen[n] {
				seen[n] = true
				if top {
					out = append(out, n)
				}
			}
		}
	}
	var visit func(body []stmt, top bool)
	visit = func(body []stmt, top bool) {
		for _, s := range body {
			switch s := s.(type) {
			case *outputStmt:
				load(s.x)
			case *ifStmt:
				for i, c := range s.conds {
					load(c)
					visit(s.bodies[i], false)
				}
				visit(s.orelse, false)
			case *setStmt:
				load(s.x)
				store(s.target, top)
			case *setBlockStmt:
				store(s.target, top)
			case *forStmt:
				load(s.iter)
			case *macroStmt:
				store(&nameTarget{name: s.name}, top)
			case *callBlockStmt:
				load(s.call)
			case *withStmt:
				for _, v := range s.values {
					load(v)
				}
			}
		}
	}
	visit(body, true)
	return out, seen
}

// annotateFrames sets the missing names of the frame body and of every
// frame nested in it; ancestors are the symbol sets of the enclosing frames
// (nil for the root).
func annotateFrames(body []stmt, ancestors []map[string]bool) []string {
	stored, seen := frameSymbols(body)
	var missing []string
	for _, n := range stored {
		declared := false
		for _, a := range ancestors {
			declared = declared || a[n]
		}
		if !declared {
			missing = append(missing, n)
		}
	}
	inner := append(append([]map[string]bool(nil), ancestors...), seen)
	var visit func(body []stmt)
	visit = func(body []stmt) {
		for _, s := range body {
			switch s := s.(type) {
			case *ifStmt:
				for _, b := range s.bodies {
					visit(b)
				}
				visit(s.orelse)
			case *forStmt:
				s.missing = annotateFrames(s.body, inner)
				annotateFrames(s.orelse, inner)
			case *macroStmt:
				s.missing = annotateFrames(s.body, inner)
			case *setBlockStmt:
				s.missing = annotateFrames(s.body, inner)
			case *filterBlockStmt:
				s.missing = annotateFrames(s.body, inner)
			case *callBlockStmt:
				annotateFrames(s.body, inner)
			case *withStmt:
				annotateFrames(s.body, inner)
			}
		}
	}
	visit(body)
	return missing
}

// walkNames calls fn for every variable name x reads.
func walkNames(x expr, fn func(string)) {
	if x == nil {
		return
	}
	switch e := x.(type) {
	case *nameExpr:
		fn(e.name)
	case *listExpr:
		for _, it := range e.items {
			walkNames(it, fn)
		}
	case *dictExpr:
		for i := range e.keys {
			walkNames(e.keys[i], fn)
			walkNames(e.vals[i], fn)
		}
	case *getattrExpr:
		walkNames(e.x, fn)
	case *getitemExpr:
		walkNames(e.x, fn)
		walkNames(e.key, fn)
	case *sliceExpr:
		walkNames(e.x, fn)
		walkNames(e.start, fn)
		walkNames(e.stop, fn)
		walkNames(e.step, fn)
	case *callExpr:
		walkNames(e.fn, fn)
		walkArgNames(e.args, e.kwargs, fn)
	case *filterExpr:
		walkNames(e.x, fn)
		walkArgNames(e.args, e.kwargs, fn)
	case *testExpr:
		walkNames(e.x, fn)
		walkArgNames(e.args, e.kwargs, fn)
	case *unaryExpr:
		walkNames(e.x, fn)
	case *binExpr:
		walkNames(e.l, fn)
		walkNames(e.r, fn)
	case *compareExpr:
		walkNames(e.first, fn)
		for _, r := range e.rest {
			walkNames(r, fn)
		}
	case *condExpr:
		walkNames(e.cond, fn)
		walkNames(e.then, fn)
		walkNames(e.else_, fn)
	}
}

func walkArgNames(args []expr, kwargs []kwarg, fn func(string)) {
	for _, a := range args {
		walkNames(a, fn)
	}
	for _, k := range kwargs {
		walkNames(k.x, fn)
	}
}

// declare marks names as missing in a fresh frame.
func declare(sc *scope, names []string) *scope {
	for _, n := range names {
		sc.vars[n] = missingValue{}
	}
	return sc
}
