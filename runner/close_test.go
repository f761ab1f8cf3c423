package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/grammar"
	"conform/sampler"
)

// closeSchemas are JSON schemas of many shapes: nested objects, arrays with
// minItems, strings with minLength, maxLength and patterns, enums, consts,
// numbers with bounds, unions and nullable values.
var closeSchemas = []string{
	`{"type":"string"}`,
	`{"type":"string","minLength":5}`,
	`{"type":"string","minLength":3,"maxLength":6}`,
	`{"type":"string","pattern":"^[a-c]{2,4}-[0-9]+$"}`,
	`{"type":"string","enum":["alpha","beta","gamma delta"]}`,
	`{"const":"fixed value"}`,
	`{"type":"integer"}`,
	`{"type":"integer","minimum":100,"maximum":999}`,
	`{"type":"integer","minimum":-5,"maximum":5}`,
	`{"type":"number"}`,
	`{"type":"number","minimum":0,"exclusiveMaximum":1}`,
	`{"type":"boolean"}`,
	`{"type":"null"}`,
	`{"enum":[1,"two",null,true,[3]]}`,
	`{"type":["string","null"]}`,
	`{"type":"array","items":{"type":"integer"}}`,
	`{"type":"array","items":{"type":"integer"},"minItems":3}`,
	`{"type":"array","items":{"type":"string","minLength":2},"minItems":2,"maxItems":4}`,
	`{"type":"array","items":{"type":"boolean"},"maxItems":2}`,
	`{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`,
	`{"type":"array","items":{"type":"array","items":{"type":"integer"},"minItems":1},"minItems":2}`,
	`{"type":"object"}`,
	`{"type":"object","properties":{"a":{"type":"integer"}}}`,
	`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`,
	`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name","age"],"additionalProperties":false}`,
	`{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9]{4}$"},"tags":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["id","tags"],"additionalProperties":false}`,
	`{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}},"required":["x","y","z"],"additionalProperties":false}`,
	`{"type":"object","properties":{"inner":{"type":"object","properties":{"deep":{"type":"object","properties":{"v":{"type":"boolean"}},"required":["v"],"additionalProperties":false}},"required":["deep"],"additionalProperties":false}},"required":["inner"],"additionalProperties":false}`,
	`{"type":"object","properties":{"kind":{"enum":["cat","dog"]},"legs":{"type":"integer","minimum":0,"maximum":4}},"required":["kind"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"string","minLength":8}},"required":["a"],"additionalProperties":false}`,
	`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"integer"}},"required":["k","v"],"additionalProperties":false},"minItems":2}},"required":["list"],"additionalProperties":false}`,
	`{"type":"object","properties":{"opt":{"type":"string"},"req":{"type":"integer"}},"required":["req"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"null"},"b":{"type":"boolean"},"c":{"const":"k"}},"required":["a","b","c"],"additionalProperties":false}`,
	`{"type":"object","additionalProperties":{"type":"integer"}}`,
	`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"n":{"type":["integer","null"]}},"required":["n"],"additionalProperties":false}`,
	`{"anyOf":[{"type":"integer"},{"type":"string","minLength":4}]}`,
	`{"oneOf":[{"type":"object","properties":{"t":{"const":"a"}},"required":["t"],"additionalProperties":false},{"type":"object","properties":{"t":{"const":"b"},"n":{"type":"integer"}},"required":["t","n"],"additionalProperties":false}]}`,
	`{"type":"object","properties":{"date":{"type":"string","format":"date"}},"required":["date"],"additionalProperties":false}`,
	`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}},"required":["when"],"additionalProperties":false}`,
	`{"type":"object","properties":{"mail":{"type":"string","format":"email"}},"required":["mail"],"additionalProperties":false}`,
	`{"type":"object","properties":{"u":{"type":"string","format":"uuid"}},"required":["u"],"additionalProperties":false}`,
	`{"type":"array","items":{"enum":["r","g","b"]},"minItems":4}`,
	`{"type":"array","items":{"type":"number","minimum":1.5}}`,
	`{"type":"object","properties":{"matrix":{"type":"array","items":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":2,"maxItems":2},"minItems":2,"maxItems":2}},"required":["matrix"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","maxLength":3}},"required":["s"],"additionalProperties":false}`,
	`{"type":"object","properties":{"p1":{"type":"string"},"p2":{"type":"string"},"p3":{"type":"string"},"p4":{"type":"string"},"p5":{"type":"string"}},"required":["p1","p2","p3","p4","p5"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"string","minLength":1}},"required":["c"],"additionalProperties":false},"minItems":1}},"required":["b"],"additionalProperties":false}},"required":["a"],"additionalProperties":false}`,
	`{"type":"string","pattern":"^(ab|cd)*$"}`,
	`{"type":"string","pattern":"^x+y$"}`,
	`{"type":"integer","multipleOf":5}`,
	`{"type":"object","properties":{"v":{"type":"integer","exclusiveMinimum":10}},"required":["v"],"additionalProperties":false}`,
	`{"type":"array","items":{"type":"object"},"minItems":1,"maxItems":3}`,
	`{"$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}},"type":"object","properties":{"from":{"$ref":"#/$defs/pt"},"to":{"$ref":"#/$defs/pt"}},"required":["from","to"],"additionalProperties":false}`,
	`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"},"qty":{"type":"integer","minimum":1}},"required":["code","qty"],"additionalProperties":false}`,
	`{"type":"object","properties":{"flags":{"type":"array","items":{"type":"boolean"},"minItems":3,"maxItems":3}},"required":["flags"],"additionalProperties":false}`,
}

// closeWords are the multi-byte tokens of the test vocabulary, beside every
// printable ASCII byte: JSON punctuation runs and words the schemas use, so
// that token distances differ from byte distances.
var closeWords = []string{
	`{"`, `":`, `":"`, `",`, `","`, `"}`, `"]`, `["`, `},`, `}]`, `],`, `]]`, `[[`, `,"`, `":{"`, `":[`, `"},`, `}}`,
	`true`, `false`, `null`, `00`, `12`, `345`, `-1`, `.5`, `e+`, `abc`, `cd`, `name`, `age`, `id`, `tags`, `list`,
	`alpha`, `beta`, `gamma`, ` delta`, `fixed`, ` value`, `inner`, `deep`, `kind`, `cat`, `dog`, `legs`, `opt`, `req`,
	`date`, `when`, `mail`, `@`, `.com`, `2024`, `-01`, `T12`, `:00`, `Z`, `matrix`, `from`, `to`, `code`, `qty`,
	`flags`, `  `, `    `, `\n`, `\"`, `\u00`, `ab`, `xx`, `-0`,
}

// closeVocab returns the test vocabulary (EOS last, without bytes).
func closeVocab() [][]byte {
	var toks [][]byte
	for b := 0x20; b < 0x7f; b++ {
		toks = append(toks, []byte{byte(b)})
	}
	toks = append(toks, []byte("\n"))
	for _, w := range closeWords {
		toks = append(toks, []byte(w))
	}
	return append(toks, nil)
}

// closeRunner starts a runner over a fake engine with the vocabulary.
func closeRunner(t *testing.T, toks [][]byte, slots int) *Runner {
	t.Helper()
	eos := TokenID(len(toks) - 1)
	r, err := New(newFakeEngine(len(toks)), Config{
		Slots:       slots,
		ContextSize: 4096,
		EOS:         []TokenID{eos},
		Detokenize:  func(id TokenID) []byte { return toks[id] },
	})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return r
}

// TestCloseSchemas generates, at temperature 1 over the fake engine's
// random logits, with budgets from each schema's minimum to twice it,
// and checks that every output is complete: the constraint accepts it and
// it validates against its schema. A budget one below the minimum ends
// with an error before any token (the server refuses it before
// submitting).
func TestCloseSchemas(t *testing.T) {
	toks := closeVocab()
	eos := TokenID(len(toks) - 1)
	ti, err := fsm.NewTokenIndex(toks, []TokenID{eos}, len(toks))
	if err != nil {
		t.Fatalf("NewTokenIndex = %v", err)
	}
	r := closeRunner(t, toks, 4)
	type run struct {
		schema, budget int
		ch             <-chan Event
	}
	var runs []run
	constraints := make([]*fsm.Constraint, len(closeSchemas))
	validators := make([]*jsonschema.Schema, len(closeSchemas))
	minimum := make([]int, len(closeSchemas))
	for i, src := range closeSchemas {
		// Depth 4: every third constraint is an eager DFA, which roughly
		// doubles with each free-form level (the default 16 passes fsm's
		// NFA budget).
		opts := grammar.Options{AnyValueDepth: 4}
		if i%2 == 1 {
			opts.Whitespace = grammar.Compact
		}
		res, err := grammar.CompileSchema([]byte(src), opts)
		if err != nil {
			t.Fatalf("schema %d %s: CompileSchema = %v", i, src, err)
		}
		if len(res.Warnings) > 0 {
			t.Fatalf("schema %d: warnings %v (an unenforced keyword would make validation fail for another reason)", i, res.Warnings)
		}
		if i%3 == 0 {
			d, err := fsm.Compile(res.Node, fsm.Options{})
			if err == nil {
				constraints[i], err = fsm.NewConstraint(d, ti, fsm.ConstraintOptions{})
			}
			if err != nil {
				t.Fatalf("schema %d: eager constraint: %v", i, err)
			}
		} else if constraints[i], err = fsm.CompileConstraint(context.Background(), res.Node, ti, fsm.Options{}, fsm.ConstraintOptions{}); err != nil {
			t.Fatalf("schema %d: CompileConstraint = %v", i, err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("s.json", doc); err != nil {
			t.Fatal(err)
		}
		if validators[i], err = c.Compile("s.json"); err != nil {
			t.Fatalf("schema %d: jsonschema Compile = %v", i, err)
		}
		if minimum[i], err = constraints[i].NewMatcher().MinTokens(); err != nil {
			t.Fatalf("schema %d: MinTokens = %v", i, err)
		}
		n := minimum[i]
		budgets := []int{n, n + 1, n + 2, n + 3, n + 4, n + 5, 2 * n}
		for j, b := range budgets {
			if b < 1 {
				continue // an accepting start: nothing to close
			}
			p := sampler.Params{Seed: uint64(i*100 + j), Temperature: sampler.Temp(1)}
			runs = append(runs, run{i, b, submit(t, r, Request{Prompt: []TokenID{TokenID(i % 90), 3}, Params: p, MaxTokens: b, Guide: constraints[i].NewMatcher()})})
		}
		if n > 1 {
			runs = append(runs, run{i, n - 1, submit(t, r, Request{Prompt: []TokenID{5}, Params: sampler.Params{Seed: uint64(i)}, MaxTokens: n - 1, Guide: constraints[i].NewMatcher()})})
		}
	}
	finishes := map[FinishReason]int{}
	for _, rn := range runs {
		res := collect(t, rn.ch)
		name := fmt.Sprintf("schema %d %s, budget %d (minimum %d)", rn.schema, closeSchemas[rn.schema], rn.budget, minimum[rn.schema])
		if rn.budget < minimum[rn.schema] {
			var re *Error
			if res.final.Finish != FinishError || !errors.As(res.final.Err, &re) || re.Code != CodeConstraint || re.Place != "MinTokens" || len(res.tokens) > 0 {
				t.Errorf("%s: %v, want a MinTokens error before any token", name, res)
			}
			continue
		}
		if res.final.Err != nil {
			t.Errorf("%s: %v", name, res)
			continue
		}
		finishes[res.final.Finish]++
		if len(res.tokens) > rn.budget {
			t.Errorf("%s: %d tokens", name, len(res.tokens))
		}
		m := constraints[rn.schema].NewMatcher()
		for _, tok := range res.tokens {
			if err := m.Accept(tok); err != nil {
				t.Fatalf("%s: replaying %v: %v", name, res, err)
			}
		}
		if !m.IsAccepting() {
			t.Errorf("%s: output %q (%s) is incomplete", name, res.text, res.final.Finish)
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(res.text)))
		if err != nil {
			t.Errorf("%s: output %q is not JSON: %v", name, res.text, err)
			continue
		}
		if err := validators[rn.schema].Validate(inst); err != nil {
			t.Errorf("%s: output %q does not validate: %v", name, res.text, err)
		}
	}
	t.Logf("finish reasons over %d runs: %v", len(runs), finishes)
	// Random logits at temperature 1 rarely close a value by themselves:
	// most outputs must have been closed by the budget.
	if total := len(runs); finishes[FinishLength] < total/2 {
		t.Errorf("finish reasons %v over %d runs: want most to be %s (closed by the budget)", finishes, total, FinishLength)
	}
}

// TestCloseFinishReason checks the finish reason when the budget closed
// the output: FinishLength, even though the constraint then terminated (or
// EOS came), while the same output closed by the model keeps its reason.
func TestCloseFinishReason(t *testing.T) {
	toks := closeVocab()
	eos := TokenID(len(toks) - 1)
	ti, err := fsm.NewTokenIndex(toks, []TokenID{eos}, len(toks))
	if err != nil {
		t.Fatal(err)
	}
	node, err := fsm.ParseRegex(`\{"a":"[a-z]*"\}`)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fsm.CompileConstraint(context.Background(), node, ti, fsm.Options{}, fsm.ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]TokenID{}
	for i, tk := range toks {
		id[string(tk)] = TokenID(i)
	}
	// Letters are much likelier than the closing quote: the model would
	// write the string on and on.
	letters := map[sampler.TokenID]float64{}
	for b := 'a'; b <= 'z'; b++ {
		letters[sampler.TokenID(id[string(b)])] = 30
	}
	r := closeRunner(t, toks, 2)
	need, err := c.NewMatcher().MinTokens()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		maxTokens int
		bias      map[sampler.TokenID]float64
		want      FinishReason
		closed    bool // the text ends with the string closed early by the budget
	}{
		{"closed by the budget", need + 4, letters, FinishLength, true},
		{"closed by the model", 50, map[sampler.TokenID]float64{sampler.TokenID(id[`"}`]): 30}, FinishConstraint, false},
	} {
		res := collect(t, submit(t, r, Request{Prompt: []TokenID{1, 2}, Params: sampler.Params{Seed: 1, LogitBias: tt.bias}, MaxTokens: tt.maxTokens, Guide: c.NewMatcher()}))
		if res.final.Err != nil || res.final.Finish != tt.want {
			t.Errorf("%s: %v, want finish %s", tt.name, res, tt.want)
			continue
		}
		if !strings.HasSuffix(res.text, `"}`) || !strings.HasPrefix(res.text, `{"a":"`) {
			t.Errorf("%s: text %q is not a closed object", tt.name, res.text)
		}
		if tt.closed && len(res.tokens) > tt.maxTokens {
			t.Errorf("%s: %d tokens over max_tokens %d", tt.name, len(res.tokens), tt.maxTokens)
		}
	}
}

// budgetFake is a BudgetGuide that records the budgets it is asked
// for, over a script.
type budgetFake struct {
	*scriptGuide
	budgets []int
}

func (b *budgetFake) FillMaskWithin(dst []uint64, budget int) (bool, error) {
	b.budgets = append(b.budgets, budget)
	return false, b.FillMask(dst)
}

func (b *budgetFake) MinTokens() (int, error) { return 0, nil }

// TestCloseBudgets checks the budget the runner passes: what max_tokens
// leaves, or what the context leaves when that is less.
func TestCloseBudgets(t *testing.T) {
	steps := [][]TokenID{{1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}}
	for _, tt := range []struct {
		name      string
		maxTokens int
		prompt    int
		want      []int
	}{
		{"max_tokens", 4, 3, []int{4, 3, 2, 1}},
		{"context", 0, 252, []int{4, 3, 2, 1}},
		{"both", 10, 253, []int{3, 2, 1}},
	} {
		r, _ := start(t, Config{}) // ContextSize 256
		bf := &budgetFake{scriptGuide: newScript(testEOS, false, steps...)}
		res := collect(t, submit(t, r, Request{Prompt: prompt(1, tt.prompt), Params: noEOS, MaxTokens: tt.maxTokens, Guide: bf}))
		if res.final.Err != nil || fmt.Sprint(bf.budgets) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, budgets %v, want %v", tt.name, res, bf.budgets, tt.want)
		}
	}
}
