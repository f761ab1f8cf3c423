package turn

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
)

func explainCompiler(t *testing.T) *Compiler {
	t.Helper()
	c, err := NewCompiler(CompilerConfig{Vocab: testVocab(t), Format: FormatHermes})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExplainKeywords(t *testing.T) {
	type kw struct {
		ptr, kw string
		st      KeywordStatus
	}
	for _, tt := range []struct {
		name      string
		schema    string
		strict    bool
		want      []kw
		strictErr string // the keyword of StrictErr, "" for none
		err       bool   // the turn does not compile
	}{
		{name: "exact", schema: `{"type":"object","title":"T","properties":{"a":{"type":"string","maxLength":3,"x-foo":1}},"required":["a"]}`,
			want: []kw{{"", "type", KeywordExact}, {"", "title", KeywordAnnotation}, {"", "properties", KeywordExact}, {"", "required", KeywordExact},
				{"/properties/a", "type", KeywordExact}, {"/properties/a", "maxLength", KeywordExact}, {"/properties/a", "x-foo", KeywordAnnotation}}},
		{name: "lenient", schema: `{"type":"array","items":{"type":"integer"},"uniqueItems":true}`,
			want:      []kw{{"", "type", KeywordExact}, {"", "items", KeywordExact}, {"", "uniqueItems", KeywordApproximated}, {"/items", "type", KeywordExact}},
			strictErr: "uniqueItems"},
		{name: "strict", schema: `{"type":"array","items":{"type":"integer"},"uniqueItems":true}`, strict: true,
			want:      []kw{{"", "type", KeywordExact}, {"", "items", KeywordExact}, {"", "uniqueItems", KeywordRefused}, {"/items", "type", KeywordExact}},
			strictErr: "uniqueItems", err: true},
		{name: "if-then", schema: `{"if":{"required":["a"]},"then":{"required":["b"]},"description":"d"}`,
			want: []kw{{"", "if", KeywordExact}, {"", "then", KeywordExact}, {"", "description", KeywordAnnotation},
				{"/if", "required", KeywordExact}, {"/then", "required", KeywordExact}}},
		{name: "if-alone", schema: `{"if":{"required":["a"]}}`,
			want: []kw{{"", "if", KeywordAnnotation}, {"/if", "required", KeywordExact}}},
		{name: "ref", schema: `{"$defs":{"ids":{"type":"array","uniqueItems":true}},"properties":{"a":{"$ref":"#/$defs/ids"}}}`,
			want: []kw{{"", "$defs", KeywordAnnotation}, {"", "properties", KeywordExact}, {"/$defs/ids", "type", KeywordExact},
				{"/$defs/ids", "uniqueItems", KeywordApproximated}, {"/properties/a", "$ref", KeywordExact}},
			strictErr: "uniqueItems"},
		{name: "format", schema: `{"type":"string","format":"no-such-format"}`,
			want:      []kw{{"", "type", KeywordExact}, {"", "format", KeywordApproximated}},
			strictErr: "format"},
		{name: "escaped", schema: `{"properties":{"a/b~":{"enum":[1,{"type":"x"}]}}}`,
			want: []kw{{"", "properties", KeywordExact}, {"/properties/a~1b~0", "enum", KeywordExact}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := explainCompiler(t)
			ex, err := c.Explain(context.Background(), Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(tt.schema), Strict: tt.strict}}, ExplainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.Schemas) != 1 {
				t.Fatalf("%d schema reports, want 1", len(ex.Schemas))
			}
			r := ex.Schemas[0]
			var got []kw
			for _, k := range r.Keywords {
				got = append(got, kw{k.Pointer, k.Keyword, k.Status})
				if (k.Status == KeywordApproximated || k.Status == KeywordRefused) && k.Message == "" {
					t.Errorf("%s at %q: %s without a message", k.Keyword, k.Pointer, k.Status)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keywords:\n got %v\nwant %v", got, tt.want)
			}
			gotStrict := ""
			if r.StrictErr != nil {
				gotStrict = r.StrictErr.Keyword
			}
			if gotStrict != tt.strictErr {
				t.Errorf("StrictErr at keyword %q, want %q (%v)", gotStrict, tt.strictErr, r.StrictErr)
			}
			if (ex.Err != nil) != tt.err {
				t.Errorf("Err = %v, want error %v", ex.Err, tt.err)
			}
			if !tt.err && !ex.Constrained {
				t.Errorf("a compiled schema is not constrained")
			}
		})
	}
}

// validator compiles schema for the santhosh-tekuri validator.
func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	jc := jsonschema.NewCompiler()
	if err := jc.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := jc.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExplainWalks checks the shortest output (MinTokens long, valid) and
// the samples (valid, reproducible from the seed, different across
// seeds), for an output schema and for a tool's calls.
func TestExplainWalks(t *testing.T) {
	const schema = `{"type":"object","properties":{"city":{"type":"string","maxLength":8},"n":{"type":"integer"},"tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["city"]}`
	v := validator(t, schema)
	valid := func(t *testing.T, text string) {
		t.Helper()
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if err := v.Validate(inst); err != nil {
			t.Errorf("%q does not validate: %v", text, err)
		}
	}
	for _, tt := range []struct {
		name string
		spec Spec
		text func(s Sample) []string // the JSON texts to validate
	}{
		{name: "output", spec: Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(schema)}},
			text: func(s Sample) []string { return []string{s.Content} }},
		{name: "tool", spec: Spec{Tools: []Tool{{Name: "get_weather", Parameters: json.RawMessage(schema)}}, ToolMode: ToolRequired},
			text: func(s Sample) []string {
				var out []string
				for _, c := range s.Calls {
					out = append(out, c.Arguments)
				}
				return out
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := explainCompiler(t)
			opts := ExplainOptions{Samples: 4, Seed: 7}
			ex, err := c.Explain(context.Background(), tt.spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if ex.MinErr != nil || ex.Shortest == nil {
				t.Fatalf("no shortest output: %v", ex.MinErr)
			}
			if ex.Shortest.Tokens != ex.MinTokens || ex.MinTokens == 0 {
				t.Errorf("shortest output %q has %d tokens, MinTokens %d", ex.Shortest.Text, ex.Shortest.Tokens, ex.MinTokens)
			}
			if ex.CacheHit || ex.ASTNodes == 0 || ex.NFAStates == 0 || ex.DFAStates == 0 || ex.StartAllowed == 0 {
				t.Errorf("first explain: hit %v, sizes %d/%d/%d, start %d", ex.CacheHit, ex.ASTNodes, ex.NFAStates, ex.DFAStates, ex.StartAllowed)
			}
			all := append([]Sample{*ex.Shortest}, ex.Samples...)
			for _, s := range all {
				texts := tt.text(s)
				if len(texts) == 0 {
					t.Errorf("sample %q holds no output to validate", s.Text)
				}
				for _, x := range texts {
					valid(t, x)
				}
				if s.Tokens > ex.MinTokens+DefaultSampleSlack {
					t.Errorf("sample %q has %d tokens, over %d", s.Text, s.Tokens, ex.MinTokens+DefaultSampleSlack)
				}
			}
			if len(ex.Samples) != opts.Samples {
				t.Fatalf("%d samples, want %d", len(ex.Samples), opts.Samples)
			}
			again, err := c.Explain(context.Background(), tt.spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !again.CacheHit {
				t.Errorf("second explain missed the cache")
			}
			if !reflect.DeepEqual(again.Samples, ex.Samples) || again.DFAStates != ex.DFAStates || again.ASTNodes != ex.ASTNodes {
				t.Errorf("the same seed drew other samples or sizes")
			}
			opts.Seed = 8
			other, err := c.Explain(context.Background(), tt.spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(other.Samples, ex.Samples) {
				t.Errorf("seeds 7 and 8 drew the same samples")
			}
		})
	}
}

func TestExplainErrors(t *testing.T) {
	c := explainCompiler(t)
	for _, tt := range []struct {
		name string
		spec Spec
		code ErrorCode
	}{
		{"not-json", Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(`{"type":`)}}, CodeSchema},
		{"no-tools", Spec{ToolMode: ToolRequired}, CodeInvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Explain(context.Background(), tt.spec, ExplainOptions{})
			var te *Error
			if !errors.As(err, &te) || te.Code != tt.code {
				t.Errorf("err = %v, want code %v", err, tt.code)
			}
		})
	}
	// Only the tools that can be called are explained.
	tools := []Tool{{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "b", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"array","uniqueItems":true}}}`), Strict: true}}
	for _, tt := range []struct {
		mode   ToolMode
		name   string
		params []string
	}{
		{ToolDefault, "", []string{"tools[0].function.parameters", "tools[1].function.parameters"}},
		{ToolNamed, "a", []string{"tools[0].function.parameters"}},
		{ToolNone, "", nil},
	} {
		ex, err := c.Explain(context.Background(), Spec{Tools: tools, ToolMode: tt.mode, ToolName: tt.name}, ExplainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var params []string
		for _, r := range ex.Schemas {
			params = append(params, r.Param)
		}
		if !reflect.DeepEqual(params, tt.params) || (ex.Err != nil) != (tt.mode == ToolDefault) {
			t.Errorf("mode %v: schemas %v, err %v; want %v", tt.mode, params, ex.Err, tt.params)
		}
	}
	// Free text: nothing to explain, no error.
	ex, err := c.Explain(context.Background(), Spec{}, ExplainOptions{Samples: 3})
	if err != nil || ex.Constrained || len(ex.Samples) != 0 || ex.Shortest != nil {
		t.Errorf("free text: %+v, %v", ex, err)
	}
}

// FuzzExplainSchema: any schema explains without a panic, with a typed
// error or an explanation whose outputs are as long as it says.
func FuzzExplainSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"$defs":{"x":{"uniqueItems":true}},"items":{"$ref":"#/$defs/x"}}`,
		`{"enum":[1,"a",null]}`, `{"if":{"const":1},"then":{"const":1},"else":{"type":"string","maxLength":2}}`, `{"type":"string","pattern":"^a+b?$"}`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	v := testVocab(f)
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHermes})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schema []byte, strict bool) {
		if len(schema) > 2048 {
			return
		}
		ex, err := c.Explain(context.Background(), Spec{Output: Output{Kind: OutputJSONSchema, Schema: schema, Strict: strict}}, ExplainOptions{Samples: 1, Slack: 8})
		if err != nil {
			var te *Error
			var fe *fsm.Error
			if !errors.As(err, &te) && !errors.As(err, &fe) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		for _, r := range ex.Schemas {
			for _, k := range r.Keywords {
				if k.Pointer != "" && k.Pointer[0] != '/' {
					t.Fatalf("keyword %+v: not a JSON Pointer", k)
				}
			}
		}
		if ex.Shortest != nil && ex.Shortest.Tokens != ex.MinTokens {
			t.Fatalf("shortest %q has %d tokens, MinTokens %d", ex.Shortest.Text, ex.Shortest.Tokens, ex.MinTokens)
		}
		for _, s := range ex.Samples {
			if s.Tokens > ex.MinTokens+8 {
				t.Fatalf("sample %q: %d tokens over %d", s.Text, s.Tokens, ex.MinTokens+8)
			}
		}
	})
}
