package grammar

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"conform/fsm"
)

// oneOfTests exercise the exact rewrites of overlapping oneOf branches.
var oneOfTests = []langTest{
	{"multiples", `{"oneOf":[{"type":"integer","multipleOf":2},{"type":"integer","multipleOf":3}]}`,
		[]string{`2`, `3`, `4`, `9`, `-2`, `10`}, []string{`6`, `0`, `12`, `1`, `5`, `-6`}},
	{"multiples-of-fractions", `{"oneOf":[{"type":"number","minimum":0},{"type":"number","multipleOf":0.5}]}`,
		[]string{`0.25`, `1.1`, `-0.5`, `-1`}, []string{`0`, `0.5`, `1`, `-0.25`, `1.0`}},
	{"multiples-and-maximum", `{"oneOf":[{"type":"number","multipleOf":3},{"type":"number","maximum":5}]}`,
		[]string{`6`, `9`, `4`, `-1`, `2.5`}, []string{`3`, `0`, `-3`, `7`, `5.5`, `3.0`}},
	{"multiples-and-bounds", `{"type":"integer","oneOf":[{"multipleOf":7},{"minimum":10}]}`,
		[]string{`7`, `-7`, `0`, `10`, `13`, `15`}, []string{`14`, `21`, `70`, `1`, `9`}},
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
	{"negated-types", `{"oneOf":[{"type":"integer"},{"type":"number"}]}`,
		[]string{`1.5`, `-0.5`},
		[]string{`1`, `1.0`, `"s"`}},
	{"negated-patterns", `{"oneOf":[{"type":"string","pattern":"a"},{"type":"string","pattern":"b"}]}`,
		[]string{`"a"`, `"xb"`},
		[]string{`"ab"`, `"c"`, `1`}},
	{"negated-properties", `{"type":"object","oneOf":[{"required":["id","win"],"properties":{"id":{"type":"string"},"win":{"type":"object"}}},{"required":["id","lose"],"properties":{"id":{"type":"string"},"lose":{"type":"object"}}}]}`,
		[]string{`{"id":"a","win":{}}`, `{"id":"a","lose":{}}`, `{"id":"a","win":{},"lose":1}`},
		[]string{`{"id":"a","win":{},"lose":{}}`, `{"id":"a"}`, `{"id":1,"win":{}}`}},
	{"negated-not-required-two", `{"type":"object","properties":{"l":{"type":"number"},"w":{"type":"number"},"b":{"type":"number"},"h":{"type":"number"}},"additionalProperties":false,"oneOf":[{"not":{"required":["b","h"]},"required":["l","w"]},{"not":{"required":["l","w"]},"required":["b","h"]}]}`,
		[]string{`{"l":1,"w":2}`, `{"b":1,"h":2}`, `{"l":1,"w":2,"b":3}`},
		[]string{`{"l":1,"w":2,"b":3,"h":4}`, `{"l":1}`, `{}`}},
	{"negated-bounds", `{"oneOf":[{"type":"integer","minimum":0,"maximum":10},{"type":"integer","minimum":5}]}`,
		[]string{`0`, `4`, `11`, `100`},
		[]string{`5`, `10`, `-1`}},
	{"negated-closed", `{"properties":{"subject":{"oneOf":[{"type":"object","properties":{"discriminator":{"const":"first"},"first":{"type":"boolean"}},"additionalProperties":false},{"type":"object","properties":{"discriminator":{"const":"second"},"second":{"type":"boolean"}},"additionalProperties":false}]}},"required":["subject"],"additionalProperties":false}`,
		[]string{`{"subject":{"discriminator":"first"}}`, `{"subject":{"first":true}}`, `{"subject":{"discriminator":"second","second":false}}`, `{"subject":{"second":true}}`},
		[]string{`{"subject":{}}`, `{"subject":{"discriminator":"first","second":true}}`, `{"subject":{"first":true,"second":true}}`, `{"subject":1}`}},
	{"negated-under", `{"type":"object","properties":{"competencies":{"type":"array","items":{"type":"string"}},"abilities":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false,"oneOf":[{"required":["competencies"]},{"properties":{"abilities":{"type":"array","items":{"type":"integer"}}},"required":["abilities"]}]}`,
		[]string{`{"competencies":["a"]}`, `{"abilities":[1]}`},
		[]string{`{"competencies":["a"],"abilities":[1]}`, `{}`}},
	{"types-through-groups", `{"oneOf":[{"oneOf":[{"type":"string"},{"type":"integer"}]},{"type":"null"}]}`,
		[]string{`"s"`, `1`, `null`},
		[]string{`1.5`, `true`}},
	{"negated-under-closed", `{"oneOf":[{"type":"object","additionalProperties":false,"properties":{"except":{"type":"array","items":{"type":"string"}}}},{"type":"object","additionalProperties":false,"properties":{"only":{"type":"array","items":{"type":"string"}}}}]}`,
		[]string{`{"except":["a"]}`, `{"only":[]}`},
		[]string{`{}`, `{"except":[],"only":[]}`}},
	{"disjoint-closed-patterns", `{"oneOf":[{"type":"object","properties":{"ios":{"type":"string"}},"required":["ios"],"additionalProperties":false},{"type":"object","patternProperties":{"^[0-9]x$":{"type":"string"}},"additionalProperties":false,"minProperties":1},{"type":"object","patternProperties":{"^[a-z]+$":{"type":"string"}},"minProperties":1,"additionalProperties":false,"not":{"required":["ios"]}}]}`,
		[]string{`{"ios":"a"}`, `{"2x":"b"}`, `{"en":"c"}`},
		[]string{`{}`, `{"ios":"a","en":"c"}`}},
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
	// Formats are told apart and excluded by their envelopes: a URI has
	// a scheme, a hostname has no colon (Github_easy o90313,
	// Github_medium o58478).
	{"format-uri-or-relative", `{"oneOf":[{"type":"string","format":"uri"},{"type":"string","pattern":"^\\./.+$"}]}`,
		[]string{`"http://x"`, `"./a"`},
		[]string{`"a"`, `1`}},
	{"format-uri-or-hostname", `{"oneOf":[{"format":"uri"},{"format":"hostname"}]}`,
		[]string{`"http://x"`, `"example.com"`},
		[]string{`1`, `null`, `"a b"`}},
	{"format-hostname-or-ipv4", `{"oneOf":[{"format":"hostname"},{"format":"ipv4"}]}`,
		[]string{`"example.com"`, `"a-b"`},
		[]string{`"1.2.3.4"`, `1`}},
	{"not-format", `{"type":"string","not":{"format":"email"}}`,
		[]string{`"ab"`, `""`},
		[]string{`"a@b"`, `"x@"`}},
	// not {type: T} removes exactly T, which proves these disjoint.
	{"disjoint-not-type", `{"oneOf":[{"not":{"type":"string"}},{"type":"string","maxLength":2}]}`,
		[]string{`1`, `null`, `{}`, `"ab"`},
		[]string{`"abc"`}},
	// A property every branch declares, with disjoint values: objects
	// that have it satisfy that branch only; objects without it are the
	// oneOf of the branches without it (compiled exactly here: only the
	// first branch admits an integer x).
	{"discriminated", `{"oneOf":[{"properties":{"kind":{"const":"a"},"x":{"type":"integer"}}},{"properties":{"kind":{"const":"b"},"x":{"type":"string"}}}]}`,
		[]string{`{"kind":"a"}`, `{"kind":"b","x":"s"}`, `{"kind":"a","x":1,"y":null}`, `{"x":1}`, `{"x":"s"}`},
		[]string{`{}`, `{"kind":"c"}`, `{"kind":"a","x":"s"}`, `{"x":true}`, `{"y":1}`, `1`}},
	// The MaskBench shape (Github_hard o17529): 40 branches alike but for
	// the discriminator's enum. The general negation distributes 39
	// disjunctions per branch and runs out of work; objects without the
	// discriminator satisfy every branch or none, so none is lost.
	{"discriminated-many", discriminatedMany(40),
		[]string{`{"assert":"K0"}`, `{"assert":"K39","message":"m"}`, `{"assert":"K7","message":"m","extra":[]}`},
		[]string{`{}`, `{"message":"m"}`, `{"assert":"K40"}`, `{"assert":"K1","message":1}`, `"K1"`}},
}

// discriminatedMany is a oneOf of n branches that differ only in the enum
// of their "assert" property.
func discriminatedMany(n int) string {
	var b strings.Builder
	b.WriteString(`{"oneOf":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"properties":{"assert":{"enum":["K%d"]},"message":{"type":"string"}}}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestOneOfOverlap(t *testing.T) {
	checkLangTests(t, oneOfTests)
}

// TestOneOfOverlapRefused: overlaps neither rewrite handles stay errors.
func TestOneOfOverlapRefused(t *testing.T) {
	tests := []string{
		`{"oneOf":[{"type":"number"},{"enum":[1,2]}]}`,                                            // 1.0 cannot be excluded from numbers
		`{"oneOf":[{"type":"string","format":"uri-reference"},{"type":"string","pattern":"^2"}]}`, // a format without an envelope is not negated
		`{"oneOf":[{"required":["a"]},{"enum":[[1]]},{"type":"array"}]}`,                          // [1] cannot be excluded from arrays
	}
	for _, s := range tests {
		_, err := CompileSchema([]byte(s), Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeOneOfOverlap {
			t.Errorf("CompileSchema(%s) error = %v, want code %v", s, err, CodeOneOfOverlap)
		}
	}
}

// TestOneOfPresenceBound: past MaxAnyOfProduct the presence expansion
// gives way to the general negation rewrite, with the same language.
func TestOneOfPresenceBound(t *testing.T) {
	// Branch 0 must fail both other branches, with 3 names each: 9 terms.
	schema := `{"type":"object","properties":{"x":{},"a1":{},"a2":{},"a3":{},"b1":{},"b2":{},"b3":{}},"additionalProperties":false,` +
		`"oneOf":[{"required":["x"]},{"required":["a1","a2","a3"]},{"required":["b1","b2","b3"]}]}`
	texts := []struct {
		s    string
		want bool
	}{
		{`{"x":1}`, true},
		{`{"x":1,"a1":1,"a2":2}`, true},
		{`{"a1":1,"a2":2,"a3":3}`, true},
		{`{"x":1,"a1":1,"a2":2,"a3":3}`, false},
		{`{"a1":1,"a2":2,"a3":3,"b1":1,"b2":2,"b3":3}`, false},
		{`{}`, false},
	}
	for _, limit := range []int{8, 64} {
		res, err := CompileSchema([]byte(schema), Options{AnyValueDepth: eagerAnyDepth, MaxAnyOfProduct: limit, Whitespace: Compact})
		if err != nil {
			t.Fatalf("CompileSchema(%s, MaxAnyOfProduct %d) error: %v", schema, limit, err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range texts {
			if got := fsm.Matches(d, []byte(tt.s)); got != tt.want {
				t.Errorf("MaxAnyOfProduct %d: Matches(%s) = %v, want %v", limit, tt.s, got, tt.want)
			}
		}
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

// ifThenElseTests exercise the if/then/else and structured-not rewrites.
var ifThenElseTests = []langTest{
	{"if-discriminator", `{"type":"object","properties":{"kind":{"enum":["a","b"]},"x":{"type":"integer"},"y":{"type":"string"}},"required":["kind"],"additionalProperties":false,"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`,
		[]string{`{"kind":"a","x":1}`, `{"kind":"a","x":1,"y":"s"}`, `{"kind":"b","y":"s"}`},
		[]string{`{"kind":"a","y":"s"}`, `{"kind":"b","x":1}`, `{"kind":"a"}`}},
	{"if-required", `{"if":{"required":["x"]},"then":{"not":{"required":["error"]}},"else":{"required":["error"]}}`,
		[]string{`{"x":1}`, `{"error":1}`, `{"error":1,"y":2}`},
		[]string{`{"x":1,"error":2}`, `{}`, `1`, `"s"`}},
	{"if-const-no-else", `{"type":"string","if":{"const":"x"},"then":false}`,
		[]string{`"y"`, `""`},
		[]string{`"x"`, `1`}},
	{"if-typed-else-only", `{"if":{"type":"string"},"else":{"type":"integer"}}`,
		[]string{`"s"`, `1`},
		[]string{`1.5`, `null`, `[]`, `{}`}},
	{"if-minItems-finite", `{"type":"array","oneOf":[{"$ref":"#/definitions/x"},{"$ref":"#/definitions/y"}],"if":{"minItems":1},"then":{"minItems":2,"items":{"multipleOf":2}},"else":{"minItems":1},"definitions":{"x":{"enum":[[2],[2,4],[6]]},"y":{"enum":[[],[2,3],[4,8]]}}}`,
		[]string{`[2,4]`, `[4,8]`, `[2, 4]`},
		[]string{`[2]`, `[]`, `[2,3]`, `[6]`, `[8,4]`}},
	{"if-nested-property", `{"type":"object","properties":{"mode":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false,"if":{"properties":{"mode":{"type":"string","maxLength":1}},"required":["mode"]},"then":{"required":["n"]}}`,
		[]string{`{"mode":"a","n":1}`, `{"mode":"ab"}`, `{}`, `{"n":2}`},
		[]string{`{"mode":"a"}`}},
	{"if-draft4-ignored", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"string"}},"if":{"properties":{"a":{"const":"x"}}},"then":{"required":["b"]}}`,
		[]string{`{"a":"x","b":1}`, `{"a":"y"}`, `{"a":"x"}`},
		[]string{`{"a":1}`}},
	{"not-required-two", `{"type":"object","properties":{"body":{"type":"string"},"bodyValue":{"type":"string"}},"additionalProperties":false,"not":{"required":["body","bodyValue"]}}`,
		[]string{`{}`, `{"body":"a"}`, `{"bodyValue":"b"}`},
		[]string{`{"body":"a","bodyValue":"b"}`}},
	{"not-allOf-required", `{"type":"object","properties":{"cmd":{"type":"string"},"args":{"type":"array"}},"additionalProperties":false,"not":{"allOf":[{"required":["cmd"]},{"required":["args"]}]}}`,
		[]string{`{"cmd":"x"}`, `{"args":[]}`, `{}`},
		[]string{`{"cmd":"x","args":[]}`}},
	{"not-anyOf-types", `{"not":{"anyOf":[{"type":"string"},{"type":"object","required":["a"]}]}}`,
		[]string{`1`, `null`, `{}`, `{"b":1}`, `[]`},
		[]string{`"s"`, `{"a":1}`}},
	// The MaskBench shape (Github_medium o39168): not of a $ref to a
	// structured schema, beside that schema in a oneOf.
	{"not-ref-structured", `{"definitions":{"car":{"properties":{"type":{"enum":["car"]}}},"carProps":{"properties":{"wheels":{"type":"integer"}}}},"oneOf":[{"not":{"$ref":"#/definitions/car"}},{"allOf":[{"$ref":"#/definitions/car"},{"$ref":"#/definitions/carProps"}]}]}`,
		[]string{`{"type":"bike"}`, `{"type":"car","wheels":4}`, `{"type":2,"wheels":"x"}`, `{}`, `1`, `{"type":"car"}`},
		[]string{`{"type":"car","wheels":"x"}`, `{"wheels":"x"}`}},
	{"not-ref-dependencies", `{"definitions":{"d":{"dependencies":{"a":["b"]}}},"type":"object","not":{"$ref":"#/definitions/d"}}`,
		[]string{`{"a":1}`, `{"a":1,"c":2}`},
		[]string{`{}`, `{"a":1,"b":2}`, `{"b":2}`}},
	{"not-not-ref", `{"$defs":{"d":{"type":"object","required":["k"]}},"not":{"not":{"$ref":"#/$defs/d"}}}`,
		[]string{`{"k":1}`},
		[]string{`{}`, `1`}},
	// A $ref points into the not: the rewrite would leave it dangling, so
	// the not stays and the finite path decides the enum.
	{"not-ref-target-kept", `{"allOf":[{"enum":[{"foo":false},{"foo":{"bar":1}}]},{"not":{"not":{"additionalProperties":false,"properties":{"foo":{"$ref":"#/allOf/1/not/not"}}}}}]}`,
		[]string{`{"foo":false}`},
		[]string{`{"foo":{"bar":1}}`}},
	// $refs point into the then and the else (JsonSchemaStore ui5.yaml's
	// definitions beside each case): they stay in place, inert without
	// their if, and the references still resolve.
	{"if-ref-into-then", `{"type":"object","properties":{"v":{"enum":["1","2"]}},"required":["v"],"if":{"properties":{"v":{"const":"1"}}},"then":{"properties":{"x":{"$ref":"#/then/definitions/x"}},"definitions":{"x":{"type":"integer"}}},"else":{"properties":{"x":{"$ref":"#/else/definitions/x"}},"definitions":{"x":{"type":"string"}}}}`,
		[]string{`{"v":"1","x":1}`, `{"v":"2","x":"s"}`, `{"v":"1"}`},
		[]string{`{"v":"1","x":"s"}`, `{"v":"2","x":1}`, `{}`}},
	{"if-nested-ref-into-then", `{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"boolean"}},"required":["a","b"],"if":{"properties":{"a":{"const":true}}},"then":{"if":{"properties":{"b":{"const":true}}},"then":{"properties":{"c":{"$ref":"#/then/then/definitions/c"}},"definitions":{"c":{"const":1}}},"else":{"properties":{"c":{"const":2}}}},"else":{"properties":{"c":{"const":3}}}}`,
		[]string{`{"a":true,"b":true,"c":1}`, `{"a":true,"b":false,"c":2}`, `{"a":false,"b":true,"c":3}`, `{"a":true,"b":true}`},
		[]string{`{"a":true,"b":true,"c":2}`, `{"a":true,"b":false,"c":1}`, `{"a":false,"b":false,"c":1}`}},
}

func TestIfThenElse(t *testing.T) {
	checkLangTests(t, ifThenElseTests)
}

// negatedOneOfTests: a oneOf (and unknown keywords) inside a schema that
// is negated: an if, a not, or a branch of an overlapping oneOf.
var negatedOneOfTests = []langTest{
	{"not-oneOf-overlapping", `{"type":"integer","not":{"oneOf":[{"minimum":5},{"maximum":10}]}}`,
		[]string{`5`, `10`, `7`}, []string{`4`, `11`, `"a"`}},
	{"not-oneOf-typed", `{"not":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}`,
		[]string{`1`, `null`, `[1]`, `{}`}, []string{`"a"`, `[]`, `["a"]`}},
	{"oneOf-branch-with-oneOf", `{"type":"object","properties":{"p":true,"q":true},"oneOf":[{"properties":{"p":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}},"required":["p"]},{"properties":{"q":{"type":"integer"}},"required":["q"]}]}`,
		[]string{`{"p":"a"}`, `{"p":["a"]}`, `{"q":1}`, `{"p":1,"q":1}`}, []string{`{"p":"a","q":1}`, `{}`, `{"q":"x"}`}},
	{"dependencies-in-branch", `{"type":"object","properties":{"a":true,"b":true,"c":true},"oneOf":[{"dependencies":{"a":["b"]}},{"required":["c"]}]}`,
		[]string{`{"a":1,"b":1}`, `{}`, `{"a":1,"c":1}`}, []string{`{"a":1}`, `{"c":1}`, `{"a":1,"b":1,"c":1}`}},
	// The extra keys of an open context cannot be listed: the negation of
	// additionalProperties drops "an undeclared key with a failing value"
	// (sound: {"a":1,"b":1} is valid and not produced).
	{"additionalProperties-under", `{"oneOf":[{"required":["a"]},{"required":["b"],"additionalProperties":false}]}`,
		[]string{`{"a":1}`}, []string{`{}`, `{"b":1}`, `1`}},
	{"closed-one-key-branch", `{"type":"array","items":{"oneOf":[{"type":"object","required":["type","url"]},{"type":"object","additionalProperties":{"enum":[false]},"minProperties":1,"maxProperties":1}]}}`,
		[]string{`[{"type":1,"url":2}]`, `[{"x":false}]`}, []string{`[{"type":1}]`, `[{}]`}},
	// Arrays of disjoint enums overlap only in []: each other branch's
	// negation is "non-empty", not one contains each (MaskBench o62057).
	{"arrays-of-disjoint-enums", `{"oneOf":[{"type":"array","maxItems":3,"items":{"enum":["a","b"]}},{"type":"array","maxItems":3,"items":{"enum":["c"]}},{"type":"array","maxItems":3,"items":{"enum":["d"]}},{"type":"array","maxItems":3,"items":{"enum":["e"]}},{"type":"array","maxItems":3,"items":{"enum":["f"]}},{"type":"array","maxItems":3,"items":{"enum":["g","a"]}}]}`,
		[]string{`["b"]`, `["c","c"]`, `["f"]`, `["g"]`, `["b","a"]`, `["g","a"]`}, []string{`[]`, `["a"]`, `["a","a"]`, `["c","d"]`, `["a","b","a","b"]`}},
	{"unknown-keyword-in-branch", `{"oneOf":[{"type":"string","preproccess":"x"},{"type":"string","maxLength":2}]}`,
		[]string{`"abc"`}, []string{`"ab"`, `""`, `1`}},
}

func TestNegatedOneOf(t *testing.T) { checkLangTests(t, negatedOneOfTests) }

// negatedContainsTests: contains negated exactly (negateIn), in oneOf
// branches, under not and in an if.
var negatedContainsTests = []langTest{
	{"oneOf-items-or-contains", `{"type":"array","oneOf":[{"items":{"type":"integer"}},{"contains":{"type":"string"}}]}`,
		[]string{`[]`, `[1,2]`, `["a"]`, `[1,"a",null]`}, []string{`[1,null]`, `[null]`, `{}`}},
	{"not-contains", `{"type":"array","not":{"contains":{"const":"x"}}}`,
		[]string{`[]`, `[2,"y"]`, `["xx"]`}, []string{`["x"]`, `[2,"x"]`, `{}`}},
	{"not-contains-counts", `{"type":"array","items":{"type":"string"},"not":{"contains":{"const":"x"},"minContains":2,"maxContains":3}}`,
		[]string{`[]`, `["x"]`, `["x","x","x","x"]`, `["y","y"]`}, []string{`["x","x"]`, `["x","y","x"]`, `["x","x","x"]`}},
	{"oneOf-contains-both", `{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3,"oneOf":[{"contains":{"const":"a"}},{"contains":{"const":"b"}}]}`,
		[]string{`["a"]`, `["b","b"]`, `["a","c"]`}, []string{`[]`, `["c"]`, `["a","b"]`, `["b","c","a"]`}},
	{"if-contains", `{"type":"array","items":{"enum":["a","b"]},"if":{"contains":{"const":"a"}},"then":{"maxItems":1}}`,
		[]string{`[]`, `["a"]`, `["b","b"]`}, []string{`["a","b"]`, `["b","a"]`}},
}

func TestNegatedContains(t *testing.T) { checkLangTests(t, negatedContainsTests) }

func TestNegateIf(t *testing.T) {
	tests := []struct {
		cond string
		want string // "" when not negatable
	}{
		{`true`, `false`},
		{`{}`, `false`},
		{`{"type":"string"}`, `{"not":{"type":"string"}}`},
		{`{"required":["a","b"]}`, `{"anyOf":[{"type":"object","not":{"required":["a"]}},{"type":"object","not":{"required":["b"]}}]}`},
		{`{"properties":{"k":{"const":1}}}`, `{"type":"object","required":["k"],"properties":{"k":{"not":{"const":1}}}}`},
		{`{"minItems":1,"description":"d"}`, `{"type":"array","maxItems":0}`},
		{`{"minLength":0}`, `false`},
		{`{"maxProperties":2}`, `{"type":"object","minProperties":3}`},
		{`{"format":"uri-reference"}`, ""},
		{`{"format":"email"}`, `{"type":"string","not":{"format":"email"}}`}, // excluded by its envelope
		{`{"properties":{"k":{"$ref":"#"}}}`, ""},
		{`{"minimum":1}`, `{"type":"number","exclusiveMaximum":1}`},
		{`{"exclusiveMaximum":1}`, `{"type":"number","minimum":1}`},
		{`{"minimum":0,"maximum":9}`, `{"anyOf":[{"type":"number","exclusiveMaximum":0},{"type":"number","exclusiveMinimum":9}]}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","minimum":1,"exclusiveMinimum":true}`, `{"type":"number","maximum":1}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","maximum":1}`, `{"type":"number","minimum":1,"exclusiveMinimum":true}`},
		{`{"multipleOf":2}`, `{"type":"number","not":{"multipleOf":2}}`},
		{`{"allOf":[{"required":["a"]},{"type":"string"}]}`, `{"anyOf":[{"type":"object","not":{"required":["a"]}},{"not":{"type":"string"}}]}`},
		{`{"anyOf":[{"const":1},{"const":2}]}`, `{"allOf":[{"not":{"const":1}},{"not":{"const":2}}]}`},
		{`{"not":{"type":"null"}}`, `{"type":"null"}`},
		{`{"$ref":"#/required"}`, ""}, // a $ref to a non-schema
		{`{"oneOf":[{"type":"null"},true]}`, `{"anyOf":[{"allOf":[{"not":{"type":"null"}},false]},{"allOf":[{"type":"null"},true]}]}`},
		{`{"oneOf":[{"type":"null"},{"type":"string"}]}`, `{"allOf":[{"not":{"type":"null"}},{"not":{"type":"string"}}]}`},
		{`{"type":"string","x-unknown":1,"preproccess":{"a":1}}`, `{"not":{"type":"string"}}`},
		{`{"if":{"type":"null"},"then":false}`, ""},
		{`{"if":{"type":"null"}}`, `false`},
		{`{"type":"null","then":false,"else":false}`, `{"not":{"type":"null"}}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","if":{"type":"null"},"then":false}`, `false`},
		{`{"$conform:contains":{}}`, ""},
		{`{"contains":{"const":1}}`, `{"type":"array","items":{"not":{"const":1}}}`},
		{`{"contains":{"const":1},"minContains":0}`, `false`},
		{`{"contains":{"const":1},"minContains":2,"maxContains":3}`, `{"anyOf":[{"type":"array","contains":{"const":1},"minContains":0,"maxContains":1},{"type":"array","contains":{"const":1},"minContains":4}]}`},
		{`{"contains":{"const":1},"maxContains":0}`, `{"type":"array"}`},
		{`{"contains":{"const":1},"minContains":100}`, ""},
		{`{"contains":{"$ref":"#"}}`, ""},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","contains":{"type":"string"},"minContains":3}`, `{"type":"array","items":{"not":{"type":"string"}}}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","contains":{"type":"string"}}`, `false`},
		{`{"dependencies":{"a":["b"]}}`, `{"allOf":[{"type":"object","required":["a"]},{"type":"object","not":{"required":["b"]}}]}`},
		{`{"dependentSchemas":{"a":{"type":"object","maxProperties":1}}}`, `{"allOf":[{"type":"object","required":["a"]},{"anyOf":[{"not":{"type":"object"}},{"type":"object","minProperties":2}]}]}`},
		{`{"patternProperties":{"^x":false}}`, `{"type":"object","not":{"patternProperties":{"^x":false}}}`}, // a witness (witness.go)
		// No key is declared or matched: any key is additional.
		{`{"type":"object","additionalProperties":false}`, `{"anyOf":[{"not":{"type":"object"}},{"type":"object","not":{"patternProperties":{"^":false}}}]}`},
		{`{"properties":{"a.b":true},"patternProperties":{"^x":true},"additionalProperties":false}`, `{"anyOf":[{"type":"object","required":["a.b"],"properties":{"a.b":false}},{"type":"object","not":{"patternProperties":{"^x":true}}},{"type":"object","not":{"patternProperties":{"^(?!(?:a\\.b)$)(?![\\s\\S]*(?:^x))":false}}}]}`},
	}
	for _, tt := range tests {
		v, err := decodeValue([]byte(tt.cond), 20)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := negateIf(v, v, 0)
		got := ""
		if ok {
			var b bytes.Buffer
			encodeValue(&b, n)
			got = b.String()
		}
		if got != tt.want {
			t.Errorf("negateIf(%s) = %s, want %s", tt.cond, got, tt.want)
		}
	}
}

func TestNegateInClosedContext(t *testing.T) {
	cond, err := decodeValue([]byte(`{"type":"object","properties":{"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	// Without a context the extra keys are a witness's pattern.
	n, ok := negateIn(cond, cond, 0, nil, negExact)
	if !ok {
		t.Fatalf("negateIn(additionalProperties, no context) ok = false")
	}
	var nb bytes.Buffer
	encodeValue(&nb, n)
	if want := `{"anyOf":[{"not":{"type":"object"}},{"type":"object","required":["b"],"properties":{"b":{"not":{"type":"integer"}}}},{"type":"object","not":{"patternProperties":{"^(?!(?:b)$)":{"type":"string"}}}}]}`; nb.String() != want {
		t.Errorf("negateIn(additionalProperties, no context) = %s, want %s", nb.String(), want)
	}
	// The under modes drop it.
	if n, ok := negateIn(cond, cond, 0, nil, negUnderExtras); !ok || strings.Contains(fmt.Sprint(n), "patternProperties") {
		t.Errorf("negateIn(additionalProperties, no context, under) = %v, %v; want the alternative dropped", n, ok)
	}
	keys := []string{"a", "b"}
	n, ok = negateIn(cond, cond, 0, &keys, negExact)
	if !ok {
		t.Fatalf("negateIn(additionalProperties, keys a b) ok = false")
	}
	var b bytes.Buffer
	encodeValue(&b, n)
	want := `{"anyOf":[{"not":{"type":"object"}},{"type":"object","required":["b"],"properties":{"b":{"not":{"type":"integer"}}}},{"type":"object","required":["a"],"properties":{"a":{"not":{"type":"string"}}}}]}`
	if b.String() != want {
		t.Errorf("negateIn(additionalProperties, keys a b) = %s, want %s", b.String(), want)
	}
}

func TestNegateInUnder(t *testing.T) {
	cond, err := decodeValue([]byte(`{"required":["a"],"properties":{"a":{"type":"array","uniqueItems":true},"b":{"const":1}}}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := negateIn(cond, cond, 0, nil, negExact); ok {
		t.Errorf("negateIn(uniqueItems inside a property, exact) ok = true, want false")
	}
	n, ok := negateIn(cond, cond, 0, nil, negUnder)
	if !ok {
		t.Fatalf("negateIn(uniqueItems inside a property, under) ok = false")
	}
	var b bytes.Buffer
	encodeValue(&b, n)
	want := `{"anyOf":[{"type":"object","not":{"required":["a"]}},{"type":"object","required":["b"],"properties":{"b":{"not":{"const":1}}}}]}`
	if b.String() != want {
		t.Errorf("negateIn(under) = %s, want %s", b.String(), want)
	}
	// A conjunction is dropped whole: ¬anyOf[A, B] with ¬B unknown.
	cond2, _ := decodeValue([]byte(`{"anyOf":[{"required":["a"]},{"uniqueItems":true}]}`), 20)
	if n, ok := negateIn(cond2, cond2, 0, nil, negUnder); ok {
		var b bytes.Buffer
		encodeValue(&b, n)
		t.Errorf("negateIn(anyOf with an unknown branch, under) = %s, want failure", b.String())
	}
}

// TestNotNumberValues: a number value is excluded only where each number
// has one text (integers); elsewhere the not is refused, never ignored.
func TestNotNumberValues(t *testing.T) {
	checkLangTests(t, []langTest{
		{"integer", `{"type":"integer","not":{"const":2}}`, []string{`1`, `3`}, []string{`2`}},
		{"integer-multiple", `{"type":"number","multipleOf":2,"not":{"enum":[4,4.5]}}`, []string{`2`, `6`}, []string{`4`, `4.0`, `3`}},
		{"non-integers-integer-value", `{"type":"number","not":{"anyOf":[{"type":"integer"},{"const":3}]}}`, []string{`2.5`}, []string{`3`, `2`}},
	})
	for _, s := range []string{
		`{"type":"number","multipleOf":0.1,"not":{"const":2}}`,
		`{"type":"number","not":{"type":"integer"},"allOf":[{"not":{"const":2.5}}]}`,
	} {
		_, err := CompileSchema([]byte(s), Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeUnsupported {
			t.Errorf("CompileSchema(%s) error = %v, want code %v", s, err, CodeUnsupported)
		}
	}
}

// negatedExtrasTests: oneOf branches whose additionalProperties range over
// keys no context lists (patternProperties beside them, or an open
// branch), negated exactly as "some key neither declared nor matching a
// pattern has a failing value" (MaskBench o37786's colour selectors
// compiled to nothing before).
var negatedExtrasTests = []langTest{
	{"pattern-closed", `{"type": "object", "oneOf": [{"patternProperties": {"^[a-z]{2}$": {"type": "string"}}, "additionalProperties": false, "minProperties": 1}, {"patternProperties": {"^[0-9]x$": {"type": "string"}}, "additionalProperties": false, "minProperties": 1}]}`,
		[]string{`{"en":"a"}`, `{"1x":"b"}`, `{"en":"a","fr":"b"}`},
		[]string{`{}`, `{"en":"a","1x":"b"}`, `{"en":1}`, `{"eng":"a"}`}},
	{"declared-or-pattern", `{"type": "object", "oneOf": [{"required": ["ref"], "properties": {"ref": {"type": "string"}}, "additionalProperties": false}, {"patternProperties": {"^[a-z]{3}$": {"type": "string"}}, "additionalProperties": false, "minProperties": 1}]}`,
		[]string{`{"abc":"x"}`, `{"abc":"y","ref":"x"}`},
		[]string{`{"ref":"x"}`, `{}`, `{"ref":1}`, `{"abcd":"x"}`}},
	{"typed-extras", `{"type": "object", "oneOf": [{"patternProperties": {"^[a-z]{2}$": {"type": "integer"}}, "additionalProperties": {"type": "string"}}, {"patternProperties": {"^[0-9]x$": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}}], "maxProperties": 2}`,
		[]string{`{"ab":1}`, `{"zz":true}`, `{"ab":3,"q":"s"}`, `{"1x":2,"q":false}`},
		[]string{`{}`, `{"ab":"s"}`, `{"1x":2,"ab":3}`, `{"q":"s","r":true}`}},
	{"declared-and-patterns", `{"type": "object", "oneOf": [{"properties": {"id": {"type": "integer"}}, "patternProperties": {"^a": {"type": "boolean"}}, "additionalProperties": false}, {"properties": {"name": {"type": "string"}}, "patternProperties": {"b$": {"type": "boolean"}}, "additionalProperties": false}], "maxProperties": 2}`,
		[]string{`{"id":1}`, `{"name":"n"}`, `{"id":2,"ab":true}`, `{"xb":false}`},
		[]string{`{}`, `{"ab":true}`, `{"id":1,"name":"n"}`, `{"zz":1}`}},
}

func TestNegatedExtras(t *testing.T) {
	checkLangTests(t, negatedExtrasTests)
	checkLangTestsWith(t, negatedExtrasTests, Options{PropertyOrder: OrderAny})
}

// TestSpentBound: work that failed rewrites give back (c.work reset) still
// counts toward maxSpentFactor × the budget, so retries nested in retries
// cannot multiply the time of a compile.
func TestSpentBound(t *testing.T) {
	opts := Options{MaxNodes: 100}.withDefaults()
	c := newCompiler(opts, &value{k: kBool, b: true})
	var err error
	ticks := 0
	for ; ticks < 10*opts.MaxNodes && err == nil; ticks++ {
		if c.work == opts.MaxNodes/2 {
			c.work = 0 // an attempt's work given back
		}
		err = c.tick("/x", "anyOf")
	}
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != CodeTooLarge {
		t.Fatalf("after %d ticks: error %v, want %v", ticks, err, CodeTooLarge)
	}
	if ticks != maxSpentFactor*opts.MaxNodes+1 {
		t.Errorf("refused at tick %d, want %d", ticks, maxSpentFactor*opts.MaxNodes+1)
	}
}
