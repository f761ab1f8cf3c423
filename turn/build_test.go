package turn

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
)

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":12},"unit":{"enum":["c","f"]}},"required":["city"],"additionalProperties":false}`
const timeSchema = `{"type":"object","properties":{"tz":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["tz"],"additionalProperties":false}`

var twoTools = []Tool{
	{Name: "get_weather", Parameters: json.RawMessage(weatherSchema), Strict: true},
	{Name: "get_time", Parameters: json.RawMessage(timeSchema)},
}

// specials marks the usual special tokens of each family.
func specials(s string) bool {
	switch s {
	case "<|python_tag|>", "[TOOL_CALLS]":
		return true
	}
	return false
}

// specOpts is a Spec with the model options it is built under.
type specOpts struct {
	spec Spec
	opts Options
}

// so pairs spec with the options of a model whose format is f and whose
// specials are isSpecial.
func so(spec Spec, f Format, isSpecial func(string) bool) specOpts {
	return specOpts{spec: spec, opts: Options{Format: f, IsSpecial: isSpecial}}
}

// eagerAnyDepth is the free-form depth of the turns compile builds: an
// eager DFA (fsm.Compile) roughly doubles with each level, and the
// grammar's default (16) would pass fsm's NFA budget.
const eagerAnyDepth = 4

func compile(t *testing.T, s specOpts) (*Result, *fsm.DFA) {
	t.Helper()
	if s.opts.Grammar.AnyValueDepth == 0 {
		s.opts.Grammar.AnyValueDepth = eagerAnyDepth
	}
	res, err := Build(s.spec, s.opts)
	if err != nil {
		t.Fatalf("Build(%+v) error: %v", s.spec, err)
	}
	if res.Node == nil {
		return res, nil
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatalf("fsm.Compile error: %v", err)
	}
	return res, d
}

const (
	hCallW = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	hCallT = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>"
	lCallW = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"unit\": \"c\"}}"
	lCallT = "{\"name\": \"get_time\", \"parameters\": {\"tz\": \"CET\"}}"
	mCallW = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"
	mCallT = "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}"
)

func TestBuildMatches(t *testing.T) {
	tests := []struct {
		name string
		spec specOpts
		yes  []string
		no   []string
	}{
		{
			name: "hermes required parallel",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}, FormatHermes, nil),
			yes:  []string{hCallW, hCallT, hCallW + "\n" + hCallT, hCallT + "\n" + hCallT + "\n" + hCallW},
			no: []string{"", "hello", "hi " + hCallW, hCallW + "\n", hCallW + hCallT,
				strings.Replace(hCallW, "Paris", "a very long city name", 1),           // maxLength
				strings.Replace(hCallT, "UTC", "utc", 1),                               // pattern
				strings.Replace(hCallW, "get_weather", "get_time", 1),                  // name and arguments tied
				strings.Replace(hCallW, `"city": "Paris"`, `"town": "Paris"`, 1),       // required
				"<tool_call>\n{\"name\": \"other\", \"arguments\": {}}\n</tool_call>"}, // unknown tool
		},
		{
			name: "hermes required single",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: false}, FormatQwen, nil),
			yes:  []string{hCallW, hCallT},
			no:   []string{hCallW + "\n" + hCallT, ""},
		},
		{
			name: "hermes named",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolNamed, ToolName: "get_time", Parallel: true}, FormatHermes, nil),
			yes:  []string{hCallT},
			no:   []string{hCallW, hCallT + "\n" + hCallT, "text"},
		},
		{
			name: "hermes auto",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true}, FormatHermes, nil),
			yes:  []string{"", "Hello there", "Let me check.\n\n" + hCallW, hCallW + "\n" + hCallT, "a <tool_cal b", "<tool_call" + hCallW},
			no:   []string{"Hello <tool_call> world", "text " + hCallW + " more", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>", "\xff"},
		},
		{
			name: "hermes none",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolNone}, FormatHermes, nil),
			yes:  []string{"", "Hello", "<tool_cal", "tool_call>", "</tool_cal"},
			no:   []string{hCallW, "x<tool_call>y", "<tool_call>", "a</tool_call>"},
		},
		{
			name: "default mode with tools is auto",
			spec: so(Spec{Tools: twoTools, Parallel: true}, FormatHermes, nil),
			yes:  []string{"hi", "hi" + hCallT},
			no:   []string{"hi<tool_call>"},
		},
		{
			name: "llama3 required with special python_tag",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}, FormatLlama3JSON, specials),
			yes:  []string{lCallW, "\xff<|python_tag|>" + lCallW, lCallW + "; " + lCallT},
			no:   []string{"<|python_tag|>" + lCallW, "hello", lCallW + ";" + lCallT},
		},
		{
			name: "llama3 auto: text or calls",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: false}, FormatLlama3JSON, specials),
			yes:  []string{"Hello", "a {json} inside", lCallT, "\xff<|python_tag|>" + lCallT},
			no:   []string{"{not a call}", "text then " + lCallT, lCallT + "; " + lCallW},
		},
		{
			name: "llama3 python_tag as text",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolNone}, FormatLlama3JSON, nil),
			yes:  []string{"Hello"},
			no:   []string{"<|python_tag|>x", "{"},
		},
		{
			name: "mistral required",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}, FormatMistral, specials),
			yes:  []string{"\xff[TOOL_CALLS][" + mCallW + "]", "\xff[TOOL_CALLS][" + mCallW + ", " + mCallT + "]"},
			no:   []string{"[TOOL_CALLS][" + mCallW + "]", "\xff[TOOL_CALLS][]", "\xff[TOOL_CALLS][" + mCallW + "]x"},
		},
		{
			name: "mistral auto with text trigger",
			spec: so(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true}, FormatMistral, nil),
			yes:  []string{"ok", "ok[TOOL_CALLS][" + mCallT + "]"},
			no:   []string{"ok [TOOL_CALLS] no"},
		},
		{
			name: "json_object",
			spec: so(Spec{Output: Output{Kind: OutputJSONObject}}, "", nil),
			yes:  []string{`{}`, `{"a": [1, {"b": null}]}`},
			no:   []string{`[]`, `"x"`, `{`, ` {}`},
		},
		{
			name: "json_schema",
			spec: so(Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema), Strict: true}}, "", nil),
			yes:  []string{`{"city": "Rome"}`, `{"city":"Rome","unit":"f"}`},
			no:   []string{`{}`, `{"city": "Rome", "x": 1}`},
		},
		{
			name: "regex",
			spec: so(Spec{Output: Output{Kind: OutputRegex, Regex: `[0-9]{3}-[a-z]+`}}, "", nil),
			yes:  []string{"123-abc"},
			no:   []string{"12-abc", "123-"},
		},
		{
			name: "choice",
			spec: so(Spec{Output: Output{Kind: OutputChoice, Choice: []string{"yes", "no", "maybe"}}}, "", nil),
			yes:  []string{"yes", "no", "maybe"},
			no:   []string{"y", "yesno", ""},
		},
		{
			name: "json content or a call (auto)",
			spec: so(Spec{Output: Output{Kind: OutputJSONObject}, Tools: twoTools, ToolMode: ToolAuto}, FormatHermes, nil),
			yes:  []string{`{"a": 1}`, hCallT},
			no:   []string{"text", `{"a": 1}` + hCallT},
		},
		{
			name: "llama3 json content or a call",
			spec: so(Spec{Output: Output{Kind: OutputJSONObject}, Tools: twoTools, ToolMode: ToolAuto}, FormatLlama3JSON, specials),
			yes:  []string{`{"a": 1}`, lCallT, `{"name": 1}`},
			no:   []string{`{"name": "get_time"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := compile(t, tt.spec)
			for _, s := range tt.yes {
				if !fsm.Matches(d, []byte(s)) {
					t.Errorf("Matches(%q) = false, want true", s)
				}
			}
			for _, s := range tt.no {
				if fsm.Matches(d, []byte(s)) {
					t.Errorf("Matches(%q) = true, want false", s)
				}
			}
		})
	}
}

func TestBuildUnconstrained(t *testing.T) {
	res, err := Build(Spec{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Node != nil || res.Calls {
		t.Errorf("Build(Spec{}) = node %v, calls %v; want nil, false", res.Node, res.Calls)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		spec    specOpts
		code    ErrorCode
		param   string
		pointer string
		keyword string
	}{
		{"strict unsupported keyword", so(Spec{Tools: []Tool{{Name: "f", Strict: true, Parameters: json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","uniqueItems":true}}}`)}}, ToolMode: ToolRequired}, FormatHermes, nil),
			CodeSchema, "tools[0].function.parameters", "/properties/xs/uniqueItems", "uniqueItems"},
		{"strict response_format", so(Spec{Output: Output{Kind: OutputJSONSchema, Strict: true, Schema: json.RawMessage(`{"type":"array","uniqueItems":true}`)}}, "", nil),
			CodeSchema, "response_format.json_schema.schema", "/uniqueItems", "uniqueItems"},
		{"invalid schema", so(Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(`{"type":`), Param: "guided_json"}}, "", nil),
			CodeSchema, "guided_json", "", ""},
		{"bad regex", so(Spec{Output: Output{Kind: OutputRegex, Regex: `(a`}}, "", nil), CodeSchema, "structured_outputs.regex", "", ""},
		{"empty choice", so(Spec{Output: Output{Kind: OutputChoice}}, "", nil), CodeInvalidRequest, "structured_outputs.choice", "", ""},
		{"named tool missing", so(Spec{Tools: twoTools, ToolMode: ToolNamed, ToolName: "nope"}, FormatHermes, nil), CodeInvalidRequest, "tool_choice.function.name", "", ""},
		{"required without tools", so(Spec{ToolMode: ToolRequired}, "", nil), CodeInvalidRequest, "tool_choice", "", ""},
		{"bad name", so(Spec{Tools: []Tool{{Name: "a b"}}}, FormatHermes, nil), CodeInvalidRequest, "tools[0].function.name", "", ""},
		{"duplicate name", so(Spec{Tools: []Tool{{Name: "a"}, {Name: "a"}}}, FormatHermes, nil), CodeInvalidRequest, "tools[1].function.name", "", ""},
		{"unknown format", so(Spec{Tools: []Tool{{Name: "a"}}}, "xml", nil), CodeUnknownFormat, "tools", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.spec.spec, tt.spec.opts)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Build error = %v, want *Error", err)
			}
			if e.Code != tt.code || e.Param != tt.param || e.Pointer != tt.pointer || e.Keyword != tt.keyword {
				t.Errorf("Build error = {%v %q %q %q}, want {%v %q %q %q}", e.Code, e.Param, e.Pointer, e.Keyword, tt.code, tt.param, tt.pointer, tt.keyword)
			}
		})
	}
}

func TestBuildLenientReportsUnenforced(t *testing.T) {
	spec := so(Spec{Tools: []Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","uniqueItems":true}}}`)}}, ToolMode: ToolRequired}, FormatHermes, nil)
	res, _ := compile(t, spec)
	if len(res.Unenforced) != 1 {
		t.Fatalf("Unenforced = %v, want one entry", res.Unenforced)
	}
	if got, want := res.Unenforced[0].String(), "tools[0].function.parameters#/properties/xs/uniqueItems uniqueItems"; got != want {
		t.Errorf("Unenforced[0].String() = %q, want %q", got, want)
	}
}

func TestBuildKey(t *testing.T) {
	base := so(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}, FormatHermes, nil)
	k := func(s specOpts) string {
		r, err := Build(s.spec, s.opts)
		if err != nil {
			t.Fatal(err)
		}
		return r.Key
	}
	same := base
	if k(base) != k(same) {
		t.Errorf("equal specs give different keys")
	}
	variants := map[string]specOpts{}
	v := base
	v.spec.Parallel = false
	variants["parallel"] = v
	v = base
	v.opts.Format = FormatLlama3JSON
	variants["format"] = v
	v = base
	v.spec.ToolMode = ToolAuto
	variants["mode"] = v
	v = base
	v.opts.IsSpecial = func(string) bool { return true }
	variants["specials"] = v
	v = base
	v.spec.Tools = []Tool{twoTools[1], twoTools[0]}
	variants["tool order"] = v
	for name, s := range variants {
		if k(s) == k(base) {
			t.Errorf("changing %s keeps the key", name)
		}
	}
}

// TestRandomTurnsParseAndValidate walks random strings of each constraint and
// checks that the parser finds calls whose arguments validate against their
// tool's schema, and content that holds no markup.
func TestRandomTurnsParseAndValidate(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range twoTools {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.Parameters))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(tl.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(tl.Name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		schemas[tl.Name] = sch
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []Format{FormatHermes, FormatLlama3JSON, FormatMistral} {
		for _, mode := range []ToolMode{ToolAuto, ToolRequired, ToolNamed, ToolNone} {
			spec := so(Spec{Tools: twoTools, ToolMode: mode, ToolName: "get_weather", Parallel: true}, f, specials)
			res, d := compile(t, spec)
			calls := 0
			for i := 0; i < 150; i++ {
				s := fsm.RandomWalk(d, rng, 300)
				if s == nil || !fsm.Matches(d, s) {
					continue
				}
				content, cs, err := Parse(f, specials, string(s))
				if err != nil {
					t.Fatal(err)
				}
				if !res.Calls && len(cs) > 0 {
					t.Fatalf("%s/%d: Parse(%q) found calls without tools", f, mode, s)
				}
				if (mode == ToolRequired || mode == ToolNamed) && len(cs) == 0 {
					t.Errorf("%s/%d: Parse(%q) found no call, want ≥ 1", f, mode, s)
				}
				if mode == ToolNamed && len(cs) != 1 {
					t.Errorf("%s named: Parse(%q) found %d calls, want 1", f, s, len(cs))
				}
				for _, m := range append(f.Markers(), "\xff") {
					if strings.Contains(content, m) {
						t.Errorf("%s/%d: content %q holds markup %q", f, mode, content, m)
					}
				}
				for _, c := range cs {
					calls++
					sch := schemas[c.Name]
					if sch == nil {
						t.Errorf("%s: call to unknown %q in %q", f, c.Name, s)
						continue
					}
					inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
					if err != nil {
						t.Errorf("%s: arguments %q of %q are not JSON: %v", f, c.Arguments, s, err)
						continue
					}
					if err := sch.Validate(inst); err != nil {
						t.Errorf("%s: arguments %q do not validate: %v", f, c.Arguments, err)
					}
				}
			}
			if (mode == ToolRequired || mode == ToolNamed) && calls == 0 {
				t.Errorf("%s/%d: no call among the random turns", f, mode)
			}
		}
	}
}
