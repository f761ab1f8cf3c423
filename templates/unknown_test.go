package templates

import (
	"errors"
	"strings"
	"testing"
)

// unknownTests say what an unknown filter or test (frob, frobbed) or an
// undefined callable does where it sits: fail Parse with CodeSyntax (parse
// set), fail Render (code set, parse unset), or render want. Every expected
// outcome is what jinja2 3.1.6 gives in transformers' environment (checked
// by hand: an unknown filter in a macro that is never called, or in a loop
// over an empty list, fails at compile time there too, because a macro or
// loop body is not an if).
var unknownTests = []struct {
	name  string
	tmpl  string
	parse bool      // Parse fails with CodeSyntax
	code  ErrorCode // Render fails with this code
	msg   string    // the error's Msg
	line  int       // the error's Line
	want  string    // the output when neither fails
}{
	// Taken branches fail when evaluated.
	{name: "taken if", tmpl: "{% if true %}{{ x | frob }}{% endif %}", code: CodeUnknown, msg: "No filter named 'frob' found.", line: 1},
	{name: "taken else", tmpl: "a{% if false %}t{% else %}\n{{ x | frob }}{% endif %}b", code: CodeUnknown, msg: "No filter named 'frob' found.", line: 2},
	{name: "if condition", tmpl: "a{% if x | frob %}t{% endif %}b", code: CodeUnknown, msg: "No filter named 'frob' found.", line: 1},
	{name: "taken elif condition", tmpl: "a{% if false %}{% elif x|frob %}{% endif %}b", code: CodeUnknown, msg: "No filter named 'frob' found."},
	{name: "taken condexpr", tmpl: "a{{ (x | frob) if true else 1 }}b", code: CodeUnknown, msg: "No filter named 'frob' found."},
	{name: "called macro", tmpl: "a{% macro m() %}{% if true %}\n\n{{ x | frob }}{% endif %}{% endmacro %}{{ m() }}b", code: CodeUnknown, msg: "No filter named 'frob' found.", line: 3},
	{name: "second of two taken", tmpl: "a{% if false %}{{ x|frob }}{% endif %}{% if true %}{{ x|frob }}{% endif %}b", code: CodeUnknown, msg: "No filter named 'frob' found."},
	{name: "dotted name taken", tmpl: "a{% if true %}{{ x|a.b }}{% endif %}b", code: CodeUnknown, msg: "No filter named 'a.b' found."},
	{name: "constant input taken", tmpl: "a{% if true %}{{ 'q'|frob }}{% endif %}b", code: CodeUnknown, msg: "No filter named 'frob' found."},
	{name: "test taken", tmpl: "{% if true %}{{ x is frobbed }}{% endif %}", code: CodeUnknown, msg: "No test named 'frobbed' found."},
	{name: "test in condition", tmpl: "a{% if x is not frobbed(3) %}{% endif %}b", code: CodeUnknown, msg: "No test named 'frobbed' found."},
	{name: "test in condexpr", tmpl: "a{{ 1 if x is frobbed else 2 }}b", code: CodeUnknown, msg: "No test named 'frobbed' found."},
	{name: "select by unknown test", tmpl: "a{{ [1]|select('frobbed')|list }}b", code: CodeUnknown, msg: "No test named 'frobbed'."},
	{name: "map by unknown filter", tmpl: "a{{ [1]|map('frob')|list }}b", code: CodeUnknown, msg: "No filter named 'frob'."},
	// jinja2 evaluates the input and the arguments before the stub raises.
	{name: "undefined argument first", tmpl: "a{% if true %}{{ x|frob(nope()) }}{% endif %}b", code: CodeRuntime, msg: "'nope' is undefined"},
	{name: "undefined input first", tmpl: "a{% if true %}{{ nope()|frob }}{% endif %}b", code: CodeRuntime, msg: "'nope' is undefined"},
	{name: "undefined test input first", tmpl: "a{% if nope() is frobbed %}{% endif %}b", code: CodeRuntime, msg: "'nope' is undefined"},

	// Untaken branches render.
	{name: "untaken if", tmpl: "a{% if false %}{{ x | frob }}{% endif %}b", want: "ab"},
	{name: "untaken elif", tmpl: "a{% if true %}t{% elif x | frob %}{{ x | frob }}{% endif %}b", want: "atb"},
	{name: "untaken else", tmpl: "a{% if true %}t{% else %}{{ x | frob }}{% endif %}b", want: "atb"},
	{name: "short-circuited condition", tmpl: "a{% if false and x | frob %}t{% endif %}b", want: "ab"},
	{name: "untaken condexpr", tmpl: "a{{ (x | frob) if false else 1 }}b", want: "a1b"},
	{name: "condexpr without else", tmpl: "a{{ (x|frob) if false }}b", want: "ab"},
	{name: "condexpr in loop body", tmpl: "a{% for i in [1] %}{{ (i|frob) if false }}{% endfor %}b", want: "ab"},
	{name: "condexpr in uncalled macro", tmpl: "a{% macro m() %}{{ (i|frob) if false }}{% endmacro %}b", want: "ab"},
	{name: "if in uncalled macro", tmpl: "a{% macro m() %}{% if y %}{{ x | frob }}{% endif %}{% endmacro %}b", want: "ab"},
	{name: "if in loop body", tmpl: "a{% for i in [1] %}{% if false %}{{ i|frob }}{% endif %}{% endfor %}b", want: "ab"},
	{name: "if in call block", tmpl: "a{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{% if false %}{{ x|frob }}{% endif %}{% endcall %}b", want: "ab"},
	{name: "if in with body", tmpl: "a{% with %}{% if false %}{{ x|frob }}{% endif %}{% endwith %}b", want: "ab"},
	{name: "if nested in untaken elif", tmpl: "a{% if true %}{% elif false %}{% if true %}{{ x|frob }}{% endif %}{% endif %}b", want: "ab"},
	{name: "set in untaken if", tmpl: "a{% if false %}{% set y = x | frob %}{% endif %}b", want: "ab"},
	{name: "loop iterable in untaken if", tmpl: "a{% if false %}{% for i in x|frob %}{% endfor %}{% endif %}b", want: "ab"},
	{name: "with value in untaken if", tmpl: "a{% if false %}{% with y = x|frob %}{% endwith %}{% endif %}b", want: "ab"},
	{name: "call arguments in untaken if", tmpl: "a{% macro m(a) %}{% endmacro %}{% if false %}{% call m(x|frob) %}{% endcall %}{% endif %}b", want: "ab"},
	{name: "test untaken", tmpl: "a{% if false %}{{ x is frobbed }}{% endif %}b", want: "ab"},
	{name: "test with argument untaken", tmpl: "a{% if false %}{{ x is frobbed 3 }}{% endif %}b", want: "ab"},
	{name: "select untaken", tmpl: "a{% if false %}{{ [1]|select('frobbed')|list }}{% endif %}b", want: "ab"},
	{name: "map over empty list", tmpl: "a{{ []|map('frob')|list }}b", want: "a[]b"},
	{name: "deepseek from_json", tmpl: "{%- if tools is not none and false -%}{{ tools[0] | from_json }}{%- endif -%}ok", want: "ok"},
	// The optimizer folds constants away before jinja2 looks at filters.
	{name: "folded and", tmpl: "a{{ false and (1|frob) }}b", want: "aFalseb"},
	{name: "folded or", tmpl: "a{{ true or (1|frob) }}b", want: "aTrueb"},
	{name: "folded test", tmpl: "a{{ false and (1 is frobbed) }}b", want: "aFalseb"},
	{name: "folded condexpr", tmpl: "a{{ (1|frob) if false else 2 }}b", want: "a2b"},

	// Outside ifs and conditional expressions jinja2 fails when compiling.
	{name: "top level", tmpl: "a\n{{ x|frob }}b", parse: true, msg: "No filter named 'frob'.", line: 2},
	{name: "not folded and", tmpl: "a{{ x and (1|frob) }}b", parse: true, msg: "No filter named 'frob'."},
	{name: "test top level", tmpl: "a{{ x is frobbed }}b", parse: true, msg: "No test named 'frobbed'."},
	{name: "uncalled macro", tmpl: "a{% macro m() %}{{ x | frob }}{% endmacro %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "macro default in untaken if", tmpl: "a{% if false %}{% macro m(a=x|frob) %}{% endmacro %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "macro in taken if", tmpl: "a{% if true %}{% macro m() %}{{ x | frob }}{% endmacro %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "loop over empty list", tmpl: "a{% for i in [] %}{{ i | frob }}{% endfor %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "loop else", tmpl: "a{% for i in [1] %}{% else %}{{ i | frob }}{% endfor %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "loop filter", tmpl: "a{% for i in [] if i|frob %}{% endfor %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "loop body in untaken if", tmpl: "a{% if false %}{% for i in [1] %}{{ i|frob }}{% endfor %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "loop filter in untaken if", tmpl: "a{% if false %}{% for i in [1] if i|frob %}{% endfor %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "with body in untaken if", tmpl: "a{% if false %}{% with %}{{ x|frob }}{% endwith %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "set block in untaken if", tmpl: "a{% if false %}{% set y %}{{ x|frob }}{% endset %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "set block filter in untaken if", tmpl: "a{% if false %}{% set y | frob %}z{% endset %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "call body in untaken if", tmpl: "a{% macro m() %}{% endmacro %}{% if false %}{% call m() %}{{ x|frob }}{% endcall %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "filter block", tmpl: "a{% filter frob %}x{% endfilter %}b", parse: true, msg: "No filter named 'frob'."},
	{name: "filter block in untaken if", tmpl: "a{% if false %}{% filter frob %}x{% endfilter %}{% endif %}b", parse: true, msg: "No filter named 'frob'."},

	// Undefined callables fail only when called, wherever they are.
	{name: "undefined callable", tmpl: "a{{ frob(x) }}b", code: CodeRuntime, msg: "'frob' is undefined"},
	{name: "undefined method", tmpl: "a{{ x.frob() }}b", code: CodeRuntime, msg: "'int object' has no attribute 'frob'"},
	{name: "undefined callable untaken", tmpl: "a{% if false %}{{ frob(x) }}{% endif %}b", want: "ab"},
	{name: "undefined method untaken", tmpl: "a{% if false %}{{ x.frob() }}{% endif %}b", want: "ab"},
	{name: "undefined callable untaken else", tmpl: "a{% if true %}{% else %}{{ nope() }}{% endif %}b", want: "ab"},
	{name: "undefined callable in empty loop", tmpl: "a{% for i in [] %}{{ frob(i) }}{% endfor %}b", want: "ab"},
	{name: "undefined method chain in empty loop", tmpl: "a{% for m in [] %}{{ m.foo.bar() }}{% endfor %}b", want: "ab"},
	{name: "undefined callable in uncalled macro", tmpl: "a{% macro m() %}{{ nope() }}{% endmacro %}b", want: "ab"},
	{name: "raise_exception untaken", tmpl: "a{% if false %}{{ raise_exception('x') }}{% endif %}b", want: "ab"},
	{name: "undefined callable before default", tmpl: "a{{ nope() | default('x') }}b", code: CodeRuntime, msg: "'nope' is undefined"},
	{name: "undefined callable guarded by defined", tmpl: "a{% if nope is defined %}{{ nope() }}{% endif %}b", want: "ab"},
	{name: "undefined callable guarded in condexpr", tmpl: "a{{ nope() if nope is defined else 'n' }}b", want: "anb"},
	{name: "undefined stored, not called", tmpl: "a{% set f = nope %}{{ 'ok' }}b", want: "aokb"},
	{name: "undefined stored, then called", tmpl: "a{% set f = nope %}{{ f() }}b", code: CodeRuntime, msg: "'nope' is undefined"},
	{name: "none called", tmpl: "a{{ none() }}b", code: CodeRuntime, msg: "'NoneType' object is not callable"},
	{name: "int called", tmpl: "a{{ x() }}b", code: CodeRuntime, msg: "'int' object is not callable"},
	{name: "int called untaken", tmpl: "a{% if false %}{{ x() }}{% endif %}b", want: "ab"},
	{name: "mutation untaken", tmpl: "a{{ [1].append(2) if false }}b", want: "ab"},
	{name: "unknown filter in an untaken call", tmpl: "a{{ nope(1|frob) if false }}b", want: "ab"},
	{name: "unknown filter in a call", tmpl: "a{{ nope(y|frob) }}b", parse: true, msg: "No filter named 'frob'."},
}

func TestUnknownFiltersAndTests(t *testing.T) {
	for _, tc := range unknownTests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse(tc.tmpl)
			if tc.parse {
				checkError(t, "Parse", tc.tmpl, err, CodeSyntax, tc.msg, tc.line, "")
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v, want no error", tc.tmpl, err)
			}
			got, err := tmpl.Render(Vars{Extra: map[string]Value{"x": Int(1)}})
			if tc.code != 0 {
				name := ""
				if tc.code == CodeUnknown {
					name = strings.Split(tc.msg, "'")[1] // No filter named 'NAME' ...
				}
				checkError(t, "Render", tc.tmpl, err, tc.code, tc.msg, tc.line, name)
				return
			}
			if err != nil {
				t.Fatalf("Render(%q): %v, want %q", tc.tmpl, err, tc.want)
			}
			if got != tc.want {
				t.Errorf("Render(%q) = %q, want %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

func checkError(t *testing.T, call, tmpl string, err error, code ErrorCode, msg string, line int, name string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s(%q): error %T %v, want a *Error with code %v", call, tmpl, err, err, code)
	}
	if e.Code != code {
		t.Errorf("%s(%q): error %v has code %v, want %v", call, tmpl, err, e.Code, code)
	}
	if e.Msg != msg {
		t.Errorf("%s(%q): error Msg = %q, want %q", call, tmpl, e.Msg, msg)
	}
	if line != 0 && e.Line != line {
		t.Errorf("%s(%q): error Line = %d, want %d", call, tmpl, e.Line, line)
	}
	if e.Name != name {
		t.Errorf("%s(%q): error Name = %q, want %q", call, tmpl, e.Name, name)
	}
}
