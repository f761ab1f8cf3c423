package grammar

import (
	"errors"
	"testing"
)

// refTests: $refs by plain name and through the root's $id, checked
// against the reference validator.
var refTests = []langTest{
	{"draft4-id-anchor", `{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"a":{"id":"#cap","type":"integer","minimum":3}},"type":"object","properties":{"x":{"$ref":"#cap"}},"required":["x"],"additionalProperties":false}`,
		[]string{`{"x":3}`, `{"x":40}`}, []string{`{"x":2}`, `{"x":"a"}`, `{}`}},
	{"draft7-id-anchor", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$id":"#name","type":"string","maxLength":2}},"type":"array","items":{"$ref":"#name"}}`,
		[]string{`[]`, `["ab","c"]`}, []string{`["abc"]`, `[1]`}},
	{"anchor-2020", `{"$defs":{"n":{"$anchor":"num","type":"number","maximum":1}},"anyOf":[{"$ref":"#num"},{"type":"null"}]}`,
		[]string{`0.5`, `null`, `-3`}, []string{`2`, `"x"`}},
	{"anchor-recursive", `{"$defs":{"t":{"$anchor":"tree","type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#tree"}}},"additionalProperties":false}},"$ref":"#tree"}`,
		[]string{`{}`, `{"kids":[{},{"kids":[]}]}`}, []string{`{"kids":[1]}`, `{"x":1}`}},
	{"root-id-pointer", `{"$id":"https://example.com/s.json","$defs":{"a":{"const":"A"}},"type":"object","properties":{"p":{"$ref":"https://example.com/s.json#/$defs/a"},"q":{"$ref":"s.json#/$defs/a"}},"additionalProperties":false}`,
		[]string{`{"p":"A","q":"A"}`, `{}`}, []string{`{"p":"B"}`, `{"q":1}`}},
	{"root-id-anchor", `{"$id":"https://example.com/dir/s.json","$defs":{"a":{"$anchor":"flag","type":"boolean"}},"items":{"$ref":"s.json#flag"},"type":"array"}`,
		[]string{`[true,false]`, `[]`}, []string{`[1]`}},
	{"root-id-self", `{"$id":"https://example.com/r.json","type":"object","properties":{"next":{"$ref":"https://example.com/r.json"},"v":{"type":"integer"}},"additionalProperties":false}`,
		[]string{`{"next":{"v":2},"v":1}`}, []string{`{"next":{"v":"x"}}`}},
	{"anchor-on-root", `{"$anchor":"top","type":"object","properties":{"self":{"$ref":"#top"},"n":{"type":"null"}},"additionalProperties":false}`,
		[]string{`{"self":{"n":null}}`}, []string{`{"self":{"n":1}}`}},
	{"anchor-percent-key", `{"$defs":{"a%b":{"$anchor":"pc","type":"integer"}},"items":{"$ref":"#pc"},"type":"array"}`,
		[]string{`[1,2]`}, []string{`["a"]`}},
	{"anchor-in-enum-is-data", `{"$defs":{"a":{"$anchor":"real","type":"string"}},"enum":[{"$anchor":"real"}, "x", 1],"$ref":"#real"}`,
		[]string{`"x"`}, []string{`1`, `{"$anchor":"real"}`}},
	// Drafts 3–7: the siblings of $ref are ignored; from 2019-09 on (and
	// without $schema) they apply.
	{"draft4-ref-siblings-ignored", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"s":{"type":"string","$ref":"#/d"}},"additionalProperties":false,"d":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}`,
		[]string{`{"s":{"n":1}}`, `{}`}, []string{`{"s":"x"}`, `{"s":{}}`}},
	{"draft7-root-ref-beside-definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/a","type":"string","definitions":{"a":{"type":"array","items":{"type":"boolean"}}}}`,
		[]string{`[]`, `[true]`}, []string{`"x"`, `[1]`}},
	{"draft7-not-of-ref-siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","not":{"$ref":"#/definitions/r","required":["b"]},"definitions":{"r":{"required":["a"]}}}`,
		[]string{`{}`, `{"b":1}`}, []string{`{"a":1}`, `{"a":1,"b":2}`}},
	// if/then/else are keywords from draft 7 on.
	{"draft4-if-ignored", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","if":{"required":["a"]},"then":{"required":["b"]},"properties":{"a":{"type":"integer"}}}`,
		[]string{`{"a":1}`, `{"a":1,"b":2}`, `{}`}, []string{`{"a":"x"}`}},
	{"draft6-then-ignored", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"array","items":{"then":{"type":"string"},"if":true}}`,
		[]string{`[1,"a"]`}, []string{`{}`}},
	{"draft7-if-applies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`,
		[]string{`{"a":1,"b":2}`, `{}`}, []string{`{"a":1}`}},
	{"2020-ref-siblings-apply", `{"$defs":{"a":{"type":"integer"}},"$ref":"#/$defs/a","minimum":3}`,
		[]string{`3`, `7`}, []string{`2`, `"x"`}},
}

func TestNamedRefs(t *testing.T) { checkLangTests(t, refTests) }

// numberValueTests: enum and const compare numbers by value, so each listed
// number is matched as written and in its shortest plain spelling.
var numberValueTests = []langTest{
	{"enum-2.0", `{"enum":[2.0]}`, []string{`2.0`, `2`}, []string{`3`, `"2"`, `2.5`}},
	{"const-exponent", `{"const":25e-2}`, []string{`25e-2`, `0.25`}, []string{`0.5`, `25`}},
	{"integer-enum-float-spelling", `{"type":"integer","enum":[1.0,-3e0]}`, []string{`1`, `1.0`, `-3`}, []string{`3`, `1.5`}},
	{"nested", `{"const":{"a":[1.50]}}`, []string{`{"a":[1.50]}`, `{"a":[1.5]}`}, []string{`{"a":[1.51]}`}},
}

func TestNumberValues(t *testing.T) { checkLangTests(t, numberValueTests) }

// TestNamedRefsRefused: names that resolve to nothing, to two places, or
// under an embedded resource stay bad-ref errors.
func TestNamedRefsRefused(t *testing.T) {
	for _, tt := range []struct{ name, schema string }{
		{"unknown", `{"$defs":{"a":{"$anchor":"x"}},"$ref":"#y"}`},
		{"defined twice", `{"$defs":{"a":{"$anchor":"x","type":"string"},"b":{"$anchor":"x","type":"integer"}},"$ref":"#x"}`},
		{"embedded resource", `{"$defs":{"a":{"$id":"https://other.example/a.json","$defs":{"b":{"$anchor":"x"}}}},"$ref":"#x"}`},
		{"other document", `{"$id":"https://example.com/s.json","$ref":"https://example.com/t.json#/a"}`},
		{"relative without a base", `{"$defs":{"a":{}},"$ref":"s.json#/$defs/a"}`},
	} {
		for _, mode := range []Strictness{Strict, Lenient} {
			_, err := CompileSchema([]byte(tt.schema), Options{Strictness: mode})
			var ge *Error
			if !errors.As(err, &ge) || ge.Code != CodeBadRef || ge.Keyword != "$ref" {
				t.Errorf("%s: CompileSchema(%s) error = %v, want a bad-ref error", tt.name, tt.schema, err)
			}
		}
	}
}

// fracMultipleTests: multipleOf a/10^k where a divides 10^j, j ≤ k.
var fracMultipleTests = []langTest{
	{"quarter", `{"type":"number","multipleOf":0.25,"minimum":0.25}`,
		[]string{`0.25`, `0.5`, `0.75`, `1`, `1.0`, `2.50`, `12.75`, `3.000`}, []string{`0`, `0.1`, `0.2`, `0.26`, `1.251`, `-0.25`, `2.55`}},
	{"twentieth", `{"type":"number","multipleOf":0.05}`,
		[]string{`0`, `0.05`, `0.1`, `1.95`, `-3.4`, `7`}, []string{`0.01`, `0.07`, `1.951`}},
	{"eighth", `{"multipleOf":0.125}`,
		[]string{`0.125`, `0.25`, `0.375`, `0.5`, `0.875`, `5.625`, `"s"`}, []string{`0.1`, `0.126`, `0.0625`}},
	{"two-mults-bounded", `{"type":"number","multipleOf":0.25,"allOf":[{"multipleOf":0.05}],"maximum":1,"exclusiveMinimum":0}`,
		[]string{`0.25`, `0.5`, `1`}, []string{`0.05`, `0`, `1.25`, `0.3`}},
	{"integer-and-quarter", `{"type":"integer","multipleOf":0.25}`, []string{`1`, `-4`}, []string{`0.25`, `1.5`}},
}

func TestFracMultiple(t *testing.T) { checkLangTests(t, fracMultipleTests) }
