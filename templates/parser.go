package templates

// The parser is a recursive-descent transcription of jinja2 3.1's Parser,
// keeping its operator precedence (lowest first):
//
//	condexpr  a if c else b
//	or, and, not
//	compare   == != < <= > >= in, not in   (chained)
//	math1     + -
//	concat    ~
//	math2     * / // %
//	pow       **
//	unary     - +, then postfix (.attr [key] (call)), then | filter, is test
//
// so "not x is defined" is not (x is defined) and "a + b | trim" filters b.

import (
	"strconv"
)

// maxParseDepth bounds expression and block nesting, so that hostile
// templates cannot overflow the Go stack (jinja2 itself relies on Python's
// recursion limit of 1000 frames, several per nesting level).
const maxParseDepth = 200

type parser struct {
	toks      []token
	pos       int
	depth     int
	loopDepth int // enclosing for loops in the current macro, for break/continue
}

func parse(src string) ([]stmt, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	body, end, err := p.subparse(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, errorf(CodeSyntax, p.cur().line, "Encountered unknown tag '%s'.", end)
	}
	return body, nil
}

func (p *parser) cur() token  { return p.toks[p.pos] }
func (p *parser) peek() token { return p.toks[min(p.pos+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tokOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.cur()
	return t.kind == tokName && t.val == name
}

func (p *parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

func (p *parser) skipName(name string) bool {
	if p.isName(name) {
		p.next()
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of template"
	case tokData:
		return "template data"
	case tokVarBegin:
		return "begin of print statement"
	case tokVarEnd:
		return "end of print statement"
	case tokBlockBegin:
		return "begin of statement block"
	case tokBlockEnd:
		return "end of statement block"
	case tokString:
		return "string"
	case tokInt:
		return "integer"
	case tokFloat:
		return "float"
	}
	return "'" + t.val + "'"
}

func (p *parser) fail(format string, args ...any) *Error {
	return errorf(CodeSyntax, p.cur().line, format, args...)
}

func (p *parser) expectOp(op string) error {
	if !p.skipOp(op) {
		return p.fail("expected token '%s', got %s", op, describe(p.cur()))
	}
	return nil
}

func (p *parser) expectName(name string) error {
	if !p.skipName(name) {
		return p.fail("expected token '%s', got %s", name, describe(p.cur()))
	}
	return nil
}

func (p *parser) expectBlockEnd() error {
	if p.cur().kind != tokBlockEnd {
		return p.fail("expected token 'end of statement block', got %s", describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxParseDepth {
		return p.fail("template nested deeper than %d levels", maxParseDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// subparse parses statements until a block tag whose name is in ends; it
// consumes that name and returns it (the rest of the tag is the caller's).
// At the top level (ends == nil) it runs to the end of the template.
func (p *parser) subparse(ends []string) ([]stmt, string, error) {
	if err := p.enter(); err != nil {
		return nil, "", err
	}
	defer p.leave()
	var body []stmt
	for {
		t := p.cur()
		switch t.kind {
		case tokEOF:
			if ends != nil {
				return nil, "", p.fail("Unexpected end of template. Jinja was looking for the following tags: %v.", ends)
			}
			return body, "", nil
		case tokData:
			p.next()
			body = append(body, &textStmt{line: t.line, text: t.val})
		case tokVarBegin:
			p.next()
			x, err := p.parseTuple(false, true, nil, false)
			if err != nil {
				return nil, "", err
			}
			if p.cur().kind != tokVarEnd {
				return nil, "", p.fail("expected token 'end of print statement', got %s", describe(p.cur()))
			}
			p.next()
			body = append(body, &outputStmt{line: t.line, x: x})
		case tokBlockBegin:
			p.next()
			name := p.cur()
			if name.kind != tokName {
				return nil, "", p.fail("tag name expected")
			}
			for _, e := range ends {
				if name.val == e {
					p.next()
					return body, e, nil
				}
			}
			s, err := p.parseStatement()
			if err != nil {
				return nil, "", err
			}
			body = append(body, s...)
		default:
			return nil, "", p.fail("unexpected %s", describe(t))
		}
	}
}

// parseStatement parses one block tag (the name is current) and its body.
// It returns several statements for tags that splice their body in place.
func (p *parser) parseStatement() ([]stmt, error) {
	t := p.next()
	one := func(s stmt, err error) ([]stmt, error) {
		if err != nil {
			return nil, err
		}
		return []stmt{s}, nil
	}
	switch t.val {
	case "if":
		return one(p.parseIf(t.line))
	case "for":
		return one(p.parseFor(t.line))
	case "set":
		return one(p.parseSet(t.line))
	case "macro":
		return one(p.parseMacro(t.line))
	case "call":
		return one(p.parseCallBlock(t.line))
	case "filter":
		return one(p.parseFilterBlock(t.line))
	case "with":
		return one(p.parseWith(t.line))
	case "break", "continue":
		if p.loopDepth == 0 {
			return nil, errorf(CodeSyntax, t.line, "'%s' outside loop", t.val)
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if t.val == "break" {
			return []stmt{&breakStmt{line: t.line}}, nil
		}
		return []stmt{&continueStmt{line: t.line}}, nil
	case "generation":
		// transformers' AssistantTracker: the body renders as is.
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.subparse([]string{"endgeneration"})
		if err != nil {
			return nil, err
		}
		return body, p.expectBlockEnd()
	case "extends", "include", "import", "from", "block", "autoescape", "do", "trans":
		return nil, errorf(CodeUnsupported, t.line, "tag '%s' is not supported in chat templates", t.val)
	}
	return nil, errorf(CodeSyntax, t.line, "Encountered unknown tag '%s'.", t.val)
}

func (p *parser) parseIf(line int) (stmt, error) {
	s := &ifStmt{line: line}
	for {
		cond, err := p.parseTuple(false, false, nil, false)
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, end, err := p.subparse([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		s.conds = append(s.conds, cond)
		s.bodies = append(s.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
			s.orelse, _, err = p.subparse([]string{"endif"})
			if err != nil {
				return nil, err
			}
		}
		return s, p.expectBlockEnd()
	}
}

func (p *parser) parseFor(line int) (stmt, error) {
	s := &forStmt{line: line}
	var err error
	if s.target, err = p.parseAssignTarget([]string{"in"}, false); err != nil {
		return nil, err
	}
	if err := p.expectName("in"); err != nil {
		return nil, err
	}
	if s.iter, err = p.parseTuple(false, false, []string{"recursive"}, false); err != nil {
		return nil, err
	}
	if p.skipName("if") {
		if s.cond, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	s.recursive = p.skipName("recursive")
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	p.loopDepth++
	body, end, err := p.subparse([]string{"endfor", "else"})
	p.loopDepth--
	if err != nil {
		return nil, err
	}
	s.body = body
	if end == "else" {
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if s.orelse, _, err = p.subparse([]string{"endfor"}); err != nil {
			return nil, err
		}
	}
	return s, p.expectBlockEnd()
}

func (p *parser) parseSet(line int) (stmt, error) {
	tgt, err := p.parseAssignTarget(nil, true)
	if err != nil {
		return nil, err
	}
	if p.skipOp("=") {
		x, err := p.parseTuple(false, true, nil, false)
		if err != nil {
			return nil, err
		}
		return &setStmt{line: line, target: tgt, x: x}, p.expectBlockEnd()
	}
	s := &setBlockStmt{line: line, target: tgt}
	if p.isOp("|") {
		f, err := p.parseFilterChain(nil, false)
		if err != nil {
			return nil, err
		}
		s.filter = f.(*filterExpr)
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if s.body, _, err = p.subparse([]string{"endset"}); err != nil {
		return nil, err
	}
	return s, p.expectBlockEnd()
}

func (p *parser) parseSignature() ([]param, error) {
	var params []param
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for !p.isOp(")") {
		if len(params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		t := p.cur()
		if t.kind != tokName {
			return nil, p.fail("expected parameter name, got %s", describe(t))
		}
		p.next()
		pr := param{name: t.val}
		if p.skipOp("=") {
			d, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			pr.def = d
		}
		params = append(params, pr)
	}
	p.next()
	return params, nil
}

func (p *parser) parseMacro(line int) (stmt, error) {
	t := p.cur()
	if t.kind != tokName {
		return nil, p.fail("expected macro name, got %s", describe(t))
	}
	p.next()
	params, err := p.parseSignature()
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	saved := p.loopDepth
	p.loopDepth = 0
	body, _, err := p.subparse([]string{"endmacro"})
	p.loopDepth = saved
	if err != nil {
		return nil, err
	}
	return &macroStmt{line: line, name: t.val, params: params, body: body}, p.expectBlockEnd()
}

func (p *parser) parseCallBlock(line int) (stmt, error) {
	s := &callBlockStmt{line: line}
	if p.isOp("(") {
		params, err := p.parseSignature()
		if err != nil {
			return nil, err
		}
		s.params = params
	}
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	c, ok := x.(*callExpr)
	if !ok {
		return nil, p.fail("expected call")
	}
	s.call = c
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if s.body, _, err = p.subparse([]string{"endcall"}); err != nil {
		return nil, err
	}
	return s, p.expectBlockEnd()
}

func (p *parser) parseFilterBlock(line int) (stmt, error) {
	f, err := p.parseFilterChain(nil, true)
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.subparse([]string{"endfilter"})
	if err != nil {
		return nil, err
	}
	return &filterBlockStmt{line: line, filter: f.(*filterExpr), body: body}, p.expectBlockEnd()
}

func (p *parser) parseWith(line int) (stmt, error) {
	s := &withStmt{line: line}
	for p.cur().kind != tokBlockEnd {
		if len(s.targets) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		tgt, err := p.parseAssignTarget(nil, false)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		s.targets = append(s.targets, tgt)
		s.values = append(s.values, v)
	}
	p.next()
	var err error
	if s.body, _, err = p.subparse([]string{"endwith"}); err != nil {
		return nil, err
	}
	return s, p.expectBlockEnd()
}

// parseAssignTarget parses a name, a tuple of names, or (withNamespace)
// name.attr.
func (p *parser) parseAssignTarget(extraEnds []string, withNamespace bool) (target, error) {
	if withNamespace && p.cur().kind == tokName && p.peek().kind == tokOp && p.peek().val == "." {
		name := p.next().val
		p.next()
		attr := p.cur()
		if attr.kind != tokName {
			return nil, p.fail("expected attribute name, got %s", describe(attr))
		}
		p.next()
		return &attrTarget{name: name, attr: attr.val}, nil
	}
	x, err := p.parseTuple(true, true, extraEnds, false)
	if err != nil {
		return nil, err
	}
	return toTarget(x, p)
}

func toTarget(x expr, p *parser) (target, error) {
	switch e := x.(type) {
	case *nameExpr:
		switch e.name {
		case "true", "false", "none", "True", "False", "None":
			return nil, p.fail("Can't assign to constant")
		}
		return &nameTarget{name: e.name}, nil
	case *constExpr:
		return nil, p.fail("can't assign to %s", e.v.pyType())
	case *listExpr:
		if e.tuple {
			t := &tupleTarget{}
			for _, it := range e.items {
				sub, err := toTarget(it, p)
				if err != nil {
					return nil, err
				}
				t.items = append(t.items, sub)
			}
			return t, nil
		}
	}
	return nil, p.fail("can't assign to %T", x)
}

// isTupleEnd reports whether the current token ends a tuple.
func (p *parser) isTupleEnd(extraEnds []string) bool {
	t := p.cur()
	switch t.kind {
	case tokVarEnd, tokBlockEnd, tokEOF:
		return true
	case tokOp:
		return t.val == ")"
	case tokName:
		for _, e := range extraEnds {
			if t.val == e {
				return true
			}
		}
	}
	return false
}

// parseTuple is jinja2's parse_tuple: comma-separated expressions become a
// tuple; a single one is returned as is.
func (p *parser) parseTuple(simplified, withCondexpr bool, extraEnds []string, explicitParens bool) (expr, error) {
	line := p.cur().line
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.isTupleEnd(extraEnds) {
			break
		}
		var x expr
		var err error
		if simplified {
			x, err = p.parsePrimary()
		} else {
			x, err = p.parseExpression(withCondexpr)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicitParens {
			return nil, p.fail("Expected an expression, got %s", describe(p.cur()))
		}
	}
	return &listExpr{line: line, items: items, tuple: true}, nil
}

func (p *parser) parseExpression(withCondexpr bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if withCondexpr {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (expr, error) {
	line := p.cur().line
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.skipName("if") {
		cond, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var alt expr
		if p.skipName("else") {
			if alt, err = p.parseCondexpr(); err != nil {
				return nil, err
			}
		}
		x = &condExpr{line: line, cond: cond, then: x, else_: alt}
	}
	return x, nil
}

func (p *parser) parseOr() (expr, error) {
	x, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isName("or") {
		line := p.next().line
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: line, op: "or", l: x, r: r}
	}
	return x, nil
}

func (p *parser) parseAnd() (expr, error) {
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isName("and") {
		line := p.next().line
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: line, op: "and", l: x, r: r}
	}
	return x, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		line := p.next().line
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{line: line, op: "not", x: x}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	line := p.cur().line
	x, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []expr
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tokOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not") && p.peek().kind == tokName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = append(rest, r)
	}
	if ops == nil {
		return x, nil
	}
	return &compareExpr{line: line, first: x, ops: ops, rest: rest}, nil
}

func (p *parser) parseMath1() (expr, error) {
	x, err := p.parseConcat()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		t := p.next()
		r, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: t.line, op: t.val, l: x, r: r}
	}
	return x, nil
}

func (p *parser) parseConcat() (expr, error) {
	x, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	for p.isOp("~") {
		t := p.next()
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: t.line, op: "~", l: x, r: r}
	}
	return x, nil
}

func (p *parser) parseMath2() (expr, error) {
	x, err := p.parsePow()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		t := p.next()
		r, err := p.parsePow()
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: t.line, op: t.val, l: x, r: r}
	}
	return x, nil
}

func (p *parser) parsePow() (expr, error) {
	x, err := p.parseUnary(true)
	if err != nil {
		return nil, err
	}
	for p.isOp("**") {
		t := p.next()
		r, err := p.parseUnary(true)
		if err != nil {
			return nil, err
		}
		x = &binExpr{line: t.line, op: "**", l: x, r: r}
	}
	return x, nil
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var x expr
	var err error
	if p.isOp("-") || p.isOp("+") {
		t := p.next()
		inner, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		x = &unaryExpr{line: t.line, op: t.val, x: inner}
	} else {
		if x, err = p.parsePrimary(); err != nil {
			return nil, err
		}
	}
	if x, err = p.parsePostfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(x)
	}
	return x, nil
}

func (p *parser) parsePrimary() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.cur()
	switch t.kind {
	case tokName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{line: t.line, v: Bool(true)}, nil
		case "false", "False":
			return &constExpr{line: t.line, v: Bool(false)}, nil
		case "none", "None":
			return &constExpr{line: t.line, v: None{}}, nil
		}
		return &nameExpr{line: t.line, name: t.val}, nil
	case tokString:
		s := ""
		for p.cur().kind == tokString {
			s += p.next().val
		}
		return &constExpr{line: t.line, v: Str(s)}, nil
	case tokInt:
		p.next()
		i, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.val, 64)
			return &constExpr{line: t.line, v: Float(f)}, nil
		}
		return &constExpr{line: t.line, v: Int(i)}, nil
	case tokFloat:
		p.next()
		f, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, p.fail("invalid float literal %s", t.val)
		}
		return &constExpr{line: t.line, v: Float(f)}, nil
	case tokOp:
		switch t.val {
		case "(":
			p.next()
			x, err := p.parseTuple(false, true, nil, true)
			if err != nil {
				return nil, err
			}
			return x, p.expectOp(")")
		case "[":
			p.next()
			l := &listExpr{line: t.line}
			for !p.isOp("]") {
				if len(l.items) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("]") {
						break
					}
				}
				x, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, x)
			}
			p.next()
			return l, nil
		case "{":
			p.next()
			d := &dictExpr{line: t.line}
			for !p.isOp("}") {
				if len(d.keys) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("}") {
						break
					}
				}
				k, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			p.next()
			return d, nil
		}
	}
	return nil, p.fail("unexpected %s", describe(t))
}

func (p *parser) parsePostfix(x expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp(".") || p.isOp("["):
			x, err = p.parseSubscript(x)
		case p.isOp("("):
			x, err = p.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseFilterExpr(x expr) (expr, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			x, err = p.parseFilterChain(x, false)
		case p.isName("is"):
			x, err = p.parseTest(x)
		case p.isOp("("):
			x, err = p.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseSubscript(x expr) (expr, error) {
	t := p.next()
	if t.val == "." {
		a := p.next()
		switch a.kind {
		case tokName:
			return &getattrExpr{line: t.line, x: x, name: a.val}, nil
		case tokInt:
			i, _ := strconv.ParseInt(a.val, 10, 64)
			return &getitemExpr{line: t.line, x: x, key: &constExpr{line: a.line, v: Int(i)}}, nil
		}
		return nil, errorf(CodeSyntax, a.line, "expected name or number")
	}
	var args []expr
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseSubscribed(x)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	p.next()
	if len(args) == 1 {
		if s, ok := args[0].(*sliceExpr); ok {
			return s, nil
		}
		return &getitemExpr{line: t.line, x: x, key: args[0]}, nil
	}
	if len(args) == 0 {
		return nil, errorf(CodeSyntax, t.line, "expected subscript expression")
	}
	for _, a := range args {
		if _, ok := a.(*sliceExpr); ok {
			return nil, errorf(CodeUnsupported, t.line, "multi-dimensional slicing is not supported")
		}
	}
	return &getitemExpr{line: t.line, x: x, key: &listExpr{line: t.line, items: args, tuple: true}}, nil
}

// parseSubscribed parses one subscript: an expression or a slice a:b:c.
func (p *parser) parseSubscribed(x expr) (expr, error) {
	line := p.cur().line
	var parts [3]expr
	if !p.isOp(":") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return e, nil
		}
		parts[0] = e
	}
	p.next() // ':'
	if !p.isOp("]") && !p.isOp(",") && !p.isOp(":") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		parts[1] = e
	}
	if p.skipOp(":") {
		if !p.isOp("]") && !p.isOp(",") {
			e, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			parts[2] = e
		}
	}
	return &sliceExpr{line: line, x: x, start: parts[0], stop: parts[1], step: parts[2]}, nil
}

func (p *parser) parseCallArgs() ([]expr, []kwarg, error) {
	if err := p.expectOp("("); err != nil {
		return nil, nil, err
	}
	var args []expr
	var kwargs []kwarg
	first := true
	for !p.isOp(")") {
		if !first {
			if err := p.expectOp(","); err != nil {
				return nil, nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		if p.isOp("*") || p.isOp("**") {
			return nil, nil, errorf(CodeUnsupported, p.cur().line, "*args and **kwargs in calls are not supported")
		}
		if p.cur().kind == tokName && p.peek().kind == tokOp && p.peek().val == "=" {
			name := p.next().val
			p.next()
			v, err := p.parseExpression(true)
			if err != nil {
				return nil, nil, err
			}
			kwargs = append(kwargs, kwarg{name: name, x: v})
			continue
		}
		if len(kwargs) > 0 {
			return nil, nil, p.fail("invalid syntax for function call expression")
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	p.next()
	return args, kwargs, nil
}

func (p *parser) parseCall(fn expr) (expr, error) {
	line := p.cur().line
	args, kwargs, err := p.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{line: line, fn: fn, args: args, kwargs: kwargs}, nil
}

func (p *parser) dottedName() (string, error) {
	t := p.cur()
	if t.kind != tokName {
		return "", p.fail("expected name, got %s", describe(t))
	}
	p.next()
	name := t.val
	for p.isOp(".") && p.peek().kind == tokName {
		p.next()
		name += "." + p.next().val
	}
	return name, nil
}

// parseFilterChain parses "| f(args) | g …" applied to x; startInline means
// the first filter has no leading pipe (filter blocks).
func (p *parser) parseFilterChain(x expr, startInline bool) (expr, error) {
	for p.isOp("|") || startInline {
		if !startInline {
			p.next()
		}
		startInline = false
		line := p.cur().line
		name, err := p.dottedName()
		if err != nil {
			return nil, err
		}
		f := &filterExpr{line: line, x: x, name: name}
		if p.isOp("(") {
			if f.args, f.kwargs, err = p.parseCallArgs(); err != nil {
				return nil, err
			}
		}
		x = f
	}
	return x, nil
}

func (p *parser) parseTest(x expr) (expr, error) {
	line := p.next().line // "is"
	negate := p.skipName("not")
	name, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	t := &testExpr{line: line, x: x, name: name, negate: negate}
	c := p.cur()
	switch {
	case p.isOp("("):
		if t.args, t.kwargs, err = p.parseCallArgs(); err != nil {
			return nil, err
		}
	case (c.kind == tokName || c.kind == tokString || c.kind == tokInt || c.kind == tokFloat ||
		(c.kind == tokOp && (c.val == "[" || c.val == "{"))) &&
		!(c.kind == tokName && (c.val == "else" || c.val == "or" || c.val == "and")):
		if p.isName("is") {
			return nil, p.fail("You cannot chain multiple tests with is")
		}
		a, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if a, err = p.parsePostfix(a); err != nil {
			return nil, err
		}
		t.args = []expr{a}
	}
	return t, nil
}
