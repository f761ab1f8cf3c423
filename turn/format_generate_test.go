package turn

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/sampler"
)

// TestGenerateFormats runs required and auto turns of every format on the
// runner with a random engine (the lazy constraint, the budget closing,
// the turn's parser with its parameter kinds): every call that completes
// parses and its arguments validate against its tool's schema.
func TestGenerateFormats(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range twoTools {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.Parameters))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(tl.Name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tl.Name], err = c.Compile(tl.Name + ".json"); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range Formats() {
		if f == FormatQwen {
			continue
		}
		t.Run(string(f), func(t *testing.T) {
			fx := newFixture(t, f)
			d := &Driver{Runner: fx.runner, Context: 512}
			calls := 0
			for _, mode := range []ToolMode{ToolRequired, ToolAuto} {
				tn, err := fx.c.Compile(context.Background(), Spec{Tools: twoTools, ToolMode: mode, Parallel: true})
				if err != nil {
					t.Fatal(err)
				}
				st, err := d.Generate(context.Background(), Request{Turn: tn, Prompts: [][]TokenID{bytePrompt("go")}, N: 4,
					Sampling: sampler.Params{Seed: 7}, Seeded: true, MaxTokens: 300, Start: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				msgs := drain(st, 4)
				for i, m := range msgs {
					if m.Finish == nil || m.Finish.Err != nil {
						t.Fatalf("mode %d choice %d: finish %+v", mode, i, m.Finish)
					}
					for _, mk := range append(f.Markers(), "\xff") {
						if strings.Contains(m.Content(), mk) {
							t.Errorf("mode %d choice %d: content %q holds %q", mode, i, m.Content(), mk)
						}
					}
					cut := m.Finish.Reason == FinishLength
					if mode == ToolRequired && len(m.Calls) == 0 && !cut {
						t.Errorf("choice %d: a required turn ended (%s) without a call", i, m.Finish.Reason)
					}
					for _, c := range m.Calls {
						if cut && !json.Valid([]byte(c.Arguments)) {
							continue // the limit cut this call (the runner closes what fits)
						}
						inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
						if err != nil || schemas[c.Name] == nil {
							t.Errorf("mode %d choice %d: call %+v: %v", mode, i, c, err)
							continue
						}
						if err := schemas[c.Name].Validate(inst); err != nil {
							t.Errorf("mode %d choice %d: arguments %s do not validate: %v", mode, i, c.Arguments, err)
						}
						calls++
					}
				}
			}
			if calls == 0 {
				t.Errorf("no call completed in 8 choices")
			}
		})
	}
}
