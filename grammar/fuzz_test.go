package grammar

import (
	"encoding/json"
	"testing"
	"time"

	"conform/fsm"
)

// FuzzCompileSchema: compiling never panics and stays within its budgets;
// when both stages succeed, the shortest accepted string is valid JSON.
func FuzzCompileSchema(f *testing.F) {
	for _, tt := range schemaTests {
		f.Add([]byte(tt.schema))
	}
	for _, tt := range badSchemas {
		f.Add([]byte(tt.schema))
	}
	// The language tables of the drafts' semantics, negations,
	// overlapping patterns, finite uniqueItems, oneOf rewrites and
	// witnesses.
	for _, table := range [][]langTest{refTests, numberValueTests, patternOverlapTests, negatedOneOfTests, uniqueFiniteTests, ifThenElseTests, oneOfTests, witnessTests, allOfPatternTests} {
		for _, tt := range table {
			f.Add([]byte(tt.schema))
		}
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		s, ok := fuzzShortest(t, schema)
		if !ok {
			return
		}
		if !json.Valid(s) {
			t.Fatalf("CompileSchema(%q): shortest match %q is not valid JSON", schema, s)
		}
	})
}

// fuzzShortest compiles a fuzzed schema under small budgets, failing t when
// the error is not an *Error, and returns the shortest accepted text (false
// when compilation fails within budgets or the language is empty, e.g. a
// required property with a false schema).
func fuzzShortest(t *testing.T, schema []byte) ([]byte, bool) {
	t.Helper()
	opts := Options{MaxSchemaBytes: 1 << 14, MaxNodes: 20_000, AnyValueDepth: eagerAnyDepth}
	if len(schema)%2 == 1 { // half the inputs with properties in any order
		opts.PropertyOrder = OrderAny
	}
	res, err := CompileSchema(schema, opts)
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("CompileSchema(%q) error %T %v, want *Error", schema, err, err)
		}
		return nil, false
	}
	d, err := fsm.Compile(res.Node, fsm.Options{MaxDFAStates: 20_000, MaxNFAStates: 100_000, MaxWork: 2_000_000, Timeout: 2 * time.Second})
	if err != nil {
		return nil, false
	}
	return fsm.ShortestMatch(d)
}
