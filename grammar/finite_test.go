package grammar

import (
	"bytes"
	"errors"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
)

// langTest pairs a schema with texts its language must contain and texts
// it must not contain. Every text in match must also validate against the
// schema with the reference validator, so a wrong table cannot hide an
// unsound language.
type langTest struct {
	name   string
	schema string
	match  []string
	reject []string
}

func checkLangTests(t *testing.T, tests []langTest) {
	t.Helper()
	checkLangTestsWith(t, tests, Options{})
}

// checkLangTestsWith is checkLangTests under other options.
func checkLangTestsWith(t *testing.T, tests []langTest, opts Options) {
	t.Helper()
	opts.AnyValueDepth = eagerAnyDepth
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CompileSchema([]byte(tt.schema), opts)
			if err != nil {
				t.Fatalf("CompileSchema(%s) error: %v", tt.schema, err)
			}
			d, err := fsm.Compile(res.Node, fsm.Options{})
			if err != nil {
				t.Fatalf("fsm.Compile(CompileSchema(%s)) error: %v", tt.schema, err)
			}
			sch := referenceSchema(t, tt.schema)
			for _, s := range tt.match {
				if !fsm.Matches(d, []byte(s)) {
					t.Errorf("schema %s: Matches(%s) = false, want true", tt.schema, s)
				}
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
				if err != nil {
					t.Fatalf("table text %s is not JSON: %v", s, err)
				}
				if err := sch.Validate(inst); err != nil {
					t.Errorf("table error: schema %s: %s is listed as a match but does not validate: %v", tt.schema, s, err)
				}
			}
			for _, s := range tt.reject {
				if fsm.Matches(d, []byte(s)) {
					t.Errorf("schema %s: Matches(%s) = true, want false", tt.schema, s)
				}
			}
		})
	}
}

func referenceSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		t.Fatal(err)
	}
	jc := jsonschema.NewCompiler()
	jc.AssertFormat()
	if err := jc.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := jc.Compile("schema.json")
	if err != nil {
		t.Fatalf("reference validator cannot compile %s: %v", schema, err)
	}
	return sch
}

// finiteTests exercise the finite-domain fallback: an enum/const next to a
// keyword the ordinary path refuses.
var finiteTests = []langTest{
	{"not-not-items", `{"allOf":[{"enum":[[1,2,3,4,5],[1,"a"],"x"]},{"not":{"not":{"items":{"type":"integer"}}}}]}`,
		[]string{`[1,2,3,4,5]`, `[1, 2, 3, 4, 5]`, `"x"`}, []string{`[1,"a"]`, `[1,2]`, `"y"`}},
	{"not-not-additionalItems", `{"allOf":[{"enum":[[1,2,3,4,5]]},{"not":{"not":{"additionalItems":false}}}]}`,
		[]string{`[1,2,3,4,5]`}, []string{`[1,2,3,4]`, `[]`}},
	{"not-object", `{"enum":[{"a":1},{"a":"s"},[1],null],"not":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
		[]string{`{"a":"s"}`, `[1]`, `null`}, []string{`{"a":1}`, `{}`}},
	{"not-required-two", `{"enum":[{"a":1},{"a":1,"b":2},{"b":2},{}],"not":{"required":["a","b"]}}`,
		[]string{`{"a":1}`, `{"b":2}`, `{}`}, []string{`{"a":1,"b":2}`}},
	{"uniqueItems", `{"type":"array","enum":[[1,1],[1,2],[2,2,3],[3,4,5],[]],"uniqueItems":true}`,
		[]string{`[1,2]`, `[3,4,5]`, `[]`}, []string{`[1,1]`, `[2,2,3]`, `[2,1]`}},
	{"uniqueItems-property", `{"type":"object","properties":{"tags":{"enum":[["a","b"],["a","a"],["c"]],"uniqueItems":true}},"required":["tags"],"additionalProperties":false}`,
		[]string{`{"tags":["a","b"]}`, `{"tags":["c"]}`}, []string{`{"tags":["a","a"]}`, `{}`}},
	{"multipleOf-fraction", `{"enum":[0.3,0.6,0.7,1.2,5],"multipleOf":0.3}`,
		[]string{`0.3`, `0.6`, `1.2`}, []string{`0.7`, `5`, `0.9`}},
	{"oneOf-inside-enum", `{"enum":[1,2,3,4,"a"],"oneOf":[{"type":"integer","minimum":2},{"type":"integer","maximum":3}]}`,
		[]string{`1`, `4`}, []string{`2`, `3`, `"a"`}},
	{"not-propertyNames", `{"enum":[{"ab":1},{"abc":1},{"x":2}],"not":{"propertyNames":{"maxLength":2}}}`,
		[]string{`{"abc":1}`}, []string{`{"ab":1}`, `{"x":2}`}},
	{"nested-ref", `{"$defs":{"e":{"enum":[[1,2],[2,1],[1,1]]}},"type":"object","properties":{"v":{"$ref":"#/$defs/e","not":{"items":{"const":1}}}},"required":["v"],"additionalProperties":false}`,
		[]string{`{"v":[1,2]}`, `{"v":[2,1]}`}, []string{`{"v":[1,1]}`}},
	{"draft7-items-array", `{"$schema":"http://json-schema.org/draft-07/schema#","enum":[[1],[1,"x"],[2,3]],"not":{"items":[{"const":1}],"additionalItems":false}}`,
		[]string{`[1,"x"]`, `[2,3]`}, []string{`[1]`}},
	{"no-survivor-in-one-branch", `{"anyOf":[{"enum":[[1,1]],"uniqueItems":true},{"type":"string","maxLength":2}]}`,
		[]string{`"ab"`}, []string{`[1,1]`, `"abc"`}},
	{"not-const-object", `{"enum":[{"a":1},{"a":2}],"not":{"const":{"a":1}}}`,
		[]string{`{"a":2}`}, []string{`{"a":1}`}},
}

func TestFiniteDomains(t *testing.T) {
	checkLangTests(t, finiteTests)
}

// TestFiniteKeepsRefusals: the finite path never hides a refusal it cannot
// decide.
func TestFiniteKeepsRefusals(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		code   ErrorCode
	}{
		{"no-enum", `{"type":"array","uniqueItems":true}`, CodeUnsupported},
		{"huge-number", `{"enum":[1e999999999,[1,1]],"uniqueItems":true}`, CodeInvalidSchema}, // checkNumbers refuses it first
		{"dynamic-ref", `{"$defs":{"d":{"$dynamicAnchor":"x"}},"enum":[[1,1]],"uniqueItems":true,"properties":{"p":{"$dynamicRef":"#x"}}}`, CodeUnsupported},
		{"remote-ref", `{"enum":[[1,1]],"uniqueItems":true,"items":{"$ref":"http://example.com/s.json"}}`, CodeUnsupported}, // the validator loads nothing
		{"overlap-number", `{"oneOf":[{"type":"number"},{"enum":[1,2]}]}`, CodeOneOfOverlap},
	}
	for _, tt := range tests {
		_, err := CompileSchema([]byte(tt.schema), Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != tt.code {
			t.Errorf("%s: CompileSchema(%s) error = %v, want code %v", tt.name, tt.schema, err, tt.code)
		}
	}
}

// TestFiniteLenient: in lenient mode a finite record that would have been
// loosened is decided exactly instead, without a warning.
func TestFiniteLenient(t *testing.T) {
	schema := `{"type":"array","enum":[[1,1],[1,2]],"uniqueItems":true}`
	res, err := CompileSchema([]byte(schema), Options{Strictness: Lenient})
	if err != nil {
		t.Fatalf("CompileSchema(%s, Lenient) error: %v", schema, err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("CompileSchema(%s, Lenient) warnings = %v, want none", schema, res.Warnings)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fsm.Matches(d, []byte(`[1,1]`)) || !fsm.Matches(d, []byte(`[1,2]`)) {
		t.Errorf("CompileSchema(%s, Lenient): got [1,1] %v, [1,2] %v; want false, true", schema,
			fsm.Matches(d, []byte(`[1,1]`)), fsm.Matches(d, []byte(`[1,2]`)))
	}
}

func TestLookupPointer(t *testing.T) {
	root, err := decodeValue([]byte(`{"a":{"b/c":[1,{"~d":2}]},"%20":3}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ptr  string
		want string // encoded value; "" for none
	}{
		{"", `{"a":{"b/c":[1,{"~d":2}]},"%20":3}`},
		{"/a/b~1c/1/~0d", `2`},
		{"/%20", `3`},
		{"/a/b~1c/2", ""},
		{"/a/x", ""},
		{"a", ""},
	}
	for _, tt := range tests {
		got := ""
		if v := lookupPointer(root, tt.ptr); v != nil {
			var b bytes.Buffer
			encodeValue(&b, v)
			got = b.String()
		}
		if got != tt.want {
			t.Errorf("lookupPointer(%q) = %s, want %s", tt.ptr, got, tt.want)
		}
	}
}

// FuzzFiniteSchema: seeded with the finite-domain and oneOf tables,
// compiling never panics, and when it succeeds the shortest accepted text
// validates against the schema (reference validator, formats asserted).
func FuzzFiniteSchema(f *testing.F) {
	for _, tt := range finiteTests {
		f.Add([]byte(tt.schema))
	}
	for _, tt := range oneOfTests {
		f.Add([]byte(tt.schema))
	}
	for _, tt := range ifThenElseTests {
		f.Add([]byte(tt.schema))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		s, ok := fuzzShortest(t, schema)
		if !ok {
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			return
		}
		jc := jsonschema.NewCompiler()
		jc.AssertFormat()
		jc.UseLoader(noLoader{})
		if jc.AddResource("schema.json", doc) != nil {
			return
		}
		sch, err := jc.Compile("schema.json")
		if err != nil {
			return // not a schema the reference validator accepts
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
		if err != nil {
			t.Fatalf("CompileSchema(%q): shortest match %q is not JSON: %v", schema, s, err)
		}
		defer func() { _ = recover() }() // the validator panics on huge exponents
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("CompileSchema(%q): shortest match %q does not validate: %v", schema, s, err)
		}
	})
}

// BenchmarkCompileFinite measures the paths of finite.go and oneof*.go:
// a finite record decided by the reference validator (which builds the
// validator once per compile), a presence-test oneOf, and if/then/else.
func BenchmarkCompileFinite(b *testing.B) {
	cases := []struct{ name, schema string }{
		{"finite-uniqueItems", `{"type":"object","properties":{"tags":{"enum":[["a","b"],["a","a"],["c"],["b","c","d"]],"uniqueItems":true}},"required":["tags"],"additionalProperties":false}`},
		{"oneOf-presence", oneOfTests[1].schema},
		{"oneOf-negated", `{"type":"object","oneOf":[{"required":["id","win"],"properties":{"id":{"type":"string"},"win":{"type":"object"}}},{"required":["id","lose"],"properties":{"id":{"type":"string"},"lose":{"type":"object"}}}]}`},
		{"if-then-else", ifThenElseTests[0].schema},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := CompileSchema([]byte(tc.schema), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
