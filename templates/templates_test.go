package templates

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this renderer")

// mustJSON decodes a JSON literal for a test table.
func mustJSON(t testing.TB, s string) Value {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("DecodeJSON(%q): %v", s, err)
	}
	return v
}

var fixedNow = time.Date(2024, 7, 26, 15, 4, 5, 0, time.UTC)

// renderTests pair a small template and inputs with the exact output that
// jinja2 3.1 gives in transformers' environment.
var renderTests = []struct {
	name     string
	tmpl     string
	messages string // JSON, "" for an empty list
	tools    string // JSON, "" for None
	agp      bool
	want     string
}{
	{"text", "hello", "", "", false, "hello"},
	{"trailing newline dropped", "a\n", "", "", false, "a"},
	{"only one trailing newline dropped", "a\n\n", "", "", false, "a\n"},
	{"crlf normalised", "a\r\nb\rc", "", "", false, "a\nb\nc"},
	{"trim_blocks", "{% if true %}\nx\n{% endif %}\ny", "", "", false, "x\ny"},
	{"lstrip_blocks", "  {% if true %}x{% endif %}", "", "", false, "x"},
	{"no lstrip before print", "  {{ 'x' }}", "", "", false, "  x"},
	{"lstrip disabled by plus", "  {%+ if true %}x{% endif %}", "", "", false, "  x"},
	{"trim disabled by plus", "{% if true +%}\nx{% endif %}", "", "", false, "\nx"},
	{"dash strips newlines", "a  \n {%- if true -%} \n b {%- endif %}", "", "", false, "ab"},
	{"comment trims", "a\n{# c #}\nb", "", "", false, "a\nb"},
	{"raw", "{% raw %}{{ x }}{% endraw %}", "", "", false, "{{ x }}"},
	{"negative index", "{{ messages[-1].content }}", `[{"content":"a"},{"content":"b"}]`, "", false, "b"},
	{"slices", "{{ 'abcdef'[1:-1:2] }}{{ [1,2,3][::-1] }}", "", "", false, "bd[3, 2, 1]"},
	{"tools none is defined", "{{ tools is defined }}{{ tools is none }}", "", "", false, "TrueTrue"},
	{"undefined var", "[{{ nope }}]{{ nope is defined }}", "", "", false, "[]False"},
	{"tojson order and unicode", "{{ tools[0] | tojson }}", "", `[{"z":1,"a":"é<>&\u2028","n":null,"f":1.0}]`, false, "{\"z\": 1, \"a\": \"é<>&\u2028\", \"n\": null, \"f\": 1.0}"},
	{"tojson indent", "{{ tools[0] | tojson(indent=2) }}", "", `[{"a":[1,{}],"b":{}}]`, false, "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {}\n}"},
	{"tojson string", "{{ '{\"a\": 1}' | tojson }}", "", "", false, `"{\"a\": 1}"`},
	{"python repr", "{{ tools }}", "", `[{"s":"it's","q":"say \"hi\"","b":true,"n":null,"l":[1.5,-0.0]}]`, false, `[{'s': "it's", 'q': 'say "hi"', 'b': True, 'n': None, 'l': [1.5, -0.0]}]`},
	{"float printing", "{{ 1e16 }} {{ 1e15 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 2.0 }}", "", "", false, "1e+16 1000000000000000.0 0.30000000000000004 0.3333333333333333 2.0"},
	{"python arithmetic", "{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 2 }}", "", "", false, "-4 2 3.5 1024 abab"},
	{"string methods", "{{ '  x  '.strip() }}|{{ 'a,b'.split(',')[-1] }}|{{ 'xyx'.strip('x') }}|{{ 'Hi'.upper() }}{{ 'ab'.startswith('a') }}", "", "", false, "x|b|y|HITrue"},
	{"dict methods", "{% for k, v in tools[0].items() %}{{ k }}={{ v }};{% endfor %}{{ tools[0].get('zz', 'd') }}", "", `[{"b":1,"a":2}]`, false, "b=1;a=2;d"},
	{"items key is a method", "{{ tools[0].items is defined }}{{ tools[0]['items'] }}", "", `[{"items":"I"}]`, false, "TrueI"},
	{"loop vars", "{% for x in 'abc' %}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.previtem }}|{% endfor %}", "", "", false, "0TrueFalse|1FalseFalsea|2FalseTrueb|"},
	{"loop filter", "{% for x in [1,2,3,4] if x is even %}{{ x }}{{ loop.length }}{% endfor %}", "", "", false, "2242"},
	{"break continue", "{% for x in range(10) %}{% if x == 1 %}{% continue %}{% endif %}{% if x > 3 %}{% break %}{% endif %}{{ x }}{% endfor %}", "", "", false, "023"},
	{"for else after break", "{% for x in 'ab' %}{% break %}{% else %}E{% endfor %}", "", "", false, "E"},
	{"set scoping", "{% set x = 1 %}{% for i in [1,2] %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}", "", "", false, "221"},
	{"namespace", "{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "", "", false, "6"},
	{"set block", "{% set x %}a{{ 1 }}b{% endset %}[{{ x }}]", "", "", false, "[a1b]"},
	{"macro defaults and recursion", "{% macro f(n, s='.') %}{% if n > 0 %}{{ s }}{{ f(n - 1, s) }}{% endif %}{% endmacro %}{{ f(3) }}{{ f(2, s='-') }}", "", "", false, "...--"},
	{"filters", "{{ [3,1,2]|sort|join(',') }} {{ ['a','A','b']|unique|list }} {{ messages|map(attribute='r')|join }} {{ messages|selectattr('r','equalto','x')|list|length }}", `[{"r":"x"},{"r":"y"}]`, "", false, "1,2,3 ['a', 'b'] xy 1"},
	{"default", "{{ nope|default('d') }}{{ ''|default('e', true) }}{{ none|default('n') }}", "", "", false, "deNone"},
	{"tests", "{{ 1 is number }}{{ true is number }}{{ 'a' is string }}{{ {} is mapping }}{{ 'a' is iterable }}{{ none is none }}{{ 3 is odd }}", "", "", false, "TrueTrueTrueTrueTrueTrueTrue"},
	{"in", "{{ 'a' in 'cat' }}{{ 2 in [1,2] }}{{ 'k' in {'k':1} }}{{ 'x' not in 'y' }}", "", "", false, "TrueTrueTrueTrue"},
	{"concat tilde", "{{ 1 ~ none ~ true }}", "", "", false, "1NoneTrue"},
	{"inline if without else", "[{{ 'x' if false }}]", "", "", false, "[]"},
	{"strftime_now", "{{ strftime_now('%d %b %Y %H:%M %A %B %-d %j') }}", "", "", false, "26 Jul 2024 15:04 Friday July 26 208"},
	{"generation tag", "{% generation %}g{% endgeneration %}", "", "", false, "g"},
	{"add_generation_prompt", "{% if add_generation_prompt %}P{% endif %}", "", "", true, "P"},
	{"generator is truthy once", "{% set g = [1,2]|select %}{{ g|list }}{{ g|list }}{{ g is iterable }}", "", "", false, "[1, 2][]True"},
	{"constant slice folds to undefined", "{{ 1[:-1] is defined }}", "", "", false, "False"},
}

func TestRender(t *testing.T) {
	for _, tc := range renderTests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.tmpl, err)
			}
			got, err := tmpl.Render(Vars{Messages: mustJSON(t, tc.messages), Tools: mustJSON(t, tc.tools),
				AddGenerationPrompt: tc.agp, Now: func() time.Time { return fixedNow }})
			if err != nil {
				t.Fatalf("Render(%q): %v", tc.tmpl, err)
			}
			if got != tc.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

// errorTests must fail with the given code (and, for CodeRaised, message).
var errorTests = []struct {
	name     string
	tmpl     string
	messages string
	code     ErrorCode
	msg      string
}{
	{"unclosed if", "{% if x %}", "", CodeSyntax, ""},
	{"unknown tag", "{% frobnicate %}", "", CodeSyntax, ""},
	{"unknown filter", "{{ x | frobnicate }}", "", CodeSyntax, ""},
	{"unknown test", "{{ x is frobnicated }}", "", CodeSyntax, ""},
	{"break outside loop", "{% break %}", "", CodeSyntax, ""},
	{"unterminated string", "{{ 'abc }}", "", CodeSyntax, ""},
	{"unterminated comment", "{# abc", "", CodeSyntax, ""},
	{"include unsupported", "{% include 'x' %}", "", CodeUnsupported, ""},
	{"raise_exception", "{{ raise_exception('Only user and assistant roles!') }}", "", CodeRaised, "Only user and assistant roles!"},
	{"str plus none", "{{ 'a' + messages[0].content }}", `[{"content":null}]`, CodeRuntime, ""},
	{"attribute of undefined", "{{ nope.x }}", "", CodeRuntime, ""},
	{"in none", "{{ 'a' in none }}", "", CodeRuntime, ""},
	{"iterate none", "{% for x in none %}{% endfor %}", "", CodeRuntime, ""},
	{"length of none", "{{ none | length }}", "", CodeRuntime, ""},
	{"mutation refused", "{{ messages.append(1) }}", "[]", CodeRuntime, ""},
	{"tojson undefined", "{{ nope | tojson }}", "", CodeRuntime, ""},
	{"division by zero", "{{ 1 / 0 }}", "", CodeRuntime, ""},
	{"slice of variable int", "{% set v = 1 %}{{ v[:1] }}", "", CodeRuntime, ""},
	{"assign attr on dict", "{% set d = {} %}{% set d.x = 1 %}", "", CodeRuntime, ""},
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range errorTests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if err == nil {
				var out string
				out, err = tmpl.Render(Vars{Messages: mustJSON(t, tc.messages)})
				if err == nil {
					t.Fatalf("Render(%q) = %q, want a %v error", tc.tmpl, out, tc.code)
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if e.Code != tc.code {
				t.Errorf("%q: error %v has code %v, want %v", tc.tmpl, err, e.Code, tc.code)
			}
			if tc.msg != "" && e.Msg != tc.msg {
				t.Errorf("%q: error Msg = %q, want %q", tc.tmpl, e.Msg, tc.msg)
			}
		})
	}
}

// TestBudgets checks that runaway templates end with CodeBudget.
func TestBudgets(t *testing.T) {
	tests := []struct {
		name   string
		tmpl   string
		limits Limits
	}{
		{"steps", "{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}", Limits{MaxSteps: 100_000}},
		{"output", "{% for a in range(100000) %}xxxxxxxxxx{% endfor %}", Limits{MaxOutput: 1 << 16}},
		{"string doubling", "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", Limits{MaxOutput: 1 << 20}},
		{"repeat", "{{ 'x' * 1000000000 }}", Limits{}},
		{"list doubling", "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", Limits{MaxOutput: 1 << 20}},
		{"recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", Limits{}},
		{"range", "{{ range(10000000000) | length }}", Limits{}},
		{"replace blowup", "{% set s = 'a' * 1000 %}{{ s.replace('a', s * 1000) }}", Limits{MaxOutput: 1 << 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = tmpl.Render(Vars{Limits: tc.limits})
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeBudget {
				t.Fatalf("Render(%q) error = %v, want a budget error", tc.tmpl, err)
			}
		})
	}
	deep := strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)
	if _, err := Parse("{{ " + deep + " }}"); err == nil {
		t.Errorf("Parse(10000 nested parentheses) succeeded, want a nesting error")
	}
}

// TestTestdataGolden renders the package's own small templates against
// goldens produced by jinja2 (testdata/README.md).
func TestTestdataGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jinja")
	if len(files) == 0 {
		t.Fatal("no testdata/*.jinja")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jinja")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			in, err := os.ReadFile(filepath.Join("testdata", name+".input.json"))
			if err != nil {
				t.Fatal(err)
			}
			inv, ok := mustJSON(t, string(in)).(*Dict)
			if !ok {
				t.Fatal("input is not an object")
			}
			vars := Vars{Now: func() time.Time { return fixedNow }}
			if v, ok := inv.Get(Str("messages")); ok {
				vars.Messages = v
			}
			if v, ok := inv.Get(Str("tools")); ok {
				vars.Tools = v
			}
			if v, ok := inv.Get(Str("add_generation_prompt")); ok {
				vars.AddGenerationPrompt = truthy(v)
			}
			tmpl, err := Parse(string(src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := tmpl.Render(vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("Render(%s) mismatch\n%s", name, firstDiff(got, string(want)))
			}
		})
	}
}

// FuzzRender parses and renders arbitrary templates with arbitrary JSON
// messages under small budgets: it must never panic or hang.
func FuzzRender(f *testing.F) {
	for _, tc := range renderTests {
		f.Add(tc.tmpl, tc.messages)
	}
	for _, tc := range errorTests {
		f.Add(tc.tmpl, tc.messages)
	}
	for _, tc := range unknownTests {
		f.Add(tc.tmpl, "")
	}
	if files, _ := filepath.Glob("testdata/*.jinja"); len(files) > 0 {
		for _, file := range files {
			src, _ := os.ReadFile(file)
			f.Add(string(src), `[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}]`)
		}
	}
	f.Fuzz(func(t *testing.T, src, messages string) {
		tmpl, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %T is not *Error", err)
			}
			return
		}
		msgs, err := DecodeJSON([]byte(messages))
		if err != nil {
			msgs = nil
		}
		out, err := tmpl.Render(Vars{Messages: msgs, Now: func() time.Time { return fixedNow },
			Limits: Limits{MaxSteps: 200_000, MaxOutput: 1 << 20, MaxDepth: 50}})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Render error %T is not *Error", err)
			}
			return
		}
		if len(out) > 1<<20 {
			t.Fatalf("output of %d bytes exceeds MaxOutput", len(out))
		}
	})
}

// FuzzDecodeJSON checks that DecodeJSON never panics and that tojson of a
// decoded value decodes again to an equal value.
func FuzzDecodeJSON(f *testing.F) {
	f.Add(`{"a":[1,2.5,"x",null,true,{"b":{}}]}`)
	f.Add(`"\u2028<>&é"`)
	f.Add(`1e400`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeJSON([]byte(s))
		if err != nil {
			return
		}
		out, err := toJSON(v, jsonOptions{itemSep: ", ", keySep: ": "})
		if err != nil {
			t.Fatalf("tojson(%s): %v", toStr(v), err)
		}
		if strings.Contains(out, "Infinity") || strings.Contains(out, "NaN") {
			return // Python writes non-finite floats as Infinity/NaN, which JSON cannot read back
		}
		w, err := DecodeJSON([]byte(out))
		if err != nil {
			t.Fatalf("tojson output %q does not decode: %v", out, err)
		}
		if !valuesEqual(v, w) {
			t.Fatalf("round trip changed %s to %s", toStr(v), toStr(w))
		}
	})
}

// BenchmarkRender renders testdata/tiny_chatml.jinja (a tool-call
// conversation) per iteration.
func BenchmarkRender(b *testing.B) {
	src, err := os.ReadFile("testdata/tiny_chatml.jinja")
	if err != nil {
		b.Fatal(err)
	}
	in, err := os.ReadFile("testdata/tiny_chatml.input.json")
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		b.Fatal(err)
	}
	inv := mustJSON(b, string(in)).(*Dict)
	msgs, _ := inv.Get(Str("messages"))
	tools, _ := inv.Get(Str("tools"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(Vars{Messages: msgs, Tools: tools, AddGenerationPrompt: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse parses testdata/tiny_macro.jinja per iteration.
func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile("testdata/tiny_macro.jinja")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(string(src)); err != nil {
			b.Fatal(err)
		}
	}
}
