package grammar

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/internal/sharedtest"
)

// eagerAnyDepth is the free-form value depth of tests that build a whole
// DFA with fsm.Compile: the default (8) is cheap for lazy constraints, which
// build a level only when a generation reaches it, but the eager DFA roughly
// doubles with each level. Depth 2 exercises the same construction.
const eagerAnyDepth = 2

// TestRandomWalksValidate is the soundness property: for every schema in
// testdata/schemas/corpus.jsonl, random strings the compiled DFA accepts are
// valid JSON and validate against the schema (santhosh-tekuri/jsonschema,
// formats asserted).
func TestRandomWalksValidate(t *testing.T) {
	if n := randomWalks(t, "testdata/schemas/corpus.jsonl", Options{AnyValueDepth: eagerAnyDepth}); n < 200 {
		t.Errorf("corpus has %d schemas, want ≥ 200", n)
	}
}

// TestRandomWalksValidateAnyOrder is the property with properties accepted
// in any order (OrderAny). The eager DFA of a wide object is exponential,
// so schemas whose DFA exceeds the budget are skipped (the lazy constraint
// is what serves them; fsm's tests compare it with the eager one).
func TestRandomWalksValidateAnyOrder(t *testing.T) {
	randomWalks(t, "testdata/schemas/corpus.jsonl", Options{PropertyOrder: OrderAny, AnyValueDepth: eagerAnyDepth})
}

// TestRandomWalksValidateFinite is the same property on
// testdata/schemas/finite.jsonl: schemas that compile only through the
// finite-domain path and the overlapping-oneOf rewrites.
func TestRandomWalksValidateFinite(t *testing.T) {
	if n := randomWalks(t, "testdata/schemas/finite.jsonl", Options{AnyValueDepth: eagerAnyDepth}); n < 20 {
		t.Errorf("finite corpus has %d schemas, want ≥ 20", n)
	}
}

// constructs are the prefixes of the schema names in
// testdata/schemas/constructs.jsonl: one per construct compiled exactly
// beyond the basic keywords, each with at least minPerConstruct schemas.
var constructs = []string{"pattern-anchor", "pattern-lookahead", "pattern-boundary", "ref-anchor", "property-names", "contains", "items-negation", "ref-siblings", "pattern-overlap", "negated-oneof", "number-value", "unique-finite", "oneof-discriminator", "not-ref", "format-envelope", "witness", "length-alphabet", "negated-extras", "not-number", "multiple-remainder", "multiple-rational", "contains-negation"}

const minPerConstruct = 20

// TestRandomWalksValidateConstructs is the property on
// testdata/schemas/constructs.jsonl, in both property orders, with a
// reference validator whose patterns are ECMA-262 (regexp2), since the
// corpus holds lookaheads.
func TestRandomWalksValidateConstructs(t *testing.T) {
	for _, order := range []PropertyOrder{OrderSchema, OrderAny} {
		names := walkCorpus(t, "testdata/schemas/constructs.jsonl", Options{PropertyOrder: order, AnyValueDepth: eagerAnyDepth}, referenceSchemaECMA)
		count := map[string]int{}
		for _, n := range names {
			c, _, _ := strings.Cut(n, "/")
			count[c]++
		}
		for _, c := range constructs {
			if count[c] < minPerConstruct {
				t.Errorf("constructs.jsonl has %d %s schemas, want ≥ %d", count[c], c, minPerConstruct)
			}
		}
	}
}

// referenceSchemaECMA is referenceSchema with ECMA-262 patterns.
func referenceSchemaECMA(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		t.Fatal(err)
	}
	jc := jsonschema.NewCompiler()
	jc.AssertFormat()
	jc.UseLoader(noLoader{})
	jc.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return ecmaRegexp{re}, nil
	})
	if err := jc.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := jc.Compile("schema.json")
	if err != nil {
		t.Fatalf("reference validator cannot compile %s: %v", schema, err)
	}
	return sch
}

// randomWalks checks the schemas of one corpus file and returns how many
// there were.
func randomWalks(t *testing.T, path string, opts Options) int {
	return len(walkCorpus(t, path, opts, referenceSchema))
}

// walkCorpus checks the schemas of one corpus file against the reference
// validator ref builds and returns their names.
func walkCorpus(t *testing.T, path string, opts Options, ref func(*testing.T, string) *jsonschema.Schema) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	walks := 40
	if testing.Short() {
		walks = 8
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	var names []string
	for sc.Scan() {
		var rec struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		names = append(names, rec.Name)
		t.Run(rec.Name, func(t *testing.T) {
			res, err := CompileSchema(rec.Schema, opts)
			if err != nil {
				t.Fatalf("CompileSchema(%s) error: %v", rec.Schema, err)
			}
			var fopts fsm.Options
			if opts.PropertyOrder == OrderAny {
				fopts = fsm.Options{MaxDFAStates: 20_000, MaxNFAStates: 200_000}
			}
			d, err := fsm.Compile(res.Node, fopts)
			var fe *fsm.Error
			if opts.PropertyOrder == OrderAny && errors.As(err, &fe) && fe.Code.IsLimit() {
				t.Skipf("eager DFA over budget: %v", err)
			}
			if err != nil {
				t.Fatalf("fsm.Compile error: %v", err)
			}
			sch := ref(t, string(rec.Schema))
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			if s, ok := fsm.ShortestMatch(d); ok {
				checkInstance(t, sch, rec.Schema, s)
			} else {
				t.Fatalf("schema %s: empty language", rec.Schema)
			}
			for i := 0; i < walks; i++ {
				s := fsm.RandomWalk(d, rng, 400)
				if s == nil || !fsm.Matches(d, s) {
					continue // the walk gave up before reaching an accepting state
				}
				checkInstance(t, sch, rec.Schema, s)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

func checkInstance(t *testing.T, sch *jsonschema.Schema, schema, s []byte) {
	t.Helper()
	if !json.Valid(s) {
		t.Errorf("schema %s: accepted %q, which is not valid JSON", schema, s)
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		t.Errorf("schema %s: accepted %q: %v", schema, s, err)
		return
	}
	// The reference validator panics on numbers it cannot parse as big.Rat
	// (huge exponents); such a string is still valid JSON, so it is only
	// logged.
	defer func() {
		if p := recover(); p != nil {
			t.Logf("schema %s: reference validator panicked on %q: %v", schema, s, p)
		}
	}()
	if err := sch.Validate(inst); err != nil {
		t.Errorf("schema %s: accepted %q, which does not validate: %v", schema, s, err)
	}
}

// TestRandomWalksMaskBench is the soundness property on real schemas:
// random strings accepted for each MaskBench dev schema that compiles must
// validate against it. Off unless CONFORM_MASKBENCH=1;
// CONFORM_MASKBENCH_EVERY=N checks every N-th schema.
func TestRandomWalksMaskBench(t *testing.T) {
	if os.Getenv("CONFORM_MASKBENCH") == "" {
		t.Skip("set CONFORM_MASKBENCH=1 to random-walk MaskBench schemas")
	}
	f, err := os.Open(sharedtest.Path(t, "maskbench", "dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	every := 1
	fmt.Sscan(os.Getenv("CONFORM_MASKBENCH_EVERY"), &every)
	dups := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<20), 64<<20)
	n, checked := 0, 0
	for sc.Scan() {
		n++
		if every > 1 && n%every != 0 {
			continue
		}
		var rec struct {
			ID     string          `json:"id"`
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		res, err := CompileSchema(rec.Schema, Options{AnyValueDepth: eagerAnyDepth})
		if err != nil {
			continue
		}
		d, err := fsm.Compile(res.Node, fsm.Options{MaxDFAStates: 50_000, MaxWork: 5_000_000, Timeout: 5 * time.Second})
		if err != nil {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Schema))
		if err != nil {
			continue
		}
		jc := jsonschema.NewCompiler()
		jc.AssertFormat()
		jc.UseLoader(noLoader{})
		// ECMA-262 patterns (the Go regexp default differs on "." and
		// "\s"); the pattern parser itself is tested in fsm.
		// The "regex" format goes through the same engine (the library
		// does not let it be replaced); a valid ECMA-262 regex that the
		// pattern parser does not support is checked with regexp2.
		jc.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
			if re, err := patternEngine(s); err == nil {
				return re, nil
			}
			re, err := regexp2.Compile(s, regexp2.ECMAScript)
			if err != nil {
				return nil, err
			}
			return ecmaRegexp{re}, nil
		})
		if jc.AddResource("schema.json", doc) != nil {
			continue
		}
		sch, err := jc.Compile("schema.json")
		if err != nil {
			continue // a schema the reference validator does not take
		}
		checked++
		rng := rand.New(rand.NewPCG(uint64(n), 11))
		for i := 0; i < 10; i++ {
			s := fsm.RandomWalk(d, rng, 2000)
			if s == nil || !fsm.Matches(d, s) {
				continue
			}
			if hasDuplicateKey(s) {
				// Known limitation: extra properties (and
				// patternProperties keys) may repeat a name, which
				// validators collapse, so counts such as minProperties
				// can come out short. Counted, not failed.
				dups++
				continue
			}
			checkInstance(t, sch, []byte(rec.ID), s)
		}
	}
	t.Logf("%d schemas random-walked; %d texts with a repeated key skipped", checked, dups)
}

// ecmaRegexp adapts regexp2 to the validator's Regexp interface.
type ecmaRegexp struct{ re *regexp2.Regexp }

func (e ecmaRegexp) MatchString(s string) bool {
	ok, err := e.re.MatchString(s)
	return err == nil && ok
}

func (e ecmaRegexp) String() string { return e.re.String() }

// hasDuplicateKey reports whether some object in the JSON text s repeats
// a member name.
func hasDuplicateKey(s []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.UseNumber() // 1E929 does not fit a float64
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObj: true, key: true})
			case '[':
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.isObj && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.isObj {
			top.key = true
		}
	}
}

func TestHasDuplicateKey(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"x":1,"x":2}]}`, true},
		{`{"a":1,"b":{"a":2},"c":[{"x":1,"y":2}]}`, false},
		{`{"a":{"b":1},"a":2}`, true},
		{`["a","a",{"a":"a"}]`, false},
		{`{"a":"b","b":"a"}`, false},
		{`{"f":[1E929],"f":2}`, true},
	} {
		if got := hasDuplicateKey([]byte(c.s)); got != c.want {
			t.Errorf("hasDuplicateKey(%s) = %v, want %v", c.s, got, c.want)
		}
	}
}
