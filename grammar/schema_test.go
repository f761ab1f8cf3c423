package grammar

import (
	"errors"
	"strings"
	"testing"

	"conform/fsm"
)

// schemaTests pair a schema with texts that must match and texts that must
// not, at the string level (grammar → fsm.Compile → fsm.Matches).
var schemaTests = []struct {
	name   string
	schema string
	match  []string
	reject []string
}{
	{"type-null", `{"type":"null"}`, []string{`null`}, []string{`nul`, `"null"`, ` null`, `null `}},
	{"type-bool", `{"type":"boolean"}`, []string{`true`, `false`}, []string{`True`, `1`}},
	{"type-integer", `{"type":"integer"}`, []string{`0`, `-1`, `12345678901234567890`}, []string{`-0`, `01`, `1.0`, `1e3`, `+1`, `-`}},
	{"type-number", `{"type":"number"}`, []string{`0`, `-0.5`, `1e10`, `1.25E-3`, `-0`}, []string{`.5`, `1.`, `01`, `1e`, `NaN`}},
	{"type-string", `{"type":"string"}`, []string{`""`, `"a b"`, `"\"\\\/\b\f\n\r\t"`, `"\u001f\u001F\u0000é😀"`},
		[]string{`"`, `"\x"`, "\"\x01\"", `"\u00e9"`, `"\ud83d"`, `"\u12"`, `'a'`}},
	{"type-array-union", `{"type":["string","null"]}`, []string{`null`, `"x"`}, []string{`1`, `[]`}},
	{"enum", `{"enum":["a","b",1,null,[1,2],{"k":true}]}`, []string{`"a"`, `"b"`, `1`, `null`, `[1, 2]`, `[1,2]`, `{"k": true}`}, []string{`"c"`, `2`, `[2,1]`, `{"k":false}`}},
	{"const", `{"const":"x\"y"}`, []string{`"x\"y"`}, []string{`"x"`}},
	{"enum-typed", `{"type":"string","enum":["a",1]}`, []string{`"a"`}, []string{`1`}},
	{"object-required", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a","b"],"additionalProperties":false}`,
		[]string{`{"a":1,"b":"x"}`, `{"a": 1, "b": "x"}`, "{\n  \"a\": 1,\n  \"b\": \"x\"\n}"}, []string{`{"a":1}`, `{"b":"x","a":1}`, `{"a":1,"b":"x","c":2}`, `{"a":"1","b":"x"}`}},
	{"object-optional", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"additionalProperties":false}`,
		[]string{`{}`, `{"a":1}`, `{"b":2}`, `{"a":1,"c":3}`, `{"a":1,"b":2,"c":3}`}, []string{`{,"a":1}`, `{"a":1,}`, `{"c":3,"a":1}`}},
	{"object-extra-default", `{"type":"object","properties":{"a":{"type":"integer"}}}`,
		[]string{`{"a":1}`, `{"a":1,"z":[1,{"q":null}]}`, `{"z":"q"}`}, []string{`{"a":1,"a":2}`, `{"a":"x"}`}},
	{"object-extra-schema", `{"properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string"},"type":"object"}`,
		[]string{`{"a":1,"b":"x"}`, `{"b":"x","c":"y"}`}, []string{`{"b":1}`, `{"\u0061":"x"}`}},
	{"required-only", `{"type":"object","required":["x"],"additionalProperties":false}`, []string{}, []string{`{}`}},
	{"min-max-properties", `{"type":"object","properties":{"a":{},"b":{},"c":{}},"minProperties":1,"maxProperties":2,"additionalProperties":false}`,
		[]string{`{"a":1}`, `{"a":1,"c":2}`}, []string{`{}`, `{"a":1,"b":2,"c":3}`}},
	{"array-items", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`,
		[]string{`[1]`, `[1, 2, 3]`, `[ 1 ]`}, []string{`[]`, `[1,2,3,4]`, `["a"]`, `[1,]`}},
	{"array-prefix", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
		[]string{`[]`, `["a"]`, `["a",1]`}, []string{`["a",1,2]`, `[1]`}},
	{"array-items-draft4", `{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"null"}}`,
		[]string{`["a",null,null]`}, []string{`["a",1]`}},
	{"string-length", `{"type":"string","minLength":2,"maxLength":3}`, []string{`"ab"`, `"abc"`, `"é😀"`, `"\n\t"`, `"\u0001a"`}, []string{`"a"`, `"abcd"`, `"\n\n\n\n"`}},
	{"integer-range", `{"type":"integer","minimum":-15,"maximum":2024}`, []string{`-15`, `-1`, `0`, `9`, `13`, `999`, `2024`}, []string{`-16`, `2025`, `10000`, `-100`}},
	{"integer-exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100}`, []string{`1`, `99`}, []string{`0`, `100`, `-1`}},
	{"integer-exclusive-draft4", `{"type":"integer","minimum":0,"exclusiveMinimum":true}`, []string{`1`, `1000`}, []string{`0`}},
	{"number-range", `{"type":"number","minimum":0.5,"maximum":10.25}`, []string{`0.5`, `0.50`, `1`, `9.999`, `10.25`, `10`, `10.250`, `0.6`}, []string{`0.4999`, `10.2501`, `11`, `-1`, `1e0`}},
	{"number-exclusive", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, []string{`0.1`, `0.999`, `0.0001`}, []string{`0`, `0.0`, `1`, `1.0`, `-0.5`}},
	{"number-negative", `{"type":"number","minimum":-1.5,"maximum":-0.25}`, []string{`-1.5`, `-1`, `-0.25`, `-0.3`}, []string{`-1.51`, `-0.2`, `0`}},
	{"multiple-of-int", `{"type":"integer","multipleOf":5}`, []string{`0`, `5`, `-10`, `125`}, []string{`3`, `7`, `-11`}},
	{"multiple-of-range", `{"type":"integer","multipleOf":7,"minimum":0,"maximum":30}`, []string{`0`, `7`, `28`}, []string{`8`, `35`}},
	{"multiple-of-fraction-integers", `{"type":"integer","multipleOf":2.5}`, []string{`0`, `5`, `-15`, `25`}, []string{`2`, `10.0`, `12`, `7`}},
	{"multiple-of-fraction-and-integer", `{"allOf":[{"multipleOf":2.5},{"multipleOf":2}]}`, []string{`0`, `10`, `-20`}, []string{`5`, `2`, `4`, `2.5`}},
	{"multiple-of-remainder", `{"type":"integer","multipleOf":7}`, []string{`0`, `7`, `-14`, `700000000000000000007`, `343`}, []string{`1`, `-8`, `700000000000000000008`, `007`, `-0`}},
	{"multiple-of-remainder-merged", `{"allOf":[{"type":"integer","multipleOf":3},{"multipleOf":1.5},{"not":{"multipleOf":9}}]}`, []string{`3`, `6`, `-15`, `30`}, []string{`9`, `0`, `-18`, `4`, `1.5`}},
	{"multiple-of-remainder-large", `{"type":"integer","multipleOf":429,"minimum":0}`, []string{`0`, `429`, `858`, `429000`}, []string{`-429`, `430`, `1`}},
	{"multiple-of-rational", `{"type":"number","multipleOf":2.5}`, []string{`0`, `2.5`, `5`, `7.5`, `-2.5`, `12.50`, `5.0`, `-0.0`}, []string{`1`, `2.4`, `2.55`, `12.25`, `2.05`, `5e0`}},
	{"multiple-of-rational-thirds", `{"type":"number","multipleOf":0.3}`, []string{`0`, `0.3`, `0.6`, `0.9`, `1.2`, `3`, `3.3`, `-0.3`, `0.30`}, []string{`0.1`, `1`, `0.35`, `3.31`, `0.03`}},
	{"multiple-of-rational-bounded", `{"type":"number","multipleOf":1.5,"minimum":0,"maximum":10}`, []string{`0`, `1.5`, `3`, `9`, `4.50`}, []string{`10`, `1`, `10.5`, `-1.5`}},
	{"multiple-of-rational-quarters", `{"type":"number","multipleOf":0.75}`, []string{`0.75`, `1.5`, `2.25`, `3`, `-0.75`}, []string{`1`, `0.5`, `0.7`, `2.2`}},
	{"multiple-of-decimal", `{"type":"number","multipleOf":0.01}`, []string{`1`, `1.5`, `1.25`, `1.250`}, []string{`1.255`}},
	{"allOf-merge", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]}`,
		[]string{`{"a":1,"b":"x"}`}, []string{`{"a":1}`, `{"b":"x"}`}},
	{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]}`, []string{`1`, `"a"`}, []string{`"ab"`, `null`}},
	{"oneOf-types", `{"oneOf":[{"type":"integer"},{"type":"string"}]}`, []string{`1`, `"a"`}, []string{`null`}},
	{"oneOf-discriminator", `{"oneOf":[{"type":"object","properties":{"k":{"const":"a"},"x":{"type":"integer"}},"required":["k"],"additionalProperties":false},{"type":"object","properties":{"k":{"const":"b"}},"required":["k"],"additionalProperties":false}]}`,
		[]string{`{"k":"a","x":1}`, `{"k":"b"}`}, []string{`{"k":"c"}`, `{"k":"b","x":1}`}},
	{"ref-defs", `{"$defs":{"p":{"type":"integer","minimum":1}},"type":"array","items":{"$ref":"#/$defs/p"}}`, []string{`[1,2]`}, []string{`[0]`}},
	{"ref-definitions-escaped", `{"definitions":{"a/b":{"type":"null"},"c~d":{"type":"boolean"}},"type":"array","prefixItems":[{"$ref":"#/definitions/a~1b"},{"$ref":"#/definitions/c~0d"}],"items":false}`,
		[]string{`[null,true]`}, []string{`[true,null]`}},
	{"ref-recursive", `{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}},"required":["v"],"additionalProperties":false}`,
		[]string{`{"v":1}`, `{"v":1,"next":{"v":2}}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`}, []string{`{"v":1,"next":{}}`}},
	{"not-type", `{"not":{"type":"string"}}`, []string{`1`, `null`, `[]`}, []string{`"a"`}},
	{"not-enum", `{"type":"string","not":{"enum":["a","b"]}}`, []string{`"c"`, `"ab"`, `""`}, []string{`"a"`, `"b"`, `"\u0061"`}},
	{"not-length", `{"type":"string","not":{"maxLength":2}}`, []string{`"abc"`}, []string{`"ab"`, `""`}},
	{"contains-two", `{"type":"array","allOf":[{"contains":{"const":1}},{"contains":{"const":2}}]}`, []string{`[1,2]`, `[2,1]`, `[1,3,2]`, `[2,2,1]`}, []string{`[1]`, `[2]`, `[]`, `[3]`, `[1,1]`}},
	{"contains-two-one-item", `{"type":"array","allOf":[{"contains":{"type":"integer"}},{"contains":{"minimum":5}}]}`, []string{`[7]`, `[1,5.5]`, `[5.5,1]`, `["a",6]`}, []string{`[1]`, `[5.5]`, `["a"]`, `[]`}},
	{"contains-two-prefix", `{"type":"array","prefixItems":[{"type":"string"}],"allOf":[{"contains":{"const":1}},{"contains":{"const":"a"}}]}`, []string{`["a",1]`, `["b",1,"a"]`, `["a",2,1]`}, []string{`["a"]`, `[1,"a"]`, `["b",1]`}},
	{"contains-three-bounded", `{"type":"array","maxItems":2,"allOf":[{"contains":{"const":1}},{"contains":{"type":"integer"}},{"contains":{"maximum":3}}]}`, []string{`[1]`, `[1,9]`, `["x",1]`}, []string{`[2,9]`, `[]`, `[1,2,3]`}},
	{"not-minimum", `{"type":"number","not":{"minimum":5}}`, []string{`4.99`, `-3`, `0`, `4`}, []string{`5`, `5.0`, `6`, `1e3`, `5.01`}},
	{"not-exclusive-minimum", `{"type":"integer","not":{"exclusiveMinimum":5}}`, []string{`5`, `-7`, `0`}, []string{`6`, `100`}},
	{"not-interval", `{"type":"number","not":{"minimum":1,"maximum":2}}`, []string{`0.99`, `2.01`, `-1`, `3`}, []string{`1`, `1.5`, `2`, `2.0`}},
	{"not-interval-untyped", `{"not":{"minimum":1,"maximum":2}}`, []string{`0`, `3`, `2.5`}, []string{`1`, `1.5`, `"a"`, `null`, `[]`}},
	{"not-interval-within", `{"type":"integer","minimum":0,"maximum":10,"not":{"minimum":3,"maximum":6}}`, []string{`0`, `2`, `7`, `10`}, []string{`3`, `6`, `11`, `-1`}},
	{"not-draft4-exclusive", `{"type":"number","not":{"maximum":0,"exclusiveMaximum":true}}`, []string{`0`, `0.5`, `7`}, []string{`-0.5`, `-1`}},
	{"not-multiple-of", `{"type":"integer","not":{"multipleOf":5}}`, []string{`1`, `-3`, `12`, `101`}, []string{`0`, `5`, `-10`, `125`}},
	{"not-multiple-of-fraction", `{"type":"integer","not":{"multipleOf":2.5}}`, []string{`1`, `12`, `-7`}, []string{`5`, `0`, `-15`, `20`}},
	{"not-multiple-of-bounded", `{"type":"integer","multipleOf":2,"not":{"multipleOf":10,"minimum":20}}`, []string{`2`, `10`, `0`, `22`, `-20`}, []string{`20`, `30`, `1000`, `3`}},
	{"not-multiple-of-listed", `{"type":"integer","minimum":0,"maximum":50,"not":{"multipleOf":7}}`, []string{`1`, `8`, `50`}, []string{`0`, `7`, `49`, `51`}},
	{"not-multiple-of-numbers", `{"type":"number","not":{"multipleOf":2.5}}`, []string{`1`, `2.4`, `-0.1`, `12.25`}, []string{`0`, `-0`, `2.5`, `5.00`, `-7.5`, `5e0`}},
	{"not-multiple-of-numbers-bounded", `{"type":"number","not":{"multipleOf":0.5,"minimum":0}}`, []string{`0.25`, `-0.5`, `-1`, `1.1`}, []string{`0`, `-0`, `-0.0`, `0.5`, `3`, `3.0`}},
	{"not-integer-bounds-in-integers", `{"type":"integer","not":{"type":"integer","maximum":3}}`, []string{`4`, `40`}, []string{`3`, `-1`}},
	{"nullable", `{"type":"string","nullable":true}`, []string{`null`, `"a"`}, []string{`1`}},
	{"format-date", `{"type":"string","format":"date"}`, []string{`"2024-02-29"`, `"2023-12-31"`}, []string{`"2023-02-29"`, `"2024-13-01"`, `"2024-04-31"`, `"1900-02-29"`}},
	{"format-date-time", `{"type":"string","format":"date-time"}`, []string{`"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:05.123+05:30"`}, []string{`"2024-01-02 03:04:05Z"`, `"2024-01-02T24:00:00Z"`}},
	{"format-uuid", `{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
	{"format-ipv4", `{"type":"string","format":"ipv4"}`, []string{`"192.168.0.1"`, `"0.0.0.0"`}, []string{`"256.1.1.1"`, `"01.1.1.1"`, `"1.1.1"`}},
	{"format-email", `{"type":"string","format":"email"}`, []string{`"a.b@example.com"`}, []string{`"a..b@example.com"`, `"@x.com"`, `"a@"`}},
	{"empty-schema", `{}`, []string{`1`, `"s"`, `[1,[2]]`, `{"a":{"b":null}}`, `null`}, []string{``, `x`, `[1,]`}},
	{"true-schema", `true`, []string{`{}`}, []string{`{`}},
	{"annotations", `{"title":"t","description":"d","examples":[1],"default":2,"$comment":"c","type":"integer"}`, []string{`2`}, []string{`"x"`}},
}

func TestCompileSchemaMatches(t *testing.T) {
	for _, tt := range schemaTests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CompileSchema([]byte(tt.schema), Options{AnyValueDepth: eagerAnyDepth})
			if err != nil {
				if len(tt.match) == 0 {
					var ge *Error
					if errors.As(err, &ge) && ge.Code == CodeUnsatisfiable {
						return
					}
				}
				t.Fatalf("CompileSchema(%s) error: %v", tt.schema, err)
			}
			d, err := fsm.Compile(res.Node, fsm.Options{})
			if err != nil {
				t.Fatalf("fsm.Compile(CompileSchema(%s)) error: %v", tt.schema, err)
			}
			for _, s := range tt.match {
				if !fsm.Matches(d, []byte(s)) {
					t.Errorf("schema %s: Matches(%q) = false, want true", tt.schema, s)
				}
			}
			for _, s := range tt.reject {
				if fsm.Matches(d, []byte(s)) {
					t.Errorf("schema %s: Matches(%q) = true, want false", tt.schema, s)
				}
			}
		})
	}
}

// badSchemas must fail with the given code (and pointer prefix).
var badSchemas = []struct {
	schema string
	code   ErrorCode
	ptr    string
}{
	{`{`, CodeInvalidJSON, ""},
	{`{"type":"object"} x`, CodeInvalidJSON, ""},
	{`[1]`, CodeInvalidSchema, ""},
	{`{"type":"strin"}`, CodeInvalidSchema, "/type"},
	{`{"properties":{"a":3}}`, CodeInvalidSchema, "/properties/a"},
	{`{"$ref":"#/$defs/missing"}`, CodeBadRef, "/$ref"},
	{`{"$ref":"http://example.com/s.json"}`, CodeBadRef, "/$ref"},
	{`{"$ref":"#"}`, CodeBadRef, "/$ref"},
	{`{"type":"array","uniqueItems":true}`, CodeUnsupported, "/uniqueItems"},
	{`{"type":"array","allOf":[{"contains":{"const":1},"minContains":2},{"contains":{"const":2}}]}`, CodeUnsupported, "/allOf/1/contains"},
	{`{"properties":{"a":{"if":{"format":"uri-reference"},"then":{"minLength":1}}}}`, CodeUnsupported, "/properties/a/if"},
	{`{"type":"string","format":"fancy"}`, CodeUnknownFormat, "/format"},
	{`{"oneOf":[{"type":"string","format":"uri-reference"},{"type":"string","pattern":"^2"}]}`, CodeOneOfOverlap, "/oneOf"},
	{`{"oneOf":[{"type":"string","format":"uri-reference"},{"type":"string","maxLength":20}]}`, CodeOneOfOverlap, "/oneOf"},
	{`{"type":"integer","minimum":5,"maximum":1}`, CodeUnsatisfiable, ""},
	{`{"not":{"type":"object","additionalProperties":false}}`, CodeUnsupported, "/not"},
	{`{"type":"number","not":{"multipleOf":1000003}}`, CodeUnsupported, "/not"},
	{`{"type":"number","not":{"type":"integer","multipleOf":5}}`, CodeUnsupported, "/not"},
	{`{"type":"number","not":{"type":"integer","minimum":5}}`, CodeUnsupported, "/not"},
	{`{"type":"integer","not":{"multipleOf":100003}}`, CodeUnsupported, "/not"},
	{`{"type":"integer","multipleOf":100003}`, CodeUnsupported, "/multipleOf"},
	{`{"minLength":-1}`, CodeInvalidSchema, "/minLength"},
	{strings.Repeat(`{"items":`, 300) + `{}` + strings.Repeat(`}`, 300), CodeTooLarge, ""},
}

func TestCompileSchemaErrors(t *testing.T) {
	for _, tt := range badSchemas {
		_, err := CompileSchema([]byte(tt.schema), Options{})
		var ge *Error
		if !errors.As(err, &ge) {
			t.Errorf("CompileSchema(%.60s) error = %v, want *Error with code %v", tt.schema, err, tt.code)
			continue
		}
		if ge.Code != tt.code || !strings.HasPrefix(ge.Pointer, tt.ptr) {
			t.Errorf("CompileSchema(%.60s) = %v (code %v, pointer %q), want code %v, pointer %q", tt.schema, err, ge.Code, ge.Pointer, tt.code, tt.ptr)
		}
	}
}

func TestLenientWarns(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"array","items":{"type":"string","format":"fancy"},"uniqueItems":true}`), Options{Strictness: Lenient})
	if err != nil {
		t.Fatalf("CompileSchema lenient error: %v", err)
	}
	if len(res.Warnings) != 2 {
		t.Errorf("CompileSchema lenient warnings = %v, want 2 (format, uniqueItems)", res.Warnings)
	}
}

func TestSchemaTooLarge(t *testing.T) {
	_, err := CompileSchema([]byte(`{"type":"string"}`), Options{MaxSchemaBytes: 5})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != CodeTooLarge {
		t.Errorf("CompileSchema over MaxSchemaBytes = %v, want CodeTooLarge", err)
	}
}

func TestCompactWhitespace(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"],"additionalProperties":false}`), Options{Whitespace: Compact})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{`{"a":[1,2]}`: true, `{"a": [1,2]}`: false, `{"a":[1, 2]}`: false} {
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("Compact: Matches(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMaxWhitespace(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"array"}`), Options{AnyValueDepth: eagerAnyDepth, MaxWhitespace: 3})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !fsm.Matches(d, []byte("[   1]")) || fsm.Matches(d, []byte("[    1]")) {
		t.Errorf("MaxWhitespace 3: want 3 spaces accepted and 4 rejected")
	}
}

func TestCompileChoice(t *testing.T) {
	res, err := CompileChoice([]string{"yes", "no", "maybe", "y"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"yes": true, "y": true, "no": true, "maybe": true, "ye": false, "": false, "nope": false} {
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("CompileChoice: Matches(%q) = %v, want %v", s, got, want)
		}
	}
	if _, err := CompileChoice(nil, Options{}); err == nil {
		t.Errorf("CompileChoice(nil) error = nil, want CodeUnsatisfiable")
	}
}

// TestEncodeJSONStringHomomorphism checks that complement and intersection
// commute with the encoding: a string whose decoded text is "ab" in any
// encoding is outside encode(not "ab").
func TestEncodeJSONStringHomomorphism(t *testing.T) {
	ab := fsm.Lit("ab")
	notAB, err := EncodeJSONString(fsm.And(fsm.Star(fsm.AnyRune()), fsm.Not(ab)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(notAB, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{`ab`: false, `\u0061b`: false, `a\u0062`: false, `\u0041b`: true, `abc`: true, ``: true, `"`: false, `\"`: true} {
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("encode(not ab): Matches(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestEscapesAll checks that EscapesAll admits every legal encoding and
// counts an escape or a surrogate pair as one character.
func TestEscapesAll(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"string","minLength":2,"maxLength":3}`), Options{Escapes: EscapesAll})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		`"\u00e9\u00E9é"`: true, `"\ud83d\ude00😀"`: true, `"\ud83d\ude00"`: false, `"\ud83d"`: false,
		`"\ude00\ud83d"`: false, `"a\u0062"`: true, `"\u0041\u0042\u0043\u0044"`: false,
	} {
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("EscapesAll minLength 2 maxLength 3: Matches(%s) = %v, want %v", s, got, want)
		}
	}
}

var moreSchemaTests = []struct {
	name   string
	schema string
	match  []string
	reject []string
}{
	{"patternProperties", `{"type":"object","properties":{"x_a":{"type":"string"}},"patternProperties":{"^x_":{"type":"integer"}},"additionalProperties":false}`,
		[]string{`{"x_b":1}`, `{"x_b":1,"x_c":2}`}, []string{`{"x_a":"s"}`, `{"x_b":"s"}`, `{"y":1}`}},
	{"patternProperties-extras", `{"type":"object","patternProperties":{"^n":{"type":"number"}},"additionalProperties":{"type":"string"}}`,
		[]string{`{"n1":1,"s":"x"}`, `{"s":"x"}`}, []string{`{"n1":"x"}`, `{"s":1}`}},
	{"oneOf-closed-discriminator", `{"oneOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false},{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}]}`,
		[]string{`{"a":1}`, `{"b":2}`}, []string{`{"a":1,"b":2}`, `{}`}},
	{"oneOf-patterns", `{"oneOf":[{"type":"string","pattern":"^a"},{"type":"string","pattern":"^b"},{"type":"integer","maximum":0},{"type":"integer","minimum":1}]}`,
		[]string{`"ax"`, `"b"`, `0`, `5`}, []string{`"c"`}},
	{"not-required", `{"type":["object","string"],"properties":{"a":{"type":"integer"}},"not":{"required":["b"]}}`,
		[]string{`{"a":1}`, `{"c":1}`}, []string{`{"b":1}`, `{"a":1,"b":2}`, `"s"`}},
	{"dependentRequired", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"dependentRequired":{"a":["b"]},"additionalProperties":false}`,
		[]string{`{}`, `{"b":1}`, `{"a":1,"b":2}`, `{"c":3}`}, []string{`{"a":1}`, `{"a":1,"c":3}`}},
	{"dependencies-schema", `{"type":"object","properties":{"a":{"type":"integer"},"b":{}},"dependencies":{"a":{"properties":{"b":{"type":"string"}},"required":["b"]}},"additionalProperties":false}`,
		[]string{`{"a":1,"b":"x"}`, `{"b":2}`}, []string{`{"a":1}`, `{"a":1,"b":2}`}},
	{"pattern", `{"type":"string","pattern":"^[a-z]+$"}`, []string{`"abc"`}, []string{`"ab1"`, `""`}},
	{"pattern-search", `{"type":"string","pattern":"b+"}`, []string{`"abc"`, `"b"`}, []string{`"ac"`}},
	{"pattern-length", `{"type":"string","pattern":"^a","maxLength":2}`, []string{`"a"`, `"ab"`}, []string{`"abc"`, `"ba"`}},
	{"pattern-quote", `{"type":"string","pattern":"^.*$"}`, []string{`"a\"b"`, `"a\\b"`}, []string{"\"a\nb\"", `"a\nb"`}},
}

func TestCompileSchemaMore(t *testing.T) {
	for _, tt := range moreSchemaTests {
		res, err := CompileSchema([]byte(tt.schema), Options{AnyValueDepth: eagerAnyDepth})
		if err != nil {
			t.Errorf("CompileSchema(%s) error: %v", tt.schema, err)
			continue
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Errorf("fsm.Compile(CompileSchema(%s)) error: %v", tt.schema, err)
			continue
		}
		for _, s := range tt.match {
			if !fsm.Matches(d, []byte(s)) {
				t.Errorf("%s: schema %s: Matches(%q) = false, want true", tt.name, tt.schema, s)
			}
		}
		for _, s := range tt.reject {
			if fsm.Matches(d, []byte(s)) {
				t.Errorf("%s: schema %s: Matches(%q) = true, want false", tt.name, tt.schema, s)
			}
		}
	}
}

func TestCompileRegex(t *testing.T) {
	res, err := CompileRegex(`[a-z]+-\d{2}`, Options{})
	if err != nil {
		t.Fatalf("CompileRegex error: %v", err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"ab-12": true, "ab-1": false, "x ab-12": false, "ab-123": false} {
		if got := fsm.Matches(d, []byte(s)); got != want {
			t.Errorf("CompileRegex: Matches(%q) = %v, want %v", s, got, want)
		}
	}
	var ge *Error
	if _, err := CompileRegex(`(?<=a)b`, Options{}); !errors.As(err, &ge) || ge.Code != CodeBadPattern {
		t.Errorf("CompileRegex(lookbehind) error = %v, want CodeBadPattern", err)
	}
}

// TestMaxStringLength: a string with a pattern has its maxLength lowered
// to MaxStringLength (plain strings: TestLongPlainString).
func TestMaxStringLength(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"string","pattern":"^[0-9]*$","maxLength":40000}`), Options{MaxStringLength: 8})
	if err != nil {
		t.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !fsm.Matches(d, []byte(`"12345678"`)) || fsm.Matches(d, []byte(`"123456789"`)) {
		t.Errorf("MaxStringLength 8: want 8 characters accepted and 9 rejected")
	}
}

func TestMaxArrayItems(t *testing.T) {
	arr := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]")
	}
	tests := []struct {
		schema      string
		opts        Options
		accept, rej int // longest accepted length, shortest rejected length
	}{
		{`{"type":"array","items":{"type":"integer"},"maxItems":1000}`, Options{MaxArrayItems: 5}, 5, 6},
		{`{"type":"array","items":{"type":"integer"},"maxItems":1000}`, Options{}, 64, 65},
		{`{"type":"array","items":{"type":"integer"},"maxItems":3}`, Options{MaxArrayItems: 5}, 3, 4},
		// minItems above the cap: the bound is kept (lowering would empty the language).
		{`{"type":"array","items":{"type":"integer"},"minItems":7,"maxItems":9}`, Options{MaxArrayItems: 5}, 9, 10},
	}
	for _, tt := range tests {
		res, err := CompileSchema([]byte(tt.schema), tt.opts)
		if err != nil {
			t.Fatalf("CompileSchema(%s) = %v", tt.schema, err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !fsm.Matches(d, arr(tt.accept)) || fsm.Matches(d, arr(tt.rej)) {
			t.Errorf("%s with MaxArrayItems %d: want %d items accepted and %d rejected", tt.schema, tt.opts.MaxArrayItems, tt.accept, tt.rej)
		}
	}
}

// TestDeepFreeFormLazy: the default free-form depth (16) is built level by
// level by a lazy constraint. A free-form value's own container may hold 16
// more levels (17 nested containers are accepted, 18 refused), and nothing
// near the eager DFA's size is built.
func TestDeepFreeFormLazy(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"object","properties":{"a":{}},"required":["a"]}`), Options{Whitespace: Compact})
	if err != nil {
		t.Fatal(err)
	}
	toks := make([][]byte, 257)
	for b := range 256 {
		toks[b] = []byte{byte(b)}
	}
	toks[256] = []byte("<eos>")
	ti, err := fsm.NewTokenIndex(toks, []fsm.TokenID{256}, 257)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fsm.CompileConstraint(t.Context(), res.Node, ti, fsm.Options{}, fsm.ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nest := func(d int) string {
		return `{"a":` + strings.Repeat(`[`, d-1) + `{"b":1}` + strings.Repeat(`]`, d-1) + `}`
	}
	for d, want := range map[int]bool{1: true, 8: true, 16: true, 17: true, 18: false} {
		m := c.NewMatcher()
		ok := true
		for _, b := range []byte(nest(d)) {
			if m.Accept(fsm.TokenID(b)) != nil {
				ok = false
				break
			}
		}
		if ok = ok && m.IsAccepting(); ok != want {
			t.Errorf("free-form value nested %d deep: accepted %v, want %v", d, ok, want)
		}
	}
	if st := c.Stats(); st.States > 5000 {
		t.Errorf("lazy constraint built %d DFA states for three short texts", st.States)
	}
}
