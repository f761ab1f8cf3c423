package turn

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/runner"
)

// thinkSpecials marks the think markers as special tokens (as a
// vocabulary that has them so would).
func thinkSpecials(s string) bool { return s == "<think>" || s == "</think>" }

func TestReasoningFormats(t *testing.T) {
	if got := ReasoningFormats(); !reflect.DeepEqual(got, []ReasoningFormat{ReasoningHarmony, ReasoningNone, ReasoningThink}) {
		t.Errorf("ReasoningFormats() = %v", got)
	}
	for _, tt := range []struct {
		in   string
		want ReasoningFormat
		ok   bool
	}{{"think", ReasoningThink, true}, {"none", ReasoningNone, true}, {" think ", ReasoningThink, true}, {"auto", "", false}, {"harmony", ReasoningHarmony, true}, {"channels", "", false}} {
		got, err := ParseReasoningFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseReasoningFormat(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct {
		name, template string
		want           ReasoningFormat
		ok             bool
	}{
		{"qwen3 strips earlier reasoning", `{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1] %}{%- endif %}`, ReasoningThink, true},
		{"r1 opens the generation", `{% if add_generation_prompt %}<｜Assistant｜><think>\n{% endif %}`, ReasoningThink, true},
		{"reads reasoning_content", `{{ message.reasoning_content }}`, ReasoningThink, true},
		{"harmony writes the analysis channel", `<|start|>assistant<|channel|>analysis<|message|>{{ message.thinking }}`, ReasoningHarmony, true},
		{"harmony channels without analysis", `<|start|>assistant<|channel|>final<|message|>{{ message.content }}`, ReasoningNone, false},
		{"chatml", DemoChatML, ReasoningNone, false},
	} {
		got, ok := DetectReasoningFormat(tt.template)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: DetectReasoningFormat = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct {
		f      ReasoningFormat
		prompt string
		want   PromptState
	}{
		{ReasoningThink, "<|im_start|>assistant\n", PromptPlain},
		{ReasoningThink, "<|im_start|>assistant\n<think>\n", PromptOpened},
		{ReasoningThink, "<｜Assistant｜><think>", PromptOpened},
		{ReasoningThink, "<|im_start|>assistant\n<think>\n\n</think>\n\n", PromptClosed},
		{ReasoningThink, "<think>a</think>b<|im_start|>assistant\n", PromptPlain},
		{ReasoningNone, "<think>\n", PromptPlain},
		// Every harmony message ends <|end|>: only a closed analysis
		// channel is a closed block.
		{ReasoningHarmony, "<|start|>user<|message|>hi<|end|><|start|>assistant", PromptPlain},
		{ReasoningHarmony, "<|start|>assistant<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|end|><|start|>user<|message|>c<|end|><|start|>assistant", PromptPlain},
		{ReasoningHarmony, "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>analysis<|message|>", PromptOpened},
		{ReasoningHarmony, "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>analysis<|message|>done<|end|><|start|>assistant", PromptClosed},
	} {
		if got := tt.f.PromptState(tt.prompt); got != tt.want {
			t.Errorf("%s.PromptState(%q) = %d, want %d", tt.f, tt.prompt, got, tt.want)
		}
	}
	for _, tt := range []struct {
		effort string
		want   int
		ok     bool
	}{{"none", 0, true}, {"minimal", 0, true}, {"low", 1024, true}, {"medium", 4096, true}, {"high", 16384, true}, {"max", 0, false}} {
		if got, ok := EffortBudget(tt.effort); got != tt.want || ok != tt.ok {
			t.Errorf("EffortBudget(%q) = %d, %v; want %d, %v", tt.effort, got, ok, tt.want, tt.ok)
		}
	}
}

// DemoChatML is a template with no reasoning in it.
const DemoChatML = `{% for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// think returns spec with reasoning r under the think format.
func think(spec Spec, r Reasoning, isSpecial func(string) bool) specOpts {
	spec.Reasoning = r
	return specOpts{spec: spec, opts: Options{Format: FormatHermes, IsSpecial: isSpecial, Reasoning: ReasoningThink}}
}

var (
	on       = Reasoning{Enabled: true, Budget: NoBudget}
	onOpened = Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptOpened}
	object   = Output{Kind: OutputJSONObject}
)

func TestBuildReasoning(t *testing.T) {
	tests := []struct {
		name string
		spec specOpts
		yes  []string
		no   []string
	}{
		{
			name: "json after the block",
			spec: think(Spec{Output: object}, on, nil),
			yes:  []string{`<think>hmm</think>{"a": 1}`, "<think></think>\n\n{\"a\": 1}", "<think>\nlet me see: {x} é\n</think>\n{}", "<think><think></think>{}"},
			no: []string{`{"a": 1}`, `<think>a</think>b</think>{}`, "<think>a</think>\n\n\n{}", "<think>a</think>", "<think>\xff</think>{}",
				"<think>a</think>{} "},
		},
		{
			name: "opened by the prompt",
			spec: think(Spec{Output: object}, onOpened, nil),
			yes:  []string{"hmm</think>\n\n{}", "</think>{}", "\nwhat\n</think>\n{\"a\": [1]}"},
			no:   []string{"{}", "hmm{}", "a</think>b</think>{}"},
		},
		{
			name: "off, opened by the prompt: closed first",
			spec: think(Spec{Output: object}, Reasoning{Prompt: PromptOpened}, nil),
			yes:  []string{"</think>\n\n{}", "</think>{}"},
			no:   []string{"x</think>{}", "{}", "<think></think>{}"},
		},
		{
			name: "budget 0, opened: closed first",
			spec: think(Spec{Output: object}, Reasoning{Enabled: true, Budget: 0, Prompt: PromptOpened}, nil),
			yes:  []string{"</think>\n\n{}"},
			no:   []string{"x</think>{}"},
		},
		{
			name: "closed in the prompt: the answer only",
			spec: think(Spec{Output: object}, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptClosed}, nil),
			yes:  []string{"{}", `{"a": 1}`},
			no:   []string{"<think></think>{}", "</think>{}"},
		},
		{
			name: "free text gets a block and no markers after it",
			spec: think(Spec{}, on, nil),
			yes:  []string{"<think>r</think>\n\nhello", "<think></think>", "<think>a</think>b <think"},
			no:   []string{"hello", "<think>r</think>hello </think>", "<think>r</think>x<think>", "<think>r"},
		},
		{
			name: "special markers",
			spec: think(Spec{Output: object}, on, thinkSpecials),
			yes:  []string{"\xff<think>a</think> b\xff</think>{}", "\xff<think>\xff</think>\n{}"},
			no:   []string{"<think>a</think>{}", "\xff<think>a\xff</think>b\xff</think>{}"},
		},
		{
			name: "calls after the block",
			spec: think(Spec{Tools: twoTools, ToolMode: ToolRequired}, on, nil),
			yes:  []string{"<think>call it</think>\n\n" + hCallW},
			no:   []string{hCallW, "<think>call it</think>\n\nhi " + hCallW},
		},
		{
			name: "auto tools after the block",
			spec: think(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true}, on, nil),
			yes:  []string{"<think>x</think>\n\nLet me check.\n" + hCallW, "<think><tool_call></think>hi"},
			no:   []string{"<think>x</think>a <tool_call> b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := compile(t, tt.spec)
			if d == nil {
				t.Fatal("no constraint")
			}
			for _, s := range tt.yes {
				if !fsm.Matches(d, []byte(s)) {
					t.Errorf("Matches(%q) = false, want true", s)
				}
			}
			for _, s := range tt.no {
				if fsm.Matches(d, []byte(s)) {
					t.Errorf("Matches(%q) = true, want false", s)
				}
			}
		})
	}
}

// TestBuildReasoningOff: a turn without a block is the turn Build makes
// without reasoning (same node, same key); a free-text one stays
// unconstrained.
func TestBuildReasoningOff(t *testing.T) {
	plain, err := Build(Spec{Output: object}, Options{Format: FormatHermes})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Reasoning{{}, {Enabled: true, Budget: 0}, {Enabled: true, Budget: NoBudget, Prompt: PromptClosed}} {
		res, err := Build(Spec{Output: object, Reasoning: r}, Options{Format: FormatHermes, Reasoning: ReasoningThink})
		if err != nil {
			t.Fatal(err)
		}
		if res.Key != plain.Key || res.think != nil {
			t.Errorf("Build(reasoning %+v): key %s, layout %v; want the plain key %s and no layout", r, res.Key, res.think, plain.Key)
		}
		free, err := Build(Spec{Reasoning: r}, Options{Reasoning: ReasoningThink})
		if err != nil || free.Node != nil {
			t.Errorf("Build(free text, reasoning %+v) = node %v, %v; want nil", r, free.Node, err)
		}
	}
	// The none format ignores the request's reasoning.
	res, err := Build(Spec{Output: object, Reasoning: on}, Options{Format: FormatHermes, Reasoning: ReasoningNone})
	if err != nil || res.Key != plain.Key {
		t.Errorf("Build(none format) key %s, %v; want %s", res.Key, err, plain.Key)
	}
	if _, err := Build(Spec{Reasoning: on}, Options{Reasoning: "bogus"}); err == nil {
		t.Errorf("Build(bogus reasoning format) = nil error")
	}
	// Keys: the layout is in the key, the budget is not (the guide
	// enforces it).
	keys := map[string]string{}
	for name, r := range map[string]Reasoning{"on": on, "opened": onOpened, "off-opened": {Prompt: PromptOpened}} {
		res, err := Build(Spec{Output: object, Reasoning: r}, Options{Format: FormatHermes, Reasoning: ReasoningThink})
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := keys[res.Key]; dup {
			t.Errorf("%s and %s share key %s", name, other, res.Key)
		}
		keys[res.Key] = name
	}
	a, _ := Build(Spec{Output: object, Reasoning: Reasoning{Enabled: true, Budget: 5}}, Options{Reasoning: ReasoningThink})
	b, _ := Build(Spec{Output: object, Reasoning: Reasoning{Enabled: true, Budget: 500}}, Options{Reasoning: ReasoningThink})
	if a.Key != b.Key || a.think.budget != 5 || b.think.budget != 500 {
		t.Errorf("budgets 5 and 500: keys %s %s, budgets %d %d; want one key", a.Key, b.Key, a.think.budget, b.think.budget)
	}
}

// thinkParser returns a Turn's parser for spec under the think format,
// without the content cleaning (which works on whole tokens, not on any
// split of the text).
func thinkParser(s specOpts) *Parser {
	res, err := Build(s.spec, s.opts)
	if err != nil {
		panic(err) // the specs are the tests' own
	}
	p := newParser(formats[s.opts.Format].resolved(s.opts.IsSpecial), res.Calls, false)
	if res.think != nil {
		p.think = newThinkReader(res.think)
	}
	return p
}

func TestReasoningParserSteps(t *testing.T) {
	r, c := evReasoning, evText
	tests := []struct {
		name  string
		spec  specOpts
		steps []step
		close []Event
	}{
		{"block then json", think(Spec{Output: object}, on, nil), []step{
			{"<thi", nil},
			{"nk>let me", []Event{r("let me")}},
			{" see </", []Event{r(" see ")}},
			{"thi", nil},
			{"ng>", []Event{r("</thing>")}},
			{" ok</think>\n", []Event{r(" ok")}},
			{"\n{\"a\"", []Event{c("{\"a\"")}},
			{": 1}", []Event{c(": 1}")}},
		}, nil},
		{"opened, one newline", think(Spec{Output: object}, onOpened, nil), []step{
			{"a</think>\n{}", []Event{r("a"), c("{}")}},
		}, nil},
		{"off, opened", think(Spec{Output: object}, Reasoning{Prompt: PromptOpened}, nil), []step{
			{"</think>\n\n", nil},
			{"{}", []Event{c("{}")}},
		}, nil},
		{"special markers", think(Spec{}, on, thinkSpecials), []step{
			{"\xff<think>", nil},
			{"x </think> y", []Event{r("x </think> y")}},
			{"\xff</think>\n\nhi", []Event{c("hi")}},
		}, nil},
		{"cut inside the block", think(Spec{}, on, nil), []step{
			{"<think>half </th", []Event{r("half ")}},
		}, []Event{r("</th")}},
		{"calls after the block", think(Spec{Tools: twoTools, ToolMode: ToolRequired}, on, nil), []step{
			{"<think>w</think>\n\n" + hCallW, []Event{r("w"), {Kind: EventCallStart, Name: "get_weather"}, {Kind: EventCallArgs, Text: `{"city": "Paris"}`}, {Kind: EventCallEnd}}},
		}, nil},
		{"text that is not the layout", think(Spec{}, on, nil), []step{
			{"<th", nil},
			{"e end", []Event{c("<the end")}},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feedSteps(t, thinkParser(tt.spec), tt.steps, tt.close)
		})
	}
}

// thinkSplit parses text cut at cuts and folds the events.
func thinkSplit(s specOpts, text string, cuts []int) (reasoning, content string, calls []Call) {
	p := thinkParser(s)
	var m Message
	prev := 0
	for _, c := range append(cuts, len(text)) {
		m.Add(p.Feed(text[prev:c])...)
		prev = c
	}
	m.Add(p.Close()...)
	return m.Reasoning(), m.Content(), m.Calls
}

var thinkCorpus = []struct {
	spec          specOpts
	text          string
	wantReasoning string
	wantContent   string
}{
	{think(Spec{Output: object}, on, nil), "<think>\nso </thin </ {x}\n</think>\n\n{\"a\": \"</think>\"}", "\nso </thin </ {x}\n", `{"a": "</think>"}`},
	{think(Spec{Output: object}, onOpened, nil), "é </think>{}", "é ", "{}"},
	{think(Spec{}, on, thinkSpecials), "\xff<think>a</think>\xff</think>\n\nfree text", "a</think>", "free text"},
	{think(Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true}, on, nil), "<think>t</think>\nok " + hCallW, "t", "ok "},
	{think(Spec{}, on, nil), "<think>never closed </thi", "never closed </thi", ""},
	{think(Spec{}, Reasoning{Prompt: PromptOpened}, nil), "</think>\n\n\nthree", "", "\nthree"},
	{harmony(Spec{Output: object}, on), hx(hAnalysis+"let me see <|end"+hNext+hFinal) + `{"a": "<|end|>"}`, "let me see <|end", `{"a": "<|end|>"}`},
	{harmony(Spec{Output: object}, Reasoning{}), hx(hAnalysis + hNext + hFinal + "{}"), "", "{}"},
	{harmony(Spec{Tools: twoTools, ToolMode: ToolAuto}, on), hx(hAnalysis + "é t" + hNext + hCallTime), "é t", ""},
	{harmony(Spec{Tools: twoTools, ToolMode: ToolAuto}, on), hx(hAnalysis + "t" + hNext + hFinal + "it is noon"), "t", "it is noon"},
	{harmony(Spec{}, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptOpened}), hx("x" + hNext + hFinal + "free"), "x", "free"},
	{harmony(Spec{}, Reasoning{Enabled: true, Budget: NoBudget, Prompt: PromptClosed}), hx(hFinal) + "after <|end|>", "", "after <|end|>"},
}

// TestReasoningParserEverySplit: each text cut at every byte, and byte by
// byte, gives the same reasoning, content and calls, and the markers are
// in neither.
func TestReasoningParserEverySplit(t *testing.T) {
	for _, tc := range thinkCorpus {
		wantR, wantC, wantCalls := thinkSplit(tc.spec, tc.text, nil)
		if wantR != tc.wantReasoning || wantC != tc.wantContent {
			t.Errorf("parse %q: reasoning %q content %q; want %q %q", tc.text, wantR, wantC, tc.wantReasoning, tc.wantContent)
		}
		for i := 0; i <= len(tc.text); i++ {
			r, c, calls := thinkSplit(tc.spec, tc.text, []int{i})
			if r != wantR || c != wantC || !reflect.DeepEqual(calls, wantCalls) {
				t.Fatalf("split at %d of %q: got %q %q %+v, want %q %q %+v", i, tc.text, r, c, calls, wantR, wantC, wantCalls)
			}
		}
		cuts := make([]int, 0, len(tc.text))
		for i := 1; i < len(tc.text); i++ {
			cuts = append(cuts, i)
		}
		if r, c, calls := thinkSplit(tc.spec, tc.text, cuts); r != wantR || c != wantC || !reflect.DeepEqual(calls, wantCalls) {
			t.Fatalf("byte by byte %q: got %q %q %+v, want %q %q %+v", tc.text, r, c, calls, wantR, wantC, wantCalls)
		}
	}
}

// FuzzReasoningParser: any text, under any layout, split anywhere, gives
// the same events merged, and never panics.
func FuzzReasoningParser(f *testing.F) {
	for i, tc := range thinkCorpus {
		f.Add(uint8(i), tc.text, uint16(5))
	}
	f.Fuzz(func(t *testing.T, li uint8, text string, cut uint16) {
		s := thinkCorpus[int(li)%len(thinkCorpus)].spec
		wantR, wantC, wantCalls := thinkSplit(s, text, nil)
		i := int(cut) % (len(text) + 1)
		r, c, calls := thinkSplit(s, text, []int{i})
		if r != wantR || c != wantC || !reflect.DeepEqual(calls, wantCalls) {
			t.Fatalf("split at %d of %q: got %q %q %+v, want %q %q %+v", i, text, r, c, calls, wantR, wantC, wantCalls)
		}
	})
}

// thinkVocab is testVocab's bytes and words plus the think markers, as
// text tokens or, with special, as special tokens; <|im_end|> is EOS.
func thinkVocab(t testing.TB, special bool) *Vocab {
	t.Helper()
	var toks [][]byte
	for b := 0; b < 256; b++ {
		toks = append(toks, []byte{byte(b)})
	}
	for _, w := range []string{"city", "Paris", `": "`, `"}`, " the", "think", "hmm", "</", "\n\n", "é", "思考"} {
		toks = append(toks, []byte(w))
	}
	flags := make([]bool, len(toks))
	for _, mk := range []string{"<think>", "</think>", "<|im_start|>", "<|im_end|>"} {
		sp := special || strings.HasPrefix(mk, "<|")
		if sp {
			toks = append(toks, append([]byte{fsm.SpecialPrefix}, mk...))
		} else {
			toks = append(toks, []byte(mk))
		}
		flags = append(flags, sp)
	}
	v, err := NewVocab(VocabConfig{Tokens: toks, Special: flags, EOS: []TokenID{TokenID(len(toks) - 1)}, Width: len(toks) + 3})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// thinker is a fake model that would think forever: in the block it picks
// plain reasoning tokens (letters, spaces, multi-byte characters, never
// the close) whenever the mask allows one; after it, any allowed token,
// EOS as soon as allowed with probability endP.
type thinker struct {
	rng  *rand.Rand
	endP float64
	utf8 bool // also favours bytes that start multi-byte characters
}

func (th *thinker) pick(v *Vocab, mask []uint64, inBlock bool) TokenID {
	var plain, all []TokenID
	eos := TokenID(-1)
	for id := 0; id < v.Len(); id++ {
		if mask[id/64]&(1<<(id%64)) == 0 {
			continue
		}
		if v.index.IsEOS(TokenID(id)) {
			eos = TokenID(id)
			continue
		}
		all = append(all, TokenID(id))
		tok := v.tokens[id]
		ok := len(tok) > 0
		for _, c := range tok {
			ok = ok && (c >= 'a' && c <= 'z' || c == ' ' || th.utf8 && c >= 0x80 && c != 0xFF)
		}
		if ok {
			plain = append(plain, TokenID(id))
		}
	}
	switch {
	case eos >= 0 && !inBlock && (len(all) == 0 || th.rng.Float64() < th.endP):
		return eos
	case inBlock && len(plain) > 0:
		return plain[th.rng.IntN(len(plain))]
	case len(all) > 0:
		return all[th.rng.IntN(len(all))]
	}
	return eos
}

// TestReasoningBudget drives the guide of a json_schema turn with a
// thinker under budgets and token limits: the block's text never takes
// more tokens than the budget, the block is closed, the answer is
// complete within max_tokens and validates, and the usage count covers
// the block.
func TestReasoningBudget(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(weatherSchema))
	if err != nil {
		t.Fatal(err)
	}
	jc := jsonschema.NewCompiler()
	if err := jc.AddResource("w.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := jc.Compile("w.json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, special := range []bool{false, true} {
		v := thinkVocab(t, special)
		c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHermes, Options: Options{Reasoning: ReasoningThink}})
		if err != nil {
			t.Fatal(err)
		}
		closeBytes := markerBytes("</think>", v.IsSpecial)
		openBytes := markerBytes("<think>", v.IsSpecial)
		for _, tc := range []struct {
			budget, maxTokens int
			prompt            PromptState
			utf8              bool
		}{
			{1, 200, PromptPlain, false}, {7, 200, PromptPlain, false}, {30, 200, PromptPlain, true},
			{12, 200, PromptOpened, true}, {NoBudget, 60, PromptPlain, false}, {NoBudget, 45, PromptOpened, true},
			{100, 50, PromptPlain, false}, {3, 0, PromptPlain, true}, {5, 0, PromptOpened, false}, {9, 0, PromptPlain, false},
		} {
			spec := Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema), Strict: true},
				Reasoning: Reasoning{Enabled: true, Budget: tc.budget, Prompt: tc.prompt}}
			tn, err := c.Compile(t.Context(), spec)
			if err != nil {
				t.Fatal(err)
			}
			minTok, err := tn.MinTokens()
			if err != nil {
				t.Fatal(err)
			}
			for run := 0; run < 12; run++ {
				th := &thinker{rng: rng, endP: 0.3, utf8: tc.utf8}
				g := tn.NewMatcher().(runner.BudgetGuide)
				mask := make([]uint64, v.Index().MaskWords())
				var out []byte
				var starts []int
				ended := false
				limit := tc.maxTokens
				if limit == 0 {
					limit = 400 // no max_tokens: only the budget stops the thinking
				}
				if limit < minTok {
					t.Fatalf("limit %d below the minimum %d", limit, minTok)
				}
				for n := 0; n < limit && !ended; n++ {
					clear(mask)
					if _, err := g.FillMaskWithin(mask, limit-n); err != nil {
						t.Fatalf("FillMaskWithin: %v", err)
					}
					inBlock := !bytes.Contains(out, []byte(closeBytes))
					tok := th.pick(v, mask, inBlock)
					if tok < 0 {
						t.Fatalf("empty mask after %q", out)
					}
					if v.index.IsEOS(tok) {
						ended = true
						break
					}
					if err := g.Accept(tok); err != nil {
						t.Fatalf("Accept(%d): %v", tok, err)
					}
					starts = append(starts, len(out))
					out = append(out, v.tokens[tok]...)
					if g.IsTerminated() {
						ended = true
					}
				}
				if !g.IsAccepting() {
					t.Fatalf("budget %d, max %d: output %q is not complete", tc.budget, limit, out)
				}
				textStart := 0
				if tc.prompt != PromptOpened {
					if !bytes.HasPrefix(out, []byte(openBytes)) {
						t.Fatalf("output %q does not open the block", out)
					}
					textStart = len(openBytes)
				}
				closeAt := bytes.Index(out, []byte(closeBytes))
				if closeAt < 0 {
					t.Fatalf("output %q never closes the block", out)
				}
				text := 0
				for _, s := range starts {
					if s >= textStart && s < closeAt {
						text++
					}
				}
				// A character the budget cut is completed first: up
				// to 3 bytes, one token each at most.
				slack := 0
				if tc.utf8 {
					slack = 3
				}
				if tc.budget >= 0 && text > tc.budget+slack {
					t.Errorf("budget %d: the block's text took %d tokens: %q", tc.budget, text, out)
				}
				if tc.budget >= 0 && !tc.utf8 && tc.maxTokens == 0 && text != tc.budget {
					t.Errorf("budget %d with a thinker and no token limit: the text took %d tokens, want exactly the budget: %q", tc.budget, text, out)
				}
				rg := g.(*thinkGuide).ReasoningTokens()
				blockToks := 0
				for _, s := range starts {
					if s < closeAt+len(closeBytes) {
						blockToks++
					}
				}
				if rg != blockToks {
					t.Errorf("ReasoningTokens() = %d, want the %d tokens that began before the close ended: %q", rg, blockToks, out)
				}
				p := tn.NewParser()
				var m Message
				for i, s := range starts {
					end := len(out)
					if i+1 < len(starts) {
						end = starts[i+1]
					}
					m.Add(p.Feed(string(out[s:end]))...)
				}
				m.Add(p.Close()...)
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(m.Content()))
				if err != nil {
					t.Fatalf("content %q of %q is not JSON: %v", m.Content(), out, err)
				}
				if err := sch.Validate(inst); err != nil {
					t.Errorf("content %q does not validate: %v", m.Content(), err)
				}
				// The markers never leak: no special bytes anywhere, no
				// close in the reasoning (JSON strings of the answer may
				// spell the markers: they are data).
				if strings.Contains(m.Content()+m.Reasoning(), "\xff") || strings.Contains(m.Reasoning(), "</think>") {
					t.Errorf("markup in reasoning %q or content %q", m.Reasoning(), m.Content())
				}
			}
		}
	}
}

// TestGenerateReasoning runs a reasoning turn through the Driver: the
// reasoning comes first and bounded, then content that validates, and the
// usage counts the block.
func TestGenerateReasoning(t *testing.T) {
	v := thinkVocab(t, true)
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHermes, Options: Options{Reasoning: ReasoningThink}})
	if err != nil {
		t.Fatal(err)
	}
	eos := TokenID(v.Len() - 1)
	r, err := runner.New(&randEngine{width: v.Len() + 3, eos: int(eos), rng: rand.New(rand.NewPCG(5, 6))},
		runner.Config{Slots: 2, ContextSize: 512, EOS: []TokenID{eos}, Detokenize: v.DetokenizerWith(FormatHermes, ReasoningThink)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	go r.Run(ctx)
	const budget = 6
	tn, err := c.Compile(ctx, Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(weatherSchema)},
		Reasoning: Reasoning{Enabled: true, Budget: budget}})
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Runner: r, Context: 512}
	st, err := d.Generate(ctx, Request{Turn: tn, Prompts: [][]TokenID{bytePrompt("hi")}, N: 3, MaxTokens: 120})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]Message, 3)
	sawContent := make([]bool, 3)
	for s, ok := st.Next(); ok; s, ok = st.Next() {
		for _, e := range s.Events {
			switch e.Kind {
			case EventContent:
				sawContent[s.Choice] = true
			case EventReasoning:
				if sawContent[s.Choice] {
					t.Errorf("choice %d: reasoning %q after content", s.Choice, e.Text)
				}
			}
			msgs[s.Choice].Add(e)
		}
	}
	for i, m := range msgs {
		if m.Finish == nil || m.Finish.Err != nil {
			t.Fatalf("choice %d: finish %+v", i, m.Finish)
		}
		if !json.Valid([]byte(m.Content())) || !strings.HasPrefix(m.Content(), "{") {
			t.Errorf("choice %d: content %q is not a JSON object", i, m.Content())
		}
		u := m.Finish.Usage
		// The open and close markers are one token each here, and the
		// budget may end inside a character, whose up to 3 more bytes
		// (one-byte tokens here) still come before the close.
		if most := budget + 2 + 3; u.ReasoningTokens < 2 || u.ReasoningTokens > most || u.ReasoningTokens > u.CompletionTokens {
			t.Errorf("choice %d: %d reasoning tokens of %d, want 2..%d (reasoning %q)", i, u.ReasoningTokens, u.CompletionTokens, most, m.Reasoning())
		}
	}
	if u := st.Usage(); u.ReasoningTokens < 6 {
		t.Errorf("Usage().ReasoningTokens = %d, want the sum over 3 choices", u.ReasoningTokens)
	}
}

// TestReasoningCleansSpecials: in a turn without a block (thinking off:
// nothing constrains free text) the reasoning format's special markers,
// which the detokenizer keeps, are cleaned from content like the
// tool-call format's.
func TestReasoningCleansSpecials(t *testing.T) {
	v := thinkVocab(t, true)
	c, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHermes, Options: Options{Reasoning: ReasoningThink}})
	if err != nil {
		t.Fatal(err)
	}
	tn, err := c.Compile(t.Context(), Spec{Reasoning: Reasoning{Enabled: false}})
	if err != nil || tn.Constrained() {
		t.Fatalf("Compile(thinking off) constrained %v, %v; want a free-text turn", tn.Constrained(), err)
	}
	p := tn.NewParser()
	var m Message
	for _, piece := range []string{"\xff<think>", "hi ", "\xff</think>", "ok"} {
		m.Add(p.Feed(piece)...)
	}
	m.Add(p.Close()...)
	if m.Content() != "hi ok" || m.Reasoning() != "" {
		t.Errorf("content %q reasoning %q, want %q and none", m.Content(), m.Reasoning(), "hi ok")
	}
	// The detokenizer keeps them for the parser.
	dt := v.DetokenizerWith(FormatHermes, ReasoningThink)
	if got := string(dt(TokenID(v.Len() - 4))); got != "\xff<think>" {
		t.Errorf("DetokenizerWith(<think>) = %q", got)
	}
	if got := string(v.Detokenizer(FormatHermes)(TokenID(v.Len() - 4))); got != "" {
		t.Errorf("Detokenizer(<think>) = %q, want nothing", got)
	}
}
