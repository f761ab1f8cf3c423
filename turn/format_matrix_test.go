package turn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/sampler"
)

// matrixCell tallies one format × tool mode of TestFormatMatrix.
type matrixCell struct {
	choices, cut, calls, valid, leaks int
}

// TestFormatMatrix runs every tool-call format under every tool mode
// (required, named, auto, none) on the runner with a random engine (the
// most adversarial model: any token the constraint allows), over the 24
// varied tools of testdata/format_tools.json (6 a request): every call parses into its
// tool's name and arguments that validate, required and named turns make
// calls (named: of the named tool only), none makes none, and no content
// holds the format's markup. The table it logs is the per-format result
// table of the formats' issue.
func TestFormatMatrix(t *testing.T) {
	tools, schemas := formatTools(t)
	modes := []struct {
		name string
		mode ToolMode
	}{{"required", ToolRequired}, {"named", ToolNamed}, {"auto", ToolAuto}, {"none", ToolNone}}
	const requests, n = 6, 2
	var table strings.Builder
	fmt.Fprintf(&table, "%-14s %-9s %7s %4s %5s %5s %5s\n", "format", "mode", "choices", "cut", "calls", "valid", "leaks")
	for _, f := range Formats() {
		if f == FormatQwen {
			continue // hermes under another name
		}
		fx := newFixture(t, f)
		d := &Driver{Runner: fx.runner, Context: 512}
		for _, md := range modes {
			var cell matrixCell
			for r := range requests {
				// A quarter of the tools a request, the quarters in turn:
				// every tool is offered, and a compile stays well inside its
				// time budget on a loaded machine (12 per-parameter tools
				// took 5 s under make test's parallel packages).
				half := tools[(r%4)*len(tools)/4 : (r%4+1)*len(tools)/4]
				spec := Spec{Tools: half, ToolMode: md.mode, Parallel: r%2 == 0}
				if md.mode == ToolNamed {
					spec.ToolName = half[(r*5+int(f[0]))%len(half)].Name
				}
				tn, err := fx.c.Compile(context.Background(), spec)
				if err != nil {
					t.Fatalf("%s %s: %v", f, md.name, err)
				}
				st, err := d.Generate(context.Background(), Request{Turn: tn, Prompts: [][]TokenID{bytePrompt("go")}, N: n,
					Sampling: sampler.Params{Seed: uint64(r + 1)}, Seeded: true, MaxTokens: 200, Start: time.Now()})
				if err != nil {
					t.Fatalf("%s %s: %v", f, md.name, err)
				}
				msgs := drain(st, n)
				for i, m := range msgs {
					cell.choices++
					if m.Finish == nil || m.Finish.Err != nil {
						t.Fatalf("%s %s request %d choice %d: finish %+v", f, md.name, r, i, m.Finish)
					}
					for _, mk := range append(f.Markers(), "\xff") {
						if strings.Contains(m.Content(), mk) {
							cell.leaks++
							t.Errorf("%s %s: content %q holds %q", f, md.name, m.Content(), mk)
						}
					}
					cut := m.Finish.Reason == FinishLength
					if cut {
						cell.cut++
					}
					switch {
					case md.mode == ToolNone && len(m.Calls) > 0:
						t.Errorf("%s none: %d calls", f, len(m.Calls))
					case (md.mode == ToolRequired || md.mode == ToolNamed) && len(m.Calls) == 0:
						t.Errorf("%s %s: a turn that must call ended (%s) without a call; content %q", f, md.name, m.Finish.Reason, m.Content())
					}
					for _, c := range m.Calls {
						cell.calls++
						if md.mode == ToolNamed && c.Name != spec.ToolName {
							t.Errorf("%s named %q: call of %q", f, spec.ToolName, c.Name)
						}
						sch := schemas[c.Name]
						inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Arguments))
						if sch == nil || err != nil {
							t.Errorf("%s %s: call %+v does not parse: %v", f, md.name, c, err)
							continue
						}
						if err := sch.Validate(inst); err != nil {
							t.Errorf("%s %s: %s arguments %s do not validate: %v", f, md.name, c.Name, c.Arguments, err)
							continue
						}
						cell.valid++
					}
				}
			}
			fmt.Fprintf(&table, "%-14s %-9s %7d %4d %5d %5d %5d\n", f, md.name, cell.choices, cell.cut, cell.calls, cell.valid, cell.leaks)
		}
	}
	t.Logf("random engine, 24 tools (6 a request), %d requests × %d choices per cell, max_tokens 200 (cut: ended by the limit, its calls closed in time):\n%s", requests, n, table.String())
}

// TestParserContentOpenWithoutCalls: a turn that holds no calls (tool mode
// none) in a format whose text opens with a marker (harmony's final
// channel) loses the opening from its content, wherever the text splits;
// text without the opening is content as it is.
func TestParserContentOpenWithoutCalls(t *testing.T) {
	sx := formats[FormatHarmony].resolved(nil)
	for _, tc := range []struct{ text, want string }{
		{"<|channel|>final<|message|>hello", "hello"},
		{"<|channel|>final<|message|>", ""},
		{"<|chan", "<|chan"},
		{"plain text", "plain text"},
	} {
		for cut := 0; cut <= len(tc.text); cut++ {
			p := newParser(sx, false, false)
			evs := append(p.Feed(tc.text[:cut]), p.Feed(tc.text[cut:])...)
			content, calls := Merge(append(evs, p.Close()...))
			if content != tc.want || len(calls) != 0 {
				t.Errorf("%q split at %d: content %q calls %v, want %q", tc.text, cut, content, calls, tc.want)
			}
		}
	}
}
