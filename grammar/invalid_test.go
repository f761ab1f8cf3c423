package grammar

import (
	"errors"
	"strconv"
	"testing"

	"conform/fsm"
)

// TestInvalidInEveryMode: a pattern that is not a regex and a number no
// 64-bit float holds make the schema invalid in strict and lenient mode
// alike; lenient mode drops only what it cannot enforce (a valid ECMA-262
// construct that fsm refuses), and says so.
func TestInvalidInEveryMode(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		code    ErrorCode // 0: lenient compiles it with a warning on warnKw
		pointer string
		warnKw  string
	}{
		{"unclosed group", `{"type":"string","pattern":"("}`, CodeBadPattern, "/pattern", ""},
		{"reversed class", `{"type":"string","pattern":"[z-a]"}`, CodeBadPattern, "/pattern", ""},
		{"dangling quantifier", `{"type":"string","pattern":"*a"}`, CodeBadPattern, "/pattern", ""},
		{"patternProperties key", `{"type":"object","patternProperties":{"(":{}}}`, CodeBadPattern, "/patternProperties/(", ""},
		{"nested pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"a)"}}}`, CodeBadPattern, "/properties/a/pattern", ""},
		{"minimum 1e400", `{"type":"number","minimum":1e400}`, CodeInvalidSchema, "/minimum", ""},
		{"maximum -1e309", `{"type":"integer","maximum":-1e309}`, CodeInvalidSchema, "/maximum", ""},
		{"const 1e400", `{"const":1e400}`, CodeInvalidSchema, "/const", ""},
		{"enum member", `{"enum":[1,2e400]}`, CodeInvalidSchema, "/enum/1", ""},
		{"400-digit integer", `{"type":"integer","maximum":1` + zeros(400) + `}`, CodeInvalidSchema, "/maximum", ""},
		{"exponent beyond reading", `{"type":"number","multipleOf":1e-500}`, CodeInvalidSchema, "/multipleOf", ""},
		{"default too", `{"type":"number","default":1e999}`, CodeInvalidSchema, "/default", ""},
		{"lookbehind is valid ECMA", `{"type":"string","pattern":"(?<=a)a"}`, 0, "", "pattern"},
		{"lookahead in a repeat is valid ECMA", `{"type":"string","pattern":"(a(?=b))*"}`, 0, "", "pattern"},
		{"backreference is valid ECMA", `{"type":"string","pattern":"(a)\\1"}`, 0, "", "pattern"},
	}
	for _, tt := range tests {
		for _, mode := range []Strictness{Strict, Lenient} {
			res, err := CompileSchema([]byte(tt.schema), Options{Strictness: mode})
			if tt.code == 0 {
				if mode == Strict {
					if err == nil {
						t.Errorf("%s: CompileSchema(%s, Strict) = nil error, want a refusal", tt.name, tt.schema)
					}
					continue
				}
				if err != nil || len(res.Warnings) != 1 || res.Warnings[0].Keyword != tt.warnKw {
					t.Errorf("%s: CompileSchema(%s, Lenient) = %v, %v; want one %s warning", tt.name, tt.schema, res, err, tt.warnKw)
				}
				continue
			}
			var ge *Error
			if !errors.As(err, &ge) || ge.Code != tt.code || ge.Pointer != tt.pointer {
				t.Errorf("%s: CompileSchema(%s, mode %d) error = %v, want code %v at %q", tt.name, tt.schema, mode, err, tt.code, tt.pointer)
			}
		}
	}
	// Small and tiny numbers a float holds (or rounds to zero) stay legal.
	for _, s := range []string{`{"type":"number","minimum":1e308}`, `{"type":"number","maximum":-1.7976931348623157e308}`, `{"type":"number","minimum":1e-400}`} {
		if _, err := CompileSchema([]byte(s), Options{}); err != nil {
			t.Errorf("CompileSchema(%s) error = %v, want none", s, err)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

// TestLargeNumericEnum: each number of an enum is checked against the
// other keywords with one shared probe (a clone per value made a
// 100,000-value enum take minutes), and the check still excludes the
// values the bounds refuse.
func TestLargeNumericEnum(t *testing.T) {
	var b []byte
	b = append(b, `{"type":"integer","minimum":10000,"enum":[`...)
	for i := range 20_000 {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(i), 10)
	}
	b = append(b, "]}"...)
	res, err := CompileSchema(b, Options{})
	if err != nil {
		t.Fatalf("CompileSchema(20,000-value enum) error: %v", err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatalf("fsm.Compile: %v", err)
	}
	for _, tt := range []struct {
		text string
		want bool
	}{{"10000", true}, {"19999", true}, {"9999", false}, {"0", false}, {"20000", false}} {
		if got := fsm.Matches(d, []byte(tt.text)); got != tt.want {
			t.Errorf("Matches(%s) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
