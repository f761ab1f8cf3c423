package grammar

import (
	"errors"
	"testing"
)

// oneOfTests exercise the exact rewrites of overlapping oneOf branches.
var oneOfTests = []langTest{
	{"presence-two", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"number"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
		[]string{`{"a":"x"}`, `{"b":"y"}`, `{"a":"x","c":1}`, `{"b":"y","c":1,"z":null}`},
		[]string{`{"a":"x","b":"y"}`, `{}`, `{"c":1}`, `{"b":"y","a":"x"}`, `null`}},
	{"presence-three", `{"type":"object","properties":{"radius":{"type":"number"},"length":{"type":"number"},"width":{"type":"number"}},"additionalProperties":false,"oneOf":[{"required":["radius"]},{"required":["length","width"]}]}`,
		[]string{`{"radius":1}`, `{"length":1,"width":2}`, `{"radius":1,"length":2}`, `{"radius":1,"width":2}`},
		[]string{`{"radius":1,"length":1,"width":2}`, `{"length":1}`, `{}`}},
	{"presence-untyped", `{"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
		[]string{`{"a":1}`, `{"b":{}}`},
		[]string{`{"a":1,"b":2}`, `1`, `"s"`, `null`, `[]`, `{}`}},
	{"presence-typed-branch", `{"oneOf":[{"type":"object","required":["a"]},{"required":["b"]}],"properties":{"a":{"type":"null"},"b":{"type":"null"}},"additionalProperties":false}`,
		[]string{`{"a":null}`, `{"b":null}`, `1`, `"s"`, `[]`},
		[]string{`{"a":null,"b":null}`, `{}`}},
	{"presence-not-required", `{"type":"object","additionalProperties":false,"properties":{"x":{"type":"string"},"y":{"type":"string"}},"oneOf":[{"not":{"required":["x"]},"required":["y"]},{"not":{"required":["y"]},"required":["x"]}]}`,
		[]string{`{"x":"1"}`, `{"y":"2"}`},
		[]string{`{"x":"1","y":"2"}`, `{}`}},
	{"presence-subset", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["a"]},{"required":["a","b"]}]}`,
		[]string{`{"a":1}`},
		[]string{`{"a":1,"b":2}`, `{"b":2}`, `{}`}},
	{"presence-empty-branch", `{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"boolean"}},"additionalProperties":false,"oneOf":[{},{"required":["a","b"]}]}`,
		[]string{`{}`, `{"a":true}`, `{"b":false}`},
		[]string{`{"a":true,"b":false}`}},
	{"presence-nested", `{"type":"object","properties":{"dims":{"type":"object","properties":{"w":{"type":"integer"},"h":{"type":"integer"},"r":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["w","h"]},{"required":["r"]}]}},"required":["dims"],"additionalProperties":false}`,
		[]string{`{"dims":{"w":1,"h":2}}`, `{"dims":{"r":3}}`, `{"dims":{"w":1,"r":3}}`},
		[]string{`{"dims":{"w":1,"h":2,"r":3}}`, `{"dims":{"w":1}}`}},
	{"presence-number-types", `{"oneOf":[{"type":"integer","required":["a"]},{"type":"number","required":["b"]}]}`,
		[]string{`1.5`, `-0.25`, `10.010`},
		[]string{`1`, `1.0`, `1.50e1`, `{"a":1}`, `{"b":1}`}},
	// Not a oneOf rewrite, but the language the rewrite above relies on:
	// numbers that are not integers.
	{"not-integer", `{"type":"number","not":{"type":"integer"}}`,
		[]string{`0.5`, `-3.25`, `2.000001`},
		[]string{`1`, `1.0`, `-0`, `-0.00`, `1e0`, `15e-1`}},
	{"finite-string-pattern", `{"oneOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"string","enum":["warn","error","X"]}]}`,
		[]string{`"X"`, `"abc"`, `"warnx"`},
		[]string{`"warn"`, `"error"`, `"Y"`, `1`}},
	{"finite-date-time", `{"oneOf":[{"type":"string","format":"date-time"},{"enum":["template","first"]}]}`,
		[]string{`"template"`, `"first"`, `"2024-01-02T03:04:05Z"`},
		[]string{`"other"`, `null`}},
	{"finite-integer", `{"oneOf":[{"type":"integer","minimum":0,"maximum":50},{"enum":[1,2,"a",null,100]}]}`,
		[]string{`0`, `3`, `50`, `"a"`, `null`, `100`},
		[]string{`1`, `2`, `51`, `"b"`}},
	{"finite-bool-null", `{"oneOf":[{"type":["boolean","null"]},{"const":true}]}`,
		[]string{`false`, `null`},
		[]string{`true`, `1`}},
	{"finite-two-finite", `{"oneOf":[{"enum":["a","b","c"]},{"enum":["b","c","d"]},{"type":"integer"}]}`,
		[]string{`"a"`, `"d"`, `7`},
		[]string{`"b"`, `"c"`, `"e"`}},
	{"finite-ref", `{"$defs":{"jinja":{"type":"string","pattern":"\\{\\{.*\\}\\}"}},"oneOf":[{"$ref":"#/$defs/jinja"},{"type":"string","enum":["warn","error","{{x}}"]}]}`,
		[]string{`"warn"`, `"error"`, `"{{y}}"`},
		[]string{`"{{x}}"`, `"other"`}},
	{"finite-object-value", `{"oneOf":[{"type":"string","maxLength":3},{"enum":[{"k":1},"abc","abcd"]}]}`,
		[]string{`{"k":1}`, `"abcd"`, `"ab"`},
		[]string{`"abc"`, `"abcde"`}},
}

func TestOneOfOverlap(t *testing.T) {
	checkLangTests(t, oneOfTests)
}

// TestOneOfOverlapRefused: overlaps neither rewrite handles stay errors.
func TestOneOfOverlapRefused(t *testing.T) {
	tests := []string{
		`{"oneOf":[{"type":"number"},{"enum":[1,2]}]}`,                                                // 1.0 cannot be excluded from numbers
		`{"oneOf":[{"type":"string","pattern":"a"},{"type":"string","pattern":"b"},{"enum":["ab"]}]}`, // infinite branches overlap
		`{"oneOf":[{"required":["a"]},{"required":["b"],"minProperties":2}]}`,                         // not a presence test
		`{"oneOf":[{"required":["a"]},{"enum":[[1]]},{"type":"array"}]}`,                              // [1] cannot be excluded from arrays
	}
	for _, s := range tests {
		_, err := CompileSchema([]byte(s), Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeOneOfOverlap {
			t.Errorf("CompileSchema(%s) error = %v, want code %v", s, err, CodeOneOfOverlap)
		}
	}
}

// TestOneOfPresenceBound: the expansion is bounded by MaxAnyOfProduct.
func TestOneOfPresenceBound(t *testing.T) {
	// Branch 0 must fail each of 4 branches with 3 names: 3^4 = 81 terms.
	schema := `{"type":"object","oneOf":[{"required":["x"]},{"required":["a1","a2","a3"]},{"required":["b1","b2","b3"]},{"required":["c1","c2","c3"]},{"required":["d1","d2","d3"]}]}`
	_, err := CompileSchema([]byte(schema), Options{MaxAnyOfProduct: 64})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != CodeOneOfOverlap {
		t.Errorf("CompileSchema(%s, MaxAnyOfProduct 64) error = %v, want code %v", schema, err, CodeOneOfOverlap)
	}
	if _, err := CompileSchema([]byte(schema), Options{MaxAnyOfProduct: 100}); err != nil {
		t.Errorf("CompileSchema(%s, MaxAnyOfProduct 100) error = %v, want nil", schema, err)
	}
}

func TestExpandTerms(t *testing.T) {
	options := [][]lit{
		{{"a", false}, {"b", false}},
		{{"a", false}, {"c", true}},
	}
	got, ok := expandTerms(options, map[string]bool{"c": false}, 10)
	if !ok {
		t.Fatalf("expandTerms: ok = false")
	}
	// (¬a ∨ ¬b) ∧ (¬a ∨ c) with c fixed absent: ¬a, or ¬b∧¬a (redundant).
	if len(got) != 1 || len(got[0]) != 1 || got[0][0] != (lit{"a", false}) {
		t.Errorf("expandTerms = %v, want [[{a false}]]", got)
	}
	if _, ok := expandTerms([][]lit{{{"a", false}, {"b", false}}, {{"c", false}, {"d", false}}}, nil, 3); ok {
		t.Errorf("expandTerms over the limit: ok = true, want false")
	}
}
