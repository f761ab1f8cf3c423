package grammar

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// if/then/else.
//
// Before collection, every schema object with "if" and "then" or "else"
// whose "if" can be negated exactly is rewritten in the decoded document:
//
//	{..., "if": I, "then": T, "else": E}
//	  → {..., "allOf": [..., {"anyOf": [{"allOf": [I, T]}, {"allOf": [¬I, E]}]}]}
//
// (a missing then/else is true). The two branches are disjoint (I and ¬I),
// so the anyOf is exact. I is a conjunction of keywords, each a test on
// one type family and vacuous on the others, so ¬I is the disjunction of
// the negated keywords, each restricted to its family (negateIf): not
// type, not const/enum, a string not matching the pattern, a string,
// array or object outside the length bound, an object lacking a required
// name, an object whose listed property is present with a value failing
// its (recursively negated) schema, an array with fewer items matching
// contains than minContains (none: every item fails it) or more than
// maxContains. Those are schemas the rest of the
// package compiles exactly (applyNots for the leaf nots) or refuses.
//
// An "if" with any other keyword ($ref, allOf, format, numeric bounds,
// items...) is left alone, and collect refuses it as before. The rewritten
// document is also what the finite-domain validator sees; the rewrite
// keeps its meaning. Documents of drafts 3, 4 and 6, where if/then/else
// are not keywords, are not rewritten, and collect ignores the three.

// rewriteConds rewrites the if/then/else of every schema position
// reachable from root (through the schema keywords and local $refs).
func rewriteConds(root *value) {
	if !hasKeyword(root, "if", 0) && !hasKeyword(root, "not", 0) {
		return
	}
	conds := condKeywords(root)
	// Subtrees a $ref points into are never removed: the reference would
	// dangle.
	targets := map[*value]bool{}
	var refs func(v *value, depth int)
	refs = func(v *value, depth int) {
		if depth > 512 {
			return
		}
		for i, k := range v.keys {
			if k == "$ref" && v.vals[i].k == kString {
				if t, _, ok := resolvePointer(root, v.vals[i].str); ok {
					targets[t] = true
				}
			}
			refs(v.vals[i], depth+1)
		}
		for _, e := range v.arr {
			refs(e, depth+1)
		}
	}
	refs(root, 0)
	seen := map[*value]bool{}
	var walk func(v *value, depth int)
	walk = func(v *value, depth int) {
		if v == nil || v.k != kObject || seen[v] || depth > 512 {
			return
		}
		seen[v] = true
		for i, k := range v.keys {
			x := v.vals[i]
			switch k {
			case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
				if x.k == kObject {
					for _, s := range x.vals {
						walk(s, depth+1)
					}
				}
			case "items", "prefixItems", "allOf", "anyOf", "oneOf":
				if x.k == kArray {
					for _, s := range x.arr {
						walk(s, depth+1)
					}
				} else {
					walk(x, depth+1)
				}
			case "not", "if", "then", "else", "additionalProperties", "additionalItems", "propertyNames",
				"contains", "unevaluatedProperties", "unevaluatedItems":
				walk(x, depth+1)
			case "$ref":
				if x.k == kString {
					if t, _, ok := resolvePointer(root, x.str); ok {
						walk(t, depth+1)
					}
				}
			}
		}
		if conds {
			rewriteCond(root, v, targets)
		}
		rewriteNot(root, v, targets)
	}
	walk(root, 0)
}

// rewriteCond rewrites the if/then/else of one schema object in place,
// when its "if" can be negated exactly.
func rewriteCond(root, v *value, targets map[*value]bool) {
	cond := v.get("if")
	if cond == nil {
		return
	}
	then, els := v.get("then"), v.get("else")
	if then == nil && els == nil {
		return
	}
	if checkSchema(cond, "") != nil || then != nil && checkSchema(then, "") != nil || els != nil && checkSchema(els, "") != nil {
		return
	}
	all := v.get("allOf")
	if all != nil && (all.k != kArray || len(all.arr) == 0) {
		return
	}
	if holdsTarget(cond, targets, 0) {
		return
	}
	// A then or else that a $ref points into stays where it is, where
	// without if it asserts nothing, so that the reference still resolves.
	drop := []string{"if", "then", "else"}
	if holdsTarget(then, targets, 0) || holdsTarget(els, targets, 0) {
		drop = drop[:1]
	}
	notCond, ok := negateIf(root, cond, 0)
	if !ok || hasKeyword(notCond, kwContainsAny, 0) {
		return
	}
	if then == nil {
		then = &value{k: kBool, b: true}
	}
	if els == nil {
		els = &value{k: kBool, b: true}
	}
	group := object("anyOf", array(object("allOf", array(cond, then)), object("allOf", array(notCond, els))))
	moveToAllOf(v, all, group, drop...)
}

// moveToAllOf removes the members named drop from the schema object v and
// appends s to its allOf (all, or a new allOf when all is nil).
func moveToAllOf(v, all, s *value, drop ...string) {
	keys, vals := v.keys[:0:0], v.vals[:0:0]
	for i, k := range v.keys {
		if !slices.Contains(drop, k) {
			keys, vals = append(keys, k), append(vals, v.vals[i])
		}
	}
	v.keys, v.vals = keys, vals
	if all != nil {
		all.arr = append(all.arr, s)
	} else {
		v.keys = append(v.keys, "allOf")
		v.vals = append(v.vals, array(s))
	}
}

// rewriteNot replaces "not": N by allOf [¬N] when N is a structured
// schema applyNots refuses (several required names, properties, allOf,
// anyOf, not, array or object size bounds) and negateIf negates it.
func rewriteNot(root, v *value, targets map[*value]bool) {
	n := v.get("not")
	if n == nil || n.k != kObject || !structuredNot(root, n, 0) {
		return
	}
	all := v.get("allOf")
	if all != nil && (all.k != kArray || len(all.arr) == 0) {
		return
	}
	if holdsTarget(n, targets, 0) {
		return
	}
	neg, ok := negateIf(root, n, 0)
	if !ok || hasKeyword(neg, kwContainsAny, 0) {
		return
	}
	moveToAllOf(v, all, neg, "not")
}

// structuredNot reports whether n has a keyword applyNots refuses, itself
// or through its $ref.
func structuredNot(root, n *value, depth int) bool {
	if n.k != kObject || depth > maxNegateDepth {
		return false
	}
	for i, k := range n.keys {
		switch k {
		case "properties", "allOf", "anyOf", "oneOf", "not", "minItems", "maxItems", "minProperties", "maxProperties", "items", "contains",
			"dependencies", "dependentRequired", "dependentSchemas":
			return true
		case "required":
			if x := n.vals[i]; x.k == kArray && len(x.arr) > 1 {
				return true
			}
		case "$ref":
			if x := n.vals[i]; x.k == kString {
				if t, _, ok := resolvePointer(root, x.str); ok && structuredNot(root, t, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// holdsTarget reports whether the subtree v contains a $ref target.
func holdsTarget(v *value, targets map[*value]bool, depth int) bool {
	if v == nil {
		return false
	}
	if targets[v] || depth > 512 {
		return true
	}
	for _, e := range v.vals {
		if holdsTarget(e, targets, depth+1) {
			return true
		}
	}
	for _, e := range v.arr {
		if holdsTarget(e, targets, depth+1) {
			return true
		}
	}
	return false
}

// negateIf returns a schema accepting exactly the values cond rejects.
// cond is a conjunction of keywords, each a test on one type family
// (vacuous on the others), so ¬cond is the disjunction of the negated
// keywords, each restricted to its family. Keywords without an exact
// negation here make the rewrite fail.
func negateIf(root, cond *value, depth int) (*value, bool) {
	return negateIn(root, cond, depth, nil, negExact)
}

// negateIn is negateIf for a schema applied to values known to be objects
// with keys among *keys only, or to any value when keys is nil. The
// context lets additionalProperties be negated: an object fails it when
// one of its possible keys that the schema does not declare is present
// (with a value failing the additionalProperties schema).
//
// With under, a property (or additionalProperties) schema that cannot be
// negated drops its alternative "present with a failing value" instead of
// failing: the result is then a subset of the negation (an object lacking
// a required name still fails cond), which is sound wherever the negation
// is conjoined to a branch. Conjunctions (the negation of anyOf) are
// dropped whole, never in part.
func negateIn(root, cond *value, depth int, keys *[]string, mode negMode) (*value, bool) {
	under := mode.under()
	if depth > maxNegateDepth {
		return nil, false
	}
	if cond.k == kBool {
		return &value{k: kBool, b: !cond.b}, true
	}
	if cond.k != kObject {
		return nil, false
	}
	cond = refOnly(cond, refOverridesSiblings(root))
	var alts []*value
	family := func(t string, kv ...any) *value {
		return object(append([]any{"type", str(t)}, kv...)...)
	}
	for i, k := range cond.keys {
		x := cond.vals[i]
		switch k {
		case "type":
			alts = append(alts, object("not", object("type", x)))
		case "const", "enum":
			alts = append(alts, object("not", object(k, x)))
		case "pattern":
			alts = append(alts, family("string", "not", object(k, x)))
		case "format":
			// A format is excluded by its envelope (applyNots); one
			// without an envelope cannot be.
			if x.k != kString || formatEnvelope(x.str) == nil {
				return nil, false
			}
			alts = append(alts, family("string", "not", object(k, x)))
		case "required":
			if x.k != kArray {
				return nil, false
			}
			for _, r := range x.arr {
				if r.k != kString {
					return nil, false
				}
				alts = append(alts, family("object", "not", object("required", array(r))))
			}
		case "properties":
			if x.k != kObject {
				return nil, false
			}
			for j, name := range x.keys {
				ns, ok := negateIn(root, x.vals[j], depth+1, nil, mode)
				if !ok {
					if under {
						continue
					}
					return nil, false
				}
				alts = append(alts, family("object", "required", array(str(name)), "properties", object(name, ns)))
			}
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			n, err := nonNegInt(x, "", k)
			if err != nil || n >= math.MaxInt32 {
				return nil, false
			}
			fam := map[string]string{"Length": "string", "Items": "array", "Properties": "object"}[k[3:]]
			if strings.HasPrefix(k, "min") {
				if n > 0 {
					alts = append(alts, family(fam, "max"+k[3:], number(n-1)))
				}
			} else {
				alts = append(alts, family(fam, "min"+k[3:], number(n+1)))
			}
		case "multipleOf":
			// The numbers that are not multiples: exact where the
			// record writes only integers (applyNots refuses it
			// elsewhere, which fails this rewrite, not the schema).
			alts = append(alts, family("number", "not", object(k, x)))
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if x.k == kBool { // draft-04 modifier, read with minimum/maximum
				continue
			}
			if x.k != kNumber {
				return nil, false
			}
			// The numbers failing the bound: below (or at) a lower bound,
			// above (or at) an upper one.
			lower := k == "minimum" || k == "exclusiveMinimum"
			excl := k == "exclusiveMinimum" || k == "exclusiveMaximum"
			if k == "minimum" || k == "maximum" {
				if b := cond.get("exclusive" + strings.ToUpper(k[:1]) + k[1:]); b != nil && b.k == kBool && b.b {
					excl = true
				}
			}
			alts = append(alts, numberBeyond(root, x, lower, !excl))
		case "additionalProperties":
			if x.k == kBool && x.b {
				continue
			}
			if keys == nil || cond.get("patternProperties") != nil {
				// "Some undeclared key has a failing value" ranges over
				// keys this context cannot list: exactly, a witness, a
				// key neither declared nor matching a pattern
				// (extraKeys) with a value failing x; the under modes
				// drop the alternative instead, which is cheaper
				// (negUnder only at the top; deeper, the property
				// holding it is dropped).
				if pat, ok := extraKeys(cond); ok && mode == negExact {
					alts = append(alts, family("object", "not", object("patternProperties", object(pat, x))))
					continue
				}
				if mode == negUnderExtras || mode == negUnder && depth == 0 {
					continue
				}
				return nil, false
			}
			var nx *value
			if x.k != kBool {
				var ok bool
				if nx, ok = negateIn(root, x, depth+1, nil, mode); !ok {
					if under {
						continue
					}
					return nil, false
				}
			}
			declared := cond.get("properties")
			for _, name := range *keys {
				if declared.get(name) != nil {
					continue
				}
				if nx == nil {
					alts = append(alts, family("object", "required", array(str(name))))
				} else {
					alts = append(alts, family("object", "required", array(str(name)), "properties", object(name, nx)))
				}
			}
		case "items":
			// ¬(every item X) = an array with an item failing X:
			// contains ¬X (not a keyword before draft 6). The tuple
			// forms (an items array, or items after prefixItems) are
			// not negated.
			if x.k == kArray || cond.get("prefixItems") != nil {
				return nil, false
			}
			nx, ok := negateIn(root, x, depth+1, nil, mode)
			if !ok {
				return nil, false
			}
			ck := "contains"
			if containsDialect(root) == containsNone {
				ck = kwContainsAny // draft 4: compiled, never written into the document
			}
			alts = append(alts, family("array", ck, nx))
		case "contains":
			// ¬(between minContains and maxContains items match X): fewer
			// than minContains match (none: every item fails X, items ¬X)
			// or more than maxContains do. Not a keyword before draft 6;
			// without minContains/maxContains before 2019-09.
			d := containsDialect(root)
			if d == containsNone {
				continue
			}
			lo, hi := 1, -1
			if d == containsCounts {
				for _, b := range []struct {
					k string
					n *int
				}{{"minContains", &lo}, {"maxContains", &hi}} {
					if m := cond.get(b.k); m != nil {
						n, err := nonNegInt(m, "", b.k)
						if err != nil || n > maxContainsCount {
							return nil, false
						}
						*b.n = n
					}
				}
			}
			switch {
			case hi >= 0 && hi < lo:
				// Unsatisfiable: every value fails it, arrays included,
				// and other types pass contains.
				alts = append(alts, family("array"))
				continue
			case lo == 1:
				nx, ok := negateIn(root, x, depth+1, nil, mode)
				if !ok {
					return nil, false
				}
				alts = append(alts, family("array", "items", nx))
			case lo > 1:
				alts = append(alts, family("array", "contains", x, "minContains", number(0), "maxContains", number(lo-1)))
			}
			if hi >= 0 {
				alts = append(alts, family("array", "contains", x, "minContains", number(hi+1)))
			}
		case "minContains", "maxContains":
			// Read with contains (vacuous without it).
		case "allOf", "anyOf":
			if x.k != kArray || len(x.arr) == 0 {
				return nil, false
			}
			negs, ok := negateEach(root, x.arr, depth+1, keys, mode)
			if !ok {
				return nil, false
			}
			if k == "allOf" { // ¬(A ∧ B) = ¬A ∨ ¬B
				alts = append(alts, negs...)
			} else { // ¬(A ∨ B) = ¬A ∧ ¬B
				alts = append(alts, object("allOf", array(negs...)))
			}
		case "not":
			if checkSchema(x, "") != nil {
				return nil, false
			}
			alts = append(alts, x)
		case "$ref":
			if x.k != kString {
				return nil, false
			}
			t, _, ok := resolvePointer(root, x.str)
			if !ok {
				return nil, false
			}
			nt, ok := negateIn(root, t, depth+1, keys, mode)
			if !ok {
				return nil, false
			}
			alts = append(alts, nt)
		case "patternProperties":
			// ¬ = some key matching a pattern has a failing value: an
			// existential over keys, dropped like additionalProperties'
			// in the under modes; exactly, a not of each pattern alone,
			// which collect compiles as a witness (witness.go).
			if mode == negUnderExtras || mode == negUnder && depth == 0 {
				continue
			}
			if x.k != kObject || under {
				return nil, false
			}
			for j, pat := range x.keys {
				alts = append(alts, family("object", "not", object("patternProperties", object(pat, x.vals[j]))))
			}
		case "propertyNames":
			// ¬ = some key fails the schema: a witness too.
			alts = append(alts, family("object", "not", object(k, x)))
		case "dependencies", "dependentRequired", "dependentSchemas":
			// ¬(p present ⇒ D) = p present and ¬D, for some entry.
			if x.k != kObject {
				return nil, false
			}
			for j, name := range x.keys {
				d := x.vals[j]
				var nd *value
				switch {
				case d.k == kArray:
					nd = object("required", d)
				case (d.k == kObject || d.k == kBool) && k != "dependentRequired":
					nd = d
				default:
					return nil, false
				}
				neg, ok := negateIn(root, nd, depth+1, keys, mode)
				if !ok {
					return nil, false
				}
				alts = append(alts, object("allOf", array(family("object", "required", array(str(name))), neg)))
			}
		case "oneOf":
			// ¬(exactly one of B) = none of B, or two of B at once.
			if x.k != kArray || len(x.arr) == 0 || len(x.arr) > maxNegatedOneOf {
				return nil, false
			}
			negs, ok := negateEach(root, x.arr, depth+1, keys, mode)
			if !ok {
				return nil, false
			}
			alts = append(alts, object("allOf", array(negs...)))
			for i := range x.arr {
				for j := i + 1; j < len(x.arr); j++ {
					if !typesDisjoint(x.arr[i], x.arr[j]) {
						alts = append(alts, object("allOf", array(x.arr[i], x.arr[j])))
					}
				}
			}
		case "if", "then", "else":
			// then and else without if assert nothing (rewriteCond
			// leaves them so when a $ref points into them).
			if condKeywords(root) && cond.get("if") != nil && (cond.get("then") != nil || cond.get("else") != nil) {
				return nil, false
			}
		default:
			if !ignoredKeyword(k) {
				return nil, false
			}
		}
	}
	switch len(alts) {
	case 0:
		return &value{k: kBool, b: false}, true
	case 1:
		return alts[0], true
	}
	return object("anyOf", array(alts...)), true
}

// extraKeys returns an ECMA-262 pattern matching exactly the keys that are
// additional in cond: not a name of its properties and matched by none of
// its patternProperties (searches, so each is excluded as "nowhere in the
// key"). ok is false when cond's properties or patternProperties are not
// objects.
func extraKeys(cond *value) (string, bool) {
	var names, patterns []string
	if ps := cond.get("properties"); ps != nil {
		if ps.k != kObject {
			return "", false
		}
		names = ps.keys
	}
	if pp := cond.get("patternProperties"); pp != nil {
		if pp.k != kObject {
			return "", false
		}
		patterns = pp.keys
	}
	return unlistedKeys(names, patterns), true
}

// numberBeyond is the schema of the numbers failing a bound at x: those
// below x when lower (the bound was a minimum), above x otherwise, and x
// itself too unless strict (the bound admitted x). Draft-04 documents get
// the boolean exclusive form, so that the document stays valid for the
// validator.
func numberBeyond(root, x *value, lower, strict bool) *value {
	key := "maximum"
	if !lower {
		key = "minimum"
	}
	if !strict {
		return object("type", str("number"), key, x)
	}
	if draft4(root) {
		return object("type", str("number"), key, x, "exclusive"+strings.ToUpper(key[:1])+key[1:], &value{k: kBool, b: true})
	}
	return object("type", str("number"), "exclusive"+strings.ToUpper(key[:1])+key[1:], x)
}

// condKeywords reports whether if/then/else are keywords of the document's
// draft: not in drafts 3, 4 and 6, which predate them (there they are
// unknown keywords, which validators ignore).
func condKeywords(root *value) bool {
	s := root.get("$schema")
	return s == nil || s.k != kString || !(strings.Contains(s.str, "draft-03") || strings.Contains(s.str, "draft-04") || strings.Contains(s.str, "draft-06"))
}

// draft4 reports whether the document declares draft 4 (or 3), where
// exclusiveMinimum/exclusiveMaximum are booleans.
func draft4(root *value) bool {
	s := root.get("$schema")
	return s != nil && s.k == kString && (strings.Contains(s.str, "draft-04") || strings.Contains(s.str, "draft-03"))
}

// negateEach negates each of schemas (negateIn); ok is false when one
// cannot be.
func negateEach(root *value, schemas []*value, depth int, keys *[]string, mode negMode) ([]*value, bool) {
	negs := make([]*value, 0, len(schemas))
	for _, e := range schemas {
		ne, ok := negateIn(root, e, depth, keys, mode)
		if !ok {
			return nil, false
		}
		negs = append(negs, ne)
	}
	return negs, true
}

// negMode says how negateIn treats a keyword it cannot negate exactly.
type negMode uint8

const (
	// negExact fails.
	negExact negMode = iota
	// negUnder drops a property whose schema cannot be negated (so
	// that only its absence fails the property) and, at the top of
	// the negation, the alternative "an undeclared key (or a key
	// matching a pattern) with a failing value", whose keys the
	// context cannot list: a subset of the negation, sound wherever
	// the negation is conjoined to a branch.
	negUnder
	// negUnderExtras is negUnder dropping that alternative at every
	// depth, which keeps more properties' negations (and sometimes
	// leaves one that does not compile, where negUnder succeeds).
	negUnderExtras
	// negListed is negExact without the witness for keys the context
	// cannot list: such an additionalProperties fails the negation, as
	// in negExact before that witness. It is cheaper where the
	// negation only adds objects (oneOfDiscriminated's, for objects
	// lacking the discriminator).
	negListed
)

// under reports whether m under-approximates the negation.
func (m negMode) under() bool { return m == negUnder || m == negUnderExtras }

// maxNegatedOneOf bounds the branches of a oneOf that negateIn negates
// (its negation lists every pair of branches).
const maxNegatedOneOf = 6

// typesDisjoint reports whether two schemas declare "type" sets with no
// type in common (integer is a number), so that no value satisfies both.
func typesDisjoint(a, b *value) bool {
	ta, oka := declaredTypes(a)
	tb, okb := declaredTypes(b)
	return oka && okb && ta&tb == 0
}

// declaredTypes returns the type set a schema object's "type" keyword
// declares, ok false when it has none (or one this package cannot read).
func declaredTypes(v *value) (tset, bool) {
	if v == nil || v.k != kObject {
		return 0, false
	}
	x := v.get("type")
	if x == nil {
		return 0, false
	}
	var t tset
	switch x.k {
	case kString:
		tt, ok := typeNames[x.str]
		if !ok {
			return 0, false
		}
		t = tt
	case kArray:
		for _, e := range x.arr {
			tt, ok := typeNames[e.str]
			if e.k != kString || !ok {
				return 0, false
			}
			t |= tt
		}
	default:
		return 0, false
	}
	return t, true
}

// maxNegateDepth bounds the nesting negateIf follows (through properties,
// allOf/anyOf and $ref): recursive definitions are not negated.
const maxNegateDepth = 8

func number(n int) *value { return &value{k: kNumber, num: strconv.Itoa(n)} }

// object builds an object value from alternating keys and values.
func object(kv ...any) *value {
	v := &value{k: kObject}
	for i := 0; i+1 < len(kv); i += 2 {
		v.keys = append(v.keys, kv[i].(string))
		v.vals = append(v.vals, kv[i+1].(*value))
	}
	return v
}

func array(vs ...*value) *value { return &value{k: kArray, arr: vs} }

func str(s string) *value { return &value{k: kString, str: s} }
