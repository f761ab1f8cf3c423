package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"

	"conform/fsm"
)

func TestLiteralPrefix(t *testing.T) {
	tests := []struct {
		pattern, want string
	}{
		{`^title_[a-z]{2}$`, "title_"},
		{`^description_(?:[A-Za-z]{2,3}|x-[a-z]+)$`, "description_"},
		{`^(?:title|tiger)_x$`, "ti"},
		{`^(?:ab)+c$`, "ab"},
		{`^(?:ab)*c$`, ""},
		{`title_`, ""}, // unanchored: anything may come first
		{`^$`, ""},
		{`^a?b$`, ""},
	}
	for _, tt := range tests {
		n, err := parsePattern(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		got := literalPrefix(n)
		if got != tt.want {
			t.Errorf("literalPrefix(%s) = %q, want %q", tt.pattern, got, tt.want)
		}
		// The prefix must be a prefix of every string of the language.
		d, err := fsm.Compile(n, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			s := fsm.RandomWalk(d, rng, 40)
			if s != nil && !strings.HasPrefix(string(s), got) {
				t.Errorf("%s: %q does not start with %q", tt.pattern, s, got)
			}
		}
	}
	if !disjointPrefixes("title_", "description_") || disjointPrefixes("title_", "tit") || disjointPrefixes("", "a") {
		t.Error("disjointPrefixes")
	}
}

// allOfPatternTests: under allOf, a key one branch matches by a pattern
// and another neither declares nor matches is additional in the other,
// whose additionalProperties apply to it (MaskBench Handwritten
// allOfPProp3 accepted keys without an "a" before).
var allOfPatternTests = []langTest{
	{"both-closed", `{"type": "object", "allOf": [{"patternProperties": {"a": true}, "additionalProperties": false}, {"patternProperties": {"b": true}, "additionalProperties": false}]}`,
		[]string{`{}`, `{"ab":1}`, `{"ba":1,"xaby":2}`},
		[]string{`{"b":1}`, `{"a":1}`, `{"ab":1,"xb":2}`, `{"xa":1,"ab":2}`}},
	{"typed-addl", `{"type": "object", "allOf": [{"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}}, {"patternProperties": {"y$": true}}]}`,
		[]string{`{"xa":1}`, `{"ay":"s"}`, `{"xy":2}`, `{"q":"s"}`},
		[]string{`{"ay":1}`, `{"xa":"s"}`, `{"q":1}`}},
	{"declared-other", `{"type": "object", "allOf": [{"properties": {"by": {"type": "integer"}}, "additionalProperties": false}, {"patternProperties": {"y": {"type": "integer"}}}]}`,
		[]string{`{}`, `{"by":1}`},
		[]string{`{"ay":1}`, `{"by":"s"}`, `{"y":1}`}},
	{"three", `{"type": "object", "allOf": [{"patternProperties": {"^.{1,3}$": false}}, {"patternProperties": {"a": true}, "additionalProperties": false}, {"patternProperties": {"b": true}, "additionalProperties": false}]}`,
		[]string{`{"abxx":1}`, `{"xxab":1,"baaa":2}`},
		[]string{`{"ab":1}`, `{"abxx":1,"xxxb":2}`, `{"xxxa":1}`}},
	{"not-witness", `{"type": "object", "allOf": [{"patternProperties": {"a": true}, "additionalProperties": false}, {"patternProperties": {"b": true}, "additionalProperties": false}], "not": {"patternProperties": {"c": false}}}`,
		[]string{`{"abc":1}`, `{"cab":2,"ab":1}`},
		[]string{`{}`, `{"ab":1}`, `{"abc":1,"xb":2}`, `{"abc":1,"c":2}`}},
}

func TestAllOfPatternProperties(t *testing.T) {
	checkLangTests(t, allOfPatternTests)
	checkLangTestsWith(t, allOfPatternTests, Options{PropertyOrder: OrderAny})
}

// TestStringsDisjoint: records whose only shared type is string are
// compared by their strings, an enum by its listed strings, a record's nots
// and groups left out (they only narrow it). disjoint must be sound: a
// pair it calls disjoint shares no string, which the table states.
func TestStringsDisjoint(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       bool
	}{
		{"enum-pattern", `{"enum": ["black", "red"]}`, `{"type": "string", "pattern": "^#[0-9a-f]{6}$"}`, true},
		{"enum-pattern-shared", `{"enum": ["black", "#abcdef"]}`, `{"type": "string", "pattern": "^#[0-9a-f]{6}$"}`, false},
		{"enum-with-other-types", `{"enum": ["black", 1, null]}`, `{"type": "string", "pattern": "^#"}`, true},
		{"enum-length", `{"enum": ["ab", "abc"]}`, `{"type": "string", "minLength": 4}`, true},
		{"enum-length-shared", `{"enum": ["ab", "abcd"]}`, `{"type": "string", "minLength": 4}`, false},
		{"pattern-under-not", `{"type": "string", "pattern": "^a", "not": {"const": "ab"}}`, `{"type": "string", "pattern": "^b"}`, true},
		{"enum-under-not", `{"enum": ["red", "navy"], "not": {"const": "red"}}`, `{"type": "string", "pattern": "^[0-9]+$"}`, true},
		{"enums", `{"enum": ["a", "b"]}`, `{"enum": ["c", "d"]}`, true},
		{"enums-shared", `{"enum": ["a", "b"]}`, `{"enum": ["b", "d"]}`, false},
		{"pattern-any-string", `{"type": "string", "pattern": "x"}`, `{"type": "string"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := decodeSchema([]byte(`{"a": `+tt.a+`, "b": `+tt.b+`}`), Options{}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			c := newCompiler(Options{}.withDefaults(), root)
			a, err := c.collect(sref{root.get("a"), "/a"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.collect(sref{root.get("b"), "/b"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.disjoint(a, b, 3); got != tt.want {
				t.Errorf("disjoint(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := c.disjoint(b, a, 3); got != tt.want {
				t.Errorf("disjoint(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}
