package grammar

import (
	"errors"
	"testing"
)

var containsTests = []langTest{
	{"at-least-one", `{"type":"array","contains":{"const":1}}`,
		[]string{`[1]`, `[2,1]`, `[1,1,"a"]`}, []string{`[]`, `[2]`, `["1"]`}},
	{"items-and-contains", `{"type":"array","items":{"type":"integer"},"contains":{"minimum":10}}`,
		[]string{`[10]`, `[1,2,30]`}, []string{`[1,2]`, `[10,"a"]`}},
	{"minContains", `{"type":"array","contains":{"type":"string"},"minContains":2}`,
		[]string{`["a","b"]`, `[1,"a",2,"b"]`}, []string{`["a"]`, `[1,2]`}},
	{"maxContains", `{"type":"array","items":{"type":"integer"},"contains":{"const":0},"maxContains":2}`,
		[]string{`[0]`, `[0,1,0]`, `[5,0,5]`}, []string{`[]`, `[0,0,0]`, `[1]`}},
	{"minContains-zero-max", `{"type":"array","contains":{"type":"null"},"minContains":0,"maxContains":1}`,
		[]string{`[]`, `[1,null]`, `[true]`}, []string{`[null,null]`}},
	{"minContains-zero", `{"type":"array","contains":{"type":"null"},"minContains":0}`,
		[]string{`[]`, `[1]`}, nil},
	{"prefix-items", `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},"contains":{"type":"string"},"maxContains":1}`,
		[]string{`["a"]`, `["a",1,2]`}, []string{`[1]`}},
	{"with-maxItems", `{"type":"array","contains":{"const":"x"},"minContains":2,"maxItems":3}`,
		[]string{`["x","x"]`, `["x",1,"x"]`}, []string{`["x",1,2]`, `["x","x",1,2]`}},
	{"with-minItems", `{"type":"array","items":{"type":"integer"},"contains":{"enum":[1,2]},"maxContains":1,"minItems":3}`,
		[]string{`[1,3,4]`, `[5,6,2]`}, []string{`[1,2,3]`, `[1]`, `[3,4,5]`}},
	{"contains-false", `{"type":["array","null"],"contains":false}`,
		[]string{`null`}, []string{`[]`, `[1]`}},
	{"contains-true-min", `{"type":"array","contains":true,"minContains":2}`,
		[]string{`[1,2]`, `[{},[],3]`}, []string{`[]`, `[1]`}},
	{"nested", `{"type":"array","items":{"type":"array"},"contains":{"contains":{"const":42}}}`,
		[]string{`[[42]]`, `[[],[1,42]]`}, []string{`[]`, `[[1]]`, `[[]]`}},
	{"draft7-ignores-counts", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","contains":{"const":1},"minContains":3}`,
		[]string{`[1]`}, []string{`[2]`}},
	{"draft4-no-contains", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"array","contains":{"const":1},"maxItems":1}`,
		[]string{`[]`, `[2]`}, nil},
	{"two-equal-contains", `{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"const":1}}]}`,
		[]string{`[1]`, `[2,1]`}, []string{`[]`, `[2]`}},
	{"in-object", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"contains":{"const":"type"}}},"required":["tags"],"additionalProperties":false}`,
		[]string{`{"tags":["const","type"]}`}, []string{`{"tags":[]}`, `{"tags":["x"]}`}},
}

func TestContains(t *testing.T) { checkLangTests(t, containsTests) }

// itemsNegationTests: items negated as "contains the negation", through
// oneOf, not and if/then/else, in draft 4 (private contains) and later.
var itemsNegationTests = []langTest{
	{"oneOf-d4", `{"$schema":"http://json-schema.org/draft-04/schema#","oneOf":[{"type":"array","items":{"type":"number"}},{"type":"array","items":{"type":"string"}}]}`,
		[]string{`[1]`, `["a","b"]`}, []string{`[]`, `[1,"a"]`}},
	{"oneOf-nested-d4", `{"$schema":"http://json-schema.org/draft-04/schema#","oneOf":[{"type":"array","items":{"type":"number"}},{"type":"array","items":{"type":"array","items":{"type":"number"}}}]}`,
		[]string{`[1,2]`, `[[1],[]]`}, []string{`[]`, `[1,[2]]`}},
	{"not-items", `{"type":"array","items":{"type":"integer"},"not":{"items":{"minimum":0}}}`,
		[]string{`[-1]`, `[3,-2]`}, []string{`[]`, `[1,2]`}},
	{"if-items", `{"type":"array","if":{"items":{"type":"integer"}},"then":{"minItems":2},"else":{"items":{"type":"string"}}}`,
		[]string{`[1,2]`, `["a"]`}, []string{`[1]`, `[]`, `[1,"a"]`}},
}

func TestItemsNegation(t *testing.T) { checkLangTests(t, itemsNegationTests) }

// TestContainsRefused: what contains cannot enforce exactly is refused in
// strict mode and reported in lenient mode.
func TestContainsRefused(t *testing.T) {
	for _, tt := range []struct{ name, schema, kw string }{
		{"maxContains of a format", `{"type":"array","contains":{"type":"string","format":"uri-reference"},"maxContains":1}`, "maxContains"},
		{"two contains, one counted twice", `{"type":"array","allOf":[{"contains":{"const":1},"minContains":2},{"contains":{"const":2}}]}`, "contains"},
		{"five contains", `{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"const":2}},{"contains":{"const":3}},{"contains":{"const":4}},{"contains":{"const":5}}]}`, "contains"},
	} {
		_, err := CompileSchema([]byte(tt.schema), Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeUnsupported || ge.Keyword != tt.kw {
			t.Errorf("%s: CompileSchema(%s) error = %v, want unsupported %s", tt.name, tt.schema, err, tt.kw)
		}
		res, err := CompileSchema([]byte(tt.schema), Options{Strictness: Lenient})
		var warns []Warning
		if res != nil {
			warns = res.Warnings
		}
		if err != nil || len(warns) == 0 || warns[0].Keyword != tt.kw {
			t.Errorf("%s: lenient CompileSchema(%s): error %v, warnings %v; want a %s warning", tt.name, tt.schema, err, warns, tt.kw)
		}
	}
	if _, err := CompileSchema([]byte(`{"type":"array","contains":{},"minContains":65}`), Options{}); err == nil {
		t.Error("minContains 65: no error, want too-large")
	}
}

// uniqueFiniteTests: uniqueItems over a finite item domain.
var uniqueFiniteTests = []langTest{
	{"enum-strings", `{"type":"array","items":{"type":"string","enum":["a","b","c"]},"uniqueItems":true}`,
		[]string{`[]`, `["a"]`, `["c","a"]`, `["b","c","a"]`}, []string{`["a","a"]`, `["a","b","a"]`, `["d"]`, `[1]`}},
	{"min-one", `{"type":"array","items":{"enum":[1,2.0,"x",null]},"uniqueItems":true,"minItems":1}`,
		[]string{`[1]`, `[2,1]`, `[2.0,null,"x",1]`}, []string{`[]`, `[2,2.0]`, `[null,null]`, `[3]`}},
	{"booleans-via-enum-type", `{"type":"array","items":{"enum":[true,false,0],"type":"boolean"},"uniqueItems":true,"maxItems":2}`,
		[]string{`[true,false]`, `[false]`}, []string{`[true,true]`, `[0]`}},
	{"ten-values", `{"type":"array","items":{"type":"integer","enum":[0,1,2,3,4,5,6,7,8,9]},"uniqueItems":true}`,
		[]string{`[9,0,5]`, `[0,1,2,3,4,5,6,7,8,9]`}, []string{`[9,0,9]`, `[0,1,2,3,4,5,6,7,8,9,0]`}},
	{"maxItems-above-domain", `{"type":"array","items":{"enum":["a","b"]},"uniqueItems":true,"maxItems":5}`,
		[]string{`["b","a"]`}, []string{`["a","a"]`}},
	{"counted", `{"type":"array","items":{"enum":["a","b","c","d"]},"uniqueItems":true,"minItems":2,"maxItems":3}`,
		[]string{`["a","b"]`, `["d","a","c"]`}, []string{`["a"]`, `["a","b","c","d"]`, `["a","a"]`, `["a","b","a"]`}},
	{"object-values", `{"type":"array","items":{"enum":[{"k":1},{"k":2}]},"uniqueItems":true}`,
		[]string{`[{"k":2},{"k":1}]`}, []string{`[{"k":1},{"k":1}]`}},
}

func TestUniqueFinite(t *testing.T) { checkLangTests(t, uniqueFiniteTests) }
