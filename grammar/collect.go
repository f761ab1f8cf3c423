package grammar

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// collect turns one schema value into its merged constraint record,
// following $ref and allOf. seen holds the $ref targets followed without
// passing through any structure (a cycle of those is an error).
func (c *compiler) collect(s sref, seen map[string]bool) (*ir, error) {
	r := newIR(s.ptr)
	v := refOnly(s.v, c.refAlone)
	switch v.k {
	case kBool:
		if !v.b {
			r.types = 0
		}
		return r, nil
	case kObject:
	default:
		return nil, errorf(CodeInvalidSchema, s.ptr, "", "a schema must be an object or a boolean, not %s", kindName(v.k))
	}
	if err := c.tick(s.ptr, "$ref/anyOf"); err != nil {
		return nil, err
	}
	sub := func(k string) string { return s.ptr + "/" + escapePointer(k) }
	var more []*ir
	nullable := false
	var exclMinBool, exclMaxBool bool
	var itemsArray bool
	for i, k := range v.keys {
		x := v.vals[i]
		p := sub(k)
		switch k {
		case "type":
			var t tset
			switch x.k {
			case kString:
				tt, ok := typeNames[x.str]
				if !ok {
					return nil, errorf(CodeInvalidSchema, p, k, "unknown type %q", x.str)
				}
				t = tt
			case kArray:
				for j, e := range x.arr {
					tt, ok := typeNames[e.str]
					if e.k != kString || !ok {
						return nil, errorf(CodeInvalidSchema, fmt.Sprintf("%s/%d", p, j), k, "type entries must be JSON type names")
					}
					t |= tt
				}
			default:
				return nil, errorf(CodeInvalidSchema, p, k, "type must be a string or an array of strings")
			}
			r.types &= t
		case "nullable":
			nullable = x.k == kBool && x.b
		case "enum":
			if x.k != kArray {
				return nil, errorf(CodeInvalidSchema, p, k, "enum must be an array")
			}
			r.enum, r.hasEnum = append([]*value(nil), x.arr...), true
		case "const":
			r.enum, r.hasEnum = []*value{x}, true
		case "properties":
			if x.k != kObject {
				return nil, errorf(CodeInvalidSchema, p, k, "properties must be an object")
			}
			for j, name := range x.keys {
				r.props = append(r.props, &prop{name: name, s: []sref{{x.vals[j], p + "/" + escapePointer(name)}}})
			}
		case "required":
			if x.k != kArray {
				return nil, errorf(CodeInvalidSchema, p, k, "required must be an array of strings")
			}
			for _, e := range x.arr {
				if e.k != kString {
					return nil, errorf(CodeInvalidSchema, p, k, "required must be an array of strings")
				}
				if !r.isRequired(e.str) {
					r.required = append(r.required, e.str)
				}
			}
		case "additionalProperties":
			if err := checkSchema(x, p); err != nil {
				return nil, err
			}
			r.addl, r.addlSet = []sref{{x, p}}, true
		case "unevaluatedProperties":
			if x.k == kBool && !x.b {
				r.closed = true
			} else if !(x.k == kBool && x.b) {
				if err := c.unsupportedKw(p, k, unsupported[k]); err != nil {
					return nil, err
				}
			}
		case "items":
			switch x.k {
			case kArray:
				itemsArray = true
				for j, e := range x.arr {
					r.prefix = append(r.prefix, []sref{{e, fmt.Sprintf("%s/%d", p, j)}})
				}
			default:
				if err := checkSchema(x, p); err != nil {
					return nil, err
				}
				r.items, r.itemsSet = []sref{{x, p}}, true
			}
		case "prefixItems":
			if x.k != kArray {
				return nil, errorf(CodeInvalidSchema, p, k, "prefixItems must be an array")
			}
			for j, e := range x.arr {
				r.prefix = append(r.prefix, []sref{{e, fmt.Sprintf("%s/%d", p, j)}})
			}
		case "additionalItems":
			// Handled after the loop: it only means something next to an
			// items array.
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			n, err := nonNegInt(x, p, k)
			if err != nil {
				return nil, err
			}
			switch k {
			case "minLength":
				r.minLen = n
			case "maxLength":
				r.maxLen = n
			case "minItems":
				r.minItems = n
			case "maxItems":
				r.maxItems = n
			case "minProperties":
				r.minProps = n
			case "maxProperties":
				r.maxProps = n
			}
		case "pattern", "format":
			if x.k != kString {
				return nil, errorf(CodeInvalidSchema, p, k, "%s must be a string", k)
			}
			if k == "pattern" {
				r.patterns = append(r.patterns, kw{x.str, p})
			} else if formatConstrainsStrings(x.str) {
				r.formats = append(r.formats, kw{x.str, p})
			}
		case "minimum", "maximum":
			q, ok := x.rat()
			if !ok {
				return nil, errorf(CodeInvalidSchema, p, k, "%s must be a number", k)
			}
			if k == "minimum" {
				r.lo = tighterLo(r.lo, &bound{r: q})
			} else {
				r.hi = tighterHi(r.hi, &bound{r: q})
			}
		case "exclusiveMinimum", "exclusiveMaximum":
			if x.k == kBool { // draft-04: a modifier of minimum/maximum
				if k == "exclusiveMinimum" {
					exclMinBool = x.b
				} else {
					exclMaxBool = x.b
				}
				continue
			}
			q, ok := x.rat()
			if !ok {
				return nil, errorf(CodeInvalidSchema, p, k, "%s must be a number or a boolean", k)
			}
			if k == "exclusiveMinimum" {
				r.lo = tighterLo(r.lo, &bound{r: q, excl: true})
			} else {
				r.hi = tighterHi(r.hi, &bound{r: q, excl: true})
			}
		case "multipleOf":
			q, ok := x.rat()
			if !ok || q.Sign() <= 0 {
				return nil, errorf(CodeInvalidSchema, p, k, "multipleOf must be a number greater than 0")
			}
			r.mult = append(r.mult, q)
		case "allOf", "anyOf", "oneOf":
			if x.k != kArray || len(x.arr) == 0 {
				return nil, errorf(CodeInvalidSchema, p, k, "%s must be a non-empty array of schemas", k)
			}
			var alts []sref
			for j, e := range x.arr {
				ep := fmt.Sprintf("%s/%d", p, j)
				if err := checkSchema(e, ep); err != nil {
					return nil, err
				}
				alts = append(alts, sref{e, ep})
			}
			if k == "allOf" {
				for _, a := range alts {
					ar, err := c.collect(a, seen)
					if err != nil {
						return nil, err
					}
					more = append(more, ar)
				}
			} else if len(alts) == 1 {
				ar, err := c.collect(alts[0], seen)
				if err != nil {
					return nil, err
				}
				more = append(more, ar)
			} else {
				r.groups = append(r.groups, group{alts: alts, one: k == "oneOf", ptr: p})
			}
		case "not":
			if err := checkSchema(x, p); err != nil {
				return nil, err
			}
			r.nots = append(r.nots, sref{x, p})
		case "$ref":
			if x.k != kString {
				return nil, errorf(CodeInvalidSchema, p, k, "$ref must be a string")
			}
			t, tptr, ok := resolvePointer(c.root, x.str)
			if !ok {
				return nil, errorf(CodeBadRef, p, k, "cannot resolve $ref %q: only local JSON Pointers (#/...), anchors defined once and URIs of the root's $id are supported, in a document without embedded resources", x.str)
			}
			if seen[tptr] {
				return nil, errorf(CodeBadRef, p, k, "$ref %q refers to itself without any structure in between", x.str)
			}
			if c.active[tptr] > 0 && c.reentries >= c.opts.MaxDepth {
				c.truncated = true
				tr := newIR(tptr)
				tr.types = 0
				more = append(more, tr)
				continue
			}
			if err := checkSchema(t, p); err != nil {
				return nil, err
			}
			seen2 := make(map[string]bool, len(seen)+1)
			for q := range seen {
				seen2[q] = true
			}
			seen2[tptr] = true
			tr, err := c.collect(sref{t, tptr}, seen2)
			if err != nil {
				return nil, err
			}
			tr.refs = append(tr.refs, tptr)
			more = append(more, tr)
		case "dependentRequired", "dependencies", "dependentSchemas":
			// Each entry "if p is present then D" becomes anyOf[not
			// required p, required p and D]: the branches are disjoint,
			// and each stays a single fixed-order object.
			if x.k != kObject {
				return nil, errorf(CodeInvalidSchema, p, k, "%s must be an object", k)
			}
			for j, name := range x.keys {
				d := x.vals[j]
				dp := p + "/" + escapePointer(name)
				req := &value{k: kArray, arr: []*value{{k: kString, str: name}}}
				present := &value{k: kObject, keys: []string{"required"}, vals: []*value{req}}
				switch {
				case d.k == kArray:
					for _, e := range d.arr {
						if e.k != kString {
							return nil, errorf(CodeInvalidSchema, dp, k, "dependency lists must hold property names")
						}
						req.arr = append(req.arr, e)
					}
				case d.k == kObject || d.k == kBool:
					if k == "dependentRequired" {
						return nil, errorf(CodeInvalidSchema, dp, k, "dependentRequired values must be arrays of names")
					}
					present.keys = append(present.keys, "allOf")
					present.vals = append(present.vals, &value{k: kArray, arr: []*value{d}})
				default:
					return nil, errorf(CodeInvalidSchema, dp, k, "a dependency must be an array of names or a schema")
				}
				absent := &value{k: kObject, keys: []string{"not"}, vals: []*value{{k: kObject, keys: []string{"required"}, vals: []*value{{k: kArray, arr: []*value{{k: kString, str: name}}}}}}}
				r.groups = append(r.groups, group{alts: []sref{{absent, dp + "/$absent"}, {present, dp + "/$present"}}, ptr: dp})
			}
		case "patternProperties":
			if x.k != kObject {
				return nil, errorf(CodeInvalidSchema, p, k, "patternProperties must be an object")
			}
			for j, pat := range x.keys {
				pp := p + "/" + escapePointer(pat)
				if err := checkSchema(x.vals[j], pp); err != nil {
					return nil, err
				}
				r.patProps = append(r.patProps, patProp{pat: kw{pat, pp}, s: sref{x.vals[j], pp}})
			}
		case "uniqueItems":
			if x.k == kBool && x.b {
				r.uniqueItems = true
			}
		case "contains", kwContainsAny:
			// minContains and maxContains are read with it (they mean
			// nothing without it), by the dialect's rules.
			d := containsDialect(c.root)
			if k == kwContainsAny {
				d = containsOnly // a negation's, in any draft
			} else if d == containsNone {
				continue // not a keyword before draft 6
			}
			if err := checkSchema(x, p); err != nil {
				return nil, err
			}
			ck := containsKw{s: sref{x, p}, min: 1, max: -1}
			if d == containsCounts {
				if m := v.get("minContains"); m != nil {
					n, err := nonNegInt(m, s.ptr+"/minContains", "minContains")
					if err != nil {
						return nil, err
					}
					ck.min = n
				}
				if m := v.get("maxContains"); m != nil {
					n, err := nonNegInt(m, s.ptr+"/maxContains", "maxContains")
					if err != nil {
						return nil, err
					}
					ck.max = n
				}
			}
			r.contains = append(r.contains, ck)
		case "minContains", "maxContains":
			// Read with contains.
		case "propertyNames":
			if x.k == kBool && x.b {
				continue
			}
			r.propNamesBlocked = true
			r.propNames = append(r.propNames, sref{x, p})
		case "if", "then", "else":
			if !c.conds {
				continue // not a keyword before draft 7
			}
			if k == "if" && v.get("then") == nil && v.get("else") == nil {
				continue // if alone asserts nothing
			}
			if k != "if" {
				continue // reported once, at "if"
			}
			if err := c.unsupportedKw(p, k, unsupported[k]); err != nil {
				return nil, err
			}
		default:
			if annotations[k] {
				continue
			}
			if msg, ok := unsupported[k]; ok {
				if k == "unevaluatedItems" && x.k == kBool && x.b {
					continue
				}
				if err := c.unsupportedKw(p, k, msg); err != nil {
					return nil, err
				}
			}
		}
	}
	if exclMinBool && r.lo != nil {
		r.lo = &bound{r: r.lo.r, excl: true}
	}
	if exclMaxBool && r.hi != nil {
		r.hi = &bound{r: r.hi.r, excl: true}
	}
	// Numeric formats (int32, int64) bound numbers only; applied after the
	// draft-04 exclusive flags, which modify minimum/maximum alone.
	if f := v.get("format"); f != nil && f.k == kString {
		if lo, hi := formatNumberBounds(f.str); lo != nil {
			r.lo, r.hi = tighterLo(r.lo, lo), tighterHi(r.hi, hi)
		}
	}
	if itemsArray {
		if x := v.get("additionalItems"); x != nil {
			if err := checkSchema(x, s.ptr+"/additionalItems"); err != nil {
				return nil, err
			}
			r.items, r.itemsSet = []sref{{x, s.ptr + "/additionalItems"}}, true
		}
	}
	if nullable && r.types != tAll {
		r.types |= tNull
		if r.hasEnum {
			r.enum = append(r.enum, &value{k: kNull})
		}
	}
	for _, m := range more {
		r = merge(r, m)
	}
	return r, nil
}

func checkSchema(v *value, ptr string) error {
	if v.k != kObject && v.k != kBool {
		return errorf(CodeInvalidSchema, ptr, "", "a schema must be an object or a boolean, not %s", kindName(v.k))
	}
	return nil
}

func nonNegInt(x *value, ptr, k string) (int, error) {
	q, ok := x.rat()
	if !ok || !q.IsInt() || q.Sign() < 0 {
		return 0, errorf(CodeInvalidSchema, ptr, k, "%s must be a non-negative integer", k)
	}
	if q.Num().Cmp(big.NewInt(math.MaxInt32)) > 0 {
		return math.MaxInt32, nil // a clamp every platform's int holds
	}
	return int(q.Num().Int64()), nil
}

func kindName(k kind) string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// unsupportedKw reports a keyword this package cannot enforce: an error in
// strict mode, a warning in lenient mode.
func (c *compiler) unsupportedKw(ptr, k, msg string) error {
	if c.opts.Strictness == Lenient {
		c.warn(Warning{Keyword: k, Pointer: ptr, Message: msg})
		return nil
	}
	return errorf(CodeUnsupported, ptr, k, "%s", msg)
}

func (c *compiler) warn(w Warning) {
	for _, x := range c.warnings {
		if x == w {
			return
		}
	}
	c.warnings = append(c.warnings, w)
}

var _ = strings.HasPrefix
