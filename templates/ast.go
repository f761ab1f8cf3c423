package templates

// Statement nodes. Bodies are []stmt; every node keeps its template line for
// error messages.

type stmt interface{ stmtLine() int }

type textStmt struct {
	line int
	text string
}

type outputStmt struct {
	line   int
	x      expr
	folded Value // the value jinja2 computes at compile time, or nil
}

type ifStmt struct {
	line   int
	conds  []expr
	bodies [][]stmt
	orelse []stmt
}

type forStmt struct {
	line      int
	missing   []string // frame-local names (frames.go)
	target    target
	iter      expr
	cond      expr // the "if" filter, or nil
	body      []stmt
	orelse    []stmt
	recursive bool
}

type setStmt struct {
	line   int
	target target
	x      expr
}

// setBlockStmt is {% set name | filters %}body{% endset %}.
type setBlockStmt struct {
	line    int
	missing []string
	target  target
	filter  *filterExpr // applied to the body text (its arg is a placeholder), or nil
	body    []stmt
}

type macroStmt struct {
	line    int
	missing []string
	name    string
	params  []param
	body    []stmt
}

type param struct {
	name string
	def  expr // nil when required
}

// callBlockStmt is {% call(args) macro(...) %}body{% endcall %}.
type callBlockStmt struct {
	line   int
	params []param
	call   *callExpr
	body   []stmt
}

type filterBlockStmt struct {
	line    int
	missing []string
	filter  *filterExpr
	body    []stmt
}

type withStmt struct {
	line    int
	targets []target
	values  []expr
	body    []stmt
}

type breakStmt struct{ line int }
type continueStmt struct{ line int }

func (s *textStmt) stmtLine() int        { return s.line }
func (s *outputStmt) stmtLine() int      { return s.line }
func (s *ifStmt) stmtLine() int          { return s.line }
func (s *forStmt) stmtLine() int         { return s.line }
func (s *setStmt) stmtLine() int         { return s.line }
func (s *setBlockStmt) stmtLine() int    { return s.line }
func (s *macroStmt) stmtLine() int       { return s.line }
func (s *callBlockStmt) stmtLine() int   { return s.line }
func (s *filterBlockStmt) stmtLine() int { return s.line }
func (s *withStmt) stmtLine() int        { return s.line }
func (s *breakStmt) stmtLine() int       { return s.line }
func (s *continueStmt) stmtLine() int    { return s.line }

// Assignment targets.

type target interface{ targetNames() []string }

type nameTarget struct{ name string }

type tupleTarget struct{ items []target }

// attrTarget is ns.attr in {% set ns.attr = … %}.
type attrTarget struct{ name, attr string }

func (t *nameTarget) targetNames() []string { return []string{t.name} }
func (t *tupleTarget) targetNames() []string {
	var out []string
	for _, it := range t.items {
		out = append(out, it.targetNames()...)
	}
	return out
}
func (t *attrTarget) targetNames() []string { return nil }

// Expression nodes.

type expr interface{ exprLine() int }

type constExpr struct {
	line int
	v    Value
}

type nameExpr struct {
	line int
	name string
}

type listExpr struct {
	line  int
	items []expr
	tuple bool
}

type dictExpr struct {
	line int
	keys []expr
	vals []expr
}

type getattrExpr struct {
	line int
	x    expr
	name string
}

type getitemExpr struct {
	line int
	x    expr
	key  expr
}

type sliceExpr struct {
	line              int
	x                 expr
	start, stop, step expr // each may be nil
}

type kwarg struct {
	name string
	x    expr
}

type callExpr struct {
	line   int
	fn     expr
	args   []expr
	kwargs []kwarg
}

type filterExpr struct {
	line   int
	x      expr // nil for a filter block's placeholder
	name   string
	args   []expr
	kwargs []kwarg
}

type testExpr struct {
	line   int
	x      expr
	name   string
	args   []expr
	kwargs []kwarg
	negate bool
}

type unaryExpr struct {
	line int
	op   string // "-", "+", "not"
	x    expr
}

type binExpr struct {
	line int
	op   string // + - * / // % ** ~ and or
	l, r expr
}

type compareExpr struct {
	line  int
	first expr
	ops   []string // == != < <= > >= in notin
	rest  []expr
}

type condExpr struct {
	line              int
	cond, then, else_ expr // else_ may be nil
}

func (e *constExpr) exprLine() int   { return e.line }
func (e *nameExpr) exprLine() int    { return e.line }
func (e *listExpr) exprLine() int    { return e.line }
func (e *dictExpr) exprLine() int    { return e.line }
func (e *getattrExpr) exprLine() int { return e.line }
func (e *getitemExpr) exprLine() int { return e.line }
func (e *sliceExpr) exprLine() int   { return e.line }
func (e *callExpr) exprLine() int    { return e.line }
func (e *filterExpr) exprLine() int  { return e.line }
func (e *testExpr) exprLine() int    { return e.line }
func (e *unaryExpr) exprLine() int   { return e.line }
func (e *binExpr) exprLine() int     { return e.line }
func (e *compareExpr) exprLine() int { return e.line }
func (e *condExpr) exprLine() int    { return e.line }
