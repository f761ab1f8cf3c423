package fsm_test

// A tool-calling turn compiled from JSON Schemas by package grammar (an
// external test: grammar builds on fsm), closed within budgets by
// FillMaskWithin over a synthetic and the Llama-3.1 vocabulary.

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"conform/fsm"
	"conform/grammar"
)

// agentSchemas are tool input schemas of the shapes a coding agent sends
// (written for this test): draft 2020-12, integers bounded by 2^53−1,
// exclusiveMinimum, long maxLength, minLength, enums, anyOf of const,
// pattern, format uri, arrays with minItems/maxItems, free-form {} values,
// additionalProperties false.
var agentSchemas = []string{
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"command":{"type":"string","maxLength":524288},"timeout":{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"description":{"type":"string"},"run_in_background":{"type":"boolean"}},"required":["command"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"file_path":{"type":"string","minLength":1},"offset":{"type":"integer","minimum":0,"maximum":9007199254740991},"limit":{"type":"integer","exclusiveMinimum":0,"maximum":9007199254740991}},"required":["file_path"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"output_mode":{"type":"string","enum":["content","files_with_matches","count"]},"-n":{"type":"boolean"},"head_limit":{"type":"integer","minimum":0,"maximum":9007199254740991}},"required":["pattern"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"url":{"type":"string","format":"uri"},"prompt":{"type":"string","maxLength":524288}},"required":["url","prompt"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"todos":{"type":"array","minItems":1,"maxItems":20,"items":{"type":"object","properties":{"content":{"type":"string","minLength":1},"status":{"anyOf":[{"const":"pending"},{"const":"in_progress"},{"const":"completed"}]},"activeForm":{"type":"string","minLength":1}},"required":["content","status","activeForm"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"query":{"type":"string","minLength":2},"allowed_domains":{"type":"array","items":{"type":"string","pattern":"^[a-z0-9.-]+$"}},"blocked_domains":{"type":"array","items":{"type":"string"},"maxItems":8}},"required":["query"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"name":{"type":"string"},"input":{},"options":{"type":"object","additionalProperties":{}}},"required":["name","input"]}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string","maxLength":524288},"new_string":{"type":"string","maxLength":524288},"replace_all":{"type":"boolean","default":false}},"required":["file_path","old_string","new_string"],"additionalProperties":false}`,
}

// agentTurnNode is the hermes-style turn over 24 tools (each schema under
// three names): free text that cannot contain "<tool_call>", then
// optionally one call.
func agentTurnNode(t testing.TB) *fsm.Node {
	t.Helper()
	var calls []*fsm.Node
	for i := range 24 {
		r, err := grammar.CompileSchema([]byte(agentSchemas[i%len(agentSchemas)]), grammar.Options{Strictness: grammar.Lenient})
		if err != nil {
			t.Fatalf("CompileSchema(%d) = %v", i%len(agentSchemas), err)
		}
		name := fmt.Sprintf("Tool%c%d", 'A'+i%26, i)
		calls = append(calls, fsm.Cat(fsm.Lit(`{"name": "`+name+`", "arguments": `), r.Node, fsm.Lit("}")))
	}
	anyBytes := fsm.Star(fsm.ByteClass(fsm.ByteRange{Lo: 0, Hi: 0xFF}))
	text := fsm.And(fsm.Star(fsm.AnyRune()), fsm.Not(fsm.Cat(anyBytes, fsm.Lit("<tool_call>"), anyBytes)))
	return fsm.Cat(text, fsm.Opt(fsm.Cat(fsm.Lit("<tool_call>\n"), fsm.Alt(calls...), fsm.Lit("\n</tool_call>"))))
}

// agentByteVocab is every byte, some markup and JSON words, then EOS.
func agentByteVocab(t testing.TB) *fsm.TokenIndex {
	words := []string{"<tool_call>", "<tool", "_call", ">\n", "\n</tool_call>", `{"name": "`, `", "arguments": `, `": `, `", "`, `, "`, `"}`, `}}`, "Tool", "true", "false", "12", "00", "https://", ".com", "pending", "file_path", "Hello", " world", "é"}
	for b := range 256 {
		words = append(words, string([]byte{byte(b)}))
	}
	toks := make([][]byte, len(words)+1)
	for i, w := range words {
		toks[i] = []byte(w)
	}
	ti, err := fsm.NewTokenIndex(toks, []fsm.TokenID{fsm.TokenID(len(words))}, len(toks))
	if err != nil {
		t.Fatal(err)
	}
	return ti
}

// allowed returns the ids set in a mask.
func allowed(w []uint64) []fsm.TokenID {
	var ids []fsm.TokenID
	for i, x := range w {
		for x != 0 {
			ids = append(ids, fsm.TokenID(i*64+bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	return ids
}

// agentCallScripts open a call of one tool or another; the walks go on
// with random allowed tokens.
var agentCallScripts = []string{
	"Let me look. <tool_call>\n" + `{"name": "ToolA0", "arguments": {"command": "ls`,
	"<tool_call>\n" + `{"name": "ToolE4", "arguments": {"todos": [{"content": "a", "status": "`,
	"<tool_call>\n" + `{"name": "ToolG6", "arguments": {"name": "x", "input": {"a": [1, {"b": `,
	"<tool_call>\n" + `{"name": "ToolX23", "arguments": {`,
	"I will answer in plain text: ",
}

// TestWithinAgentSchemas walks the turn with a scripted then random model
// under budgets of 19,000 tokens and of a few dozen: no FillMaskWithin may
// fail or give an empty mask, and the output must be accepting when the
// budget is spent.
func TestWithinAgentSchemas(t *testing.T) {
	n := agentTurnNode(t)
	vocabs := map[string]func(testing.TB) *fsm.TokenIndex{"bytes": agentByteVocab}
	if !testing.Short() {
		vocabs["llama3_1"] = fsm.Llama31ForTest
	}
	for vname, load := range vocabs {
		t.Run(vname, func(t *testing.T) {
			ti := load(t)
			for _, limit := range []int{0, 64} {
				c, err := fsm.CompileConstraint(context.Background(), n, ti, fsm.Options{}, fsm.ConstraintOptions{MaxCloseStates: limit})
				if err != nil {
					t.Fatal(err)
				}
				dst := make([]uint64, ti.MaskWords())
				// Budgets near the shortest calls switch between the exact
				// masks and the fallback's within one walk.
				budgets := []int{19000, 24, 30, 38, 47, 60, 90}
				for walk := range len(budgets) * len(agentCallScripts) {
					script := agentCallScripts[walk%len(agentCallScripts)]
					budget := budgets[walk/len(agentCallScripts)]
					rng := rand.New(rand.NewPCG(uint64(limit), uint64(walk)))
					m := c.NewMatcher()
					var out []byte
					for step := 0; step < 250 && budget > 0; step++ {
						if _, err := m.FillMaskWithin(dst, budget); err != nil {
							t.Fatalf("MaxCloseStates %d walk %d: FillMaskWithin(%d) after %q = %v", limit, walk, budget, out, err)
						}
						ids := allowed(dst)
						if len(ids) == 0 {
							t.Fatalf("MaxCloseStates %d walk %d: FillMaskWithin(%d) after %q: empty mask", limit, walk, budget, out)
						}
						tok := ids[rng.IntN(len(ids))]
						if rest := script[min(len(out), len(script)):]; rest != "" {
							best := -1
							for _, id := range ids {
								if b := ti.TokenBytes(id); len(b) > 0 && strings.HasPrefix(rest, string(b)) && (best < 0 || len(b) > len(ti.TokenBytes(fsm.TokenID(best)))) {
									best = int(id)
								}
							}
							if best >= 0 {
								tok = fsm.TokenID(best)
							}
						}
						if ti.IsEOS(tok) {
							break
						}
						if err := m.Accept(tok); err != nil {
							t.Fatal(err)
						}
						out = append(out, ti.TokenBytes(tok)...)
						budget--
					}
					if budget == 0 && !m.IsAccepting() {
						t.Fatalf("MaxCloseStates %d walk %d: budget spent in a state that is not accepting, after %q", limit, walk, out)
					}
				}
			}
		})
	}
}
