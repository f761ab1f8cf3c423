package grammar

import (
	"strconv"
	"unicode/utf8"

	"conform/fsm"
)

// This file compiles a string schema to the language of its strings' raw
// text: the decoded characters as UTF-8, with no quotes and no escapes.
// Tool-call formats that write each parameter as its own tagged value
// (Qwen3-Coder's <parameter=k>…</parameter>, GLM's <arg_value>…</arg_value>)
// write string parameters this way. The language is the code-point
// language that stringNode JSON-encodes (stringCP, or the lengths alone),
// so pattern, format, length, enum, const and not mean here exactly what
// they mean in CompileSchema.

// CompileRawString compiles schema, which must admit only strings, to the
// language of the raw UTF-8 text of the strings it admits. Keywords are
// read as CompileSchema reads them ($ref, allOf, anyOf, oneOf, not, enum,
// const, pattern, format, minLength, maxLength); lenient mode reports what
// it did not enforce in Result.Warnings. A schema that admits a value of
// another type is a CodeNotString *Error (see StringKinds to tell the
// cases apart); every failure is an *Error.
func CompileRawString(schema []byte, opts Options) (*Result, error) {
	c, r, err := collectRoot(schema, opts)
	if err != nil {
		return nil, err
	}
	some, only := c.stringKinds(r, 0)
	if !only || !some {
		msg := "the raw text of a string needs a schema whose values are all strings"
		if !some {
			msg = "the schema admits no string"
		}
		return nil, errorf(CodeNotString, "", "type", "%s", msg)
	}
	n, err := c.rawIR(r)
	if err != nil {
		return nil, err
	}
	if n.Op == fsm.OpNoMatch {
		return nil, errorf(CodeUnsatisfiable, "", "", "no string satisfies the schema")
	}
	return &Result{Node: n, Warnings: c.warnings}, nil
}

// StringKinds reports whether schema admits some string (some) and
// whether every value it admits is a string (only), as far as its type,
// enum and const keywords and its anyOf/oneOf branches tell; both are
// read after $ref and allOf are merged. A tool-call format that writes
// strings raw and other values as JSON needs one of the two: only (raw
// text, CompileRawString) or not some (JSON, CompileSchema).
func StringKinds(schema []byte, opts Options) (some, only bool, err error) {
	c, r, err := collectRoot(schema, opts)
	if err != nil {
		return false, false, err
	}
	some, only = c.stringKinds(r, 0)
	return some, only, nil
}

// collectRoot decodes and checks schema as CompileSchema does and returns
// the merged record of its root.
func collectRoot(schema []byte, opts Options) (*compiler, *ir, error) {
	opts = opts.withDefaults()
	root, err := decodeSchema(schema, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSchema(root, ""); err != nil {
		return nil, nil, err
	}
	if err := checkNumbers(root, ""); err != nil {
		return nil, nil, err
	}
	resolveNamedRefs(root)
	rewriteConds(root)
	c := newCompiler(opts, root)
	r, err := c.collectList([]sref{{root, ""}}, "")
	if err != nil {
		return nil, nil, err
	}
	return c, r, nil
}

// maxKindDepth bounds the anyOf/oneOf nesting stringKinds looks into; a
// deeper schema counts as admitting both kinds (the caller then refuses
// it or writes it as JSON).
const maxKindDepth = 8

// stringKinds is StringKinds on a merged record.
func (c *compiler) stringKinds(r *ir, depth int) (some, only bool) {
	types := r.types
	if r.hasEnum {
		types = 0
		for _, v := range r.enum {
			types |= typeOf(v) & r.types
		}
	}
	some = types&tStr != 0
	only = types&^tStr == 0
	if len(r.groups) == 0 || !some {
		return some, only
	}
	if depth >= maxKindDepth {
		return true, false
	}
	g := r.groups[0]
	base := r.clone()
	base.groups = base.groups[1:]
	some, only = false, true
	for _, a := range g.alts {
		ar, err := c.collect(a, nil)
		if err != nil {
			return true, false
		}
		s, o := c.stringKinds(merge(base, ar), depth+1)
		some = some || s
		only = only && o
	}
	return some, only
}

// rawIR is the raw-text language of a record that admits only strings:
// anyOf/oneOf distributed as emitGroup does, then the leaf.
func (c *compiler) rawIR(r *ir) (*fsm.Node, error) {
	if err := c.tick(r.ptr, "anyOf"); err != nil {
		return nil, err
	}
	if r.types&tStr == 0 {
		return fsm.NoMatch(), nil
	}
	if len(r.groups) == 0 {
		return c.rawLeaf(r)
	}
	g, _, subs, _, err := c.splitGroup(r)
	if err != nil {
		return nil, err
	}
	if g.one {
		for i := range subs {
			for j := i + 1; j < len(subs); j++ {
				if subs[i].types&tStr == 0 || subs[j].types&tStr == 0 || c.disjoint(subs[i], subs[j], 3) {
					continue
				}
				msg := "oneOf branches " + strconv.Itoa(i) + " and " + strconv.Itoa(j) + " may both match the same string; make them disjoint or use anyOf"
				if c.opts.Strictness != Lenient {
					return nil, errorf(CodeOneOfOverlap, g.ptr, "oneOf", "%s", msg)
				}
				c.warn(Warning{Keyword: "oneOf", Pointer: g.ptr, Message: msg + " (treated as anyOf)"})
			}
		}
	}
	return altOf(subs, c.rawIR)
}

// rawLeaf is the raw-text language of a record with no anyOf/oneOf left:
// the code-point language stringNode encodes, written as UTF-8.
func (c *compiler) rawLeaf(r *ir) (*fsm.Node, error) {
	var ex excl
	if len(r.nots) > 0 {
		var err error
		r, ex, err = c.applyNots(r)
		if err != nil {
			return nil, err
		}
		if r.types&tStr == 0 {
			return fsm.NoMatch(), nil
		}
	}
	if r.maxLen > c.opts.MaxStringLength && r.minLen <= c.opts.MaxStringLength {
		r = r.clone()
		r.maxLen = c.opts.MaxStringLength // sound: only shorter strings are produced
	}
	cp, err := c.stringCP(r, ex.str)
	if err != nil {
		return nil, err
	}
	if !r.hasEnum {
		if cp == nil {
			cp = fsm.Repeat(fsm.AnyRune(), r.minLen, r.maxLen)
		}
		return cp, nil
	}
	var lits []*fsm.Node
	for _, v := range r.enum {
		if v.k != kString {
			continue
		}
		if n := utf8.RuneCountInString(v.str); n < r.minLen || r.maxLen >= 0 && n > r.maxLen {
			continue
		}
		lits = append(lits, fsm.Lit(v.str))
	}
	if len(lits) == 0 {
		return fsm.NoMatch(), nil
	}
	if cp == nil {
		return fsm.Alt(lits...), nil
	}
	return fsm.And(fsm.Alt(lits...), cp), nil
}
