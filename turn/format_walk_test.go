package turn

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/grammar"
)

// formatTools reads the tools of testdata/format_tools.json (24 varied
// parameter schemas: string lengths, patterns, formats, enums, const, not,
// anyOf of strings, numbers with bounds, booleans, arrays, nested objects,
// $defs, nullable values, an untyped parameter, no parameters).
func formatTools(t *testing.T) ([]Tool, map[string]*jsonschema.Schema) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "format_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Name       string          `json:"name"`
		Strict     bool            `json:"strict"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	schemas := map[string]*jsonschema.Schema{}
	for _, r := range raw {
		tools = append(tools, Tool{Name: r.Name, Strict: r.Strict, Parameters: r.Parameters})
		src := r.Parameters
		if len(src) == 0 {
			src = json.RawMessage(`{"type":"object"}`)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(r.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(r.Name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		schemas[r.Name] = sch
	}
	return tools, schemas
}

// minToolsPerFormat is the "≥ 20 varied schemas per format".
const minToolsPerFormat = 20

// TestFormatsRandomTurns walks random strings of each format's constraint,
// over the corpus tools four at a time, in every tool mode, and checks that
// the parser finds calls whose arguments validate against their tool's
// schema, that required and named turns hold calls, and that content holds
// no markup. Every tool must get a validated call in every format.
func TestFormatsRandomTurns(t *testing.T) {
	tools, schemas := formatTools(t)
	if len(tools) < minToolsPerFormat {
		t.Fatalf("%d corpus tools, want ≥ %d", len(tools), minToolsPerFormat)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, f := range Formats() {
		if f == FormatQwen {
			continue // hermes under another name
		}
		t.Run(string(f), func(t *testing.T) {
			called := map[string]int{}
			for g := 0; g < len(tools); g += 4 {
				group := tools[g:min(g+4, len(tools))]
				for _, mode := range []ToolMode{ToolRequired, ToolAuto, ToolNamed, ToolNone} {
					spec := Spec{Tools: group, ToolMode: mode, ToolName: group[0].Name, Parallel: true}
					// Free-form values one level deep keep each DFA small
					// (extra properties are any values: some 31,000 states
					// a tool at the default depth).
					// Every other group takes its parameters (and JSON
					// properties) in any order.
					gopts := grammar.Options{AnyValueDepth: 1}
					if g/4%2 == 1 {
						gopts.PropertyOrder = grammar.OrderAny
					}
					res, err := Build(spec, Options{Format: f, IsSpecial: allSpecial, Grammar: gopts})
					if err != nil {
						t.Fatalf("Build(%s, tools %d.., mode %d): %v", f, g, mode, err)
					}
					d, err := fsm.Compile(res.Node, fsm.Options{})
					if err != nil {
						t.Fatalf("fsm.Compile(%s, tools %d.., mode %d): %v", f, g, mode, err)
					}
					walks := 40
					if mode == ToolRequired {
						walks = 120
					}
					for i := 0; i < walks; i++ {
						s := fsm.RandomWalk(d, rng, 400)
						if s == nil || !fsm.Matches(d, s) {
							continue
						}
						p := newParser(res.resolvedFor(t, allSpecial), res.Calls, true)
						p.kinds = res.params
						ev := append(p.Feed(string(s)), p.Close()...)
						content, calls := Merge(ev)
						if (mode == ToolRequired || mode == ToolNamed) && len(calls) == 0 {
							t.Errorf("mode %d: no call in %q", mode, s)
						}
						if mode == ToolNone && len(calls) > 0 {
							t.Errorf("mode none: calls in %q", s)
						}
						if mode == ToolNamed && (len(calls) != 1 || calls[0].Name != group[0].Name) {
							t.Errorf("named: calls %+v in %q, want one %s", calls, s, group[0].Name)
						}
						for _, m := range append(f.Markers(), "\xff") {
							if strings.Contains(content, m) {
								t.Errorf("mode %d: content %q of %q holds markup %q", mode, content, s, m)
							}
						}
						for _, c := range calls {
							sch := schemas[c.Name]
							if sch == nil {
								t.Errorf("call to unknown %q in %q", c.Name, s)
								continue
							}
							inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
							if err != nil {
								t.Errorf("arguments %q of %q are not JSON: %v", c.Arguments, s, err)
								continue
							}
							if err := sch.Validate(inst); err != nil {
								t.Errorf("arguments %q of %q do not validate: %v", c.Arguments, s, err)
								continue
							}
							called[c.Name]++
						}
					}
				}
			}
			for _, tl := range tools {
				if called[tl.Name] == 0 {
					t.Errorf("no validated call of %s among the random turns", tl.Name)
				}
			}
		})
	}
}

// resolvedFor is the syntax the result was built with (its format resolved
// against isSpecial).
func (r *Result) resolvedFor(t *testing.T, isSpecial func(string) bool) syntax {
	t.Helper()
	d, ok := r.Format.Description()
	if !ok {
		t.Fatalf("format %q is not registered", r.Format)
	}
	return d.resolved(isSpecial)
}
