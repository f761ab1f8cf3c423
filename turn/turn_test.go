package turn

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"conform/fsm"
	"conform/runner"
)

// testVocab is a byte-level vocabulary with a few words, the hermes tags as
// text, [TOOL_CALLS] and the ChatML specials as special tokens
// (<|im_end|> is EOS).
func testVocab(t testing.TB) *Vocab {
	t.Helper()
	var toks [][]byte
	for b := 0; b < 256; b++ {
		toks = append(toks, []byte{byte(b)})
	}
	for _, w := range []string{"<tool_call>", "</tool_call>", `{"name": "`, `", "arguments": `, "get_weather", "city", "Paris", `": "`, `"}`} {
		toks = append(toks, []byte(w))
	}
	special := make([]bool, len(toks))
	for _, sp := range []string{"[TOOL_CALLS]", "<|im_start|>", "<|im_end|>"} {
		toks = append(toks, append([]byte{fsm.SpecialPrefix}, sp...))
		special = append(special, true)
	}
	v, err := NewVocab(VocabConfig{Tokens: toks, Special: special, EOS: []TokenID{TokenID(len(toks) - 1)}, Width: len(toks) + 4})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVocab(t *testing.T) {
	v := testVocab(t)
	imEnd := TokenID(v.Len() - 1)
	toolCalls := TokenID(v.Len() - 3)
	if !v.IsSpecial("<|im_end|>") || v.IsSpecial("<tool_call>") || v.IsSpecial("a") {
		t.Errorf("IsSpecial: <|im_end|> %v, <tool_call> %v, a %v; want true, false, false", v.IsSpecial("<|im_end|>"), v.IsSpecial("<tool_call>"), v.IsSpecial("a"))
	}
	for _, tt := range []struct {
		id   TokenID
		want string
	}{{'a', "a"}, {imEnd, "<|im_end|>"}, {-1, ""}, {TokenID(v.Len()), ""}} {
		if got := v.Text(tt.id); got != tt.want {
			t.Errorf("Text(%d) = %q, want %q", tt.id, got, tt.want)
		}
	}
	if got, want := v.MaxTokenBytes(), len(`", "arguments": `); got != want {
		t.Errorf("MaxTokenBytes() = %d, want %d", got, want)
	}
	// The detokenizer keeps only the format's special markers.
	for _, tt := range []struct {
		f    Format
		id   TokenID
		want string
	}{
		{FormatHermes, 'x', "x"},
		{FormatHermes, imEnd, ""},
		{FormatHermes, toolCalls, ""},
		{FormatMistral, toolCalls, "\xff[TOOL_CALLS]"},
		{FormatMistral, imEnd, ""},
		{FormatMistral, -3, ""},
	} {
		if got := string(v.Detokenizer(tt.f)(tt.id)); got != tt.want {
			t.Errorf("Detokenizer(%s)(%d) = %q, want %q", tt.f, tt.id, got, tt.want)
		}
	}
	if _, err := NewVocab(VocabConfig{Width: 0}); err == nil {
		t.Errorf("NewVocab(empty) = nil error")
	}
}

func newCompiler(t testing.TB, f Format) *Compiler {
	t.Helper()
	c, err := NewCompiler(CompilerConfig{Vocab: testVocab(t), Format: f})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewCompilerErrors(t *testing.T) {
	var e *Error
	if _, err := NewCompiler(CompilerConfig{Format: FormatHermes}); !errors.As(err, &e) || e.Code != CodeInvalidConfig {
		t.Errorf("NewCompiler without a vocabulary: %v, want CodeInvalidConfig", err)
	}
	if _, err := NewCompiler(CompilerConfig{Vocab: testVocab(t), Format: "xml"}); !errors.As(err, &e) || e.Code != CodeUnknownFormat {
		t.Errorf("NewCompiler(xml): %v, want CodeUnknownFormat", err)
	}
}

func TestCompile(t *testing.T) {
	ctx := context.Background()
	c := newCompiler(t, FormatHermes)
	free, err := c.Compile(ctx, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if free.Constrained() || free.Calls() || free.NewMatcher() != nil {
		t.Errorf("Compile(Spec{}): constrained %v, calls %v, matcher %v; want none", free.Constrained(), free.Calls(), free.NewMatcher())
	}
	if n, err := free.MinTokens(); n != 0 || err != nil {
		t.Errorf("unconstrained MinTokens() = %d, %v; want 0, nil", n, err)
	}
	spec := Spec{Tools: twoTools, ToolMode: ToolRequired, Parallel: true}
	t1, err := c.Compile(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !t1.Constrained() || !t1.Calls() || t1.NewMatcher() == nil {
		t.Fatalf("Compile(required): constrained %v, calls %v", t1.Constrained(), t1.Calls())
	}
	// The second compile of the same spec is a cache hit: the same
	// automaton.
	t2, err := c.Compile(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if t1.cons != t2.cons || c.cache.Stats().Hits != 1 {
		t.Errorf("second Compile: same constraint %v, cache %+v; want the cached one", t1.cons == t2.cons, c.cache.Stats())
	}
	if _, err := c.Compile(ctx, Spec{Tools: twoTools, ToolMode: ToolNamed, ToolName: "nope"}); err == nil {
		t.Errorf("Compile(named function not among the tools) = nil error")
	}
	lenient, err := c.Compile(ctx, Spec{Output: Output{Kind: OutputJSONSchema, Schema: json.RawMessage(`{"type":"array","uniqueItems":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if u := lenient.Unenforced(); len(u) != 1 || u[0].Keyword != "uniqueItems" {
		t.Errorf("Unenforced() = %+v, want uniqueItems", u)
	}
}

// TestTurnParserCleans: a turn without calls reads everything as content,
// with the format's special markers and stray bytes removed; a turn with
// calls parses them.
func TestTurnParserCleans(t *testing.T) {
	ctx := context.Background()
	c := newCompiler(t, FormatMistral)
	free, err := c.Compile(ctx, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	p := free.NewParser()
	ev := append(p.Feed("a\xff[TOOL_CALLS]b\xfe"), p.Feed("\xff[TOOL_CALLS]")...)
	ev = append(ev, p.Close()...)
	if want := []Event{{Kind: EventContent, Text: "ab"}}; !reflect.DeepEqual(ev, want) {
		t.Errorf("free turn events = %+v, want %+v", ev, want)
	}
	calls, err := c.Compile(ctx, Spec{Tools: twoTools, ToolMode: ToolAuto, Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	p = calls.NewParser()
	ev = append(p.Feed("ok\xff[TOOL_CALLS]["+mCallT+"]"), p.Close()...)
	content, cs := Merge(ev)
	if content != "ok" || len(cs) != 1 || cs[0].Name != "get_time" || cs[0].Arguments != `{"tz": "UTC"}` {
		t.Errorf("auto turn: content %q calls %+v", content, cs)
	}
}

func TestCheckBudget(t *testing.T) {
	c := newCompiler(t, FormatHermes)
	tn, err := c.Compile(context.Background(), Spec{Output: Output{Kind: OutputRegex, Regex: "[0-9]{6}"}})
	if err != nil {
		t.Fatal(err)
	}
	need, err := tn.MinTokens()
	if err != nil || need != 6 {
		t.Fatalf("MinTokens([0-9]{6}) = %d, %v; want 6 (one digit a token)", need, err)
	}
	tests := []struct {
		name  string
		b     Budget
		code  ErrorCode
		param string
	}{
		{"fits", Budget{MaxTokens: 6, Prompt: 10, Context: 100}, 0, ""},
		{"no limit", Budget{Prompt: 10, Context: 100}, 0, ""},
		{"max tokens", Budget{MaxTokens: 5, Prompt: 10, Context: 100, MaxTokensParam: "max_tokens", PromptParam: "messages"}, CodeMaxTokensTooSmall, "max_tokens"},
		{"context", Budget{Prompt: 95, Context: 100, MaxTokensParam: "max_tokens", PromptParam: "prompt"}, CodeContextTooSmall, "prompt"},
		// The context leaves less than max_tokens: the context is at fault.
		{"context under max tokens", Budget{MaxTokens: 5, Prompt: 97, Context: 100, MaxTokensParam: "max_tokens", PromptParam: "prompt"}, CodeContextTooSmall, "prompt"},
	}
	for _, tt := range tests {
		err := tn.CheckBudget(tt.b)
		if tt.code == 0 {
			if err != nil {
				t.Errorf("%s: CheckBudget(%+v) = %v, want nil", tt.name, tt.b, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Param != tt.param || !strings.Contains(e.Msg, "takes 6") {
			t.Errorf("%s: CheckBudget(%+v) = %v, want %v at %q saying it takes 6", tt.name, tt.b, err, tt.code, tt.param)
		}
	}
	// A vocabulary without the byte "b" cannot complete the regex b.
	v, err := NewVocab(VocabConfig{Tokens: [][]byte{[]byte("a"), []byte("\xff<eos>")}, Special: []bool{false, true}, EOS: []TokenID{1}, Width: 2})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := NewCompiler(CompilerConfig{Vocab: v, Format: FormatHermes})
	if err != nil {
		t.Fatal(err)
	}
	unclosable, err := cb.Compile(context.Background(), Spec{Output: Output{Kind: OutputRegex, Regex: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := unclosable.CheckBudget(Budget{Context: 100}); !errors.As(err, &e) || e.Code != CodeUnsatisfiable {
		t.Errorf("CheckBudget of a constraint no token sequence completes = %v, want CodeUnsatisfiable", err)
	}
}

func TestReasonOf(t *testing.T) {
	tests := []struct {
		f     runner.FinishReason
		calls int
		want  FinishReason
	}{
		{runner.FinishEOS, 0, FinishEnd},
		{runner.FinishConstraint, 0, FinishEnd},
		{runner.FinishStop, 0, FinishStopSequence},
		{runner.FinishEOS, 1, FinishToolCalls},
		{runner.FinishStop, 2, FinishToolCalls},
		{runner.FinishLength, 1, FinishLength},
		{runner.FinishContext, 0, FinishContext},
		{runner.FinishError, 0, ""},
		{runner.FinishCancelled, 1, ""},
	}
	for _, tt := range tests {
		if got := ReasonOf(tt.f, tt.calls); got != tt.want {
			t.Errorf("ReasonOf(%q, %d) = %q, want %q", tt.f, tt.calls, got, tt.want)
		}
	}
}

func TestMessage(t *testing.T) {
	fin := &Finish{Reason: FinishToolCalls, Calls: 1}
	var m Message
	for _, e := range []Event{
		{Kind: EventReasoning, Text: "think"},
		{Kind: EventContent, Text: "a"},
		{Kind: EventCallStart, Index: 0, Name: "f"},
		{Kind: EventCallArgs, Index: 0, Text: `{"x": `},
		{Kind: EventContent, Text: "b"},
		{Kind: EventCallArgs, Index: 0, Text: `1}`},
		{Kind: EventCallEnd, Index: 0},
		{Kind: EventFinish, Finish: fin},
	} {
		m.Add(e)
	}
	if m.Content() != "ab" || m.Reasoning() != "think" || !reflect.DeepEqual(m.Calls, []Call{{"f", `{"x": 1}`}}) || m.Finish != fin {
		t.Errorf("Message = content %q reasoning %q calls %+v finish %+v", m.Content(), m.Reasoning(), m.Calls, m.Finish)
	}
	if got := EventCallArgs.String(); got != "call_args" {
		t.Errorf("EventCallArgs.String() = %q", got)
	}
}

func TestSumUsage(t *testing.T) {
	u := func(p, c, cached int) *runner.Usage {
		return &runner.Usage{PromptTokens: p, CompletionTokens: c, CachedTokens: cached, ForcedTokens: 1}
	}
	tests := []struct {
		name string
		us   []*runner.Usage
		per  int
		want runner.Usage
	}{
		{"one prompt, two choices", []*runner.Usage{u(10, 3, 0), u(10, 5, 9)}, 2, runner.Usage{PromptTokens: 10, CompletionTokens: 8, ForcedTokens: 2}},
		// Two prompts of two choices: each prompt counts once.
		{"two prompts", []*runner.Usage{u(10, 1, 2), u(10, 1, 9), u(7, 1, 0), u(7, 1, 6)}, 2, runner.Usage{PromptTokens: 17, CompletionTokens: 4, CachedTokens: 2, ForcedTokens: 4}},
		{"one choice each", []*runner.Usage{u(4, 1, 0), u(6, 2, 0)}, 1, runner.Usage{PromptTokens: 10, CompletionTokens: 3, ForcedTokens: 2}},
		// A prompt whose first choice reported nothing counts from the next.
		{"first choice missing", []*runner.Usage{nil, u(10, 5, 1)}, 2, runner.Usage{PromptTokens: 10, CompletionTokens: 5, CachedTokens: 1, ForcedTokens: 1}},
		{"none", nil, 0, runner.Usage{}},
	}
	for _, tt := range tests {
		if got := SumUsage(tt.us, tt.per); got != tt.want {
			t.Errorf("%s: SumUsage = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
