package grammar

import (
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"conform/fsm"
)

// objectNode builds the objects of r. Properties come in a fixed order
// (declared order, then names found only in required); extra properties,
// when additionalProperties allows them, come after the declared ones.
//
// Optional properties stay linear (notes §4.3): the continuation after
// position i depends only on i and on how many members were written so far
// (0 or "some", or the exact count up to the largest min/maxProperties
// bound), and each continuation is built once and shared.
func (c *compiler) objectNode(r *ir) (*fsm.Node, error) {
	r = samePatterns(r)

	names := make([]string, 0, len(r.props)+len(r.required))
	schemas := map[string][]sref{}
	for _, p := range r.props {
		names = append(names, p.name)
		schemas[p.name] = p.s
	}
	for _, q := range r.required {
		if _, ok := schemas[q]; !ok {
			names = append(names, q)
			schemas[q] = nil
		}
	}
	var nameCP *fsm.Node // propertyNames as a language of quoted keys
	if len(r.propNames) > 0 {
		// Property names are strings: the propertyNames schemas'
		// record cut to strings is compiled like any string schema
		// (anyOf/oneOf, $ref and enums included), and each key
		// language is intersected with it.
		pr, err := c.collectList(r.propNames, r.ptr+"/propertyNames")
		if err != nil {
			return nil, err
		}
		pr.types &= tStr
		pr.srcs = append([]sref(nil), r.propNames...)
		if nameCP, err = c.emitIR(pr); err != nil {
			return nil, err
		}
	}
	var members []member
	var declared []*fsm.Node
	// declaredIn[i]: the declared keys that pattern i matches (the others
	// are outside its key language, so subtracting them changes nothing).
	declaredIn := make([][]*fsm.Node, len(r.patProps))
	for _, name := range names {
		keys := c.objectKeyOf(name)
		dk := keys.spellings
		declared = append(declared, dk)
		list := schemas[name]
		var matched []sref
		for i, pp := range r.patProps {
			ok, err := c.patternMatches(pp.pat, name)
			if err != nil {
				return nil, err
			}
			if ok {
				matched = append(matched, pp.s)
				declaredIn[i] = append(declaredIn[i], dk)
			}
		}
		if list == nil && r.addlSet && len(matched) == 0 {
			list = r.addl
		}
		if len(matched) > 0 {
			list = append(append([]sref(nil), list...), matched...)
		}
		v, err := c.emitList(list, r.ptr+"/properties/"+escapePointer(name))
		if err != nil {
			return nil, err
		}
		req := r.isRequired(name)
		key := keys.canonical
		if nameCP != nil {
			key = fsm.And(key, nameCP)
		}
		if v.Op == fsm.OpNoMatch {
			if req {
				return fsm.NoMatch(), nil
			}
			continue
		}
		members = append(members, member{key: key, kv: c.pair(key, v), required: req, list: list, ptr: r.ptr + "/properties/" + escapePointer(name)})
	}
	var regions []region // the extra keys' regions, for witnesses
	// Extra properties: keys matching a patternProperties pattern take
	// that pattern's schema, keys matching several patterns take all of
	// theirs (overlapRegions); other keys take additionalProperties.
	var extras []*fsm.Node
	var patBodies []*fsm.Node
	var patPrefixes []string
	var patOf []int // patOf[i]: the r.patProps index of patBodies[i]
	for pi, pp := range r.patProps {
		cp, err := c.pattern(pp.pat)
		if err != nil {
			return nil, err
		}
		if cp == nil { // lenient mode dropped the pattern: no keys for it
			continue
		}
		b, err := c.encodeString(cp)
		if err != nil {
			return nil, errorf(CodeBadPattern, pp.pat.ptr, "patternProperties", "%v", err)
		}
		patBodies = append(patBodies, b)
		patPrefixes = append(patPrefixes, literalPrefix(cp))
		patOf = append(patOf, pi)
	}
	for i := range patBodies {
		pp := r.patProps[patOf[i]]
		v, err := c.emitList([]sref{pp.s}, pp.s.ptr)
		if err != nil {
			return nil, err
		}
		if v.Op == fsm.OpNoMatch {
			continue
		}
		body := patBodies[i]
		var others []*fsm.Node
		for j, o := range patBodies {
			// Patterns whose keys start with different literal text
			// (^title_… and ^description_…) share no key: subtracting
			// one from the other would only cost a product.
			if j != i && !disjointPrefixes(patPrefixes[i], patPrefixes[j]) {
				others = append(others, o)
			}
		}
		if len(others) > 0 {
			body = fsm.Diff(body, fsm.Alt(others...))
		}
		key := fsm.Cat(fsm.Lit(`"`), body, fsm.Lit(`"`))
		if len(declaredIn[patOf[i]]) > 0 {
			key = fsm.Diff(key, fsm.Alt(declaredIn[patOf[i]]...))
		}
		if nameCP != nil {
			key = fsm.And(key, nameCP)
		}
		extras = append(extras, c.pair(key, v))
		regions = append(regions, region{key: key, list: []sref{pp.s}, ptr: pp.s.ptr})
	}
	overlaps, overlapRegs, err := c.overlapRegions(r, patBodies, patPrefixes, patOf, declaredIn, nameCP)
	if err != nil {
		return nil, err
	}
	extras = append(extras, overlaps...)
	regions = append(regions, overlapRegs...)
	if !r.closed {
		var ev *fsm.Node
		if r.addlSet {
			var err error
			ev, err = c.emitList(r.addl, r.ptr+"/additionalProperties")
			if err != nil {
				return nil, err
			}
		} else if c.opts.Extras == ExtrasForbidden {
			ev = fsm.NoMatch()
		} else {
			ev = c.anyValue(c.opts.AnyValueDepth)
		}
		if ev.Op != fsm.OpNoMatch {
			key := strLang[c.esc()].str
			excl := append(append([]*fsm.Node(nil), declared...), quoteAll(patBodies)...)
			if len(excl) > 0 {
				key = fsm.Diff(key, fsm.Alt(excl...))
			}
			if nameCP != nil {
				key = fsm.And(key, nameCP)
			}
			extras = append(extras, c.pair(key, ev))
			regions = append(regions, region{key: key, list: r.addl, ptr: r.ptr + "/additionalProperties"})
		}
	}
	var extra *fsm.Node
	if len(extras) > 0 {
		extra = fsm.Alt(extras...)
	}
	if len(r.witnesses) > 0 {
		return c.witnessObjects(r, members, regions, extra)
	}
	return c.assemble(r, members, extra), nil
}

// member is one declared property of an object: its key, its pair, and
// the schemas its value takes (list, at ptr).
type member struct {
	key      *fsm.Node
	kv       *fsm.Node
	required bool
	list     []sref
	ptr      string
}

// region is one language of extra keys (a patternProperties pattern's,
// or additionalProperties') and the schemas their values take.
type region struct {
	key  *fsm.Node
	list []sref
	ptr  string
}

// assemble builds the objects of r with these members and extra pairs.
func (c *compiler) assemble(r *ir, members []member, extra *fsm.Node) *fsm.Node {
	nreq := 0
	for _, m := range members {
		if m.required {
			nreq++
		}
	}
	minP, maxP := r.minProps, r.maxProps
	if minP <= nreq {
		minP = 0 // already implied
	}
	if maxP >= 0 && extra == nil && maxP >= len(members) {
		maxP = -1 // cannot be exceeded
	}
	if c.opts.PropertyOrder == OrderAny && len(members) <= fsm.MaxPermMembers {
		kvs := make([]*fsm.Node, len(members))
		req := make([]bool, len(members))
		for i, m := range members {
			kvs[i], req[i] = m.kv, m.required
		}
		// minProperties and maxProperties count members and extras
		// together (PermCount).
		return fsm.Cat(fsm.Lit("{"), c.ws, fsm.PermCount(c.sep, extra, kvs, req, minP, maxP), c.ws, fsm.Lit("}"))
	}
	// capN: counts at or above it behave alike.
	capN := max(1, minP)
	if maxP >= 0 {
		capN = max(capN, maxP+1)
	}
	type key struct{ i, n int }
	memo := map[key]*fsm.Node{}
	var rest func(i, n int) *fsm.Node
	rest = func(i, n int) *fsm.Node {
		if n > capN {
			n = capN
		}
		if maxP >= 0 && n > maxP {
			return fsm.NoMatch()
		}
		k := key{i, n}
		if x, ok := memo[k]; ok {
			return x
		}
		var x *fsm.Node
		if i == len(members) {
			x = c.extras(extra, n, minP, maxP, capN)
		} else {
			m := members[i]
			pre := fsm.Empty()
			if n > 0 {
				pre = c.sep
			}
			present := fsm.Cat(pre, m.kv, rest(i+1, n+1))
			if m.required {
				x = present
			} else {
				x = fsm.Alt(present, rest(i+1, n))
			}
		}
		memo[k] = x
		return x
	}
	body := rest(0, 0)
	if body.Op == fsm.OpNoMatch {
		return body
	}
	return fsm.Cat(fsm.Lit("{"), c.ws, body, c.ws, fsm.Lit("}"))
}

// samePatterns merges the patternProperties entries of r that have the
// same pattern (allOf merges give one per schema merged) into one entry
// whose schema is the allOf of theirs, so that their keys are one region
// instead of an overlap of identical patterns (past maxPatternOverlap
// such keys had no region at all). The merged schema's pointer names
// every entry's, so that it names one combination.
func samePatterns(r *ir) *ir {
	first := map[string]int{}
	var groups [][]patProp
	for _, pp := range r.patProps {
		if i, ok := first[pp.pat.s]; ok {
			groups[i] = append(groups[i], pp)
			continue
		}
		first[pp.pat.s] = len(groups)
		groups = append(groups, []patProp{pp})
	}
	if len(groups) == len(r.patProps) {
		return r
	}
	m := r.clone()
	m.patProps = m.patProps[:0]
	for _, g := range groups {
		if len(g) == 1 {
			m.patProps = append(m.patProps, g[0])
			continue
		}
		vals := make([]*value, len(g))
		ptrs := make([]string, len(g))
		for i, pp := range g {
			vals[i], ptrs[i] = pp.s.v, pp.s.ptr
		}
		m.patProps = append(m.patProps, patProp{pat: g[0].pat, s: sref{object("allOf", array(vals...)), "/$same(" + strings.Join(ptrs, ",") + ")"}})
	}
	return m
}

// pair is one object member: key, colon, and the value deferred (built
// when a generation first writes this key).
func (c *compiler) pair(key, v *fsm.Node) *fsm.Node { return fsm.Cat(key, c.colon, fsm.Defer(v)) }

// extras builds the tail of extra members after n members were written.
func (c *compiler) extras(extra *fsm.Node, n, minP, maxP, capN int) *fsm.Node {
	if extra == nil {
		if n >= minP {
			return fsm.Empty()
		}
		return fsm.NoMatch()
	}
	need := max(0, minP-n)
	var lim int
	if maxP >= 0 {
		lim = maxP - n
		if lim < need {
			return fsm.NoMatch()
		}
	} else {
		lim = -1
	}
	more := fsm.Cat(c.sep, extra)
	if n > 0 {
		return fsm.Repeat(more, need, lim)
	}
	// Nothing written yet: the first extra has no comma.
	if lim == 0 {
		if need == 0 {
			return fsm.Empty()
		}
		return fsm.NoMatch()
	}
	nl := -1
	if lim > 0 {
		nl = lim - 1
	}
	first := fsm.Cat(extra, fsm.Repeat(more, max(0, need-1), nl))
	if need == 0 {
		return fsm.Opt(first)
	}
	return first
}

// arrayNode builds the arrays of r: the prefixItems tuple, then items,
// between minItems and maxItems elements.
func (c *compiler) arrayNode(r *ir) (*fsm.Node, error) {
	if r.uniqueItems && (r.maxItems < 0 || r.maxItems > 1) {
		if n, ok, err := c.uniqueFinite(r); err != nil || ok {
			return n, err
		}
		if err := c.unsupportedKw(r.ptr+"/uniqueItems", "uniqueItems", unsupported["uniqueItems"]); err != nil {
			return nil, err
		}
	}
	pre := make([]*fsm.Node, len(r.prefix))
	for i, p := range r.prefix {
		n, err := c.emitList(p, r.ptr+"/prefixItems/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		pre[i] = fsm.Defer(n)
	}
	var item *fsm.Node
	if r.itemsSet {
		n, err := c.emitList(r.items, r.ptr+"/items")
		if err != nil {
			return nil, err
		}
		item = n
	} else {
		item = c.anyValue(c.opts.AnyValueDepth)
	}
	item = fsm.Defer(item)
	minI, maxI := r.minItems, r.maxItems
	if lim := c.opts.MaxArrayItems; maxI > lim && minI <= lim {
		maxI = lim // sound: only shorter arrays are produced
	}
	k := len(pre)
	elem := func(j int) *fsm.Node {
		if j < k {
			return pre[j]
		}
		return item
	}
	if len(r.contains) > 0 {
		n, err := c.containsArray(r, elem, minI, maxI)
		if err != nil || n != nil {
			return n, err
		}
	}
	var after func(j int) *fsm.Node // after j ≥ 1 elements
	after = func(j int) *fsm.Node {
		if j >= k {
			lim := -1
			if maxI >= 0 {
				lim = maxI - j
				if lim < 0 {
					return fsm.NoMatch()
				}
			}
			return fsm.Repeat(fsm.Cat(c.sep, item), max(0, minI-j), lim)
		}
		var alts []*fsm.Node
		if j >= minI {
			alts = append(alts, fsm.Empty())
		}
		if maxI < 0 || j < maxI {
			alts = append(alts, fsm.Cat(c.sep, elem(j), after(j+1)))
		}
		return fsm.Alt(alts...)
	}
	var alts []*fsm.Node
	if minI == 0 {
		alts = append(alts, fsm.Cat(fsm.Lit("["), c.ws, fsm.Lit("]")))
	}
	if maxI != 0 {
		alts = append(alts, fsm.Cat(fsm.Lit("["), c.ws, elem(0), after(1), c.ws, fsm.Lit("]")))
	}
	return fsm.Alt(alts...), nil
}

// uniqueFinite builds the arrays of r with uniqueItems when its items
// come from a finite domain (an enum or const, each value checked against
// the items schema by the reference validator): the distinct values in any
// order, each at most once, between minItems and maxItems of them, which is
// a counted Perm of the values. JSON Schema compares values by value, and
// each member is one value in its spellings, so no two members are equal.
// It applies without prefixItems or contains; ok is false otherwise, and
// uniqueItems is refused as before.
func (c *compiler) uniqueFinite(r *ir) (*fsm.Node, bool, error) {
	if !r.itemsSet || len(r.prefix) > 0 || len(r.contains) > 0 {
		return nil, false, nil
	}
	it, err := c.collectList(r.items, r.ptr+"/items")
	if err != nil || !it.hasEnum {
		return nil, false, nil
	}
	var cands []*value
	for _, v := range it.enum {
		if it.types&typeOf(v) != 0 && !excluded(cands, v) {
			cands = append(cands, v)
		}
	}
	keep, ok := c.finiteValues(cands, r.items)
	if !ok || len(keep) > fsm.MaxPermMembers {
		return nil, false, nil
	}
	members := make([]*fsm.Node, len(keep))
	for i, v := range keep {
		members[i] = c.valueNode(v)
	}
	return fsm.Cat(fsm.Lit("["), c.ws, fsm.PermCount(c.sep, nil, members, nil, r.minItems, r.maxItems), c.ws, fsm.Lit("]")), true, nil
}

// applyNots folds r's not keywords into r: whole types are removed, leaf
// strings get a complemented code-point language, scalar values are
// excluded. Complement is exact only where our language holds every
// serialization of every value it accepts (strings; null/booleans;
// integers), so anything else is refused.
func (c *compiler) applyNots(r *ir) (*ir, excl, error) {
	r = r.clone()
	var ex excl
	nots := r.nots
	r.nots = nil
	for _, ns := range nots {
		n, err := c.collect(ns, nil)
		if err != nil {
			return nil, ex, err
		}
		fail := func(msg string) error {
			return c.unsupportedKw(ns.ptr, "not", msg)
		}
		if len(n.groups) == 0 && len(n.nots) == 0 && !n.hasEnum && len(n.required) == 1 && onlyRequired(n) {
			// not {required: [p]}: objects lack p; non-objects n accepts
			// are excluded.
			r.types &^= n.types &^ tObj
			if r.types&tObj != 0 && n.types&tObj != 0 {
				if p := r.prop(n.required[0]); p != nil {
					p.s = append(p.s, sref{falseSchema, ns.ptr})
				} else {
					r.props = append(r.props, &prop{name: n.required[0], s: []sref{{falseSchema, ns.ptr}}})
				}
			}
			continue
		}
		if w, ok := c.witnessOf(n, ns.ptr); ok && !r.hasEnum {
			// (An enum's objects are written from the enum, which
			// witnesses do not filter: the finite path decides those.)
			// ¬n: an object with a member failing n's keyword
			// (witness.go); the non-objects n accepts are excluded.
			r.types &^= n.types &^ tObj
			if r.types&tObj != 0 && n.types&tObj != 0 {
				r.witnesses = append(r.witnesses, w)
			}
			continue
		}
		if len(n.groups) > 0 || len(n.nots) > 0 || n.hasStructure() {
			if err := fail("not is supported only on leaf schemas (type, enum/const, string and number keywords)"); err != nil {
				return nil, ex, err
			}
			continue
		}
		strCons := n.minLen > 0 || n.maxLen >= 0 || len(n.patterns) > 0 || len(n.formats) > 0
		numCons := n.lo != nil || n.hi != nil || len(n.mult) > 0
		if n.hasEnum {
			if strCons || numCons {
				if err := fail("not with enum/const plus other keywords is not supported"); err != nil {
					return nil, ex, err
				}
				continue
			}
			for _, v := range n.enum {
				if n.types&typeOf(v) == 0 {
					continue
				}
				switch v.k {
				case kString:
					ex.str = append(ex.str, fsm.Lit(v.str))
				case kNull, kBool:
					ex.vals = append(ex.vals, v)
				case kNumber:
					// Only an integer-only language writes each value one
					// way; elsewhere 2 is also 2.0 and 2.5 also 2.50.
					switch {
					case r.types&tNum == 0:
					case intOnlyNumbers(r):
						if v.isInteger() {
							ex.vals = append(ex.vals, v)
						}
					case r.types&tInt == 0 && v.isInteger():
						// Non-integers only: v is not among them.
					default:
						if err := fail("not of a number value is exact only for integers"); err != nil {
							return nil, ex, err
						}
					}
				default:
					if err := fail("not of an array or object value is not supported"); err != nil {
						return nil, ex, err
					}
				}
			}
			if r.hasEnum { // filter directly
				var keep []*value
				for _, v := range r.enum {
					if !excluded(n.enum, v) {
						keep = append(keep, v)
					}
				}
				r.enum = keep
			}
			continue
		}
		// Families n does not constrain are removed wholesale when n
		// accepts them.
		remove := n.types
		if strCons {
			remove &^= tStr
		}
		if numCons {
			remove &^= tNum
		}
		r.types &^= remove
		if numCons && r.types&tNum != 0 && n.types&tNum != 0 {
			if msg := c.excludeNumbers(r, n, ns.ptr, &ex); msg != "" {
				if err := fail(msg); err != nil {
					return nil, ex, err
				}
			}
		}
		if strCons && r.types&tStr != 0 && n.types&tStr != 0 {
			// A format is excluded by its envelope, which holds every
			// string of the format (the format's own language is a
			// subset, whose complement would take in some of them).
			pn := *n
			pn.formats = nil
			cp, err := c.stringCP(&pn, nil)
			if err != nil {
				return nil, ex, err
			}
			if cp == nil {
				cp = fsm.Repeat(fsm.AnyRune(), n.minLen, n.maxLen)
			}
			for _, f := range n.formats {
				fn, err := c.format(f)
				if err != nil {
					return nil, ex, err
				}
				if fn == nil {
					continue // no constraint on strings (or lenient mode's unknown format)
				}
				env := formatEnvelope(f.s)
				if env == nil {
					if err := fail("not with format " + strconv.Quote(f.s) + " is not supported (formats accept a subset of their syntax, and this one has no envelope to exclude)"); err != nil {
						return nil, ex, err
					}
					env = fn // lenient: exclude the subset, as warned
				}
				cp = fsm.And(cp, env)
			}
			ex.str = append(ex.str, cp)
		}
	}
	return r, ex, nil
}

// disjoint reports whether no JSON value can satisfy both a and b, by
// proofs that hold for the schemas themselves (not just for our
// languages): disjoint types, disjoint finite value sets, or an object
// discriminator (a property required by one side whose values on the two
// sides are provably disjoint).
func (c *compiler) disjoint(a, b *ir, depth int) bool {
	ta, tb := c.reachTypes(a, 2), c.reachTypes(b, 2)
	if ta&tb == 0 {
		return true
	}
	if a.hasEnum || b.hasEnum {
		x, y := a, b
		if !x.hasEnum {
			x, y = y, x
		}
		all := true
		for _, v := range x.enum {
			if ok, known := leafCheck(y, v); ok || !known {
				// v might satisfy y; it only matters if it satisfies x.
				if ok2, known2 := leafCheck(x, v); ok2 || !known2 {
					all = false
					break
				}
			}
		}
		if all {
			return true
		}
	}
	if ta&^tNum == 0 && tb&^tNum == 0 && !intervalsOverlap(a, b) {
		return true
	}
	if ta&tb == tStr && c.stringsDisjoint(a, b) {
		return true
	}
	if ta&tb == tObj && c.keysDisjoint(a, b) {
		return true
	}
	if depth <= 0 {
		return false
	}
	for _, pair := range [][2]*ir{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		if x.types&^tObj != 0 {
			continue
		}
		for _, name := range x.required {
			px, py := x.prop(name), y.prop(name)
			if px != nil && py == nil && len(y.patProps) == 0 && c.forbidsExtras(y) {
				return true // y cannot have the property x requires
			}
			if c.cannotHave(y, name) {
				return true
			}
			if px == nil || py == nil {
				continue
			}
			ix, err1 := c.collectList(px.s, x.ptr)
			iy, err2 := c.collectList(py.s, y.ptr)
			if err1 != nil || err2 != nil {
				continue
			}
			if c.disjoint(ix, iy, depth-1) {
				return true
			}
		}
	}
	return false
}

// reachTypes over-approximates the JSON types of the values r accepts,
// like emitTypes, and also through r's anyOf/oneOf groups (a value has
// the type of some branch of each group), depth groups deep.
func (c *compiler) reachTypes(r *ir, depth int) tset {
	t := emitTypes(r)
	if depth <= 0 || t == 0 {
		return t
	}
	for _, ns := range r.nots {
		// not {type: T}, with no other keyword, removes exactly T.
		if n, err := c.collect(ns, nil); err == nil && len(n.groups) == 0 && len(n.nots) == 0 && !n.hasEnum &&
			len(n.required) == 0 && onlyRequired(n) {
			t &^= n.types
		}
	}
	for _, g := range r.groups {
		var u tset
		for _, a := range g.alts {
			at, ok := c.reachAlt(a, depth-1)
			if !ok {
				return t
			}
			u |= at
		}
		t &= u
	}
	return t
}

// reachAltKey names a group branch's reachTypes: the branch's schema value
// (a record collected from it without a seen set depends on nothing else
// that reachTypes reads) and the depth left.
type reachAltKey struct {
	v     *value
	depth int
}

// reachAltTypes is a memoized reachAlt: the types, and false when the
// branch could not be collected.
type reachAltTypes struct {
	t  tset
	ok bool
}

// reachAlt is reachTypes of group branch a's record, memoized: disjoint
// asks it of both sides of every pair of a group's branches, and each
// branch's groups in turn, so without the memo a branch was collected
// anew for each pair it was in (WashingtonPost's wide anyOf of content
// types: a third of the compile). ok is false when a cannot be collected.
func (c *compiler) reachAlt(a sref, depth int) (tset, bool) {
	k := reachAltKey{a.v, depth}
	if t, ok := c.reachAlts[k]; ok {
		return t.t, t.ok
	}
	var res reachAltTypes
	if ar, err := c.collect(a, nil); err == nil {
		res.t, res.ok = c.reachTypes(ar, depth), true
	}
	if c.reachAlts == nil {
		c.reachAlts = map[reachAltKey]reachAltTypes{}
	}
	c.reachAlts[k] = res
	return res.t, res.ok
}

// keysDisjoint proves that no object satisfies both a and b when both are
// closed, their possible keys (declared names and patternProperties
// languages) are disjoint, and one of them excludes the empty object.
func (c *compiler) keysDisjoint(a, b *ir) bool {
	nonEmpty := func(r *ir) bool { return r.minProps > 0 || len(r.required) > 0 }
	if !nonEmpty(a) && !nonEmpty(b) {
		return false
	}
	keys := func(r *ir) (*fsm.Node, bool) {
		if !c.forbidsExtras(r) || r.closed && len(r.groups) > 0 {
			return nil, false
		}
		var alts []*fsm.Node
		for _, p := range r.props {
			alts = append(alts, fsm.Lit(p.name))
		}
		for _, q := range r.required {
			alts = append(alts, fsm.Lit(q))
		}
		for _, pp := range r.patProps {
			n, err := c.pattern(pp.pat)
			if err != nil || n == nil {
				return nil, false
			}
			alts = append(alts, n)
		}
		return fsm.Alt(alts...), true
	}
	if len(a.patProps) == 0 && len(b.patProps) == 0 {
		// Names only: compare the sets.
		if !c.forbidsExtras(a) || a.closed && len(a.groups) > 0 || !c.forbidsExtras(b) || b.closed && len(b.groups) > 0 {
			return false
		}
		names := map[string]bool{}
		for _, p := range a.props {
			names[p.name] = true
		}
		for _, q := range a.required {
			names[q] = true
		}
		for _, p := range b.props {
			if names[p.name] {
				return false
			}
		}
		for _, q := range b.required {
			if names[q] {
				return false
			}
		}
		return true
	}
	ka, ok1 := keys(a)
	kb, ok2 := keys(b)
	if !ok1 || !ok2 {
		return false
	}
	return c.provedEmpty("keys\x00"+keysKey(a)+"\x01"+keysKey(b), fsm.And(ka, kb))
}

// provedEmpty reports whether n is proven empty within a small budget,
// memoized per compile under key (the languages n is made of).
func (c *compiler) provedEmpty(key string, n *fsm.Node) bool {
	if d, ok := c.strDisjoint[key]; ok {
		return d
	}
	empty, err := c.isEmpty(n)
	d := err == nil && empty
	if c.strDisjoint == nil {
		c.strDisjoint = map[string]bool{}
	}
	c.strDisjoint[key] = d
	return d
}

// keysKey names the key language keysDisjoint reads from r.
func keysKey(r *ir) string {
	var b strings.Builder
	for _, p := range r.props {
		b.WriteString(strconv.Quote(p.name))
	}
	b.WriteByte(0)
	for _, q := range r.required {
		b.WriteString(strconv.Quote(q))
	}
	for _, pp := range r.patProps {
		b.WriteByte(0)
		b.WriteString(pp.pat.s)
	}
	return b.String()
}

// cannotHave reports whether no object r accepts has the property name:
// r is closed and neither declares name nor has a pattern matching it, or
// r has "not": {"required": [name]}.
func (c *compiler) cannotHave(r *ir, name string) bool {
	// unevaluatedProperties: false admits the names the branches of r's
	// groups declare, so it proves nothing while groups remain.
	if r.prop(name) == nil && c.forbidsExtras(r) && !(r.closed && len(r.groups) > 0) {
		matched := false
		for _, pp := range r.patProps {
			ok, err := c.patternMatches(pp.pat, name)
			if err != nil || ok {
				matched = true
				break
			}
		}
		if !matched {
			return true
		}
	}
	for _, ns := range r.nots {
		n, err := c.collect(ns, nil)
		if err == nil && len(n.groups) == 0 && len(n.nots) == 0 && !n.hasEnum && n.types&tObj != 0 &&
			len(n.required) == 1 && n.required[0] == name && onlyRequired(n) {
			return true
		}
	}
	return false
}

// excludeNumbers records in ex what not n (at ptr) removes from r's
// numbers (n has bounds or multipleOf): without multipleOf, n's interval,
// when n holds for every number in it (n is not integer-only) or r writes
// only integers; with multipleOf, on a record that writes only integers
// (each value one way, so the difference is exact), n's multiples in n's
// interval (numberNode decides how: residueLang, exclLang). Otherwise it
// returns why not.
func (c *compiler) excludeNumbers(r, n *ir, ptr string, ex *excl) string {
	intOnly := intOnlyNumbers(r)
	if intOnly && n.types&tInt == 0 {
		return "" // n holds for no integer: it removes nothing
	}
	if len(n.mult) == 0 {
		if n.types&tNum != tNum && !intOnly {
			return "not of integers with bounds is exact only where every number is an integer"
		}
		ex.ranges = append(ex.ranges, numRange{n.lo, n.hi})
		return ""
	}
	if !intOnly {
		if n.types&tNum != tNum {
			return "not of integers with multipleOf is exact only where every number is an integer"
		}
		ex.decs = append(ex.decs, decExcl{lo: n.lo, hi: n.hi, mults: n.mult, ptr: ptr})
		return ""
	}
	e := intExcl{ptr: ptr}
	e.lo, e.hi = intBounds(n.lo, n.hi)
	for _, m := range n.mult {
		// An integer is a multiple of p/q (lowest terms) exactly when
		// it is a multiple of p.
		if k := new(big.Int).Abs(m.Num()); k.Cmp(bigOne) != 0 {
			e.divs = append(e.divs, k)
		}
	}
	if len(e.divs) == 0 {
		ex.ranges = append(ex.ranges, numRange{n.lo, n.hi}) // every integer is a multiple
	} else {
		ex.ints = append(ex.ints, e)
	}
	return ""
}

// numRange is an interval of numbers; a nil bound is none.
type numRange struct{ lo, hi *bound }

// empty reports whether no number lies in the interval.
func (iv numRange) empty() bool {
	if iv.lo == nil || iv.hi == nil {
		return false
	}
	c := iv.lo.r.Cmp(iv.hi.r)
	return c > 0 || c == 0 && (iv.lo.excl || iv.hi.excl)
}

// holdsZero reports whether 0 lies in the interval.
func (iv numRange) holdsZero() bool {
	if iv.lo != nil {
		if c := iv.lo.r.Sign(); c > 0 || c == 0 && iv.lo.excl {
			return false
		}
	}
	if iv.hi != nil {
		if c := iv.hi.r.Sign(); c < 0 || c == 0 && iv.hi.excl {
			return false
		}
	}
	return true
}

// subtractRange removes e from each interval of ivs: what lies below e
// and what lies above it.
func subtractRange(ivs []numRange, e numRange) []numRange {
	var out []numRange
	for _, iv := range ivs {
		if e.lo != nil {
			below := numRange{iv.lo, tighterHi(iv.hi, &bound{r: e.lo.r, excl: !e.lo.excl})}
			if !below.empty() {
				out = append(out, below)
			}
		}
		if e.hi != nil {
			above := numRange{tighterLo(iv.lo, &bound{r: e.hi.r, excl: !e.hi.excl}), iv.hi}
			if !above.empty() {
				out = append(out, above)
			}
		}
	}
	return out
}

// intOnlyNumbers reports whether numberNode writes r's numbers as
// integers only (no fraction allowed, or an integer multipleOf).
func intOnlyNumbers(r *ir) bool {
	if r.types&tFrac == 0 {
		return true
	}
	for _, m := range r.mult {
		if m.IsInt() {
			return true
		}
	}
	return false
}

// emitTypes over-approximates the JSON types of the values r accepts.
func emitTypes(r *ir) tset {
	t := r.types
	if r.hasEnum {
		var e tset
		for _, v := range r.enum {
			e |= typeOf(v)
		}
		t &= e
	}
	return t
}

func quoteAll(bodies []*fsm.Node) []*fsm.Node {
	out := make([]*fsm.Node, len(bodies))
	for i, b := range bodies {
		out[i] = fsm.Cat(fsm.Lit(`"`), b, fsm.Lit(`"`))
	}
	return out
}

// forbidsExtras reports whether r's schema rejects every property it does
// not declare (additionalProperties false or unevaluatedProperties false).
func (c *compiler) forbidsExtras(r *ir) bool {
	if r.closed {
		return true
	}
	if !r.addlSet {
		return false
	}
	a, err := c.collectList(r.addl, r.ptr)
	return err == nil && a.types == 0 && len(a.groups) == 0
}

// intervalsOverlap reports whether the numeric bounds of a and b can hold
// at once.
func intervalsOverlap(a, b *ir) bool {
	lo := tighterLo(a.lo, b.lo)
	hi := tighterHi(a.hi, b.hi)
	if lo == nil || hi == nil {
		return true
	}
	c := lo.r.Cmp(hi.r)
	return c < 0 || c == 0 && !lo.excl && !hi.excl
}

// stringsDisjoint proves two string-only records disjoint by an emptiness
// check of their code-point languages. It is sound because those languages
// are exactly the decoded strings the schemas accept (lengths and ECMA
// patterns are exact) or contain them (a format reads as its envelope,
// formatEnvelope; a format without one is not proven disjoint). A record's
// nots and groups only narrow it, so they are left out (a superset is
// still disjoint); its enum, when it has one, is the alternative of its
// strings. disjoint calls it when the records share no type but string.
func (c *compiler) stringsDisjoint(a, b *ir) bool {
	parts := func(r *ir) ([]*fsm.Node, bool) {
		out := []*fsm.Node{fsm.Repeat(fsm.AnyRune(), r.minLen, r.maxLen)}
		if r.hasEnum {
			var lits []*fsm.Node
			for _, v := range r.enum {
				if v.k == kString {
					lits = append(lits, fsm.Lit(v.str))
				}
			}
			out = append(out, fsm.Alt(lits...))
		}
		for _, p := range r.patterns {
			n, err := c.pattern(p)
			if err != nil || n == nil {
				return nil, false
			}
			out = append(out, n)
		}
		for _, f := range r.formats {
			if !formatConstrainsStrings(f.s) {
				continue
			}
			env := formatEnvelope(f.s)
			if env == nil {
				return nil, false
			}
			out = append(out, env)
		}
		return out, true
	}
	pa, ok1 := parts(a)
	pb, ok2 := parts(b)
	if !ok1 || !ok2 {
		return false
	}
	// Two patterns whose strings start with different literal text
	// ("^BLANK$", "^STRING$") share no string: no product needed.
	for _, x := range pa[1:] {
		for _, y := range pb[1:] {
			if disjointPrefixes(literalPrefix(x), literalPrefix(y)) {
				return true
			}
		}
	}
	return c.provedEmpty(stringsKey(a)+"\x00"+stringsKey(b), fsm.And(append(pa, pb...)...))
}

// stringsKey names the string language stringsDisjoint reads from r: its
// length bounds and its patterns.
func stringsKey(r *ir) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.minLen))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(r.maxLen))
	for _, p := range r.patterns {
		b.WriteByte(0)
		b.WriteString(p.s)
	}
	for _, f := range r.formats {
		b.WriteByte(1)
		b.WriteString(f.s)
	}
	if r.hasEnum {
		b.WriteByte(2)
		for _, v := range r.enum {
			if v.k == kString {
				b.WriteString(strconv.Quote(v.str))
			}
		}
	}
	return b.String()
}

var falseSchema = &value{k: kBool, b: false}

// onlyRequired reports whether required is n's only non-type keyword.
func onlyRequired(n *ir) bool {
	m := *n
	m.required = nil
	return !m.hasStructure() && m.minLen == 0 && m.maxLen < 0 && len(m.patterns) == 0 && len(m.formats) == 0 &&
		m.lo == nil && m.hi == nil && len(m.mult) == 0
}

// literalPrefix returns text that every string of the code-point language
// n starts with (possibly none: ""). It reads only literals at the front
// of concatenations, the common prefix of alternatives and repeats of at
// least one, so it is short of the longest such text, never wrong.
func literalPrefix(n *fsm.Node) string {
	switch n.Op {
	case fsm.OpLiteral:
		return string(n.Lit)
	case fsm.OpConcat:
		var b strings.Builder
		for _, s := range n.Subs {
			switch s.Op {
			case fsm.OpEmpty:
				continue
			case fsm.OpLiteral:
				b.Write(s.Lit)
				continue
			}
			b.WriteString(literalPrefix(s))
			break
		}
		return b.String()
	case fsm.OpAlt:
		if len(n.Subs) == 0 {
			return ""
		}
		p := literalPrefix(n.Subs[0])
		for _, s := range n.Subs[1:] {
			q := literalPrefix(s)
			k := 0
			for k < len(p) && k < len(q) && p[k] == q[k] {
				k++
			}
			p = p[:k]
		}
		return p
	case fsm.OpRepeat:
		if n.Min >= 1 {
			return literalPrefix(n.Subs[0])
		}
	}
	return ""
}

// disjointPrefixes reports whether languages whose strings start with p
// and with q respectively can share no string: neither prefix extends the
// other.
func disjointPrefixes(p, q string) bool {
	return !strings.HasPrefix(p, q) && !strings.HasPrefix(q, p)
}

// maxPatternOverlap bounds the patternProperties patterns whose overlaps
// are enumerated (2^n subsets); with more, a key matching several patterns
// is not produced (a sound under-approximation).
const maxPatternOverlap = 6

// overlapRegions returns the key-value pairs of the keys that match two or
// more patternProperties patterns: for each set S of patterns, the keys
// matching every pattern of S and no other, each with the conjunction of
// S's schemas (a key must validate against every pattern it matches).
// Sets whose keys are proven empty, or that contain two patterns with
// different literal prefixes, are skipped. bodies are the patterns'
// encoded JSON string bodies, prefixes their literal prefixes, patOf their
// r.patProps indices, declaredIn[i] the declared keys pattern i matches.
func (c *compiler) overlapRegions(r *ir, bodies []*fsm.Node, prefixes []string, patOf []int, declaredIn [][]*fsm.Node, nameCP *fsm.Node) (out []*fsm.Node, regs []region, err error) {
	n := len(bodies)
	if n < 2 || n > maxPatternOverlap {
		return nil, nil, nil
	}
	for set := 1; set < 1<<n; set++ {
		if bits.OnesCount(uint(set)) < 2 {
			continue
		}
		var in, others []*fsm.Node
		var list []sref
		var decl []*fsm.Node
		ok := true
		for j := 0; j < n && ok; j++ {
			if set&(1<<j) == 0 {
				continue
			}
			for k := j + 1; k < n; k++ {
				if set&(1<<k) != 0 && disjointPrefixes(prefixes[j], prefixes[k]) {
					ok = false
				}
			}
			in = append(in, bodies[j])
			list = append(list, r.patProps[patOf[j]].s)
			decl = append(decl, declaredIn[patOf[j]]...)
		}
		if !ok {
			continue
		}
		for j := 0; j < n; j++ {
			if set&(1<<j) != 0 {
				continue
			}
			near := true // j may share keys with every pattern of the set
			for k := 0; k < n; k++ {
				if set&(1<<k) != 0 && disjointPrefixes(prefixes[j], prefixes[k]) {
					near = false
				}
			}
			if near {
				others = append(others, bodies[j])
			}
		}
		body := fsm.And(in...)
		if len(others) > 0 {
			body = fsm.Diff(body, fsm.Alt(others...))
		}
		empty, err := c.isEmpty(body)
		if err == nil && empty {
			continue
		}
		v, err := c.emitList(list, r.ptr+"/patternProperties")
		if err != nil {
			return nil, nil, err
		}
		if v.Op == fsm.OpNoMatch {
			continue
		}
		key := fsm.Cat(fsm.Lit(`"`), body, fsm.Lit(`"`))
		if len(decl) > 0 {
			key = fsm.Diff(key, fsm.Alt(decl...))
		}
		if nameCP != nil {
			key = fsm.And(key, nameCP)
		}
		out = append(out, c.pair(key, v))
		regs = append(regs, region{key: key, list: list, ptr: r.ptr + "/patternProperties"})
	}
	return out, regs, nil
}
