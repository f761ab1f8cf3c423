package templates

// Unknown filters and tests, checked when jinja2 checks them.
//
// jinja2's compiler fails on a filter or test the environment lacks
// (TemplateAssertionError "No filter named 'x'.") unless the node sits in a
// "soft" frame: the test, branches and else of an {% if %} statement, or any
// part of a conditional expression (a if b else c). There it compiles a stub
// that raises TemplateRuntimeError "No filter named 'x' found." when called,
// after its input and arguments have been evaluated, so a template such as
// DeepSeek-V3.2's, which uses from_json in a branch the caller never takes,
// renders. A frame that compiles to its own Python function or block (a
// for-loop body, its else and its "if" filter, a macro body and its
// defaults, a call block body, a set block and a filter block with its
// filters, a with body) is not soft again until an if or a conditional
// expression inside it, so an unknown filter directly in a macro that is
// never called, or in a loop over an empty list, still fails at parse time,
// as in jinja2 3.1. Expressions the optimizer folded to constants are gone
// before the check, as in jinja2 (so {{ false and x|nope }} renders False).
// See jinja2 compiler.py: Frame.soft, visit_If, visit_CondExpr and
// _filter_test_common.

// checkBody returns the CodeSyntax error of the first unknown filter or test
// outside a soft frame in body, or nil.
func checkBody(body []stmt, soft bool) error {
	for _, s := range body {
		if err := checkStmt(s, soft); err != nil {
			return err
		}
	}
	return nil
}

func checkStmt(s stmt, soft bool) error {
	switch s := s.(type) {
	case *outputStmt:
		if s.folded != nil {
			return nil
		}
		return checkExpr(s.x, soft)
	case *ifStmt:
		for i, c := range s.conds {
			if err := checkExpr(c, true); err != nil {
				return err
			}
			if err := checkBody(s.bodies[i], true); err != nil {
				return err
			}
		}
		return checkBody(s.orelse, true)
	case *forStmt:
		if err := checkExpr(s.iter, soft); err != nil {
			return err
		}
		if err := checkExpr(s.cond, false); err != nil {
			return err
		}
		if err := checkBody(s.body, false); err != nil {
			return err
		}
		return checkBody(s.orelse, false)
	case *setStmt:
		return checkExpr(s.x, soft)
	case *setBlockStmt:
		if err := checkExpr(s.filter, false); err != nil {
			return err
		}
		return checkBody(s.body, false)
	case *macroStmt:
		if err := checkParams(s.params); err != nil {
			return err
		}
		return checkBody(s.body, false)
	case *callBlockStmt:
		if err := checkExpr(s.call, soft); err != nil {
			return err
		}
		if err := checkParams(s.params); err != nil {
			return err
		}
		return checkBody(s.body, false)
	case *filterBlockStmt:
		if err := checkExpr(s.filter, false); err != nil {
			return err
		}
		return checkBody(s.body, false)
	case *withStmt:
		for _, v := range s.values {
			if err := checkExpr(v, soft); err != nil {
				return err
			}
		}
		return checkBody(s.body, false)
	}
	return nil
}

func checkParams(params []param) error {
	for _, p := range params {
		if err := checkExpr(p.def, false); err != nil {
			return err
		}
	}
	return nil
}

func checkExpr(x expr, soft bool) error {
	switch e := x.(type) {
	case nil:
		return nil
	case *filterExpr:
		if e == nil {
			return nil
		}
		if _, ok := filters[e.name]; !ok && !soft {
			return errorf(CodeSyntax, e.line, "No filter named '%s'.", e.name)
		}
		if err := checkExpr(e.x, soft); err != nil {
			return err
		}
		return checkArgs(e.args, e.kwargs, soft)
	case *testExpr:
		if !knownTests[e.name] && !soft {
			return errorf(CodeSyntax, e.line, "No test named '%s'.", e.name)
		}
		if err := checkExpr(e.x, soft); err != nil {
			return err
		}
		return checkArgs(e.args, e.kwargs, soft)
	case *condExpr:
		for _, y := range []expr{e.cond, e.then, e.else_} {
			if err := checkExpr(y, true); err != nil {
				return err
			}
		}
	case *listExpr:
		return checkArgs(e.items, nil, soft)
	case *dictExpr:
		if err := checkArgs(e.keys, nil, soft); err != nil {
			return err
		}
		return checkArgs(e.vals, nil, soft)
	case *getattrExpr:
		return checkExpr(e.x, soft)
	case *getitemExpr:
		return checkArgs([]expr{e.x, e.key}, nil, soft)
	case *sliceExpr:
		return checkArgs([]expr{e.x, e.start, e.stop, e.step}, nil, soft)
	case *callExpr:
		if err := checkExpr(e.fn, soft); err != nil {
			return err
		}
		return checkArgs(e.args, e.kwargs, soft)
	case *unaryExpr:
		return checkExpr(e.x, soft)
	case *binExpr:
		return checkArgs([]expr{e.l, e.r}, nil, soft)
	case *compareExpr:
		if err := checkExpr(e.first, soft); err != nil {
			return err
		}
		return checkArgs(e.rest, nil, soft)
	}
	return nil
}

func checkArgs(args []expr, kwargs []kwarg, soft bool) error {
	for _, a := range args {
		if err := checkExpr(a, soft); err != nil {
			return err
		}
	}
	for _, k := range kwargs {
		if err := checkExpr(k.x, soft); err != nil {
			return err
		}
	}
	return nil
}

// unknownFilter is the render-time error of an unknown filter (found says
// whether it is jinja2's stub for a filter node, whose message ends in
// "found.", rather than a name passed to map).
func unknownFilter(line int, name string, found bool) *Error {
	return unknownName(line, "filter", name, found)
}

// unknownTest is unknownFilter for tests (an "is" node, or a name passed to
// select and the like).
func unknownTest(line int, name string, found bool) *Error {
	return unknownName(line, "test", name, found)
}

func unknownName(line int, kind, name string, found bool) *Error {
	msg := "No " + kind + " named '" + name + "'."
	if found {
		msg = "No " + kind + " named '" + name + "' found."
	}
	return &Error{Code: CodeUnknown, Msg: msg, Line: line, Name: name}
}
