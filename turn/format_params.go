package turn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"conform/fsm"
	"conform/grammar"
)

// This file builds the arguments of an ArgsParams call (Qwen3-Coder,
// MiniMax-M2, GLM-4.5): each parameter of the tool's object schema on its
// own, Open KEY KeyClose VALUE Close, each at most once and every required
// one present: in the order the schema's properties list them, or in any
// order when the grammar options say grammar.OrderAny (the server's
// --property-order, which orders JSON objects' properties the same way). A
// parameter whose schema admits only strings is written as its raw text
// (grammar.CompileRawString), one that admits no string as JSON
// (grammar.CompileSchema); either way the value cannot contain the Close
// that ends it. Only declared parameters are written, whatever
// additionalProperties says (a subset of the valid calls, never more).
//
// What the format cannot carry exactly is refused under strict and listed
// in Unenforced otherwise, never dropped silently: object-level keywords
// (minProperties, dependentRequired, allOf, …) and a parameter that may be
// a string or another value (lenient mode writes it as JSON, quotes and
// all). A schema that is not an object schema, a required parameter the
// schema does not declare, and a property name the markers cannot
// delimit are refused in both modes.

// paramKind says how an ArgsParams value is written.
type paramKind uint8

// The parameter kinds.
const (
	paramUnknown paramKind = iota // not known to the parser: decided on the value
	paramJSON                     // a JSON text, copied into the arguments
	paramRaw                      // raw text, JSON-quoted into the arguments
)

// paramKinds maps tool name → parameter name → kind, for the parser.
type paramKinds map[string]map[string]paramKind

// objectKeywords are the keywords of a tool's parameters schema that a
// per-parameter call satisfies by construction: annotations, and those
// that only narrow which parameters are written.
var objectKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"patternProperties": true, "unevaluatedProperties": true,
	"title": true, "description": true, "$schema": true, "$id": true, "$defs": true, "definitions": true,
	"$comment": true, "examples": true, "default": true, "strict": true, "$anchor": true,
}

// paramArgs builds the ArgsParams arguments of one tool.
func (b *builder) paramArgs(schema json.RawMessage, strict bool, param string, sx syntax) (*fsm.Node, map[string]paramKind, error) {
	top, order, err := decodeObject(schema)
	if err != nil {
		return nil, nil, &Error{Code: CodeSchema, Param: param, Msg: "the parameters of a per-parameter tool-call format must be a JSON Schema object: " + err.Error()}
	}
	if t, ok := top["type"]; ok && !typeIsObject(t) {
		return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: "/type", Keyword: "type", Msg: "a per-parameter tool-call format writes an object's parameters: the schema must be an object schema"}
	}
	for _, k := range order {
		if objectKeywords[k] {
			continue
		}
		msg := fmt.Sprintf("keyword %s on the parameters object cannot be enforced by a per-parameter tool-call format", k)
		if strict {
			return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: "/" + escapePointer(k), Keyword: k, Msg: msg}
		}
		b.unenforced = append(b.unenforced, Unenforced{Param: param, Pointer: "/" + escapePointer(k), Keyword: k, Message: msg})
	}
	props, names, err := decodeObject(top["properties"])
	if err != nil && len(top["properties"]) > 0 {
		return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: "/properties", Keyword: "properties", Msg: "properties must be an object"}
	}
	var required []string
	if r := top["required"]; len(r) > 0 {
		if err := json.Unmarshal(r, &required); err != nil {
			return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: "/required", Keyword: "required", Msg: "required must be an array of strings"}
		}
	}
	req := map[string]bool{}
	for _, r := range required {
		if _, ok := props[r]; !ok {
			return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: "/required", Keyword: "required",
				Msg: fmt.Sprintf("required parameter %q is not among the properties: a per-parameter tool-call format writes declared parameters only", r)}
		}
		req[r] = true
	}
	defs := map[string]json.RawMessage{}
	for _, k := range []string{"$defs", "definitions"} {
		if v, ok := top[k]; ok {
			defs[k] = v
		}
	}
	g := b.opts.Grammar
	g.Strictness = grammar.Lenient
	if strict {
		g.Strictness = grammar.Strict
	}
	g.Extras = grammar.ExtrasAllowed
	kinds := map[string]paramKind{}
	parts := make([]*fsm.Node, 0, len(names))
	reqs := make([]bool, 0, len(names))
	for _, name := range names {
		ptr := "/properties/" + escapePointer(name)
		if name == "" || strings.Index(name+sx.PKeyEnd, sx.PKeyEnd) != len(name) || strings.Contains(name, sx.PClose) || !validUTF8(name) {
			return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: ptr, Msg: fmt.Sprintf("property name %q cannot be written between this format's parameter markers", name)}
		}
		sub := withDefs(props[name], defs)
		key := paramValueKey{schema: string(sub), strict: strict, close: sx.PClose}
		pv, seen := b.values[key]
		if !seen {
			some, only, err := grammar.StringKinds(sub, g)
			if err != nil {
				return nil, nil, subError(err, param, ptr)
			}
			pv.some = some
			var res *grammar.Result
			switch {
			case some && only:
				pv.kind = paramRaw
				res, err = grammar.CompileRawString(sub, g)
			case some && strict:
				return nil, nil, &Error{Code: CodeSchema, Param: param, Pointer: ptr, Keyword: "type",
					Msg: fmt.Sprintf("parameter %q may be a string or another value; this format writes strings raw and other values as JSON, so it cannot tell them apart: give the parameter one type", name)}
			default:
				pv.kind = paramJSON
				gj := g
				if _, ban := closeWords(sx.PClose, true); ban {
					if gj.AnyValueDepth <= 0 || gj.AnyValueDepth > banAnyValueDepth {
						gj.AnyValueDepth = banAnyValueDepth
					}
					if gj.MaxDepth <= 0 || gj.MaxDepth > grammar.BaseDepth {
						gj.MaxDepth = grammar.BaseDepth
					}
				}
				res, err = grammar.CompileSchema(sub, gj)
			}
			if err != nil {
				return nil, nil, subError(err, param, ptr)
			}
			pv.warnings = res.Warnings
			pv.node = excludeClose(res.Node, sx.PClose, pv.kind == paramJSON)
			if b.values == nil {
				b.values = map[paramValueKey]paramValue{}
			}
			b.values[key] = pv
		}
		kinds[name] = pv.kind
		if pv.kind == paramJSON && pv.some {
			b.unenforced = append(b.unenforced, Unenforced{Param: param, Pointer: ptr, Keyword: "type",
				Message: fmt.Sprintf("parameter %q may be a string or another value: written as JSON (a string in quotes), though the format writes strings raw", name)})
		}
		for _, w := range pv.warnings {
			b.unenforced = append(b.unenforced, Unenforced{Param: param, Pointer: subPointer(ptr, w.Pointer), Keyword: w.Keyword, Message: w.Message})
		}
		parts = append(parts, fsm.Cat(fsm.Lit(sx.POpen+name+sx.PKeyEnd), pv.node, fsm.Lit(sx.PClose)))
		reqs = append(reqs, req[name])
	}
	if g.PropertyOrder == grammar.OrderAny && len(parts) <= fsm.MaxPermMembers {
		// Each parameter at most once, the required ones once, in any
		// order (fsm.Perm builds the subsets a generation visits).
		return fsm.Perm(fsm.Empty(), nil, parts, reqs), kinds, nil
	}
	for i := range parts {
		if !reqs[i] {
			parts[i] = fsm.Opt(parts[i])
		}
	}
	return fsm.Cat(parts...), kinds, nil
}

// paramValueKey is what a parameter's value constraint depends on within
// one Build: its schema (with the tool's definitions), the tool's
// strictness and the format's close marker.
type paramValueKey struct {
	schema string
	strict bool
	close  string
}

// paramValue is a parameter's value constraint, how it is written and
// what its schema's compile reported.
type paramValue struct {
	node     *fsm.Node
	kind     paramKind
	some     bool // the schema admits strings
	warnings []grammar.Warning
}

// excludeClose restricts v to texts t in which close first occurs at the
// end of t+close: t does not contain close, nor end with a prefix of close
// that, completed by close, would hold an earlier close (close has a
// border there, as "\n</parameter>\n" has "\n").
//
// When v is a JSON text (json) and every banned string holds a byte pair
// no JSON text holds (jsonCannotHold), v is returned as it is: the
// intersection would be v, and its DFA the product of v's with the ban's,
// which for a free-form value ({} in an agent's tool: any JSON, nested)
// took seconds to build and minimize.
func excludeClose(v *fsm.Node, close string, json bool) *fsm.Node {
	banned, ban := closeWords(close, json)
	if !ban {
		return v
	}
	return fsm.And(v, closeBan(close, banned))
}

// banAnyValueDepth caps grammar.Options.AnyValueDepth for a JSON parameter
// value that excludeClose intersects with its close marker's ban: the
// intersection is built from the value's whole DFA, deferred levels
// included, which roughly doubles with each free-form level (16 levels,
// the grammar's default, passed a million NFA states for GLM-4.5's
// "</arg_value>"). 8 is the default it had before. Recursion is kept at
// grammar.BaseDepth there for the same reason.
const banAnyValueDepth = 8

// closeWords returns the texts excludeClose bans for close (a node each:
// close anywhere, and each border prefix of close at the end) and whether
// a value must be intersected with them: not when close is empty, or when
// the value is a JSON text (json) and no JSON text can hold any of the
// words.
func closeWords(close string, json bool) ([]*fsm.Node, bool) {
	if close == "" {
		return nil, false
	}
	words := []string{close}
	banned := []*fsm.Node{fsm.Cat(anyBytes, fsm.Lit(close), anyBytes)}
	for k := 1; k < len(close); k++ {
		if close[k:] == close[:len(close)-k] {
			words = append(words, close[:k])
			banned = append(banned, fsm.Cat(anyBytes, fsm.Lit(close[:k])))
		}
	}
	if json && !slices.ContainsFunc(words, func(w string) bool { return !jsonCannotHold(w) }) {
		return nil, false
	}
	return banned, true
}

// jsonCannotHold reports whether no JSON text (RFC 8259) has w as a
// substring, by a sufficient test: w has a tab, newline or carriage return
// next to a byte that only a string can hold. Those three bytes occur in a
// JSON text only as whitespace between tokens (a string holds no raw
// control byte), and next to whitespace stands whitespace, a structural
// character, a quote, or a byte of a number or of true, false and null;
// anything else (as "<" or ">") is inside a string, which the control
// byte cannot be. So "\n</parameter>\n" cannot occur in a JSON value, and
// "</arg_value>" can (inside a string).
func jsonCannotHold(w string) bool {
	ctl := func(c byte) bool { return c == '\t' || c == '\n' || c == '\r' }
	for i := 0; i+1 < len(w); i++ {
		a, b := w[i], w[i+1]
		if ctl(a) && !jsonOutside(b) || ctl(b) && !jsonOutside(a) {
			return true
		}
	}
	return false
}

// jsonOutside reports whether byte c may stand outside a string in a JSON
// text: whitespace, structure, a quote, or a byte of a number or literal.
func jsonOutside(c byte) bool {
	return strings.IndexByte(" \t\n\r{}[]:,\"0123456789+-.eEtruefalsn", c) >= 0
}

// closeBans holds, per close marker, the pinned complement of the texts
// excludeClose bans (string → *fsm.Node): the same for every parameter of
// every request in a format, so fsm builds its DFA once per process.
var closeBans sync.Map

func closeBan(close string, banned []*fsm.Node) *fsm.Node {
	if n, ok := closeBans.Load(close); ok {
		return n.(*fsm.Node)
	}
	// Both pinned: an intersection with a complement may build either.
	n, _ := closeBans.LoadOrStore(close, fsm.Pin(fsm.Not(fsm.Pin(fsm.Alt(banned...)))))
	return n.(*fsm.Node)
}

// decodeObject decodes a JSON object into its members and its keys in
// order.
func decodeObject(data []byte) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if b, ok := tok.(bool); ok && b {
			return map[string]json.RawMessage{}, nil, nil // true: any object
		}
		return nil, nil, errors.New("not an object")
	}
	out := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := out[k]; !dup {
			keys = append(keys, k)
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return out, keys, nil
}

// typeIsObject reports whether a type keyword admits objects.
func typeIsObject(t json.RawMessage) bool {
	var one string
	if json.Unmarshal(t, &one) == nil {
		return one == "object"
	}
	var many []string
	if json.Unmarshal(t, &many) == nil {
		for _, s := range many {
			if s == "object" {
				return true
			}
		}
	}
	return false
}

// withDefs gives a property's schema the definitions of the tool's schema,
// so that its "#/$defs/…" references resolve in a document of its own.
func withDefs(sub json.RawMessage, defs map[string]json.RawMessage) json.RawMessage {
	if len(defs) == 0 {
		return sub
	}
	m, keys, err := decodeObject(sub)
	if err != nil || len(keys) == 0 && !bytes.HasPrefix(bytes.TrimSpace(sub), []byte("{")) {
		return sub
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	add := func(k string, v json.RawMessage) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	for _, k := range keys {
		add(k, m[k])
	}
	for _, k := range []string{"$defs", "definitions"} {
		if _, own := m[k]; !own && defs[k] != nil {
			add(k, defs[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// subError places a grammar error of a property's schema in the tool's.
func subError(err error, param, ptr string) error {
	e := grammarError(err, param)
	var te *Error
	if errors.As(e, &te) {
		te.Pointer = subPointer(ptr, te.Pointer)
	}
	return e
}

// subPointer is the pointer p of a property's own document, in the tool's
// schema (references into the shared definitions stay as they are).
func subPointer(prop, p string) string {
	if strings.HasPrefix(p, "/$defs/") || strings.HasPrefix(p, "/definitions/") {
		return p
	}
	return prop + p
}

// escapePointer escapes one JSON Pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func validUTF8(s string) bool {
	return strings.ToValidUTF8(s, "\x00") == s && !strings.ContainsRune(s, 0)
}
