package grammar

// Finite domains.
//
// A schema position whose merged record carries enum/const has a finite
// language: the listed values that validate against every schema merged
// at that position. When the ordinary compilation refuses such a position
// (a not on a structured schema, overlapping oneOf branches, uniqueItems,
// a multipleOf we cannot build, ...), the values are decided one by one
// with the reference validator (github.com/santhosh-tekuri/jsonschema/v6,
// which follows the document's "$schema" draft, 2020-12 by default) and the
// survivors are emitted as an enum. The result is exact: a value is
// accepted iff it is one of the listed values and the validator accepts it
// against the schemas of the position.
//
// The path is a fallback only: records the ordinary path compiles keep
// their ordinary language (and golden output). Whenever the validator
// cannot decide (the document does not compile in it, a location is
// synthetic, it panics on a huge number, the work bound is reached), the
// ordinary error stands.

import (
	"bytes"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
)

// maxFiniteChecks bounds the validator calls of one CompileSchema
// (candidate values × schema locations, summed over all finite fallbacks).
// A call on a typical value costs microseconds; 20,000 keeps the worst case
// well under the 0.1 s MaxNodes budget's order of magnitude.
const maxFiniteChecks = 20_000

// maxFiniteValues bounds the candidate values of one finite record: a
// larger enum is left to the ordinary path (an enum that large rarely sits
// next to a refused keyword).
const maxFiniteValues = 2_000

// finiteBaseURL is the resource name the root document is registered under
// in the reference validator. It is never fetched.
const finiteBaseURL = "urn:conform:schema"

// oracle decides single values against schema locations of the root
// document with the reference validator. It is built at most once per
// CompileSchema, on first use.
type oracle struct {
	comp    *jsonschema.Compiler
	schemas map[string]*jsonschema.Schema // pointer → compiled location; nil: cannot be compiled
	checks  int
}

// patternRegexp is a pattern compiled by this package's ECMA-262 pattern
// parser (search semantics), for the reference validator: its default Go
// regexp engine differs from ECMA-262 (Go's "." matches "\r", its "\s" is
// ASCII only), and the finite-domain path must decide patterns exactly as
// the rest of the grammar does.
type patternRegexp struct {
	src string
	d   *fsm.DFA
}

func (p patternRegexp) MatchString(s string) bool { return fsm.Matches(p.d, []byte(s)) }

func (p patternRegexp) String() string { return p.src }

// patternEngine is the validator's regexp engine: patterns this package
// cannot parse or build make the document unusable for the validator.
func patternEngine(s string) (jsonschema.Regexp, error) {
	n, err := parsePattern(s)
	if err != nil {
		return nil, err
	}
	d, err := fsm.Compile(n, fsm.Options{MaxDFAStates: 20_000})
	if err != nil {
		return nil, err
	}
	return patternRegexp{src: s, d: d}, nil
}

// errNoLoad refuses every external resource: the validator works offline
// on the one document.
var errNoLoad = errors.New("grammar: external schema resources are not loaded")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoLoad }

// oracle returns the compiler's validator, or nil when the document cannot
// be handled by it.
func (c *compiler) oracle() *oracle {
	if c.orc != nil || c.orcFailed {
		return c.orc
	}
	c.orcFailed = true
	if hasKeyword(c.root, "$dynamicRef", 0) || hasKeyword(c.root, "$recursiveRef", 0) {
		// Their meaning depends on the dynamic scope, which a location
		// validated on its own does not have.
		return nil
	}
	var b bytes.Buffer
	encodeValue(&b, c.root)
	doc, err := unmarshalValidatorJSON(b.Bytes())
	if err != nil {
		return nil
	}
	jc := jsonschema.NewCompiler()
	jc.UseLoader(noLoader{})
	jc.UseRegexpEngine(patternEngine)
	jc.AssertFormat()
	if err := jc.AddResource(finiteBaseURL, doc); err != nil {
		return nil
	}
	if _, err := compileLocation(jc, ""); err != nil {
		return nil
	}
	c.orc = &oracle{comp: jc, schemas: map[string]*jsonschema.Schema{}}
	c.orcFailed = false
	return c.orc
}

func unmarshalValidatorJSON(data []byte) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, errors.New("validator panicked")
		}
	}()
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

func compileLocation(jc *jsonschema.Compiler, ptr string) (s *jsonschema.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, errors.New("validator panicked")
		}
	}()
	loc := finiteBaseURL
	if ptr != "" {
		toks := strings.Split(ptr[1:], "/")
		for i, t := range toks {
			toks[i] = url.PathEscape(t)
		}
		loc += "#/" + strings.Join(toks, "/")
	}
	return jc.Compile(loc)
}

// location returns the compiled schema at ptr, or nil.
func (o *oracle) location(ptr string) *jsonschema.Schema {
	if s, ok := o.schemas[ptr]; ok {
		return s
	}
	s, err := compileLocation(o.comp, ptr)
	if err != nil {
		s = nil
	}
	o.schemas[ptr] = s
	return s
}

// valid decides v against every location; known is false when the
// validator could not decide (panic, budget).
func (o *oracle) valid(v *value, locs []*jsonschema.Schema) (ok, known bool) {
	if o.checks+len(locs) > maxFiniteChecks {
		return false, false
	}
	o.checks += len(locs)
	var b bytes.Buffer
	encodeValue(&b, v)
	inst, err := unmarshalValidatorJSON(b.Bytes())
	if err != nil {
		return false, false
	}
	defer func() {
		if p := recover(); p != nil {
			ok, known = false, false
		}
	}()
	for _, s := range locs {
		if s.Validate(inst) != nil {
			return false, true
		}
	}
	return true, true
}

// locations compiles the schema locations of srcs. ok is false when one
// of them is not the document's own value at its pointer (a schema this
// package synthesized) or does not compile.
func (c *compiler) locations(o *oracle, srcs []sref) ([]*jsonschema.Schema, bool) {
	if len(srcs) == 0 {
		return nil, false
	}
	var locs []*jsonschema.Schema
	seen := map[string]bool{}
	for _, s := range srcs {
		if seen[s.ptr] {
			continue
		}
		seen[s.ptr] = true
		if lookupPointer(c.root, s.ptr) != s.v {
			return nil, false
		}
		l := o.location(s.ptr)
		if l == nil {
			return nil, false
		}
		locs = append(locs, l)
	}
	return locs, true
}

// finiteValues returns the values of cands that validate against all of
// srcs, or ok false when that cannot be decided.
func (c *compiler) finiteValues(cands []*value, srcs []sref) (keep []*value, ok bool) {
	if len(cands) > maxFiniteValues {
		return nil, false
	}
	for _, v := range cands {
		if !decidable(v) {
			return nil, false
		}
	}
	o := c.oracle()
	if o == nil {
		return nil, false
	}
	locs, ok := c.locations(o, srcs)
	if !ok {
		return nil, false
	}
	keep = []*value{}
	for _, v := range cands {
		good, known := o.valid(v, locs)
		if !known {
			return nil, false
		}
		if good {
			keep = append(keep, v)
		}
	}
	return keep, true
}

// emitFinite builds the exact language of a finite record r from its
// candidate values and the schema locations it was merged from. ok is
// false when the values cannot be decided.
func (c *compiler) emitFinite(r *ir) (*fsm.Node, bool, error) {
	if !r.hasEnum {
		return nil, false, nil
	}
	var cands []*value
	for _, v := range r.enum {
		if r.types&typeOf(v) != 0 && !excluded(cands, v) {
			cands = append(cands, v)
		}
	}
	return c.finiteEnum(cands, r.srcs, r.ptr)
}

// finiteEnum emits the candidate values that validate against the schema
// locations srcs (finiteValues) as an enum at ptr; ok is false when the
// validator cannot decide.
func (c *compiler) finiteEnum(cands []*value, srcs []sref, ptr string) (n *fsm.Node, ok bool, err error) {
	keep, ok := c.finiteValues(cands, srcs)
	if !ok {
		return nil, false, nil
	}
	e := newIR(ptr)
	e.enum, e.hasEnum = keep, true
	if n, err = c.emitEnum(e); err != nil {
		return nil, false, err
	}
	return n, true, nil
}

// refusal reports whether err is a refusal the finite path may overturn:
// a keyword this package cannot enforce, or oneOf branches it could not
// prove disjoint.
func refusal(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == CodeUnsupported || e.Code == CodeOneOfOverlap)
}

// decidable reports whether every number in v has an exponent the
// validator handles (it panics or works for a long time on 1e999999999).
func decidable(v *value) bool {
	switch v.k {
	case kNumber:
		_, ok := v.rat()
		return ok
	case kArray:
		for _, e := range v.arr {
			if !decidable(e) {
				return false
			}
		}
	case kObject:
		for _, e := range v.vals {
			if !decidable(e) {
				return false
			}
		}
	}
	return true
}

// lookupPointer resolves a JSON Pointer as this package writes them (RFC
// 6901 escapes, no URL escapes) in root, or returns nil.
func lookupPointer(root *value, ptr string) *value {
	if ptr == "" {
		return root
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.k {
		case kObject:
			cur = cur.get(tok)
		case kArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.arr) {
				return nil
			}
			cur = cur.arr[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// hasKeyword reports whether an object member named k occurs anywhere in v.
func hasKeyword(v *value, k string, depth int) bool {
	if depth > 512 {
		return true // deeper than the decoder allows; be conservative
	}
	switch v.k {
	case kObject:
		for i, key := range v.keys {
			if key == k || hasKeyword(v.vals[i], k, depth+1) {
				return true
			}
		}
	case kArray:
		for _, e := range v.arr {
			if hasKeyword(e, k, depth+1) {
				return true
			}
		}
	}
	return false
}

// encodeValue writes v as JSON text, keys in document order.
func encodeValue(b *bytes.Buffer, v *value) {
	switch v.k {
	case kNull:
		b.WriteString("null")
	case kBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kNumber:
		b.WriteString(v.num)
	case kString:
		b.WriteString(canonicalString(v.str))
	case kArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeValue(b, e)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(canonicalString(k))
			b.WriteByte(':')
			encodeValue(b, v.vals[i])
		}
		b.WriteByte('}')
	}
}
