package turn

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"conform/fsm"
	"conform/grammar"
)

// OutputKind says what the assistant's content must be.
type OutputKind uint8

// The output kinds.
const (
	OutputText       OutputKind = iota // free text (response_format text, or nothing asked)
	OutputJSONObject                   // any JSON object (response_format json_object)
	OutputJSONSchema                   // a JSON value valid against Schema (json_schema, structured_outputs.json, guided_json)
	OutputRegex                        // text matching Regex in full (structured_outputs.regex, guided_regex)
	OutputChoice                       // exactly one of Choice (structured_outputs.choice, guided_choice)
)

// Output is the constraint on the assistant's content.
type Output struct {
	Kind   OutputKind
	Schema json.RawMessage // OutputJSONSchema
	Strict bool            // OutputJSONSchema: refuse keywords that cannot be enforced exactly
	Regex  string          // OutputRegex
	Choice []string        // OutputChoice
	// Param is the request parameter it came from, for errors and warnings
	// ("response_format.json_schema.schema", "guided_regex", ...).
	Param string
}

// Tool is one function the model may call.
type Tool struct {
	Name       string
	Parameters json.RawMessage // a JSON Schema; empty or null means any object
	Strict     bool
	// Param is the request parameter holding Parameters, in the request's
	// API's words, for errors and warnings ("tools.0.input_schema" on
	// Messages); "" means OpenAI chat's tools[i].function.parameters.
	Param string
}

// ToolMode is the tool_choice mode.
type ToolMode uint8

// The tool_choice modes. The zero value means OpenAI's default: auto when
// tools are given, none otherwise.
const (
	ToolDefault  ToolMode = iota
	ToolNone              // "none": no call; the trigger cannot be generated
	ToolAuto              // "auto": text, then optionally calls
	ToolRequired          // "required": the turn is calls only
	ToolNamed             // {"type":"function","function":{"name":…}}: exactly one call of that function
)

// Spec is everything a request says about the shape of the assistant turn,
// in no API's terms: each wire adapter converts its request into one.
type Spec struct {
	Output   Output
	Tools    []Tool
	ToolMode ToolMode
	ToolName string // ToolNamed: the function
	Parallel bool   // several calls may be made (OpenAI's parallel_tool_calls, true by default)
	// Reasoning is the model's thinking before the answer (reasoning.go).
	Reasoning Reasoning
}

// Options configures Build: what the model and the server fix for every
// request. The zero value means defaults (and a model without specials).
type Options struct {
	// Format is the model's tool-call format (needed when a Spec has
	// tools).
	Format Format
	// Description, when set, is the tool-call format used instead of
	// Format's registered one (a format DetectDescription built from a
	// template); Format then only names it.
	Description *Description
	// IsSpecial reports whether a marker text is a special token of the
	// vocabulary (written 0xFF + text). nil means none is. The cache key
	// covers it through the resolved markers.
	IsSpecial func(text string) bool
	// Grammar is the base grammar configuration; Strictness is set per
	// schema from its strict flag, Extras from the output kind.
	Grammar grammar.Options
	// MaxTools bounds the tools of one request (default 128, OpenAI's limit).
	MaxTools int
	// Reasoning is the model's reasoning format ("" or "none": no block).
	Reasoning ReasoningFormat
}

// DefaultMaxTools is OpenAI's limit on tools per request.
const DefaultMaxTools = 128

// Unenforced is one keyword a lenient compile did not enforce.
type Unenforced struct {
	Param   string // the request parameter holding the schema
	Pointer string // the JSON Pointer of the schema node
	Keyword string
	Message string
}

// String formats u as "PARAM#POINTER KEYWORD", the form used in the
// X-Conform-Unenforced header.
func (u Unenforced) String() string {
	return u.Param + "#" + u.Pointer + " " + u.Keyword
}

// Result is a built constraint.
type Result struct {
	// Node is the constraint on the whole assistant turn, or nil when the
	// turn is unconstrained (no tools, free-text output).
	Node *fsm.Node
	// Key identifies Node for an fsm.Cache (CacheKey.Constraint): a hash of
	// every input that shapes it.
	Key string
	// Options is the canonical form of the grammar options (CacheKey.Options).
	Options string
	// Unenforced lists the keywords lenient compiles ignored.
	Unenforced []Unenforced
	// Calls reports that the turn may hold tool calls: its text must go
	// through a Parser of Format.
	Calls bool
	// Format is the tool-call format used (when Calls).
	Format Format
	// params says how each parameter of an ArgsParams format is written,
	// for the parser.
	params paramKinds
	// think is the turn's reasoning block, nil without one;
	// thinkSpecials are the reasoning format's markers that are special
	// tokens, as generated (the parser cleans them from content).
	think         *thinkLayout
	thinkSpecials []string
}

var validName = func(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Build turns spec into the constraint of the whole assistant turn, under
// the model's opts. It is pure (no automaton is compiled): Compiler.Compile
// runs it, then compiles and caches its Node.
func Build(spec Spec, opts Options) (*Result, error) {
	maxTools := opts.MaxTools
	if maxTools == 0 {
		maxTools = DefaultMaxTools
	}
	mode := spec.ToolMode
	if mode == ToolDefault {
		mode = ToolNone
		if len(spec.Tools) > 0 {
			mode = ToolAuto
		}
	}
	if len(spec.Tools) > maxTools {
		return nil, &Error{Code: CodeInvalidRequest, Param: "tools", Msg: fmt.Sprintf("%d tools, more than the limit of %d", len(spec.Tools), maxTools)}
	}
	if mode != ToolNone && len(spec.Tools) == 0 {
		return nil, &Error{Code: CodeInvalidRequest, Param: "tool_choice", Msg: "tool_choice requires tools"}
	}
	seen := map[string]bool{}
	for i, t := range spec.Tools {
		if !validName(t.Name) {
			return nil, &Error{Code: CodeInvalidRequest, Param: fmt.Sprintf("tools[%d].function.name", i), Msg: fmt.Sprintf("invalid function name %q: use 1 to 64 of a-z, A-Z, 0-9, '_', '-', '.'", t.Name)}
		}
		if seen[t.Name] {
			return nil, &Error{Code: CodeInvalidRequest, Param: fmt.Sprintf("tools[%d].function.name", i), Msg: fmt.Sprintf("duplicate function name %q", t.Name)}
		}
		seen[t.Name] = true
	}
	if mode == ToolNamed && !seen[spec.ToolName] {
		return nil, &Error{Code: CodeInvalidRequest, Param: "tool_choice.function.name", Msg: fmt.Sprintf("function %q is not among the tools", spec.ToolName)}
	}
	var sx syntax
	if len(spec.Tools) > 0 {
		f, ok := lookupFormat(opts)
		if !ok {
			return nil, &Error{Code: CodeUnknownFormat, Param: "tools", Msg: fmt.Sprintf("unknown tool-call format %q", opts.Format)}
		}
		sx = f.resolved(opts.IsSpecial)
	}

	b := &builder{opts: opts}
	res := &Result{Format: opts.Format}
	content, err := b.output(spec.Output)
	if err != nil {
		return nil, err
	}
	// content == nil: free text.
	text := content
	if text == nil {
		text = fsm.Star(fsm.AnyRune())
	}

	switch {
	case len(spec.Tools) == 0:
		res.Node = content
	case mode == ToolNone:
		res.Node = b.withoutCalls(text, sx, content != nil)
	default:
		var tools []Tool
		for _, t := range spec.Tools {
			if mode != ToolNamed || t.Name == spec.ToolName {
				tools = append(tools, t)
			}
		}
		calls, err := b.calls(tools, spec.Tools, sx, spec.Parallel && mode != ToolNamed)
		if err != nil {
			return nil, err
		}
		res.Calls = true
		switch {
		case mode != ToolAuto:
			res.Node = calls
		case sx.Trigger != "" && content == nil:
			// Free text up to the first trigger, then the calls.
			res.Node = fsm.Cat(b.withoutCalls(text, sx, false), fsm.Opt(calls))
		default:
			res.Node = fsm.Alt(b.withoutCalls(text, sx, content != nil), calls)
		}
	}
	res.Unenforced = b.unenforced
	res.params = b.params
	res.Options = grammarOptionsKey(opts.Grammar)
	res.Key = cacheKey(spec, opts.Format, mode, sx, res.Options)
	if err := applyReasoning(spec.Reasoning, len(spec.Tools) > 0, opts, res); err != nil { // the outer layer (reasoning.go)
		return nil, err
	}
	return res, nil
}

type builder struct {
	opts       Options
	unenforced []Unenforced
	params     paramKinds
	// values memoizes the per-parameter formats' value constraints by
	// schema (paramArgs): agents' tools repeat the same parameter schemas
	// ({"type": "string"} most of all), and one node for all of them is one
	// DFA for fsm to build instead of one each.
	values map[paramValueKey]paramValue
}

// anyBytes is every byte string.
var anyBytes = fsm.Star(fsm.ByteClass(fsm.ByteRange{Lo: 0, Hi: 0xFF}))

// output builds the content constraint, nil for free text.
func (b *builder) output(o Output) (*fsm.Node, error) {
	param := o.Param
	switch o.Kind {
	case OutputText:
		return nil, nil
	case OutputJSONObject:
		if param == "" {
			param = "response_format"
		}
		return b.schema(json.RawMessage(`{"type":"object"}`), false, param, grammar.ExtrasAllowed)
	case OutputJSONSchema:
		if param == "" {
			param = "response_format.json_schema.schema"
		}
		if len(strings.TrimSpace(string(o.Schema))) == 0 {
			return nil, &Error{Code: CodeInvalidRequest, Param: param, Msg: "a JSON schema is required"}
		}
		return b.schema(o.Schema, o.Strict, param, grammar.ExtrasAllowed)
	case OutputRegex:
		if param == "" {
			param = "structured_outputs.regex"
		}
		r, err := grammar.CompileRegex(o.Regex, b.opts.Grammar)
		if err != nil {
			return nil, grammarError(err, param)
		}
		return r.Node, nil
	case OutputChoice:
		if param == "" {
			param = "structured_outputs.choice"
		}
		if len(o.Choice) == 0 {
			return nil, &Error{Code: CodeInvalidRequest, Param: param, Msg: "choice needs at least one string"}
		}
		r, err := grammar.CompileChoice(o.Choice, b.opts.Grammar)
		if err != nil {
			return nil, grammarError(err, param)
		}
		return r.Node, nil
	}
	return nil, &Error{Code: CodeInternal, Param: param, Msg: fmt.Sprintf("unknown output kind %d", o.Kind)}
}

func (b *builder) schema(schema json.RawMessage, strict bool, param string, extras grammar.ExtrasMode) (*fsm.Node, error) {
	g := b.opts.Grammar
	g.Strictness = grammar.Lenient
	if strict {
		g.Strictness = grammar.Strict
	}
	g.Extras = extras
	r, err := grammar.CompileSchema(schema, g)
	if err != nil {
		return nil, grammarError(err, param)
	}
	for _, w := range r.Warnings {
		b.unenforced = append(b.unenforced, Unenforced{Param: param, Pointer: w.Pointer, Keyword: w.Keyword, Message: w.Message})
	}
	return r.Node, nil
}

func grammarError(err error, param string) error {
	var ge *grammar.Error
	if errors.As(err, &ge) {
		code := CodeSchema
		if ge.Code == grammar.CodeTooLarge {
			code = CodeTooLarge
		}
		return &Error{Code: code, Param: param, Pointer: ge.Pointer, Keyword: ge.Keyword, Msg: ge.Message, Err: err}
	}
	return &Error{Code: CodeSchema, Param: param, Msg: err.Error(), Err: err}
}

// grammarOptionsKey prints every field of o (all plain values), so a new
// option cannot be left out of the cache key.
func grammarOptionsKey(o grammar.Options) string { return fmt.Sprintf("%+v", o) }

// cacheKey hashes every input of Build that shapes the node.
func cacheKey(spec Spec, f Format, mode ToolMode, sx syntax, optKey string) string {
	h := sha256.New()
	w := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s;", len(p), p)
		}
	}
	w("v1", optKey, fmt.Sprint(spec.Output.Kind), fmt.Sprint(spec.Output.Strict), string(spec.Output.Schema), spec.Output.Regex)
	w(fmt.Sprint(len(spec.Output.Choice)))
	w(spec.Output.Choice...)
	if len(spec.Tools) > 0 {
		w(fmt.Sprint(mode), spec.ToolName, fmt.Sprint(spec.Parallel), string(f))
		w(sx.key()...)
		w(fmt.Sprint(len(spec.Tools)))
		for _, t := range spec.Tools {
			w(t.Name, fmt.Sprint(t.Strict), string(t.Parameters))
		}
	}
	sum := h.Sum(nil)
	return "turn:" + hex.EncodeToString(sum)
}
