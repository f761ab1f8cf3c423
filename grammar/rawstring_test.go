package grammar

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"conform/fsm"
)

var rawStringTests = []struct {
	schema string
	yes    []string
	no     []string
}{
	{`{"type":"string"}`, []string{"", "Paris", "a\"b\\c\n\t", "été ☃"}, []string{"\xff", "\xc3"}},
	{`{"type":"string","maxLength":3}`, []string{"", "abc", "été"}, []string{"abcd", "ééé!"}},
	{`{"type":"string","minLength":2,"maxLength":2}`, []string{"ab", "\"\\"}, []string{"a", "abc"}},
	{`{"type":"string","pattern":"^[A-Z]{3}$"}`, []string{"UTC", "CET"}, []string{"utc", "\"UTC\"", "UTCX"}},
	{`{"type":"string","pattern":"a\"b"}`, []string{`a"b`, `xa"bx`}, []string{`a\"b`, "ab"}},
	{`{"type":"string","format":"date"}`, []string{"2024-07-01"}, []string{"2024-13-01", `"2024-07-01"`}},
	{`{"type":"string","format":"email","maxLength":20}`, []string{"ana@example.com"}, []string{"ana", "averyveryverylongname@example.com"}},
	{`{"enum":["c","f"]}`, []string{"c", "f"}, []string{"", "cf", `"c"`}},
	{`{"type":"string","enum":["a\"b","x\ny",1]}`, []string{"a\"b", "x\ny"}, []string{`a\"b`, "1"}},
	{`{"const":"Paris"}`, []string{"Paris"}, []string{"paris", ""}},
	{`{"type":"string","enum":["ab","abc","abcd"],"maxLength":3}`, []string{"ab", "abc"}, []string{"abcd"}},
	{`{"type":"string","enum":["ab","b1","c2"],"pattern":"[0-9]"}`, []string{"b1", "c2"}, []string{"ab"}},
	{`{"type":"string","not":{"enum":["x"]}}`, []string{"", "y", "xx"}, []string{"x"}},
	{`{"type":"string","not":{"pattern":"^a"}}`, []string{"b", ""}, []string{"a", "abc"}},
	{`{"anyOf":[{"type":"string","pattern":"^[0-9]+$"},{"enum":["none"]}]}`, []string{"12", "none"}, []string{"no", "1a"}},
	{`{"oneOf":[{"type":"string","pattern":"^a+$"},{"type":"string","pattern":"^b+$"}]}`, []string{"aa", "b"}, []string{"ab", ""}},
	{`{"allOf":[{"type":"string"},{"maxLength":2}]}`, []string{"ab"}, []string{"abc"}},
	{`{"$defs":{"s":{"type":"string","pattern":"^x+$"}},"$ref":"#/$defs/s"}`, []string{"x", "xxx"}, []string{"", "y"}},
	{`{"type":["string"],"minLength":1}`, []string{"a"}, []string{""}},
}

func TestCompileRawString(t *testing.T) {
	for _, tt := range rawStringTests {
		res, err := CompileRawString([]byte(tt.schema), Options{})
		if err != nil {
			t.Errorf("CompileRawString(%s) error: %v", tt.schema, err)
			continue
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatalf("fsm.Compile(CompileRawString(%s)) error: %v", tt.schema, err)
		}
		for _, s := range tt.yes {
			if !fsm.Matches(d, []byte(s)) {
				t.Errorf("CompileRawString(%s) does not match %q, want a match", tt.schema, s)
			}
		}
		for _, s := range tt.no {
			if fsm.Matches(d, []byte(s)) {
				t.Errorf("CompileRawString(%s) matches %q, want none", tt.schema, s)
			}
		}
	}
}

func TestCompileRawStringErrors(t *testing.T) {
	tests := []struct {
		schema string
		opts   Options
		code   ErrorCode
	}{
		{`{}`, Options{}, CodeNotString},
		{`{"type":["string","null"]}`, Options{}, CodeNotString},
		{`{"type":"integer"}`, Options{}, CodeNotString},
		{`{"enum":["a",1]}`, Options{}, CodeNotString},
		{`{"anyOf":[{"type":"string"},{"type":"number"}]}`, Options{}, CodeNotString},
		{`{"type":"string","enum":[1,2]}`, Options{}, CodeNotString},
		{`{"type":"string","minLength":3,"maxLength":2}`, Options{}, CodeUnsatisfiable},
		{`{"type":"string","format":"no-such-format"}`, Options{}, CodeUnknownFormat},
		{`{"type":"string","pattern":"(a"}`, Options{}, CodeBadPattern},
		{`{"oneOf":[{"type":"string","format":"date"},{"type":"string","maxLength":20}]}`, Options{}, CodeOneOfOverlap},
		{`{"type":`, Options{}, CodeInvalidJSON},
		{`{"type":"string"}`, Options{MaxSchemaBytes: 4}, CodeTooLarge},
	}
	for _, tt := range tests {
		_, err := CompileRawString([]byte(tt.schema), tt.opts)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("CompileRawString(%s) error = %v, want code %v", tt.schema, err, tt.code)
		}
	}
	res, err := CompileRawString([]byte(`{"type":"string","format":"no-such-format"}`), Options{Strictness: Lenient})
	if err != nil || len(res.Warnings) != 1 || res.Warnings[0].Keyword != "format" {
		t.Errorf("lenient CompileRawString(unknown format) = %+v, %v; want one format warning", res, err)
	}
}

func TestStringKinds(t *testing.T) {
	tests := []struct {
		schema     string
		some, only bool
	}{
		{`{"type":"string"}`, true, true},
		{`{}`, true, false},
		{`{"type":"integer"}`, false, true},
		{`{"type":["number","boolean"]}`, false, false},
		{`{"enum":["a","b"]}`, true, true},
		{`{"enum":[1,null]}`, false, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false, false},
		{`{"anyOf":[{"type":"string"},{"const":"x"}]}`, true, true},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`, true, false},
		{`{"anyOf":[{"type":"array"},{"type":"null"}]}`, false, false},
	}
	for _, tt := range tests {
		some, only, err := StringKinds([]byte(tt.schema), Options{})
		if err != nil || some != tt.some || only != tt.only && tt.some {
			t.Errorf("StringKinds(%s) = %v, %v, %v; want %v, %v", tt.schema, some, only, err, tt.some, tt.only)
		}
	}
}

// TestRawStringMatchesJSON: the raw language is the decoding of the JSON
// language CompileSchema gives the same schema, checked both ways on random
// walks.
func TestRawStringMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range rawStringTests {
		raw, err := CompileRawString([]byte(tt.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		js, err := CompileSchema([]byte(tt.schema), Options{})
		if err != nil {
			t.Fatal(err)
		}
		rd, err1 := fsm.Compile(raw.Node, fsm.Options{})
		jd, err2 := fsm.Compile(js.Node, fsm.Options{})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for i := 0; i < 100; i++ {
			if s := fsm.RandomWalk(rd, rng, 40); s != nil && fsm.Matches(rd, s) {
				if q := canonicalString(string(s)); !fsm.Matches(jd, []byte(q)) {
					t.Errorf("%s: raw %q is accepted, its JSON %s is not", tt.schema, s, q)
				}
			}
			if s := fsm.RandomWalk(jd, rng, 40); s != nil && fsm.Matches(jd, s) {
				var dec string
				if err := json.Unmarshal(s, &dec); err != nil {
					t.Errorf("%s: JSON %q is not a string: %v", tt.schema, s, err)
				} else if !fsm.Matches(rd, []byte(dec)) {
					t.Errorf("%s: JSON %s is accepted, its raw text %q is not", tt.schema, s, dec)
				}
			}
		}
	}
}

// FuzzCompileRawString: compiling never panics and fails only with an
// *Error; when it succeeds, the shortest raw text, JSON-quoted, is
// accepted by CompileSchema's language of the same schema.
func FuzzCompileRawString(f *testing.F) {
	for _, tt := range rawStringTests {
		f.Add([]byte(tt.schema))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		opts := Options{MaxSchemaBytes: 1 << 12, MaxNodes: 20_000}
		res, err := CompileRawString(schema, opts)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("CompileRawString(%q) error %T %v, want *Error", schema, err, err)
			}
			return
		}
		fo := fsm.Options{MaxDFAStates: 20_000, MaxNFAStates: 100_000, MaxWork: 2_000_000, Timeout: 2 * time.Second}
		d, err := fsm.Compile(res.Node, fo)
		if err != nil {
			return
		}
		s, ok := fsm.ShortestMatch(d)
		if !ok {
			return
		}
		js, err := CompileSchema(schema, opts)
		if err != nil {
			return
		}
		jd, err := fsm.Compile(js.Node, fo)
		if err != nil {
			return
		}
		if q := canonicalString(string(s)); !fsm.Matches(jd, []byte(q)) {
			t.Fatalf("CompileRawString(%s): shortest %q, JSON-quoted %s, is not in CompileSchema's language", schema, s, q)
		}
	})
}
