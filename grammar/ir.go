package grammar

import (
	"math/big"
	"net/url"
	"regexp"
	"strings"
)

// tset is a set of JSON types. Numbers are split into integers (tInt) and
// non-integers (tFrac), so that "number" is tInt|tFrac, "integer" is tInt,
// and intersecting the two is plain bitwise and.
type tset uint8

const (
	tNull tset = 1 << iota
	tBool
	tInt
	tFrac
	tStr
	tArr
	tObj
	tAll = tNull | tBool | tInt | tFrac | tStr | tArr | tObj
	tNum = tInt | tFrac
)

var typeNames = map[string]tset{
	"null": tNull, "boolean": tBool, "integer": tInt, "number": tNum,
	"string": tStr, "array": tArr, "object": tObj,
}

// sref is a schema (sub)value and its JSON Pointer.
type sref struct {
	v   *value
	ptr string
}

// kw is a string-valued keyword occurrence (pattern, format) and where it was.
type kw struct {
	s   string
	ptr string
}

type prop struct {
	name string
	s    []sref // all must hold
}

// patProp is one patternProperties entry.
type patProp struct {
	pat kw
	s   sref
	// derived marks the pattern merge added for keys additional on one
	// side (additionalPatterns): a subset of another entry's keys.
	derived bool
}

type group struct {
	alts []sref
	one  bool // oneOf rather than anyOf
	ptr  string
}

// ir is the merged constraint record of one schema position: everything
// that $ref and allOf contribute, keyword by keyword. Type-specific
// constraints apply only to values of their type, as in JSON Schema.
type ir struct {
	ptr   string
	types tset
	// enum is the finite set of allowed values when hasEnum (intersected
	// across merges).
	enum    []*value
	hasEnum bool

	minLen, maxLen int // code points; maxLen < 0: none
	patterns       []kw
	formats        []kw

	lo, hi *bound
	mult   []*big.Rat

	props            []*prop
	required         []string
	addl             []sref // additionalProperties (all must hold)
	addlSet          bool
	closed           bool // unevaluatedProperties: false
	minProps         int
	maxProps         int // < 0: none
	prefix           [][]sref
	items            []sref
	itemsSet         bool
	minItems         int
	maxItems         int // < 0: none
	groups           []group
	nots             []sref
	refs             []string // $ref targets merged into this record (for recursion depth)
	propNamesBlocked bool
	propNames        []sref // propertyNames schemas (all must hold)
	patProps         []patProp
	uniqueItems      bool
	contains         []containsKw // contains keywords (all must hold)
	witnesses        []witness    // members some member must be (from nots; witness.go)
	// srcs are the schemas of the position this record was built for
	// (what emitList was given); the record, or the branch of a group it
	// is, accepts only values that validate against all of them. The
	// finite-domain path validates candidate values against them.
	srcs []sref
}

func newIR(ptr string) *ir {
	return &ir{ptr: ptr, types: tAll, maxLen: -1, maxProps: -1, maxItems: -1}
}

func (r *ir) prop(name string) *prop {
	for _, p := range r.props {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (r *ir) isRequired(name string) bool {
	for _, q := range r.required {
		if q == name {
			return true
		}
	}
	return false
}

// clone copies the record shallowly (slices are copied, their elements
// shared; props are copied since merging appends to them).
func (r *ir) clone() *ir {
	c := *r
	c.enum = append([]*value(nil), r.enum...)
	c.patterns = append([]kw(nil), r.patterns...)
	c.formats = append([]kw(nil), r.formats...)
	c.mult = append([]*big.Rat(nil), r.mult...)
	c.props = make([]*prop, len(r.props))
	for i, p := range r.props {
		c.props[i] = &prop{name: p.name, s: append([]sref(nil), p.s...)}
	}
	c.required = append([]string(nil), r.required...)
	c.addl = append([]sref(nil), r.addl...)
	c.prefix = make([][]sref, len(r.prefix))
	for i, p := range r.prefix {
		c.prefix[i] = append([]sref(nil), p...)
	}
	c.items = append([]sref(nil), r.items...)
	c.groups = append([]group(nil), r.groups...)
	c.nots = append([]sref(nil), r.nots...)
	c.refs = append([]string(nil), r.refs...)
	c.propNames = append([]sref(nil), r.propNames...)
	c.patProps = append([]patProp(nil), r.patProps...)
	c.witnesses = append([]witness(nil), r.witnesses...)
	c.contains = append([]containsKw(nil), r.contains...)
	c.srcs = append([]sref(nil), r.srcs...)
	return &c
}

// merge returns the record of "a and b" (allOf semantics).
func merge(a, b *ir) *ir {
	m := a.clone()
	m.types &= b.types
	if b.hasEnum {
		if m.hasEnum {
			var keep []*value
			for _, x := range m.enum {
				for _, y := range b.enum {
					if equalValues(x, y) {
						keep = append(keep, x)
						break
					}
				}
			}
			m.enum = keep
		} else {
			m.enum = append([]*value(nil), b.enum...)
		}
		m.hasEnum = true
	}
	m.minLen = max(m.minLen, b.minLen)
	m.maxLen = minLimit(m.maxLen, b.maxLen)
	m.patterns = append(m.patterns, b.patterns...)
	m.formats = append(m.formats, b.formats...)
	m.lo = tighterLo(m.lo, b.lo)
	m.hi = tighterHi(m.hi, b.hi)
	m.mult = append(m.mult, b.mult...)

	// Properties: a key known to one side only must also satisfy the other
	// side's additionalProperties.
	for _, p := range m.props {
		if bp := b.prop(p.name); bp != nil {
			p.s = append(p.s, bp.s...)
		} else if b.addlSet {
			p.s = append(p.s, b.addl...)
		}
	}
	for _, bp := range b.props {
		if a.prop(bp.name) == nil {
			np := &prop{name: bp.name, s: append([]sref(nil), bp.s...)}
			if a.addlSet {
				np.s = append(np.s, a.addl...)
			}
			m.props = append(m.props, np)
		}
	}
	for _, q := range b.required {
		if !m.isRequired(q) {
			m.required = append(m.required, q)
		}
	}
	m.addl = append(m.addl, b.addl...)
	m.addlSet = m.addlSet || b.addlSet
	m.closed = m.closed || b.closed
	m.propNamesBlocked = m.propNamesBlocked || b.propNamesBlocked
	m.minProps = max(m.minProps, b.minProps)
	m.maxProps = minLimit(m.maxProps, b.maxProps)

	n := max(len(a.prefix), len(b.prefix))
	pre := make([][]sref, n)
	for i := 0; i < n; i++ {
		var s []sref
		if i < len(a.prefix) {
			s = append(s, a.prefix[i]...)
		} else if a.itemsSet {
			s = append(s, a.items...)
		}
		if i < len(b.prefix) {
			s = append(s, b.prefix[i]...)
		} else if b.itemsSet {
			s = append(s, b.items...)
		}
		pre[i] = s
	}
	m.prefix = pre
	m.items = append(m.items, b.items...)
	m.itemsSet = m.itemsSet || b.itemsSet
	m.minItems = max(m.minItems, b.minItems)
	m.maxItems = minLimit(m.maxItems, b.maxItems)
	m.groups = append(m.groups, b.groups...)
	m.nots = append(m.nots, b.nots...)
	m.refs = append(m.refs, b.refs...)
	m.propNames = append(m.propNames, b.propNames...)
	// A key matching one side's patternProperties that the other side
	// neither declares nor matches by a pattern of its own is additional
	// there: the other side's additionalProperties apply to it too.
	pb, nb := additionalPatterns(b.patProps, a)
	pa, na := additionalPatterns(a.patProps, b)
	m.patProps = append(m.patProps, b.patProps...)
	m.patProps = append(append(m.patProps, pb...), pa...)
	m.propNames = append(append(m.propNames, nb...), na...)
	m.uniqueItems = m.uniqueItems || b.uniqueItems
	m.contains = append(m.contains, b.contains...)
	return m
}

// additionalPatterns returns what r's additionalProperties say of the keys
// of pps (another record's patternProperties) that are additional in r:
// r declares no property of that name and no pattern of r matches it.
// additionalProperties false becomes propertyNames (every key is declared
// in r or matches one of its patterns: exact, and no more patterns for
// objectNode to overlap); any other schema becomes, for each pattern of
// pps, a pattern of those keys with that schema, written with lookaheads
// since patterns are ECMA-262 searches:
// ^(?!(?:NAME)$)(?![\s\S]*(?:Q))…(?=[\s\S]*(?:P)). Nothing when r does
// not set additionalProperties or pps is empty.
func additionalPatterns(pps []patProp, r *ir) (pats []patProp, names []sref) {
	if !r.addlSet || len(pps) == 0 {
		return nil, nil
	}
	var addl []sref
	closed := false
	for _, s := range r.addl {
		switch {
		case s.v.k == kBool && s.v.b:
		case s.v.k == kBool:
			closed = true
		default:
			addl = append(addl, s)
		}
	}
	if closed {
		var alts []*value
		if len(r.props) > 0 {
			var enum []*value
			for _, p := range r.props {
				enum = append(enum, str(p.name))
			}
			alts = append(alts, object("enum", array(enum...)))
		}
		for _, q := range r.patProps {
			if !q.derived {
				alts = append(alts, object("pattern", str(q.pat.s)))
			}
		}
		keys := &value{k: kBool, b: false} // nothing declared: no key at all
		if len(alts) > 0 {
			keys = object("type", str("string"), "anyOf", array(alts...))
		}
		return nil, []sref{{keys, r.ptr + "/additionalProperties"}}
	}
	if len(addl) == 0 {
		return nil, nil
	}
	declared := make([]string, len(r.props))
	for i, p := range r.props {
		declared[i] = p.name
	}
	var patterns []string
	for _, q := range r.patProps {
		if !q.derived { // its keys are some of another entry's
			patterns = append(patterns, q.pat.s)
		}
	}
	not := unlistedKeys(declared, patterns)
	for _, pp := range pps {
		if pp.derived || r.hasPattern(pp.pat.s) {
			continue // covered by its base entry; never additional in r
		}
		pat := kw{s: not + `(?=[\s\S]*(?:` + pp.pat.s + `))`, ptr: pp.pat.ptr}
		for _, s := range addl {
			pats = append(pats, patProp{pat: pat, s: s, derived: true})
		}
	}
	return pats, nil
}

// unlistedKeys is the start of a pattern for the keys that are none of
// names and match none of patterns (lookaheads; the caller appends what
// such a key must also be, or nothing).
func unlistedKeys(names, patterns []string) string {
	var b strings.Builder
	b.WriteString("^")
	if len(names) > 0 {
		quoted := make([]string, len(names))
		for i, name := range names {
			quoted[i] = regexp.QuoteMeta(name)
		}
		b.WriteString("(?!(?:" + strings.Join(quoted, "|") + ")$)")
	}
	for _, q := range patterns {
		b.WriteString(`(?![\s\S]*(?:` + q + `))`)
	}
	return b.String()
}

// hasPattern reports whether r has patternProperties pattern p.
func (r *ir) hasPattern(p string) bool {
	for _, q := range r.patProps {
		if q.pat.s == p {
			return true
		}
	}
	return false
}

func minLimit(a, b int) int {
	if a < 0 {
		return b
	}
	if b < 0 {
		return a
	}
	return min(a, b)
}

func tighterLo(a, b *bound) *bound {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	switch c := a.r.Cmp(b.r); {
	case c > 0:
		return a
	case c < 0:
		return b
	}
	return &bound{r: a.r, excl: a.excl || b.excl}
}

func tighterHi(a, b *bound) *bound {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	switch c := a.r.Cmp(b.r); {
	case c < 0:
		return a
	case c > 0:
		return b
	}
	return &bound{r: a.r, excl: a.excl || b.excl}
}

// annotations are keywords that never constrain a value (annotations,
// identifiers, vocabulary, and the OpenAPI/editor extensions seen in the
// wild). Keywords not listed here and not handled are also ignored unless
// they are in unsupported: JSON Schema ignores unknown keywords.
var annotations = map[string]bool{
	"title": true, "description": true, "examples": true, "example": true, "default": true,
	"$schema": true, "$id": true, "id": true, "$comment": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$defs": true, "definitions": true, "$anchor": true,
	"$dynamicAnchor": true, "$vocabulary": true, "contentMediaType": true, "contentEncoding": true,
	"contentSchema": true, "discriminator": true, "externalDocs": true, "xml": true,
	"markdownDescription": true, "enumDescriptions": true, "$recursiveAnchor": true,
}

// unsupported lists the assertion keywords this package cannot enforce,
// with what to do instead.
var unsupported = map[string]string{
	"uniqueItems":           "uniqueness of array items is not finite-state; drop uniqueItems or use lenient mode",
	"if":                    "if/then/else is not supported; rewrite it as anyOf of the cases",
	"unevaluatedItems":      "unevaluatedItems is not supported",
	"$dynamicRef":           "$dynamicRef is not supported; use $ref",
	"$recursiveRef":         "$recursiveRef is not supported; use $ref",
	"unevaluatedProperties": "unevaluatedProperties other than false is not supported",
}

// resolvePointer resolves a local $ref ("#", "#/a/b", with ~0 ~1 and %
// escapes) against the root.
func resolvePointer(root *value, ref string) (*value, string, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", false
	}
	frag := ref[1:]
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	} else {
		return nil, "", false
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, "", false // an anchor resolveNamedRefs did not rewrite
	}
	cur := lookupPointer(root, frag)
	if cur == nil {
		return nil, "", false
	}
	return cur, frag, true
}
