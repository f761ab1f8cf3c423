package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateExplain = flag.Bool("update-explain", false, "rewrite testdata/explain/*.json")

const (
	explainNested = `{"type":"object","properties":{"name":{"type":"string","maxLength":12,"description":"full name"},` +
		`"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]}},` +
		`"required":["name","address"],"additionalProperties":false}`
	explainEnum    = `{"type":"object","properties":{"color":{"enum":["red","green","blue"]}},"required":["color"]}`
	explainPattern = `{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"}`
	explainUnique  = `{"type":"array","items":{"type":"integer","minimum":0},"maxItems":4,"uniqueItems":true,"title":"ids"}`
	// explainUniqueLoose is explainUnique without the keyword lenient
	// mode does not enforce: what its outputs are checked against.
	explainUniqueLoose = `{"type":"array","items":{"type":"integer","minimum":0},"maxItems":4}`
)

func jsonSchemaFormat(schema string, strict bool) map[string]any {
	return map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "out", "schema": json.RawMessage(schema), "strict": strict}}
}

// explainCases are the golden cases: the body's fields, and how to check
// every output of the answer (the shortest and the samples).
var explainCases = []struct {
	name  string
	body  map[string]any
	check func(t *testing.T, o ExplainOutput)
}{
	{"tool_nested", map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "create_user", "parameters": json.RawMessage(explainNested)}}},
		"tool_choice": "required"}, checkCalls("create_user", explainNested)},
	{"enum", map[string]any{"response_format": jsonSchemaFormat(explainEnum, true)}, checkContent(explainEnum)},
	{"pattern", map[string]any{"response_format": jsonSchemaFormat(explainPattern, true)}, checkContent(explainPattern)},
	{"lenient", map[string]any{"guided_json": json.RawMessage(explainUnique)}, checkContent(explainUniqueLoose)},
	{"strict", map[string]any{"response_format": jsonSchemaFormat(explainUnique, true)}, nil},
	{"guided_choice", map[string]any{"guided_choice": []string{"yes", "no", "maybe"}}, func(t *testing.T, o ExplainOutput) {
		if !slices.Contains([]string{"yes", "no", "maybe"}, o.Content) {
			t.Errorf("%q is not a choice", o.Content)
		}
	}},
	{"guided_regex", map[string]any{"guided_regex": `[a-c]{2,4}(-[0-9])?`, "samples": 5, "seed": 42}, func(t *testing.T, o ExplainOutput) {
		if !regexp.MustCompile(`^[a-c]{2,4}(-[0-9])?$`).MatchString(o.Content) {
			t.Errorf("%q does not match the regex", o.Content)
		}
	}},
	{"json_object", map[string]any{"response_format": map[string]any{"type": "json_object"}}, checkContent(`{"type":"object"}`)},
}

// checkContent checks that an output's content validates against schema.
func checkContent(schema string) func(t *testing.T, o ExplainOutput) {
	return func(t *testing.T, o ExplainOutput) {
		t.Helper()
		if len(o.ToolCalls) > 0 {
			t.Errorf("%q: tool calls in a structured output", o.Text)
		}
		validate(t, compileSchema(t, schema), o.Content)
	}
}

// checkCalls checks that an output is calls of name whose arguments
// validate against schema.
func checkCalls(name, schema string) func(t *testing.T, o ExplainOutput) {
	return func(t *testing.T, o ExplainOutput) {
		t.Helper()
		if len(o.ToolCalls) == 0 {
			t.Errorf("%q holds no call", o.Text)
		}
		sch := compileSchema(t, schema)
		for _, c := range o.ToolCalls {
			if c.Name != name {
				t.Errorf("call of %q, want %q", c.Name, name)
			}
			validate(t, sch, c.Arguments)
		}
	}
}

// TestExplainGolden checks each case's answer against its golden file
// (the fields that vary left out), and
// every output in it against its schema.
func TestExplainGolden(t *testing.T) {
	for _, tt := range explainCases {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, Config{}, "")
			body := map[string]any{"model": "fake"}
			for k, v := range tt.body {
				body[k] = v
			}
			r, out := postExplain(t, ts, body)
			if tt.check != nil {
				if r.Shortest == nil || len(r.Samples) == 0 {
					t.Fatalf("no outputs: %s", out)
				}
				if r.Shortest.Tokens != *r.MinTokens {
					t.Errorf("the shortest output has %d tokens, min_tokens is %d", r.Shortest.Tokens, *r.MinTokens)
				}
				for _, o := range append([]ExplainOutput{*r.Shortest}, r.Samples...) {
					tt.check(t, o)
					if o.Tokens < *r.MinTokens {
						t.Errorf("%q: %d tokens, under min_tokens %d", o.Text, o.Tokens, *r.MinTokens)
					}
				}
			}
			if r.CompileMS != nil && *r.CompileMS <= 0 {
				t.Errorf("compile_ms %v", *r.CompileMS)
			}
			// The volatile fields: the compile time, and the NFA states,
			// which count the pieces a compile builds for the process
			// (shared languages, built by the first compile that needs
			// them) only once.
			r.CompileMS = nil
			if r.Sizes != nil {
				if r.Sizes.NFAStates <= 0 {
					t.Errorf("nfa_states %d", r.Sizes.NFAStates)
				}
				r.Sizes.NFAStates = 0
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // the golden files show markup as it is
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			path := filepath.Join("testdata", "explain", tt.name+".json")
			if *updateExplain {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-explain to write it)", err)
			}
			if !bytes.Equal(got, want) {
				g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				line := func(ls []string) string {
					if i < len(ls) {
						return ls[i]
					}
					return "(end)"
				}
				t.Errorf("%s differs from the answer at line %d:\n got  %s\n want %s\n(run with -update-explain to rewrite it)", path, i+1, line(g), line(w))
			}
		})
	}
}

// TestExplainCache: a second explain of the same fields finds the
// constraint in the cache, and a chat request after it too.
func TestExplainCache(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	body := map[string]any{"model": "fake", "response_format": jsonSchemaFormat(explainEnum, false), "samples": 0}
	var caches []string
	for range 2 {
		r, _ := postExplain(t, ts, body)
		if len(r.Samples) != 0 {
			t.Errorf("samples: 0 drew %d", len(r.Samples))
		}
		caches = append(caches, r.Cache)
	}
	if !slices.Equal(caches, []string{"miss", "hit"}) {
		t.Errorf("cache %v, want miss then hit", caches)
	}
	hits := ts.cache.Stats().Hits
	resp, out := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"response_format": jsonSchemaFormat(explainEnum, false)}))
	if resp.StatusCode != 200 {
		t.Fatalf("chat: status %d: %s", resp.StatusCode, out)
	}
	if ts.cache.Stats().Hits != hits+1 {
		t.Errorf("the chat request after explain did not hit the cache")
	}
}

func TestExplainErrors(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	for _, tt := range []struct {
		name   string
		body   string
		status int
		code   string
		param  string
	}{
		{"unknown field", `{"model":"fake","messages":[]}`, 400, "unknown_parameter", "messages"},
		{"refused field", `{"guided_grammar":"x"}`, 400, "unsupported_parameter", "guided_grammar"},
		{"not json", `{"model":`, 400, "invalid_json", ""},
		{"wrong type", `{"samples":"3"}`, 400, "invalid_type", "samples"},
		{"too many samples", `{"samples":11}`, 400, "invalid_value", "samples"},
		{"negative samples", `{"samples":-1}`, 400, "invalid_value", "samples"},
		{"wrong model", `{"model":"other"}`, 404, "model_not_found", "model"},
		{"two constraints", `{"guided_regex":"a","guided_choice":["b"]}`, 400, "invalid_value", "guided_choice"},
		{"bad tool_choice", `{"tool_choice":"sometimes"}`, 400, "invalid_value", "tool_choice"},
		{"tool_choice without tools", `{"tool_choice":"required"}`, 400, "invalid_request", "tool_choice"},
		// A constraint the compile refuses is explained: the error is the
		// answer's, as chat would return it.
		{"bad regex", `{"guided_regex":"(a"}`, 200, "invalid_schema", "guided_regex"},
		{"unsatisfiable", `{"guided_json":{"type":"string","minLength":3,"maxLength":2}}`, 200, "invalid_schema", "guided_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := ts.post(t, "/v1/conform/explain", tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, out)
			}
			var env ErrorBody
			if err := json.Unmarshal(out, &env); err != nil {
				t.Fatal(err)
			}
			if tt.status == 200 {
				var r ExplainResponse
				if err := json.Unmarshal(out, &r); err != nil || r.Error == nil {
					t.Fatalf("no error in the explanation: %s", out)
				}
				env.Error = *r.Error
			}
			if env.Error.Code == nil || *env.Error.Code != tt.code {
				t.Errorf("code %v, want %q: %s", env.Error.Code, tt.code, out)
			}
			param := ""
			if env.Error.Param != nil {
				param = *env.Error.Param
			}
			if param != tt.param {
				t.Errorf("param %q, want %q", param, tt.param)
			}
		})
	}
}

// TestExplainLimits: the request limits of chat bound explain too.
func TestExplainLimits(t *testing.T) {
	ts := newTestServer(t, Config{MaxSchemaBytes: 64, MaxTools: 1}, "")
	for _, tt := range []struct {
		name, body, code string
	}{
		{"schema", `{"guided_json":{"type":"object","properties":{"aaaaaaaaaaaaaaaa":{"type":"string"},"bbbbbbbbbbbbbbbbbbbb":{}}}}`, "schema_too_large"},
		{"tools", `{"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}`, "array_above_max_length"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, out := ts.post(t, "/v1/conform/explain", tt.body)
			var env ErrorBody
			if err := json.Unmarshal(out, &env); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || env.Error.Code == nil || *env.Error.Code != tt.code {
				t.Errorf("status %d, body %s; want 400 %s", resp.StatusCode, out, tt.code)
			}
		})
	}
}

func FuzzExplainRequest(f *testing.F) {
	for _, c := range explainCases {
		b, err := json.Marshal(c.body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"samples":3,"seed":-1,"tool_choice":{"type":"function","function":{"name":"x"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r ExplainRequest
		if _, err := decodeRequest(body, &r); err != nil {
			checkRefusal(t, "decodeRequest", err)
			return
		}
		j, err := FromExplainRequest(&r, fuzzLimits)
		if err != nil {
			checkRefusal(t, "FromExplainRequest", err)
			return
		}
		if j.Opts.Samples < 0 || j.Opts.Samples > maxExplainSamples || len(j.Spec.Tools) > fuzzLimits.MaxTools {
			t.Fatalf("samples %d or %d tools out of range", j.Opts.Samples, len(j.Spec.Tools))
		}
		checkSpec(t, j.Spec)
	})
}

// TestExplainFreeText: fields that ask for no constraint explain as free
// text (no schemas, no sizes, no outputs), and response_format text is one.
func TestExplainFreeText(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	for _, body := range []string{`{}`, `{"model":"fake","response_format":{"type":"text"},"tool_choice":"none"}`} {
		r, out := postExplain(t, ts, body)
		if r.Constrained || r.Sizes != nil || r.Shortest != nil || len(r.Samples) != 0 || len(r.Schemas) != 0 || r.Model != "fake" {
			t.Errorf("%s: %s", body, out)
		}
	}
}

// TestExplainAuth: explain is under /v1, behind --api-key.
func TestExplainAuth(t *testing.T) {
	ts := newTestServer(t, Config{APIKey: "k"}, "")
	if resp, out := ts.post(t, "/v1/conform/explain", `{}`); resp.StatusCode != 401 {
		t.Errorf("without the key: status %d: %s", resp.StatusCode, out)
	}
	if resp, out := ts.post(t, "/v1/conform/explain", `{}`, "Authorization", "Bearer k"); resp.StatusCode != 200 {
		t.Errorf("with the key: status %d: %s", resp.StatusCode, out)
	}
}

// postExplain posts body to the explain endpoint and decodes its 200
// answer.
func postExplain(t *testing.T, ts *testServer, body any) (ExplainResponse, []byte) {
	t.Helper()
	resp, out := ts.post(t, "/v1/conform/explain", body)
	if resp.StatusCode != 200 {
		t.Fatalf("explain %v: status %d: %s", body, resp.StatusCode, out)
	}
	var r ExplainResponse
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("explain: %v: %s", err, out)
	}
	return r, out
}
