package grammar

import (
	"strconv"
	"strings"

	"conform/fsm"
)

// contains, minContains and maxContains: counting the items that match a
// schema is regular. Each element of an array is either counted (its
// language is the element's schema and the contains schema C, compiled
// together) or not; the array is the elements in order with the number
// counted between minContains (default 1) and maxContains. With no
// maximum an uncounted element is any element (a counted one may pass
// for uncounted: the array still holds enough matches). With a maximum an
// uncounted element must fail C, so its language is the element's schema
// and the negation of C (negateIf); a C whose negation is not exact makes
// maxContains a refusal. The automaton carries the position (for
// prefixItems and minItems/maxItems) and the count, each capped where
// larger values behave alike, so it has at most (positions × counts)
// continuations.

// containsKw is one contains keyword and the bounds read with it.
type containsKw struct {
	s        sref
	min, max int // max < 0: none
}

// kwContainsAny is contains (at least one item) in every draft. Only
// negations this package synthesizes write it (¬items in a draft-4
// document, where contains is not a keyword), and only into schemas it
// compiles itself: never into the document, which the finite-domain
// validator reads and would take it for an unknown keyword.
const kwContainsAny = "$conform:contains"

// containsDialects: what contains means in the document's draft.
const (
	containsCounts = iota // 2019-09 and later (the default): minContains, maxContains
	containsOnly          // drafts 6 and 7: contains, at least one
	containsNone          // drafts 3 and 4: not a keyword
)

func containsDialect(root *value) int {
	s := root.get("$schema")
	if s == nil || s.k != kString {
		return containsCounts
	}
	switch {
	case strings.Contains(s.str, "draft-03"), strings.Contains(s.str, "draft-04"):
		return containsNone
	case strings.Contains(s.str, "draft-06"), strings.Contains(s.str, "draft-07"):
		return containsOnly
	}
	return containsCounts
}

// maxContainsCount bounds minContains/maxContains: each count is a copy of
// the array's continuation.
const maxContainsCount = 64

// containsArray builds the arrays of r when r has a contains keyword.
// elem(j) is element j's plain (deferred) language; minI, maxI the item
// bounds after MaxArrayItems.
func (c *compiler) containsArray(r *ir, elem func(int) *fsm.Node, minI, maxI int) (*fsm.Node, error) {
	ck := r.contains[0]
	distinct := []containsKw{ck}
	for _, o := range r.contains[1:] {
		if o.min != ck.min || o.max != ck.max || o.s.ptr != ck.s.ptr && !equalValues(o.s.v, ck.s.v) {
			distinct = append(distinct, o)
		}
	}
	if len(distinct) > 1 {
		if n, ok, err := c.containsEach(r, distinct, elem, minI, maxI); ok || err != nil {
			return n, err
		}
		if err := c.unsupportedKw(distinct[1].s.ptr, "contains", "two contains keywords on one array (through allOf or $ref) are supported only as at least one match each (no minContains above 1, no maxContains), at most "+strconv.Itoa(maxContainsEach)+" of them"); err != nil {
			return nil, err
		}
	}
	minC, maxC := ck.min, ck.max
	if maxC >= 0 && maxI >= 0 && maxC >= maxI {
		maxC = -1 // cannot be exceeded
	}
	if minC == 0 && maxC < 0 {
		return nil, nil // vacuous: the plain array
	}
	if minC > maxContainsCount || maxC > maxContainsCount {
		return nil, errorf(CodeTooLarge, ck.s.ptr, "contains", "minContains/maxContains above %d are not supported", maxContainsCount)
	}
	if maxC >= 0 && minC > maxC || maxI >= 0 && minC > maxI {
		return fsm.NoMatch(), nil
	}
	k := len(r.prefix)
	schemas := r.elementSchemas
	type lang struct{ counted, other *fsm.Node }
	langs := make([]lang, k+1) // by position, k standing for every j ≥ k
	for j := range langs {
		list := schemas(j)
		cn, err := c.emitList(append(append([]sref(nil), list...), ck.s), ck.s.ptr)
		if err != nil {
			return nil, err
		}
		langs[j] = lang{counted: fsm.Defer(cn), other: elem(j)}
	}
	if maxC >= 0 && !c.negatedElements(ck, schemas, len(langs), func(j int, n *fsm.Node) { langs[j].other = fsm.Defer(n) }) {
		if err := c.unsupportedKw(ck.s.ptr, "maxContains", "maxContains needs a contains schema whose negation is exact (type, enum/const, string, number and size keywords, required, properties)"); err != nil {
			return nil, err
		}
		maxC = -1 // lenient: the maximum is not enforced
		if minC == 0 {
			return nil, nil
		}
	}
	langAt := func(j int) (lang, error) { return langs[min(j, k)], nil }
	// Positions past the prefix and minItems (and counts past minContains
	// with no maximum) behave alike when there is no maxItems.
	capC := minC
	if maxC >= 0 {
		capC = maxC + 1
	}
	capJ := max(k, minI, 1)
	// tail(n) is the rest of an array with no maxItems from position capJ
	// on, n counted so far: uncounted elements loop, counted ones step.
	tails := map[int]*fsm.Node{}
	var tail func(n int) (*fsm.Node, error)
	tail = func(n int) (*fsm.Node, error) {
		n = min(n, capC)
		if maxC >= 0 && n > maxC {
			return fsm.NoMatch(), nil
		}
		if x, ok := tails[n]; ok {
			return x, nil
		}
		l, err := langAt(capJ)
		if err != nil {
			return nil, err
		}
		var x *fsm.Node
		if maxC < 0 && n >= minC {
			x = fsm.Star(fsm.Cat(c.sep, fsm.Alt(l.other, l.counted)))
		} else {
			var alts []*fsm.Node
			if n >= minC {
				alts = append(alts, fsm.Empty())
			}
			next, err := tail(n + 1)
			if err != nil {
				return nil, err
			}
			alts = append(alts, fsm.Cat(c.sep, l.counted, next))
			x = fsm.Cat(fsm.Star(fsm.Cat(c.sep, l.other)), fsm.Alt(alts...))
		}
		tails[n] = x
		return x, nil
	}
	type key struct{ j, n int }
	memo := map[key]*fsm.Node{}
	var rest func(j, n int) (*fsm.Node, error)
	rest = func(j, n int) (*fsm.Node, error) {
		n = min(n, capC)
		if maxC >= 0 && n > maxC {
			return fsm.NoMatch(), nil
		}
		if maxI < 0 && j >= capJ {
			return tail(n)
		}
		kk := key{j, n}
		if x, ok := memo[kk]; ok {
			return x, nil
		}
		var alts []*fsm.Node
		if j >= minI && n >= minC {
			alts = append(alts, fsm.Empty())
		}
		if maxI < 0 || j < maxI {
			l, err := langAt(j)
			if err != nil {
				return nil, err
			}
			pre := fsm.Empty()
			if j > 0 {
				pre = c.sep
			}
			yes, err := rest(j+1, n+1)
			if err != nil {
				return nil, err
			}
			no, err := rest(j+1, n)
			if err != nil {
				return nil, err
			}
			alts = append(alts, fsm.Cat(pre, fsm.Alt(fsm.Cat(l.counted, yes), fsm.Cat(l.other, no))))
		}
		x := fsm.Alt(alts...)
		memo[kk] = x
		return x, nil
	}
	body, err := rest(0, 0)
	if err != nil {
		return nil, err
	}
	if body.Op == fsm.OpNoMatch {
		return body, nil
	}
	return fsm.Cat(fsm.Lit("["), c.ws, body, c.ws, fsm.Lit("]")), nil
}

// elementSchemas returns the schemas element j of r's arrays must satisfy:
// its prefixItems entry, else items (none: any value).
func (r *ir) elementSchemas(j int) []sref {
	if j < len(r.prefix) {
		return r.prefix[j]
	}
	if r.itemsSet {
		return r.items
	}
	return nil
}

// maxContainsEach bounds the contains keywords containsEach combines: the
// automaton tracks which of them an item has matched so far (a subset),
// and each element may match any non-empty subset at once.
const maxContainsEach = 4

// containsEach builds the arrays of r for several contains keywords that
// each ask for at least one matching item (no maxContains: what ¬items
// writes, through a oneOf's negations): the elements in order, each either
// plain or counted for a non-empty subset T of the keywords (its schema
// with every C in T), and the array accepted once every keyword is
// counted. An item matching two keywords may count for both, so [x] can
// satisfy C1 and C2. ok is false when the keywords are not of that kind.
func (c *compiler) containsEach(r *ir, cks []containsKw, elem func(int) *fsm.Node, minI, maxI int) (*fsm.Node, bool, error) {
	if len(cks) > maxContainsEach {
		return nil, false, nil
	}
	for _, ck := range cks {
		if ck.min != 1 || ck.max >= 0 && (maxI < 0 || ck.max < maxI) {
			return nil, false, nil
		}
	}
	k := len(r.prefix)
	full := 1<<len(cks) - 1
	// counted[j][T]: element j (k for every j ≥ k) matching every
	// keyword in T.
	counted := make([][]*fsm.Node, k+1)
	for j := range counted {
		counted[j] = make([]*fsm.Node, full+1)
		for t := 1; t <= full; t++ {
			list := append([]sref(nil), r.elementSchemas(j)...)
			for i, ck := range cks {
				if t&(1<<i) != 0 {
					list = append(list, ck.s)
				}
			}
			n, err := c.emitList(list, cks[0].s.ptr)
			if err != nil {
				return nil, false, err
			}
			counted[j][t] = fsm.Defer(n)
		}
	}
	capJ := max(k, minI, 1)
	tails := map[int]*fsm.Node{}
	var tail func(seen int) (*fsm.Node, error)
	tail = func(seen int) (*fsm.Node, error) {
		if x, ok := tails[seen]; ok {
			return x, nil
		}
		if seen == full {
			x := fsm.Star(fsm.Cat(c.sep, elem(k)))
			tails[seen] = x
			return x, nil
		}
		// Plain elements loop; a counted one moves to a larger set.
		var alts []*fsm.Node
		for t := 1; t <= full; t++ {
			if t&^seen == 0 {
				continue
			}
			x, err := tail(seen | t)
			if err != nil {
				return nil, err
			}
			alts = append(alts, fsm.Cat(c.sep, counted[k][t], x))
		}
		x := fsm.Cat(fsm.Star(fsm.Cat(c.sep, elem(k))), fsm.Alt(alts...))
		tails[seen] = x
		return x, nil
	}
	type key struct{ j, seen int }
	memo := map[key]*fsm.Node{}
	var rest func(j, seen int) (*fsm.Node, error)
	rest = func(j, seen int) (*fsm.Node, error) {
		if maxI < 0 && j >= capJ {
			return tail(seen)
		}
		kk := key{j, seen}
		if x, ok := memo[kk]; ok {
			return x, nil
		}
		var alts []*fsm.Node
		if j >= minI && seen == full {
			alts = append(alts, fsm.Empty())
		}
		if maxI < 0 || j < maxI {
			// Element j, plain or counted for a subset that adds to
			// seen.
			at := min(j, k)
			var elems []*fsm.Node
			for t := 1; t <= full; t++ {
				if t&^seen == 0 {
					continue // adds nothing: the plain element covers it
				}
				x, err := rest(j+1, seen|t)
				if err != nil {
					return nil, err
				}
				elems = append(elems, fsm.Cat(counted[at][t], x))
			}
			x, err := rest(j+1, seen)
			if err != nil {
				return nil, err
			}
			elems = append(elems, fsm.Cat(elem(at), x))
			pre := fsm.Empty()
			if j > 0 {
				pre = c.sep
			}
			alts = append(alts, fsm.Cat(pre, fsm.Alt(elems...)))
		}
		x := fsm.Alt(alts...)
		memo[kk] = x
		return x, nil
	}
	body, err := rest(0, 0)
	if err != nil {
		return nil, false, err
	}
	if body.Op == fsm.OpNoMatch {
		return body, true, nil
	}
	return fsm.Cat(fsm.Lit("["), c.ws, body, c.ws, fsm.Lit("]")), true, nil
}

// negatedElements compiles, for each of the n element positions, the
// element's schemas with the negation of the contains schema, and hands
// each language to set. It reports false, having set nothing, when the
// negation is not exact: negateIf fails, or compiling it is refused or
// warns (lenient mode would drop part of it, and an uncounted element
// could then match).
func (c *compiler) negatedElements(ck containsKw, schemas func(int) []sref, n int, set func(int, *fsm.Node)) bool {
	nv, ok := negateIf(c.root, ck.s.v, 0)
	if !ok {
		return false
	}
	neg := sref{nv, ck.s.ptr + segContainsNot}
	nw := len(c.warnings)
	out := make([]*fsm.Node, n)
	for j := range out {
		on, err := c.emitList(append(append([]sref(nil), schemas(j)...), neg), neg.ptr)
		if err != nil || len(c.warnings) > nw {
			c.warnings = c.warnings[:nw]
			return false
		}
		out[j] = on
	}
	for j, on := range out {
		set(j, on)
	}
	return true
}

// segContainsNot is the pointer segment of the negated contains schema.
const segContainsNot = "/$containsNot"
