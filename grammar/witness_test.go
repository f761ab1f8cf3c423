package grammar

import "testing"

// witnessTests exercise the negations of patternProperties and
// propertyNames: an object with a member that fails them.
var witnessTests = []langTest{
	{"not-propertyNames", `{"type":"object","not":{"propertyNames":{"not":{"const":"0"}}}}`,
		[]string{`{"0":1}`, `{"a":1,"0":null}`, `{"0":{},"b":[]}`},
		[]string{`{}`, `{"a":1}`, `1`}},
	{"not-patternProperties-extra", `{"type":"object","not":{"patternProperties":{"^a":{"type":"integer"}}}}`,
		[]string{`{"ab":"s"}`, `{"x":1,"a":null}`, `{"a":1,"ab":"s"}`},
		[]string{`{}`, `{"a":1}`, `{"b":"s"}`}},
	{"not-patternProperties-declared", `{"type":"object","properties":{"a1":{"type":["string","integer"]},"b":{"type":"string"}},"additionalProperties":false,"not":{"patternProperties":{"a":{"type":"integer"}}}}`,
		[]string{`{"a1":"s"}`, `{"a1":"s","b":"t"}`},
		[]string{`{"a1":1}`, `{"b":"t"}`, `{}`}},
	{"not-patternProperties-untyped", `{"not":{"patternProperties":{"k":false}}}`,
		[]string{`{"k":1}`, `{"xk":null}`},
		[]string{`{}`, `{"a":1}`, `1`, `"k"`, `[]`}},
	// Two witnesses: two members, or one member that is both (the
	// Handwritten object3 shape).
	{"two-witnesses", `{"type":"object","maxProperties":1,"allOf":[{"not":{"patternProperties":{"a":{"not":{"type":"string"}}}}},{"not":{"patternProperties":{"b":{"not":{"type":"string","minLength":2}}}}}]}`,
		[]string{`{"ab":"xy"}`, `{"ba":"zz"}`},
		[]string{`{"ab":"x"}`, `{"a":"xy"}`, `{"ab":1}`, `{}`}},
	{"two-witnesses-two-members", `{"type":"object","allOf":[{"not":{"patternProperties":{"^a$":false}}},{"not":{"patternProperties":{"^b$":false}}}]}`,
		[]string{`{"a":1,"b":2}`, `{"b":2,"c":3,"a":1}`},
		[]string{`{"a":1}`, `{"b":2}`, `{}`}},
}

// TestWitnesses checks the witnesses in any property order, where a
// witness pair may be any member, and in schema order, where the extra
// witness is the first extra pair (witnessSchemaOrder).
func TestWitnesses(t *testing.T) {
	checkLangTestsWith(t, witnessTests, Options{PropertyOrder: OrderAny})
	checkLangTests(t, witnessSchemaOrder)
}

var witnessSchemaOrder = []langTest{
	{"first-extra", `{"type":"object","properties":{"id":{"type":"integer"}},"not":{"patternProperties":{"^a":{"type":"integer"}}}}`,
		[]string{`{"ab":"s"}`, `{"id":1,"ab":"s","c":2}`, `{"id":1,"a":null,"ab":1}`},
		[]string{`{}`, `{"id":1}`, `{"a":1}`}},
}
