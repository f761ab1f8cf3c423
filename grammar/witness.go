package grammar

import (
	"conform/fsm"
)

// Witnesses: "some member of the object satisfies this".
//
// The negation of an object keyword that ranges over members is an
// existential: ¬patternProperties {P: S} holds for an object with a key
// matching P whose value fails S, ¬propertyNames S for an object with a
// key failing S. applyNots turns such a not (one of those keywords and
// nothing else) into a witness of the record: a key schema and a value
// schema that one member must satisfy. objectNode then builds the
// objects as alternatives, one per way of providing each witness: a
// declared property whose name the key schema accepts, required with its
// value schema conjoined with the witness's, or one more extra pair
// (a pseudo-member of the object, required) whose key is in an extra-key
// region and the key schema and whose value satisfies that region's
// schemas and the witness's. Since extra pairs may repeat, requiring one
// witness pair among the extras loses no object with several.
//
// Several witnesses may be provided by one member (a key and value
// satisfying all of them): every partition of up to maxPartitioned
// witnesses into groups is tried, each group provided by one member. With
// more, each is provided by a member of its own: a sound
// under-approximation, like dropping alternatives past maxWitnessAlts
// (and the keys of overlapping patterns past maxPatternOverlap, which no
// extra pair has either). In schema order
// the extra witness is the first extra pair, also an under-approximation,
// like the order itself.

// witness is one existential over an object's members.
type witness struct {
	key sref // a schema the member's name satisfies (strings)
	val sref // a schema the member's value satisfies
}

// maxWitnessAlts bounds the alternative objects built for the witnesses
// of one record; maxPartitioned bounds the witnesses whose partitions are
// tried (4: 15 partitions).
const (
	maxWitnessAlts = 256
	maxPartitioned = 4
)

// partitionsOf returns every partition of ws into groups, the partition
// into singletons first.
func partitionsOf(ws []witness) [][][]witness {
	if len(ws) == 0 {
		return [][][]witness{nil}
	}
	var out [][][]witness
	for _, p := range partitionsOf(ws[1:]) {
		// ws[0] alone, then ws[0] joined to each group of p.
		alone := append([][]witness{{ws[0]}}, p...)
		out = append(out, alone)
		for g := range p {
			q := make([][]witness, len(p))
			copy(q, p)
			q[g] = append([]witness{ws[0]}, p[g]...)
			out = append(out, q)
		}
	}
	return out
}

// witnessOf returns the witness of ¬n when n is one object keyword that
// ranges over members (patternProperties with one pattern, or one
// propertyNames) and nothing else but type.
func (c *compiler) witnessOf(n *ir, ptr string) (witness, bool) {
	m := *n
	m.patProps, m.propNames = nil, nil
	if len(n.groups) > 0 || len(n.nots) > 0 || n.hasEnum || len(m.required) > 0 || !onlyRequired(&m) {
		return witness{}, false
	}
	switch {
	case len(n.patProps) == 1 && len(n.propNames) == 0:
		pp := n.patProps[0]
		return witness{
			key: sref{object("type", str("string"), "pattern", str(pp.pat.s)), ptr + "/$witness/key"},
			val: sref{c.negation(pp.s.v), ptr + "/$witness/value"},
		}, true
	case len(n.propNames) == 1 && len(n.patProps) == 0:
		return witness{
			key: sref{object("type", str("string"), "allOf", array(c.negation(n.propNames[0].v))), ptr + "/$witness/key"},
			val: sref{&value{k: kBool, b: true}, ptr + "/$witness/value"},
		}, true
	}
	return witness{}, false
}

// witnessObjects builds r's objects, given its declared members, its
// extra-key regions and extra pairs, with r's witnesses provided (see
// above).
func (c *compiler) witnessObjects(r *ir, members []member, regions []region, extra *fsm.Node) (*fsm.Node, error) {
	// A provider: -1 an extra pair, i ≥ 0 declared member i.
	type choice struct {
		by int
		ws []witness
	}
	keyOf := func(ws []witness) (*fsm.Node, error) {
		var ks []*fsm.Node
		for _, w := range ws {
			k, err := c.emitList([]sref{w.key}, w.key.ptr)
			if err != nil {
				return nil, err
			}
			ks = append(ks, k)
		}
		return fsm.And(ks...), nil
	}
	// The groups of witnesses each provided by one member: every
	// partition of the witnesses (each alone first), up to
	// maxPartitioned of them; past that, each alone.
	ws := r.witnesses
	var partitions [][][]witness
	if len(ws) <= maxPartitioned {
		partitions = partitionsOf(ws)
	} else {
		each := make([][]witness, len(ws))
		for i, w := range ws {
			each[i] = []witness{w}
		}
		partitions = [][][]witness{each}
	}
	var alts []*fsm.Node
	for _, part := range partitions {
		// The ways of providing each group.
		options := make([][]choice, len(part))
		for g, group := range part {
			k, err := keyOf(group)
			if err != nil {
				return nil, err
			}
			options[g] = append(options[g], choice{by: -1, ws: group})
			for i := range members {
				if empty, err := c.isEmpty(fsm.And(members[i].key, k)); err != nil || empty {
					continue
				}
				options[g] = append(options[g], choice{by: i, ws: group})
			}
		}
		// Every combination of one option per group, up to the bound.
		idx := make([]int, len(part))
		for len(alts) < maxWitnessAlts {
			ms := append([]member(nil), members...)
			extraWs := [][]witness{}
			adds := map[int][]witness{}
			for g := range part {
				ch := options[g][idx[g]]
				if ch.by < 0 {
					extraWs = append(extraWs, ch.ws)
				} else {
					adds[ch.by] = append(adds[ch.by], ch.ws...)
				}
			}
			ok := true
			for i, add := range adds {
				m := ms[i]
				list := withWitnesses(m.list, add)
				v, err := c.emitList(list, m.ptr)
				if err != nil {
					return nil, err
				}
				if v.Op == fsm.OpNoMatch {
					ok = false
					break
				}
				ms[i] = member{key: m.key, kv: c.pair(m.key, v), required: true, list: list, ptr: m.ptr}
			}
			for _, group := range extraWs {
				if !ok {
					break
				}
				k, err := keyOf(group)
				if err != nil {
					return nil, err
				}
				var pairs []*fsm.Node
				for _, rg := range regions {
					v, err := c.emitList(withWitnesses(rg.list, group), rg.ptr)
					if err != nil {
						return nil, err
					}
					if v.Op != fsm.OpNoMatch {
						pairs = append(pairs, c.pair(fsm.And(rg.key, k), v))
					}
				}
				if len(pairs) == 0 {
					ok = false
					break
				}
				ms = append(ms, member{kv: fsm.Alt(pairs...), required: true})
			}
			if ok {
				alts = append(alts, c.assemble(r, ms, extra))
			}
			// Next combination.
			g := 0
			for ; g < len(idx); g++ {
				idx[g]++
				if idx[g] < len(options[g]) {
					break
				}
				idx[g] = 0
			}
			if g == len(idx) {
				break
			}
		}
	}
	return fsm.Alt(alts...), nil
}

// negation is a schema of the values s rejects: negateIf's rewrite where
// it has one (so that nested nots and structure compile), else not s.
func (c *compiler) negation(s *value) *value {
	if ns, ok := negateIf(c.root, s, 0); ok && !hasKeyword(ns, kwContainsAny, 0) {
		return ns
	}
	return object("not", s)
}

// withWitnesses returns a copy of list with the value schemas of ws.
func withWitnesses(list []sref, ws []witness) []sref {
	out := append([]sref(nil), list...)
	for _, w := range ws {
		out = append(out, w.val)
	}
	return out
}
