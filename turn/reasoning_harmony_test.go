package turn

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/internal/sharedtest"
	"conform/runner"
	"conform/sampler"
	"conform/tokenizer"
)

// harmonyMarkers are gpt-oss's special tokens (o200k_harmony).
var harmonyMarkers = []string{"<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>", "<|message|>", "<|call|>"}

func harmonySpecial(s string) bool {
	for _, m := range harmonyMarkers {
		if s == m {
			return true
		}
	}
	return false
}

// hx writes text with harmony's markers as generated text has them
// (0xFF-prefixed special tokens).
func hx(s string) string {
	for _, m := range harmonyMarkers {
		s = strings.ReplaceAll(s, m, "\xff"+m)
	}
	return s
}

// harmony returns spec with reasoning r under gpt-oss's formats.
func harmony(spec Spec, r Reasoning) specOpts {
	spec.Reasoning = r
	return specOpts{spec: spec, opts: Options{Format: FormatHarmony, IsSpecial: harmonySpecial, Reasoning: ReasoningHarmony}}
}

const (
	hAnalysis = "<|channel|>analysis<|message|>"
	hNext     = "<|end|><|start|>assistant"
	hFinal    = "<|channel|>final<|message|>"
	hCallTime = `<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"tz": "UTC"}`
)

// TestBuildHarmony: the harmony turn is the analysis channel, then the
// answer as a message of its own: the final channel (a turn without
// tools, or text under tools) or a call on the commentary channel.
// Thinking off keeps the channel, empty: gpt-oss has no off switch.
func TestBuildHarmony(t *testing.T) {
	tests := []struct {
		name    string
		spec    specOpts
		yes, no []string
	}{
		{
			name: "json answer after the analysis",
			spec: harmony(Spec{Output: object}, on),
			yes:  []string{hAnalysis + "let me see <|end" + hNext + hFinal + `{"a": 1}`, hAnalysis + hNext + hFinal + "{}"},
			no: []string{hFinal + "{}", hAnalysis + "a" + hNext + "{}", hAnalysis + "a<|end|>" + hFinal + "{}",
				hAnalysis + "a" + hNext + hFinal + "{} ", hAnalysis + "a" + hNext + hFinal + "{}<|return|>", hAnalysis + "a" + hNext + "\n" + hFinal + "{}"},
		},
		{
			name: "off: an empty analysis",
			spec: harmony(Spec{Output: object}, Reasoning{Enabled: true, Budget: 0}),
			yes:  []string{hAnalysis + hNext + hFinal + "{}"},
			no:   []string{hFinal + "{}", hAnalysis + "x" + hNext + hFinal + "{}"},
		},
		{
			name: "disabled: an empty analysis",
			spec: harmony(Spec{Output: object}, Reasoning{}),
			yes:  []string{hAnalysis + hNext + hFinal + "{}"},
			no:   []string{hFinal + "{}"},
		},
		{
			name: "opened by the prompt",
			spec: harmony(Spec{Output: object}, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptOpened}),
			yes:  []string{"hmm" + hNext + hFinal + "{}"},
			no:   []string{hAnalysis + "hmm" + hNext + hFinal + "{}", hFinal + "{}"},
		},
		{
			name: "closed by the prompt",
			spec: harmony(Spec{Output: object}, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptClosed}),
			yes:  []string{hFinal + "{}"},
			no:   []string{hAnalysis + hNext + hFinal + "{}"},
		},
		{
			name: "free text answer",
			spec: harmony(Spec{}, on),
			yes:  []string{hAnalysis + "a" + hNext + hFinal + "hello there", hAnalysis + "a" + hNext + hFinal},
			no:   []string{hAnalysis + "a" + hNext + "hello", hAnalysis + "a" + hNext + hFinal + "hi<|end|>"},
		},
		{
			name: "required tools: a call",
			spec: harmony(Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}, on),
			yes:  []string{hAnalysis + "need the time" + hNext + hCallTime},
			no:   []string{hAnalysis + "x" + hNext + hFinal + "hi", hCallTime, hAnalysis + "x" + hNext + hCallTime + hCallTime, hAnalysis + "x" + hNext + hCallTime + "<|call|>"},
		},
		{
			name: "auto tools: text or a call",
			spec: harmony(Spec{Tools: twoTools, ToolMode: ToolAuto}, on),
			yes:  []string{hAnalysis + "x" + hNext + hFinal + "hi", hAnalysis + "x" + hNext + hCallTime},
			no:   []string{hAnalysis + "x" + hNext + "hi"},
		},
		{
			name: "none: text only",
			spec: harmony(Spec{Tools: twoTools, ToolMode: ToolNone}, on),
			yes:  []string{hAnalysis + "x" + hNext + hFinal + "hi"},
			no:   []string{hAnalysis + "x" + hNext + hCallTime},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := compile(t, tt.spec)
			if d == nil {
				t.Fatal("no constraint")
			}
			for _, s := range tt.yes {
				if !fsm.Matches(d, []byte(hx(s))) {
					t.Errorf("Matches(%q) = false, want true", s)
				}
			}
			for _, s := range tt.no {
				if fsm.Matches(d, []byte(hx(s))) {
					t.Errorf("Matches(%q) = true, want false", s)
				}
			}
		})
	}
}

// TestHarmonyMarkers: the detokenizer keeps harmony's markers, and the
// format always thinks.
func TestHarmonyMarkers(t *testing.T) {
	if got := ReasoningHarmony.Markers(); !reflect.DeepEqual(got, []string{"<|channel|>", "<|message|>", "<|end|>", "<|start|>"}) {
		t.Errorf("ReasoningHarmony.Markers() = %q", got)
	}
	if !ReasoningHarmony.AlwaysThinks() || ReasoningThink.AlwaysThinks() || ReasoningNone.AlwaysThinks() {
		t.Errorf("AlwaysThinks: harmony %v, think %v, none %v; want true, false, false",
			ReasoningHarmony.AlwaysThinks(), ReasoningThink.AlwaysThinks(), ReasoningNone.AlwaysThinks())
	}
}

// harmonyGolden is the gpt-oss template's fixture
// (../shared/templates/golden/openai-gpt-oss-120b.json), as far as these
// tests read it.
type harmonyGolden struct {
	Cases []struct {
		Name     string `json:"name"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   string          `json:"content"`
			Thinking  string          `json:"thinking"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
		AddGenerationPrompt bool   `json:"add_generation_prompt"`
		Expected            string `json:"expected"`
	} `json:"cases"`
}

// TestHarmonyGoldenTurns: the assistant turns the gpt-oss template
// renders at the end of a conversation (its golden renderings), as the
// model would generate them after the generation prompt
// <|start|>assistant and up to the EOS (<|return|>), parse back through
// a harmony turn's parser: the analysis channel into the reasoning, the
// final channel into the content. The template writes a call's recipient
// in the message header (assistant to=functions.NAME<|channel|>commentary
// json), not in the form the harmony format generates (<|channel|>
// commentary to=functions.NAME <|constrain|>json): those turns are not
// read back here.
func TestHarmonyGoldenTurns(t *testing.T) {
	src, err := os.ReadFile(sharedtest.Path(t, "templates", "golden", "openai-gpt-oss-120b.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g harmonyGolden
	if err := json.Unmarshal(src, &g); err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, c := range g.Cases {
		n := len(c.Messages)
		if c.AddGenerationPrompt || c.Expected == "" || n == 0 || c.Messages[n-1].Role != "assistant" || len(c.Messages[n-1].ToolCalls) > 0 {
			continue
		}
		last := c.Messages[n-1]
		// The last message before the assistant's ends the prompt.
		i := max(strings.LastIndex(c.Expected, "<|start|>user"), strings.LastIndex(c.Expected, "<|start|>functions."))
		j := strings.Index(c.Expected[i:], "<|end|><|start|>assistant")
		if i < 0 || j < 0 || !strings.HasSuffix(c.Expected, "<|return|>") {
			t.Fatalf("%s: no final assistant turn in %q", c.Name, c.Expected)
		}
		gen := c.Expected[i+j+len("<|end|><|start|>assistant") : len(c.Expected)-len("<|return|>")]
		for _, tools := range []bool{false, true} {
			spec := Spec{}
			if tools {
				spec = Spec{Tools: twoTools, ToolMode: ToolAuto}
			}
			s := harmony(spec, on)
			if last.Thinking == "" {
				// No analysis channel: the turn that leaves the block out.
				s = harmony(spec, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptClosed})
			}
			r, content, calls := thinkSplit(s, hx(gen), nil)
			if r != last.Thinking || content != last.Content || len(calls) != 0 {
				t.Errorf("%s (tools %v): %q parses to reasoning %q, content %q, calls %v; want %q, %q", c.Name, tools, gen, r, content, calls, last.Thinking, last.Content)
			}
			if _, dfa := compile(t, s); !fsm.Matches(dfa, []byte(hx(gen))) {
				t.Errorf("%s (tools %v): the turn's constraint refuses %q", c.Name, tools, gen)
			}
		}
		read++
	}
	if read < 3 {
		t.Errorf("read %d golden assistant turns, want at least 3", read)
	}
}

// harmonyVocab is a small vocabulary with gpt-oss's specials: every byte,
// a few words, the harmony markers; EOS <|return|> and <|call|> (the
// tokenizer's end of generation for o200k_harmony).
func harmonyVocab(t testing.TB) *Vocab {
	t.Helper()
	var toks [][]byte
	for b := 0; b < 256; b++ {
		toks = append(toks, []byte{byte(b)})
	}
	for _, w := range []string{"city", "Paris", `": "`, `"}`, " the", "think", "analysis", "final", "commentary", "assistant", "get_time"} {
		toks = append(toks, []byte(w))
	}
	flags := make([]bool, len(toks))
	var eos []TokenID
	for _, mk := range harmonyMarkers {
		if mk == "<|return|>" || mk == "<|call|>" {
			eos = append(eos, TokenID(len(toks)))
		}
		toks = append(toks, append([]byte{fsm.SpecialPrefix}, mk...))
		flags = append(flags, true)
	}
	v, err := NewVocab(VocabConfig{Tokens: toks, Special: flags, EOS: eos, Width: len(toks) + 3})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHarmonyBudget drives a thinker that would think forever through
// harmony turns: the analysis takes at most the budget's tokens, the
// answer follows as the final channel and validates, or as a call.
func TestHarmonyBudget(t *testing.T) {
	v := harmonyVocab(t)
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHarmony, Options: Options{Reasoning: ReasoningHarmony}})
	if err != nil {
		t.Fatal(err)
	}
	th := &thinker{rng: rand.New(rand.NewPCG(3, 4)), endP: 0.3, utf8: true}
	for _, tc := range []struct {
		spec      Spec
		budget    int
		maxTokens int
	}{
		{Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema)}}, 7, 200},
		{Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema)}}, 0, 200},
		{Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema)}}, NoBudget, 60},
		{Spec{Tools: twoTools, ToolMode: ToolRequired}, 3, 200},
	} {
		spec := tc.spec
		spec.Reasoning = Reasoning{Enabled: true, Budget: tc.budget}
		tn, err := c.Compile(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		g := tn.NewMatcher().(runner.BudgetGuide)
		p := tn.NewParser()
		det := v.DetokenizerWith(FormatHarmony, ReasoningHarmony)
		var m Message
		mask := make([]uint64, v.Index().MaskWords())
		inside := 0 // tokens picked inside the block
		var text strings.Builder
		for n := 0; n < tc.maxTokens; n++ {
			clear(mask)
			if _, err := g.FillMaskWithin(mask, tc.maxTokens-n); err != nil {
				t.Fatal(err)
			}
			inBlock := strings.Contains(text.String(), hx(hAnalysis)) && !strings.Contains(text.String(), hx("<|end|>"))
			tok := th.pick(v, mask, inBlock)
			if tok < 0 || v.index.IsEOS(tok) {
				break
			}
			if inBlock {
				inside++
			}
			if err := g.Accept(tok); err != nil {
				t.Fatal(err)
			}
			text.Write(det(tok))
			m.Add(p.Feed(string(det(tok)))...)
		}
		m.Add(p.Close()...)
		if !g.IsAccepting() {
			t.Fatalf("budget %d: not complete: %q", tc.budget, text.String())
		}
		// The close is one token; the budget counts the text before it.
		if tc.budget >= 0 && inside > tc.budget+1 {
			t.Errorf("budget %d: %d tokens in the analysis channel (%q)", tc.budget, inside, m.Reasoning())
		}
		if tc.budget == 0 && m.Reasoning() != "" {
			t.Errorf("budget 0: reasoning %q, want an empty analysis", m.Reasoning())
		}
		checkHarmonyMessage(t, &m, tc.spec)
		t.Logf("budget %d: %q", tc.budget, text.String())
	}
}

// checkHarmonyMessage checks that m has no markup, that its content
// validates against spec's schema, and that its calls (required when spec
// has tools) validate against their tools'.
func checkHarmonyMessage(t *testing.T, m *Message, spec Spec) {
	t.Helper()
	for _, s := range []string{m.Reasoning(), m.Content()} {
		if strings.IndexByte(s, 0xFF) >= 0 {
			t.Errorf("markup in reasoning %q or content %q", m.Reasoning(), m.Content())
		}
		for _, mk := range harmonyMarkers {
			if strings.Contains(s, mk) {
				t.Errorf("%s in reasoning %q or content %q", mk, m.Reasoning(), m.Content())
			}
		}
	}
	validate := func(schema json.RawMessage, doc string) {
		t.Helper()
		var inst any
		if err := json.Unmarshal([]byte(doc), &inst); err != nil {
			t.Errorf("%q is not JSON: %v", doc, err)
			return
		}
		var sch any
		if err := json.Unmarshal(schema, &sch); err != nil {
			t.Fatal(err)
		}
		cp := jsonschema.NewCompiler()
		if err := cp.AddResource("s.json", sch); err != nil {
			t.Fatal(err)
		}
		s, err := cp.Compile("s.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%q does not validate: %v", doc, err)
		}
	}
	if spec.Output.Kind == OutputJSONSchema {
		validate(spec.Output.Schema, m.Content())
	}
	if spec.ToolMode == ToolRequired && len(m.Calls) != 1 {
		t.Errorf("%d calls, want 1 (content %q)", len(m.Calls), m.Content())
	}
	for _, call := range m.Calls {
		found := false
		for _, tool := range spec.Tools {
			if tool.Name == call.Name {
				validate(tool.Parameters, call.Arguments)
				found = true
			}
		}
		if !found {
			t.Errorf("call of %q: not a tool", call.Name)
		}
	}
}

// TestGenerateHarmony runs harmony turns on the runner with a random
// engine, the EOS being <|return|> and <|call|>: json_schema answers with
// thinking on have reasoning without markup and content that validates;
// required tools make one call that validates.
func TestGenerateHarmony(t *testing.T) {
	v := harmonyVocab(t)
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHarmony, Options: Options{Reasoning: ReasoningHarmony}})
	if err != nil {
		t.Fatal(err)
	}
	eos := []TokenID{TokenID(256 + 11), TokenID(256 + 11 + 6)}
	if v.Text(eos[0]) != "<|return|>" || v.Text(eos[1]) != "<|call|>" {
		t.Fatalf("EOS %q %q", v.Text(eos[0]), v.Text(eos[1]))
	}
	r, err := runner.New(&randEngine{width: v.Len() + 3, eos: int(eos[0]), rng: rand.New(rand.NewPCG(9, 10))},
		runner.Config{Slots: 2, ContextSize: 512, EOS: eos, Detokenize: v.DetokenizerWith(FormatHarmony, ReasoningHarmony)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	go r.Run(ctx)
	d := &Driver{Runner: r, Context: 512}
	for _, spec := range []Spec{
		{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema)}, Reasoning: Reasoning{Enabled: true, Budget: 8}},
		{Tools: twoTools, ToolMode: ToolRequired, Reasoning: Reasoning{Enabled: true, Budget: 8}},
		{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(timeSchema)}, Reasoning: Reasoning{}},
	} {
		tn, err := c.Compile(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		const n = 3
		st, err := d.Generate(ctx, Request{Turn: tn, Prompts: [][]TokenID{bytePrompt("hi")}, N: n, MaxTokens: 150,
			Sampling: sampler.Params{Seed: 1}, Seeded: true})
		if err != nil {
			t.Fatal(err)
		}
		msgs := drain(st, n)
		for i := range msgs {
			m := &msgs[i]
			if m.Finish == nil || m.Finish.Err != nil {
				t.Fatalf("choice %d: finish %+v", i, m.Finish)
			}
			checkHarmonyMessage(t, m, spec)
			if !spec.Reasoning.Enabled && m.Reasoning() != "" {
				t.Errorf("choice %d: thinking off, reasoning %q", i, m.Reasoning())
			}
			// The open marker is <|channel|>, "analysis" (one to
			// eight tokens here) and <|message|>; the close <|end|>.
			most := spec.Reasoning.Budget + 2 + len("analysis") + 1
			if u := m.Finish.Usage; u.ReasoningTokens < 4 || u.ReasoningTokens > most {
				t.Errorf("choice %d: %d reasoning tokens, want 4..%d", i, u.ReasoningTokens, most)
			}
		}
	}
}

// TestHarmonyQwen3Vocab drives harmony turns over the real Qwen3
// vocabulary (../shared/vocab/qwen3; skipped without it) with gpt-oss's
// markers added as special tokens, <|return|> and <|call|> the EOS, as
// cmd/mkmodel's gpt-oss family builds it: a thinker that would think
// forever keeps the analysis within its budget, then answers on the
// final channel with JSON that validates, or makes a call that
// validates; reasoning and content hold no markup.
func TestHarmonyQwen3Vocab(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the token index of a 151k vocabulary")
	}
	hv, err := tokenizer.LoadHF(sharedtest.Path(t, "vocab", "qwen3", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	toks := append([][]byte(nil), hv.Tokens...)
	special := append([]bool(nil), hv.Special...)
	for len(special) < len(toks) {
		special = append(special, false)
	}
	var eos []TokenID
	for _, mk := range harmonyMarkers {
		if mk == "<|return|>" || mk == "<|call|>" {
			eos = append(eos, TokenID(len(toks)))
		}
		toks = append(toks, append([]byte{fsm.SpecialPrefix}, mk...))
		special = append(special, true)
	}
	v, err := NewVocab(VocabConfig{Tokens: toks, Special: special, EOS: eos, Width: max(hv.Width, len(toks))})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHarmony, Options: Options{Reasoning: ReasoningHarmony}})
	if err != nil {
		t.Fatal(err)
	}
	det := v.DetokenizerWith(FormatHarmony, ReasoningHarmony)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		spec   Spec
		budget int
	}{
		{Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema), Strict: true}}, 16},
		{Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema), Strict: true}}, 0},
		{Spec{Tools: twoTools, ToolMode: ToolRequired}, 8},
	} {
		spec := tc.spec
		spec.Reasoning = Reasoning{Enabled: true, Budget: tc.budget}
		tn, err := c.Compile(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		g := tn.NewMatcher().(runner.BudgetGuide)
		p := tn.NewParser()
		var m Message
		mask := make([]uint64, v.Index().MaskWords())
		const maxTokens = 400
		words := 0 // word tokens picked inside the analysis
		var text strings.Builder
		for n := 0; n < maxTokens; n++ {
			clear(mask)
			if _, err := g.FillMaskWithin(mask, maxTokens-n); err != nil {
				t.Fatal(err)
			}
			var word, any []TokenID
			end := TokenID(-1)
			for id := 0; id < v.Len(); id++ {
				if mask[id/64]&(1<<(id%64)) == 0 {
					continue
				}
				if v.Index().IsEOS(TokenID(id)) {
					end = TokenID(id)
					continue
				}
				any = append(any, TokenID(id))
				if txt := v.Text(TokenID(id)); len(txt) > 1 && strings.Trim(txt, " abcdefghijklmnopqrstuvwxyz") == "" && len(word) < 4096 {
					word = append(word, TokenID(id))
				}
			}
			inBlock := strings.Contains(text.String(), hx(hAnalysis)) && !strings.Contains(text.String(), hx("<|end|>"))
			var tok TokenID
			switch {
			case end >= 0:
				tok = end
			case inBlock && len(word) > 0:
				tok = word[rng.IntN(len(word))]
				words++
			case len(any) > 0:
				tok = any[rng.IntN(len(any))]
			default:
				t.Fatalf("empty mask after %d tokens", n)
			}
			if tok == end {
				break
			}
			if err := g.Accept(tok); err != nil {
				t.Fatal(err)
			}
			text.Write(det(tok))
			m.Add(p.Feed(string(det(tok)))...)
		}
		m.Add(p.Close()...)
		if !g.IsAccepting() {
			t.Fatalf("budget %d: not complete: %q", tc.budget, text.String())
		}
		if words > tc.budget {
			t.Errorf("budget %d: %d word tokens in the analysis", tc.budget, words)
		}
		if tc.budget > 0 && m.Reasoning() == "" {
			t.Errorf("budget %d: no reasoning in %q", tc.budget, text.String())
		}
		checkHarmonyMessage(t, &m, tc.spec)
		t.Logf("budget %d: %q", tc.budget, text.String())
	}
}
