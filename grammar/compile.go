package grammar

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"conform/fsm"
)

// Result is what a Compile function returns: the regex AST of the
// constraint, and the keywords lenient mode did not enforce.
type Result struct {
	Node     *fsm.Node
	Warnings []Warning
	// Truncated reports that recursion was cut at Depth: some deeper
	// values the schema allows are not accepted.
	Truncated bool
	// Depth is the recursion depth the schema was compiled at (see
	// Options.MaxDepth).
	Depth int
}

// compiler holds the state of one CompileSchema call.
type compiler struct {
	opts      Options
	root      *value
	warnings  []Warning
	active    map[string]int // $ref target → expansions in progress
	reentries int            // expansions in progress that re-entered an active $ref target
	truncated bool
	work      int
	// spent counts the work of every attempt, also those whose work
	// is given back (emitOneOfOverlap's failed rewrites); it may reach
	// maxSpentFactor × the work budget.
	spent       int
	budget      int // opts.MaxNodes as given (oneof.go lowers it for an attempt)
	memo        map[string]*fsm.Node
	anyMemo     map[int]*fsm.Node
	patterns    map[string]*fsm.Node
	patternDFAs map[string]*fsm.DFA
	ws          *fsm.Node                     // whitespace between tokens
	sep         *fsm.Node                     // ws "," ws
	colon       *fsm.Node                     // ws ":" ws
	orc         *oracle                       // the reference validator for finite domains (built on first use)
	orcFailed   bool                          // the document cannot be handled by the reference validator
	strDisjoint map[string]bool               // stringsDisjoint's and keysDisjoint's proofs, by key pair
	reachMemo   map[*value]*reach             // reachOf
	reachAlts   map[reachAltKey]reachAltTypes // reachAlt
	refEdges    map[string][]string           // targetRefs
	refTarget   map[string]*value             // a $ref target's pointer → its value (refsUnder)
	reachPair   map[[2]string]bool            // reaches
	refAlone    bool                          // drafts 3–7: a $ref makes its siblings ignored (refAlone)
	conds       bool                          // if/then/else are keywords (not in drafts 3, 4, 6: condKeywords)
	keys        map[string]objectKey          // objectKeyOf
	checker     *fsm.Checker                  // isEmpty's, kept for the compile
	encoders    [EscapesAll + 1]*encoder      // encodeString's, by escape set
}

// encodeString is EncodeJSONStringWith(cp, c.esc()) with one memo for the
// whole compile: a pattern that appears in a oneOf branch and in the
// negations of the other branches is encoded to one node, so the
// constraint determinizes its JSON-string language once, not once per use.
func (c *compiler) encodeString(cp *fsm.Node) (*fsm.Node, error) {
	esc := c.esc()
	e := c.encoders[esc]
	if e == nil {
		e = &encoder{memo: map[*fsm.Node]*fsm.Node{}, esc: esc}
		c.encoders[esc] = e
	}
	return e.encode(cp)
}

// isEmpty is fsm.IsEmpty under the budget of the compile's emptiness
// proofs, with the DFAs of the languages it intersects kept between proofs.
func (c *compiler) isEmpty(n *fsm.Node) (bool, error) {
	if c.checker == nil {
		c.checker = fsm.NewChecker(fsm.Options{MaxDFAStates: 20_000, MaxWork: 2_000_000})
	}
	return c.checker.IsEmpty(n)
}

// objectKey is the key of a declared property, in the two forms objects
// use: every JSON spelling of it (quoted), and the canonical spelling.
type objectKey struct{ spellings, canonical *fsm.Node }

// objectKeyOf returns the key nodes of the property name, built once per
// compile: a recursive schema unrolled to MaxDepth and objects sharing
// property names would otherwise build them again at every use.
func (c *compiler) objectKeyOf(name string) objectKey {
	if k, ok := c.keys[name]; ok {
		return k
	}
	enc, _ := c.encodeString(fsm.Lit(name))
	k := objectKey{spellings: fsm.Cat(fsm.Lit(`"`), enc, fsm.Lit(`"`)), canonical: fsm.Lit(canonicalString(name))}
	if c.keys == nil {
		c.keys = map[string]objectKey{}
	}
	c.keys[name] = k
	return k
}

// CompileSchema compiles a JSON Schema (draft 2020-12, with the draft-04/06/07
// spellings still common: definitions, items arrays, boolean exclusive
// bounds) to the regex AST of the JSON texts that validate against it. Every
// failure is an *Error.
func CompileSchema(schema []byte, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	base := opts
	base.MaxDepth = min(opts.MaxDepth, BaseDepth)
	res, work, err := compileSchemaAt(schema, base)
	if err != nil || !res.Truncated || base.MaxDepth == opts.MaxDepth || work > deepenWork {
		return res, err
	}
	// Deeper, within a small budget: MaxDepth, else one level deeper than
	// the base, else the base result.
	deep := opts
	deep.MaxNodes = min(opts.MaxNodes, deepenWork)
	depths := []int{opts.MaxDepth}
	if base.MaxDepth+1 < opts.MaxDepth {
		depths = append(depths, base.MaxDepth+1)
	}
	for _, d := range depths {
		deep.MaxDepth = d
		if r, _, err := compileSchemaAt(schema, deep); err == nil {
			return r, nil
		}
	}
	return res, nil
}

// BaseDepth is the recursion depth every recursive schema gets
// (Options.MaxDepth, when smaller, instead).
const BaseDepth = 3

// deepenWork bounds the work of a compile at BaseDepth for CompileSchema to
// try deeper ones, and the work budget of each deeper attempt: small
// recursive schemas (an expression tree, a linked list) grow little with
// each level, since a level's definitions are compiled once, while wide
// mutually recursive ones (WashingtonPost's content types) multiply and
// would spend the whole work budget failing. On MaskBench 146 of the 178
// schemas cut at depth 3 spent at most 1,000.
const deepenWork = 4000

// compileSchemaAt compiles schema with opts (defaults applied), its
// recursion cut at opts.MaxDepth, and returns the work it spent.
func compileSchemaAt(schema []byte, opts Options) (*Result, int, error) {
	root, err := decodeSchema(schema, opts)
	if err != nil {
		return nil, 0, err
	}
	if err := checkSchema(root, ""); err != nil {
		return nil, 0, err
	}
	if err := checkNumbers(root, ""); err != nil {
		return nil, 0, err
	}
	resolveNamedRefs(root)
	rewriteConds(root)
	c := newCompiler(opts, root)
	n, err := c.emitList([]sref{{root, ""}}, "")
	if err != nil {
		return nil, c.spent, err
	}
	if n.Op == fsm.OpNoMatch {
		msg := "no JSON value satisfies the schema"
		if c.truncated {
			msg += fmt.Sprintf(" within the recursion depth limit (%d)", opts.MaxDepth)
		}
		return nil, c.spent, errorf(CodeUnsatisfiable, "", "", "%s", msg)
	}
	return &Result{Node: n, Warnings: c.warnings, Truncated: c.truncated, Depth: opts.MaxDepth}, c.spent, nil
}

// maxSpentFactor bounds the work of all attempts of one compile (spent)
// as a multiple of the work budget: retries that give their work back
// would otherwise multiply with the nesting of the groups that retry.
const maxSpentFactor = 4

// tick counts one unit of expansion work at ptr against the work budget
// and against the bound on all attempts; what names the nesting to reduce.
func (c *compiler) tick(ptr, what string) error {
	c.work++
	c.spent++
	if c.work > c.opts.MaxNodes {
		return errorf(CodeTooLarge, ptr, "", "schema expansion exceeds the work budget (%d); reduce %s nesting", c.opts.MaxNodes, what)
	}
	if c.spent > maxSpentFactor*c.budget {
		return errorf(CodeTooLarge, ptr, "", "schema expansion with its retried rewrites exceeds %d× the work budget (%d); reduce %s nesting", maxSpentFactor, c.budget, what)
	}
	return nil
}

func newCompiler(opts Options, root *value) *compiler {
	c := &compiler{
		budget:  opts.MaxNodes,
		opts:    opts,
		root:    root,
		active:  map[string]int{},
		memo:    map[string]*fsm.Node{},
		anyMemo: map[int]*fsm.Node{},
	}
	c.refAlone = refOverridesSiblings(root)
	c.conds = condKeywords(root)
	if opts.Whitespace == Compact {
		c.ws = fsm.Empty()
	} else {
		c.ws = fsm.Repeat(fsm.ByteClass(fsm.ByteRange{Lo: ' ', Hi: ' '}, fsm.ByteRange{Lo: '\t', Hi: '\t'},
			fsm.ByteRange{Lo: '\n', Hi: '\n'}, fsm.ByteRange{Lo: '\r', Hi: '\r'}), 0, opts.MaxWhitespace)
	}
	c.sep = fsm.Cat(c.ws, fsm.Lit(","), c.ws)
	c.colon = fsm.Cat(c.ws, fsm.Lit(":"), c.ws)
	return c
}

// emitList compiles the conjunction of schemas at one position. An empty
// list means any JSON value.
func (c *compiler) emitList(list []sref, ptr string) (*fsm.Node, error) {
	if len(list) == 0 {
		return c.anyValue(c.opts.AnyValueDepth), nil
	}
	key := c.memoKey(list)
	if n, ok := c.memo[key]; ok {
		return n, nil
	}
	r, err := c.collectList(list, ptr)
	if err != nil {
		return nil, err
	}
	r.srcs = append([]sref(nil), list...)
	n, err := c.emitIR(r)
	if err != nil {
		return nil, err
	}
	c.memo[key] = n
	return n, nil
}

func (c *compiler) collectList(list []sref, ptr string) (*ir, error) {
	var r *ir
	for _, s := range list {
		x, err := c.collect(s, nil)
		if err != nil {
			return nil, err
		}
		if r == nil {
			r = x
		} else {
			r = merge(r, x)
		}
	}
	if r == nil {
		r = newIR(ptr)
	}
	return r, nil
}

// memoKey is the memo key of the conjunction list in the current context.
// A node depends on the context only through the recursion bound: which
// $ref targets are being expanded (c.active) and, where the subtree can
// recurse, how many expansions re-entered one (c.reentries). So the key
// holds the active targets the list can reach and, for a list that reaches
// a recursive target, the re-entry count: a definition that cannot reach
// the expansions in progress is compiled once, wherever it is used.
func (c *compiler) memoKey(list []sref) string {
	var b strings.Builder
	for _, s := range list {
		b.WriteString(c.memoName(s))
		b.WriteByte(0)
	}
	if len(c.active) == 0 {
		return b.String()
	}
	var keys []string
	recursive := false
	for _, s := range list {
		ri := c.reachOf(s.v)
		recursive = recursive || ri.recursive
		for t := range ri.targets {
			if n := c.active[t]; n > 0 {
				keys = append(keys, t+"="+strconv.Itoa(n))
			}
		}
	}
	if len(keys) == 0 && !recursive {
		return b.String()
	}
	sort.Strings(keys)
	keys = slices.Compact(keys)
	b.WriteByte(1)
	b.WriteString(strings.Join(keys, "\x00"))
	if recursive {
		b.WriteByte(2)
		b.WriteString(strconv.Itoa(c.reentries))
	}
	return b.String()
}

// memoName names s in a memo key: its pointer, or for a schema that is
// only a $ref (after refOnly) its target's, marked, so that the properties
// and items that refer to one definition share its compiled node instead
// of compiling it once per place (JsonSchemaStore component_spec: one
// recursive oneOf reached through op1, op2 and not at every level, 17
// compiles). The schema at each such place is the same, so is its node;
// errors still name the place of the first compile that fails.
func (c *compiler) memoName(s sref) string {
	v := refOnly(s.v, c.refAlone)
	if v.k == kObject && len(v.keys) == 1 && v.keys[0] == "$ref" && v.vals[0].k == kString {
		if _, tptr, ok := resolvePointer(c.root, v.vals[0].str); ok {
			return "\x03" + tptr
		}
	}
	return s.ptr
}

// reach is what a schema value can reach through $ref: the targets (their
// pointers, as c.active names them), and whether one of them reaches
// itself (a recursive definition).
type reach struct {
	targets   map[string]bool
	recursive bool
}

// reachOf returns the reach of v (memoized per value). Every $ref string
// anywhere under v counts, inside enums too, which can only make a memo
// key more specific than it needs to be.
func (c *compiler) reachOf(v *value) *reach {
	if ri, ok := c.reachMemo[v]; ok {
		return ri
	}
	if c.reachMemo == nil {
		c.reachMemo = map[*value]*reach{}
		c.refEdges = map[string][]string{}
		c.refTarget = map[string]*value{}
	}
	ri := &reach{targets: map[string]bool{}}
	queue := c.refsUnder(v)
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if ri.targets[t] {
			continue
		}
		ri.targets[t] = true
		queue = append(queue, c.targetRefs(t)...)
	}
	for t := range ri.targets {
		if c.reaches(t, t) {
			ri.recursive = true
			break
		}
	}
	c.reachMemo[v] = ri
	return ri
}

// targetRefs returns the $ref targets directly under the target t.
func (c *compiler) targetRefs(t string) []string {
	if e, ok := c.refEdges[t]; ok {
		return e
	}
	c.refEdges[t] = nil // a cycle through t sees no edges while they are listed
	e := c.refsUnder(c.refTarget[t])
	c.refEdges[t] = e
	return e
}

// reaches reports whether the target from reaches the target to through
// one or more $refs (memoized per pair).
func (c *compiler) reaches(from, to string) bool {
	if c.reachPair == nil {
		c.reachPair = map[[2]string]bool{}
	}
	k := [2]string{from, to}
	if r, ok := c.reachPair[k]; ok {
		return r
	}
	seen := map[string]bool{}
	queue := append([]string(nil), c.targetRefs(from)...)
	found := false
	for len(queue) > 0 && !found {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if t == to {
			found = true
		} else if !seen[t] {
			seen[t] = true
			queue = append(queue, c.targetRefs(t)...)
		}
	}
	c.reachPair[k] = found
	return found
}

// refsUnder lists the targets of the $ref strings anywhere under v.
func (c *compiler) refsUnder(v *value) []string {
	var out []string
	var walk func(v *value, depth int)
	walk = func(v *value, depth int) {
		if v == nil || depth > 512 {
			return
		}
		for i, k := range v.keys {
			x := v.vals[i]
			if k == "$ref" && x.k == kString {
				if t, tptr, ok := resolvePointer(c.root, x.str); ok {
					out = append(out, tptr)
					c.refTarget[tptr] = t
				}
				continue
			}
			walk(x, depth+1)
		}
		for _, e := range v.arr {
			walk(e, depth+1)
		}
	}
	walk(v, 0)
	return out
}

// emitIR builds the node of one merged record. A finite record (enum or
// const) that the ordinary path refuses, or that lenient mode had to
// loosen, is decided value by value instead (see finite.go).
func (c *compiler) emitIR(r *ir) (*fsm.Node, error) {
	if !r.hasEnum || len(r.srcs) == 0 {
		return c.emitRecord(r)
	}
	nw := len(c.warnings)
	n, err := c.emitRecord(r)
	if err != nil && !refusal(err) || err == nil && len(c.warnings) == nw {
		return n, err
	}
	fn, ok, ferr := c.emitFinite(r)
	if !ok || ferr != nil {
		return n, err
	}
	c.warnings = c.warnings[:nw]
	return fn, nil
}

// emitRecord builds the node of one merged record the ordinary way.
func (c *compiler) emitRecord(r *ir) (*fsm.Node, error) {
	if err := c.tick(r.ptr, "$ref/anyOf"); err != nil {
		return nil, err
	}
	reentered := 0
	for _, t := range r.refs {
		if c.active[t] > 0 {
			reentered++
		}
		c.active[t]++
	}
	c.reentries += reentered
	defer func() {
		for _, t := range r.refs {
			c.active[t]--
		}
		c.reentries -= reentered
	}()
	if r.types == 0 {
		return fsm.NoMatch(), nil
	}
	if len(r.groups) > 0 {
		return c.emitGroup(r)
	}
	return c.emitLeaf(r)
}

// splitGroup is the distribution both emitGroup and rawIR start with: r's
// first anyOf/oneOf group g, the record without it (base; its refs are
// already counted by the caller), and per alternative the merge of base
// with it (subs) and the alternative alone (ars).
func (c *compiler) splitGroup(r *ir) (g group, base *ir, subs, ars []*ir, err error) {
	g = r.groups[0]
	base = r.clone()
	base.groups = base.groups[1:]
	base.refs = nil
	subs = make([]*ir, 0, len(g.alts))
	ars = make([]*ir, 0, len(g.alts))
	for _, a := range g.alts {
		ar, err := c.collect(a, nil)
		if err != nil {
			return g, nil, nil, nil, err
		}
		m := merge(base, ar)
		m.ptr = a.ptr
		subs = append(subs, m)
		ars = append(ars, ar)
	}
	return g, base, subs, ars, nil
}

// emitGroup distributes the rest of r over the branches of its first
// anyOf/oneOf group: base ∧ (A ∨ B) = (base ∧ A) ∨ (base ∧ B). Merging
// (rather than intersecting languages) keeps each branch's object a single
// fixed-order object.
func (c *compiler) emitGroup(r *ir) (*fsm.Node, error) {
	g, base, subs, ars, err := c.splitGroup(r)
	if err != nil {
		return nil, err
	}
	if g.one {
		for i := range subs {
			for j := i + 1; j < len(subs); j++ {
				if subs[i].types == 0 || subs[j].types == 0 {
					continue
				}
				if !c.disjoint(subs[i], subs[j], 3) {
					// Overlapping branches: exact rewrites for
					// required-only branches and finite branches.
					if n, ok, err := c.emitOneOfOverlap(r, g, base, subs, ars); err != nil || ok {
						return n, err
					}
					msg := "oneOf branches " + strconv.Itoa(i) + " and " + strconv.Itoa(j) + " may both match the same value; make them disjoint (different types, or a required property with different const values) or use anyOf"
					if c.opts.Strictness == Lenient {
						c.warn(Warning{Keyword: "oneOf", Pointer: g.ptr, Message: msg + " (treated as anyOf)"})
						goto emit
					}
					return nil, errorf(CodeOneOfOverlap, g.ptr, "oneOf", "%s", msg)
				}
			}
		}
	}
emit:
	return altOf(subs, c.emitIR)
}

// altOf is the union of each branch's language under emit (the JSON or
// the raw-text one).
func altOf(subs []*ir, emit func(*ir) (*fsm.Node, error)) (*fsm.Node, error) {
	alts := make([]*fsm.Node, 0, len(subs))
	for _, s := range subs {
		n, err := emit(s)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	return fsm.Alt(alts...), nil
}

// excl collects what the not keywords remove from a record's languages.
type excl struct {
	str  []*fsm.Node // code-point languages removed from strings
	vals []*value    // scalar values removed (null, booleans, integers)
	// ranges are intervals removed from every number (not with bounds).
	ranges []numRange
	// ints are the multiples removed from a record whose numbers are
	// all integers (not with multipleOf).
	ints []intExcl
	// decs are the multiples removed from a record whose numbers have
	// fractions (not with multipleOf), written without exponent.
	decs []decExcl
}

// emitLeaf builds the node of a record with no anyOf/oneOf left.
func (c *compiler) emitLeaf(r *ir) (*fsm.Node, error) {
	var ex excl
	if len(r.nots) > 0 {
		var err error
		r, ex, err = c.applyNots(r)
		if err != nil {
			return nil, err
		}
		if r.types == 0 {
			return fsm.NoMatch(), nil
		}
	}
	if r.hasEnum {
		return c.emitEnum(r)
	}
	var alts []*fsm.Node
	if r.types&tNull != 0 && !excluded(ex.vals, &value{k: kNull}) {
		alts = append(alts, fsm.Lit("null"))
	}
	if r.types&tBool != 0 {
		for _, b := range []bool{true, false} {
			if !excluded(ex.vals, &value{k: kBool, b: b}) {
				alts = append(alts, fsm.Lit(strconv.FormatBool(b)))
			}
		}
	}
	if r.types&tNum != 0 {
		n, err := c.numberNode(r, ex)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if r.types&tStr != 0 {
		n, err := c.stringNode(r, ex.str)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if r.types&tArr != 0 {
		n, err := c.arrayNode(r)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	if r.types&tObj != 0 {
		n, err := c.objectNode(r)
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
	}
	return fsm.Alt(alts...), nil
}

func excluded(vals []*value, v *value) bool {
	for _, x := range vals {
		if equalValues(x, v) {
			return true
		}
	}
	return false
}

// anyValue is any JSON value nested at most d levels deep (d = 0: scalars
// and empty containers).
func (c *compiler) anyValue(d int) *fsm.Node {
	if n, ok := c.anyMemo[d]; ok {
		return n
	}
	scalars := fsm.Alt(fsm.Lit("null"), fsm.Lit("true"), fsm.Lit("false"), jsonNum, strLang[c.esc()].str)
	var inner *fsm.Node
	if d > 0 {
		inner = fsm.Defer(c.anyValue(d - 1))
	} else {
		inner = fsm.NoMatch()
	}
	arr := fsm.Cat(fsm.Lit("["), c.ws, fsm.Opt(fsm.Cat(inner, fsm.Star(fsm.Cat(c.sep, inner)), c.ws)), fsm.Lit("]"))
	kv := fsm.Cat(strLang[c.esc()].str, c.colon, inner)
	obj := fsm.Cat(fsm.Lit("{"), c.ws, fsm.Opt(fsm.Cat(kv, fsm.Star(fsm.Cat(c.sep, kv)), c.ws)), fsm.Lit("}"))
	n := fsm.Alt(scalars, arr, obj)
	c.anyMemo[d] = n
	return n
}

// esc is the escape set strings use.
func (c *compiler) esc() Escapes {
	if c.opts.Escapes > EscapesAll {
		return EscapesAll
	}
	return c.opts.Escapes
}

// decodeSchema decodes a schema document within opts' size and depth
// limits (opts with its defaults), as every entry point reads one.
func decodeSchema(schema []byte, opts Options) (*value, error) {
	if len(schema) > opts.MaxSchemaBytes {
		return nil, errorf(CodeTooLarge, "", "", "schema is %d bytes, over the limit of %d", len(schema), opts.MaxSchemaBytes)
	}
	root, err := decodeValue(schema, opts.MaxSchemaDepth)
	if err != nil {
		if errors.Is(err, errTooDeep) {
			return nil, errorf(CodeTooLarge, "", "", "schema nesting is deeper than %d", opts.MaxSchemaDepth)
		}
		return nil, errorf(CodeInvalidJSON, "", "", "schema is not valid JSON: %v", err)
	}
	return root, nil
}
