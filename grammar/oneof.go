package grammar

// Overlapping oneOf branches.
//
// emitGroup compiles a oneOf as an anyOf when its branches are proven
// disjoint. When they are not, four rewrites are tried, in this
// order, before the group is refused:
//
//   - Presence tests. Every branch differs from the merged parent only by
//     "required" and by "not": {"required": [k]} (a property that must be
//     absent). On objects, branch i then holds iff its required names are
//     present and its forbidden names absent, so "exactly one branch" is
//     branch i ∧ for every other branch j "some name of R_j absent or some
//     name of N_j present", expanded into a bounded disjunction (DNF) of
//     records where "k absent" is properties {k: false} and "k present" is
//     required [k]. required and not-required say nothing about other
//     types: a non-object value is kept for exactly the types that one
//     branch alone admits.
//   - Finite branches. Branches whose merged record is finite (enum or
//     const) contribute the listed values that the reference validator
//     accepts against the whole position (oneOf included, so "exactly one"
//     is decided by the validator); the other branches, which must be
//     pairwise disjoint, contribute their language minus all those listed
//     values (the exclusion goes through applyNots, so it is exact or
//     refused). A listed value that validates only through another branch
//     is still produced, by the finite part, so nothing is lost.
//
//   - A discriminator. Object branches that all declare one property
//     with pairwise disjoint values (a "kind" with a different enum in
//     each, required or not): an object that has it satisfies at most the
//     branch its value selects (oneOfDiscriminated). Objects without it
//     get the negation below when it compiles and are left out otherwise,
//     a sound under-approximation like the negation's own.
//   - Negation. Otherwise, when every branch can be negated exactly
//     (negateIf, see oneof_ifthen.go), branch i becomes branch i and the
//     negation of every other branch. The negations are anyOf groups that
//     emitGroup distributes, so the automaton can grow quickly; the work
//     budget and the fsm limits bound it (the exact attempt gets
//     1/exactShare of the budget). When a branch has a property whose
//     schema cannot be negated, or the exact attempt does not compile
//     (a budget, or a refusal inside a definition it reaches), a second
//     attempt negates that property only by its absence: a sound
//     under-approximation (see oneOfNegated), the one place here that is
//     not exact.
//
// The rewrites keep every branch a plain record, so each branch is still
// one fixed-order object.

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"conform/fsm"
)

// emitOneOfOverlap tries the exact rewrites for a oneOf group g whose
// branches overlap. r is the record the group belongs to, base r without
// the group, subs the branches merged with base, ars the branches alone.
// ok is false when no rewrite applies; the caller then refuses the group
// as before. An error from compiling a rewritten branch is returned as is
// (it is the real cause), unless it comes from a negation this file
// synthesized, which only means the rewrite does not apply.
func (c *compiler) emitOneOfOverlap(r *ir, g group, base *ir, subs, ars []*ir) (*fsm.Node, bool, error) {
	nw := len(c.warnings)
	n, ok, err := c.oneOfPresence(base, subs, ars)
	if err == nil && !ok {
		n, ok, err = c.oneOfFinite(r, subs)
	}
	if err == nil && !ok {
		n, ok, err = c.oneOfDiscriminated(g, subs)
	}
	// The negations: exact first, then the under-approximations. A
	// negation that cannot be compiled (a budget, or a keyword refused
	// inside it, also inside a definition it reaches through $ref, whose
	// pointer no longer says it was synthesized) leaves the next mode to
	// try; when none compiles, the first error that is not about a
	// synthesized schema or a budget is the group's (else its refusal).
	var firstErr error
	for _, mode := range []negMode{negExact, negUnderExtras, negUnder} {
		if err != nil || ok {
			break
		}
		work, budget := c.work, c.opts.MaxNodes
		share := 0
		switch mode {
		case negExact:
			share = exactShare
		case negUnderExtras:
			share = extrasShare
		}
		if share > 0 && work+c.opts.MaxNodes/share < budget {
			// The exact try and the first under try each get a share
			// of the budget; the next gets back what a failed one
			// spent.
			c.opts.MaxNodes = work + c.opts.MaxNodes/share
		}
		n, ok, err = c.oneOfNegated(g, subs, mode)
		c.opts.MaxNodes = budget
		if err != nil {
			var ge *Error
			if firstErr == nil && !synthetic(err) && !(errors.As(err, &ge) && ge.Code == CodeTooLarge) {
				firstErr = err // a budget says more of the attempt than of the group
			}
			c.warnings = c.warnings[:nw]
			err, ok = nil, false
			c.work = work
		}
	}
	if err == nil && !ok {
		err = firstErr
	}
	if err != nil && synthetic(err) {
		err, ok = nil, false
	}
	if err != nil || !ok {
		c.warnings = c.warnings[:nw]
		return nil, false, err
	}
	return n, true, nil
}

// objectAlternative reports whether the negation n has an alternative
// about objects (a name absent or present), at its top or in its top
// anyOf.
func objectAlternative(n *value) bool {
	if t := n.get("type"); t != nil && t.k == kString && t.str == "object" {
		return true
	}
	if any := n.get("anyOf"); any != nil && any.k == kArray {
		for _, a := range any.arr {
			if objectAlternative(a) {
				return true
			}
		}
	}
	return false
}

// The exact attempt of a group may spend at most 1/exactShare of the work
// budget, the negUnderExtras attempt 1/extrasShare; negUnder, tried when
// both fail, gets the rest. On MaskBench the exact negations that compile
// spend 11-372 units and the ones that fail spend what they are given
// (helm-testsuite: 16,667 at a third, 91 → 148 ms to the first mask).
const (
	exactShare  = 16
	extrasShare = 3
)

// Pointer segments of the schemas this file synthesizes.
const (
	segFinite = "/$oneOfFinite"
	segNot    = "/$oneOfNot/"
	segDisc   = "/$oneOfDisc/"
)

func synthetic(err error) bool {
	var e *Error
	return errors.As(err, &e) && (strings.Contains(e.Pointer, segFinite) || strings.Contains(e.Pointer, segNot) ||
		strings.Contains(e.Pointer, segDisc))
}

// oneOfNegated is the general rewrite: branch i becomes branch i and the
// negation of every other branch (negateIn, in the context of branch i's
// possible keys when it is closed), so that exactly one holds. In the
// under modes (tried when the exact negations fail, negUnderExtras first)
// a property whose schema cannot be negated counts as failing its branch
// only when absent, and keys the context cannot list are not counted as
// failing additionalProperties or patternProperties: sound, and exact but
// for objects that carry another branch's property (or extra key) with a
// value that branch rejects. It is used only when each negation keeps an alternative
// about objects, so that branch i is not emptied by dropped alternatives.
// It applies when every branch can be negated exactly; the negations are
// anyOf groups, which emitGroup distributes within the work budget.
func (c *compiler) oneOfNegated(g group, subs []*ir, mode negMode) (*fsm.Node, bool, error) {
	under := mode.under()
	var alts []*fsm.Node
	for i, s := range subs {
		if s.types == 0 {
			continue
		}
		// A closed branch has only its declared keys, which lets the
		// other branches' additionalProperties be negated.
		var keys *[]string
		if s.types&tObj == 0 {
			keys = &[]string{}
		} else if len(s.patProps) == 0 && c.forbidsExtras(s) {
			var ks []string
			for _, p := range s.props {
				ks = append(ks, p.name)
			}
			for _, q := range s.required {
				if s.prop(q) == nil {
					ks = append(ks, q)
				}
			}
			keys = &ks
		}
		m := s
		for j, a := range g.alts {
			if j == i {
				continue
			}
			nv, ok := negateIn(c.root, a.v, 0, keys, mode)
			if !ok {
				return nil, false, nil
			}
			if under && s.types&tObj != 0 && !objectAlternative(nv) {
				// The under-approximated negation of branch j says
				// nothing about objects (only "not an object"), which
				// would leave branch i's objects empty.
				return nil, false, nil
			}
			seg := segNot // a pointer per mode: compiled nodes are memoized by pointer
			switch mode {
			case negUnder:
				seg += "u"
			case negUnderExtras:
				seg += "ux"
			case negListed:
				seg += "l"
			}
			nv, ptr, live := c.dropDisjoint(s, nv, g.ptr+seg+strconv.Itoa(i)+"/"+strconv.Itoa(j))
			if !live {
				// No value of branch i fails branch j: branch i
				// adds nothing.
				m = nil
				break
			}
			nr, err := c.collect(sref{nv, ptr}, nil)
			if err != nil {
				return nil, false, nil
			}
			m = merge(m, nr)
		}
		if m == nil {
			continue
		}
		m.ptr = s.ptr
		n, err := c.emitIR(m)
		if err != nil {
			return nil, false, err
		}
		alts = append(alts, n)
	}
	return fsm.Alt(alts...), true, nil
}

// dropDisjoint removes from the negation nv (a schema, or an anyOf of
// alternatives) the alternatives that no value of branch s satisfies, by
// disjoint's proofs, so that the conjunction of many negations is not
// distributed over alternatives that are empty anyway. live is false when
// none is left (every value of s satisfies the negated branch too). ptr
// names nv; the result is named ptr when nothing was dropped and ptr +
// "/$kept" otherwise (compiled nodes are memoized by pointer).
func (c *compiler) dropDisjoint(s *ir, nv *value, ptr string) (_ *value, _ string, live bool) {
	alts := []*value{nv}
	if any := nv.get("anyOf"); nv.k == kObject && len(nv.keys) == 1 && any != nil && any.k == kArray {
		alts = any.arr
	}
	var kept []*value
	changed := false
	for k, a := range alts {
		ar, err := c.collect(sref{a, ptr + "/$alt" + strconv.Itoa(k)}, nil)
		if err == nil && c.disjoint(s, ar, 3) {
			continue
		}
		if c.itemsFail(s, a, ptr+"/$alt"+strconv.Itoa(k)) {
			// Every item of s fails X: "an item fails X" is "an item".
			a, changed = object("type", str("array"), "minItems", number(1)), true
		}
		kept = append(kept, a)
	}
	switch {
	case len(kept) == 0:
		return nil, "", false
	case len(kept) == len(alts) && !changed:
		return nv, ptr, true
	case len(kept) == 1:
		return kept[0], ptr + "/$kept", true
	}
	return object("anyOf", array(kept...)), ptr + "/$kept", true
}

// itemsFail reports whether a is the negation of an items schema,
// {"type": "array", "contains": {"not": X}} (negateIn's), and every item
// branch s admits fails X by disjoint's proofs: then on s's arrays a holds
// exactly for the non-empty ones. Without this, a oneOf of arrays of
// disjoint enums (which overlap only in []) gets one contains per other
// branch, more than an array may carry.
func (c *compiler) itemsFail(s *ir, a *value, ptr string) bool {
	if a.k != kObject || len(a.keys) != 2 || a.get("type") == nil || a.get("type").str != "array" || !s.itemsSet || len(s.prefix) > 0 {
		return false
	}
	ck := a.get("contains")
	if ck == nil {
		ck = a.get(kwContainsAny)
	}
	if ck == nil || ck.k != kObject || len(ck.keys) != 1 || ck.get("not") == nil {
		return false
	}
	x, err := c.collect(sref{ck.get("not"), ptr + "/contains/not"}, nil)
	if err != nil {
		return false
	}
	var items *ir
	for k, it := range s.items {
		r, err := c.collect(it, nil)
		if err != nil {
			return false
		}
		if k == 0 {
			items = r
		} else {
			items = merge(items, r)
		}
	}
	return items != nil && c.disjoint(items, x, 3)
}

// maxDiscBranches bounds the branches oneOfDiscriminated compares pairwise.
const maxDiscBranches = 64

// oneOfDiscriminated is the rewrite for object branches told apart by one
// property that none of them requires (a "kind" with a different enum in
// each, often optional): a property d that every branch declares, with
// values pairwise disjoint between branches. An object that has d fails
// every branch but the one whose d admits its value, so there "exactly
// one" is that branch with d required. Objects without d are the oneOf of
// the branches with d absent: the general negation is tried on them with a
// third of the work left (the d alternatives of the negations drop out,
// dropDisjoint), and when it cannot be compiled they are left out. That
// and leaving out values that are not objects (where the branches do not
// tell each other apart) are sound under-approximations: every value the
// result accepts satisfies exactly one branch.
func (c *compiler) oneOfDiscriminated(g group, subs []*ir) (*fsm.Node, bool, error) {
	var live []int
	for i, s := range subs {
		if s.types == 0 {
			continue
		}
		if s.types&tObj == 0 {
			return nil, false, nil
		}
		live = append(live, i)
	}
	if len(live) < 2 || len(live) > maxDiscBranches {
		return nil, false, nil
	}
	d, ok := c.discriminator(subs, live)
	if !ok {
		return nil, false, nil
	}
	var alts []*fsm.Node
	absent := make([]*ir, len(subs))
	for _, i := range live {
		ptr := g.ptr + segDisc + strconv.Itoa(i)
		has, err := c.collect(sref{object("type", str("object"), "required", array(str(d))), ptr + "/has"}, nil)
		if err != nil {
			return nil, false, err
		}
		m := merge(subs[i], has)
		m.ptr = subs[i].ptr
		n, err := c.emitIR(m)
		if err != nil {
			return nil, false, err
		}
		alts = append(alts, n)
		lacks, err := c.collect(sref{object("type", str("object"), "not", object("required", array(str(d)))), ptr + "/lacks"}, nil)
		if err != nil {
			return nil, false, err
		}
		absent[i] = merge(subs[i], lacks)
		absent[i].ptr = subs[i].ptr
	}
	for i := range absent {
		if absent[i] == nil {
			absent[i] = subs[i] // types 0: skipped
		}
	}
	work, budget, nw := c.work, c.opts.MaxNodes, len(c.warnings)
	c.opts.MaxNodes = work + (budget-work)/extrasShare
	n, ok, err := c.oneOfNegated(g, absent, negListed)
	c.opts.MaxNodes = budget
	switch {
	case err != nil && !synthetic(err):
		return nil, false, err
	case err == nil && ok:
		alts = append(alts, n)
	default:
		c.warnings, c.work = c.warnings[:nw], work
	}
	return fsm.Alt(alts...), true, nil
}

// discriminator returns a property name that each of the branches subs[i],
// i in live, declares, with values that are pairwise disjoint between
// them.
func (c *compiler) discriminator(subs []*ir, live []int) (string, bool) {
	first := subs[live[0]]
next:
	for _, p := range first.props {
		vals := make([]*ir, 0, len(live))
		for _, i := range live {
			q := subs[i].prop(p.name)
			if q == nil {
				continue next
			}
			v, err := c.collectList(q.s, subs[i].ptr)
			if err != nil || v.types == 0 {
				continue next
			}
			vals = append(vals, v)
		}
		for a := range vals {
			for b := a + 1; b < len(vals); b++ {
				if !c.disjoint(vals[a], vals[b], 1) {
					continue next
				}
			}
		}
		return p.name, true
	}
	return "", false
}

// presence is a branch reduced to presence tests: the types it admits for
// non-objects, whether it admits objects, and the names objects must have
// (req) and must lack (forbid).
type presence struct {
	nonObj tset
	obj    bool
	req    []string
	forbid []string
}

// presenceOf reduces a branch to presence tests, or returns false when it
// has any other keyword.
func (c *compiler) presenceOf(a *ir) (presence, bool) {
	var p presence
	if len(a.groups) > 0 || a.hasEnum || !onlyRequired(a) {
		return p, false
	}
	p.nonObj = a.types &^ tObj
	p.obj = a.types&tObj != 0
	p.req = a.required
	for _, ns := range a.nots {
		n, err := c.collect(ns, nil)
		if err != nil || len(n.groups) > 0 || len(n.nots) > 0 || n.hasEnum || len(n.required) != 1 || !onlyRequired(n) {
			return p, false
		}
		p.nonObj &^= n.types
		if n.types&tObj != 0 {
			p.forbid = append(p.forbid, n.required[0])
		}
	}
	return p, true
}

// lit is one presence test of the expansion: name present or absent.
type lit struct {
	name    string
	present bool
}

// oneOfPresence is the presence-test rewrite (see the file comment).
func (c *compiler) oneOfPresence(base *ir, subs, ars []*ir) (*fsm.Node, bool, error) {
	ps := make([]presence, len(ars))
	tests := false
	for i, a := range ars {
		p, ok := c.presenceOf(a)
		if !ok {
			return nil, false, nil
		}
		ps[i] = p
		tests = tests || len(p.req) > 0 || len(p.forbid) > 0
	}
	if !tests {
		return nil, false, nil // type-only branches: not a presence rewrite
	}
	var alts []*fsm.Node
	// Non-objects: the types exactly one branch admits.
	var nonObj tset
	for _, t := range []tset{tNull, tBool, tInt, tFrac, tStr, tArr} {
		cnt := 0
		for _, p := range ps {
			if p.nonObj&t != 0 {
				cnt++
			}
		}
		if cnt == 1 {
			nonObj |= t
		}
	}
	if nonObj&base.types != 0 {
		m := base.clone()
		m.types &= nonObj
		n, err := c.emitIR(m)
		if err != nil {
			return nil, false, err
		}
		alts = append(alts, n)
	}
	// Objects: branch i and, for every other branch j admitting objects,
	// one of its presence tests failing.
	for i, p := range ps {
		if !p.obj || base.types&tObj == 0 {
			continue
		}
		fixed := map[string]bool{} // name → must be present
		for _, k := range base.required {
			fixed[k] = true
		}
		for _, k := range p.req {
			fixed[k] = true
		}
		conflict := false
		for _, k := range p.forbid {
			if fixed[k] {
				conflict = true
			}
			fixed[k] = false
		}
		if conflict {
			continue
		}
		var options [][]lit
		dead := false
		for j, q := range ps {
			if j == i || !q.obj {
				continue
			}
			implied := false
			for _, k := range q.req {
				if v, ok := fixed[k]; ok && !v {
					implied = true // k is already absent: j fails
				}
			}
			for _, k := range q.forbid {
				if fixed[k] {
					implied = true // k is already present: j fails
				}
			}
			if implied {
				continue
			}
			var opt []lit
			for _, k := range q.req {
				if v, ok := fixed[k]; !ok || !v {
					opt = append(opt, lit{k, false})
				}
			}
			for _, k := range q.forbid {
				if v, ok := fixed[k]; !ok || v {
					opt = append(opt, lit{k, true})
				}
			}
			if len(opt) == 0 {
				dead = true
				break
			}
			options = append(options, opt)
		}
		if dead {
			continue
		}
		terms, ok := expandTerms(options, fixed, c.opts.MaxAnyOfProduct)
		if !ok {
			return nil, false, nil
		}
		for _, term := range terms {
			m := merge(base, ars[i])
			m.ptr = subs[i].ptr
			m.types &= tObj
			for _, l := range term {
				if l.present {
					if !m.isRequired(l.name) {
						m.required = append(m.required, l.name)
					}
					continue
				}
				f := sref{falseSchema, m.ptr + "/$absent/" + escapePointer(l.name)}
				if q := m.prop(l.name); q != nil {
					q.s = append(q.s, f)
				} else {
					m.props = append(m.props, &prop{name: l.name, s: []sref{f}})
				}
			}
			n, err := c.emitIR(m)
			if err != nil {
				return nil, false, err
			}
			alts = append(alts, n)
		}
	}
	return fsm.Alt(alts...), true, nil
}

// expandTerms multiplies out a conjunction of disjunctions of presence
// tests into at most limit consistent terms (none contradicting fixed or
// itself), dropping duplicates and terms that contain another term. ok is
// false when the expansion exceeds limit.
func expandTerms(options [][]lit, fixed map[string]bool, limit int) ([][]lit, bool) {
	terms := []map[string]bool{{}}
	for _, opt := range options {
		var next []map[string]bool
		for _, t := range terms {
			for _, l := range opt {
				if v, ok := t[l.name]; ok && v != l.present {
					continue
				}
				if v, ok := fixed[l.name]; ok && v != l.present {
					continue
				}
				nt := make(map[string]bool, len(t)+1)
				for k, v := range t {
					nt[k] = v
				}
				nt[l.name] = l.present
				next = append(next, nt)
			}
		}
		next = minimalTerms(next)
		if len(next) > limit {
			return nil, false
		}
		terms = next
	}
	out := make([][]lit, 0, len(terms))
	for _, t := range terms {
		var ls []lit
		for k, v := range t {
			ls = append(ls, lit{k, v})
		}
		sort.Slice(ls, func(a, b int) bool { return ls[a].name < ls[b].name })
		out = append(out, ls)
	}
	sort.Slice(out, func(a, b int) bool { return termKey(out[a]) < termKey(out[b]) })
	return out, true
}

// minimalTerms drops duplicate terms and terms implied by a smaller one
// (a superset of another term's tests).
func minimalTerms(ts []map[string]bool) []map[string]bool {
	sort.SliceStable(ts, func(a, b int) bool { return len(ts[a]) < len(ts[b]) })
	var out []map[string]bool
	for _, t := range ts {
		redundant := false
		for _, o := range out {
			sub := true
			for k, v := range o {
				if w, ok := t[k]; !ok || w != v {
					sub = false
					break
				}
			}
			if sub {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, t)
		}
	}
	return out
}

func termKey(t []lit) string {
	var b strings.Builder
	for _, l := range t {
		if l.present {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
		b.WriteString(l.name)
		b.WriteByte(0)
	}
	return b.String()
}

// oneOfFinite is the finite-branch rewrite (see the file comment).
func (c *compiler) oneOfFinite(r *ir, subs []*ir) (*fsm.Node, bool, error) {
	var fin, inf []int
	for i, s := range subs {
		switch {
		case s.types == 0:
		case s.hasEnum:
			fin = append(fin, i)
		default:
			inf = append(inf, i)
		}
	}
	if len(fin) == 0 {
		return nil, false, nil
	}
	for a := range inf {
		for b := a + 1; b < len(inf); b++ {
			if !c.disjoint(subs[inf[a]], subs[inf[b]], 3) {
				return nil, false, nil
			}
		}
	}
	var cands []*value
	for _, i := range fin {
		for _, v := range subs[i].enum {
			if !excluded(cands, v) {
				cands = append(cands, v)
			}
		}
	}
	fn, ok, err := c.finiteEnum(cands, r.srcs, r.ptr)
	if !ok || err != nil {
		return nil, false, err
	}
	alts := []*fsm.Node{fn}
	for _, i := range inf {
		m := subs[i].clone()
		t := emitTypes(m)
		var ex []*value
		for _, v := range cands {
			if t&typeOf(v) != 0 {
				ex = append(ex, v)
			}
		}
		if len(ex) > 0 {
			not := &value{k: kObject, keys: []string{"enum"}, vals: []*value{{k: kArray, arr: ex}}}
			m.nots = append(m.nots, sref{not, m.ptr + segFinite})
		}
		n, err := c.emitIR(m)
		if err != nil {
			return nil, false, err
		}
		alts = append(alts, n)
	}
	return fsm.Alt(alts...), true, nil
}
