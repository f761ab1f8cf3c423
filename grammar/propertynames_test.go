package grammar

import (
	"strings"
	"testing"

	"conform/fsm"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// propertyNamesTests: propertyNames with any string schema.
var propertyNamesTests = []langTest{
	{"oneOf", `{"type":"object","propertyNames":{"oneOf":[{"pattern":"^a"},{"pattern":"b$"}]}}`,
		[]string{`{}`, `{"ax":1}`, `{"xb":1,"a":2}`}, []string{`{"ab":1}`, `{"x":1}`}},
	{"anyOf-enum", `{"type":"object","propertyNames":{"anyOf":[{"enum":["id","name"]},{"pattern":"^x-"}]},"additionalProperties":{"type":"integer"}}`,
		[]string{`{"id":1,"x-a":2}`}, []string{`{"idx":1}`, `{"id":"a"}`}},
	{"ref", `{"$defs":{"k":{"type":"string","pattern":"^[a-z]+$","maxLength":3}},"type":"object","propertyNames":{"$ref":"#/$defs/k"}}`,
		[]string{`{"abc":null}`}, []string{`{"abcd":null}`, `{"A":null}`}},
	{"not", `{"type":"object","propertyNames":{"not":{"const":"secret"}}}`,
		[]string{`{"a":1,"secrets":2}`}, []string{`{"secret":1}`}},
	{"declared-filtered", `{"type":"object","properties":{"ok":{"type":"integer"},"no_":{"type":"integer"}},"propertyNames":{"pattern":"^[a-z]+$"}}`,
		[]string{`{"ok":1}`, `{"ok":1,"zz":true}`}, []string{`{"no_":1}`, `{"Zz":1}`}},
	{"false", `{"type":"object","propertyNames":false}`,
		[]string{`{}`}, []string{`{"a":1}`}},
	{"format", `{"type":"object","propertyNames":{"format":"uuid"},"additionalProperties":{"type":"boolean"}}`,
		[]string{`{"123e4567-e89b-12d3-a456-426614174000":true}`}, []string{`{"x":true}`}},
}

func TestPropertyNames(t *testing.T) { checkLangTests(t, propertyNamesTests) }

// patternOverlapTests: a key matching several patternProperties patterns
// takes all their schemas.
var patternOverlapTests = []langTest{
	{"catch-all-and-name", `{"type":"object","patternProperties":{".*":{"type":"object","properties":{"enabled":{"type":"boolean"}}},"github":{"type":"object","properties":{"token":{"type":"string"}}}}}`,
		[]string{`{"github":{"enabled":true,"token":"t"}}`, `{"x":{"enabled":false}}`, `{"mygithub2":{"token":"a"}}`},
		[]string{`{"github":{"enabled":1}}`, `{"github":{"token":1}}`, `{"x":{"enabled":"y"}}`, `{"x":1}`}},
	{"three-ranges", `{"type":"object","patternProperties":{"^a":{"type":"integer"},"b$":{"minimum":0},"^ab":{"maximum":10}},"additionalProperties":false}`,
		[]string{`{"a":-5}`, `{"ab":3}`, `{"xb":0.5}`, `{"axb":2}`, `{"abb":0}`},
		[]string{`{"ab":-1}`, `{"ab":11}`, `{"axb":-1}`, `{"axb":1.5}`, `{"abx":11}`, `{"x":1}`, `{"xb":-1}`}},
	{"declared-name-in-overlap", `{"type":"object","properties":{"ab":{"const":1}},"patternProperties":{"^a":{"type":"integer"},"b$":{"type":"number"}},"additionalProperties":false}`,
		[]string{`{"ab":1}`, `{"acb":7}`}, []string{`{"ab":2}`, `{"acb":7.5}`}},
	{"contradictory-overlap", `{"type":"object","patternProperties":{"^x":{"type":"string"},"y$":{"type":"integer"}}}`,
		[]string{`{"xa":"s"}`, `{"ay":1}`, `{}`}, []string{`{"xy":"s"}`, `{"xy":1}`}},
}

func TestPatternOverlap(t *testing.T) { checkLangTests(t, patternOverlapTests) }

// TestPropertyCountsAnyOrder: minProperties and maxProperties in any
// property order (a counted fsm.Perm), checked against the reference
// validator both ways on a table of objects.
func TestPropertyCountsAnyOrder(t *testing.T) {
	schema := `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"required":["a"],"minProperties":2,"maxProperties":3}`
	res, err := CompileSchema([]byte(schema), Options{PropertyOrder: OrderAny, AnyValueDepth: eagerAnyDepth})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sch := referenceSchema(t, schema)
	for _, s := range []string{`{"a":1}`, `{"a":1,"b":2}`, `{"b":2,"a":1}`, `{"c":3,"b":2,"a":1}`, `{"x":0,"a":1}`, `{"a":1,"x":0,"y":0}`,
		`{"a":1,"b":2,"c":3,"x":0}`, `{"x":0,"y":0}`, `{"b":2,"c":3}`, `{}`, `{"c":1,"x":2,"a":3}`} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		want := sch.Validate(inst) == nil
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("Matches(%s) = %v, the validator says %v", s, got, want)
		}
	}
}
