package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"conform/internal/sharedtest"
	"conform/templates"
	"conform/tokenizer"
	"conform/turn"
)

// harmonyMarkers are gpt-oss's special tokens (o200k_harmony's).
var harmonyMarkers = []string{"<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>", "<|message|>", "<|call|>"}

// harmonyVocab is fakeVocab's bytes and words with gpt-oss's specials;
// EOS <|return|> and <|call|>, as package tokenizer reads a gpt-oss GGUF.
func harmonyVocab() *tokenizer.Vocabulary {
	v := &tokenizer.Vocabulary{BOS: tokenizer.NoToken, Name: "fake-harmony"}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, []byte{byte(b)})
	}
	for _, w := range []string{"analysis", "final", "commentary", "assistant", " to=functions.", "get_weather", "city", " the", "Paris", `": "`, `"}`, "json"} {
		v.Tokens = append(v.Tokens, []byte(w))
	}
	v.Special = make([]bool, len(v.Tokens))
	for _, mk := range harmonyMarkers {
		if mk == "<|return|>" || mk == "<|call|>" {
			v.EOS = append(v.EOS, tokenizer.TokenID(len(v.Tokens)))
		}
		v.Tokens = append(v.Tokens, append([]byte{tokenizer.SpecialPrefix}, mk...))
		v.Special = append(v.Special, true)
	}
	v.Width = len(v.Tokens) + 6
	return v
}

// newHarmonyServer is newTestServer over the harmony vocabulary and
// gpt-oss's own chat template (read from ../shared; skipped without it):
// the formats are what the server detects from that template.
func newHarmonyServer(t *testing.T) *testServer {
	t.Helper()
	src, err := os.ReadFile(sharedtest.Path(t, "templates", "openai-gpt-oss-120b.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServerOf(t, Config{ReasoningBudget: turn.NoBudget}, string(src), harmonyVocab(), rand.New(rand.NewPCG(3, 4)))
	if m := ts.model; m.Reasoning != turn.ReasoningHarmony || m.Format != turn.FormatHarmony {
		t.Fatalf("gpt-oss template: reasoning %q, tool calls %q; want harmony, harmony", m.Reasoning, m.Format)
	}
	return ts
}

// noHarmonyMarkup fails when s holds a special token's bytes, a harmony
// marker or starts with a channel's name.
func noHarmonyMarkup(t *testing.T, what, s string) {
	t.Helper()
	if strings.IndexByte(s, 0xFF) >= 0 {
		t.Errorf("%s %q holds a special token's bytes", what, s)
	}
	for _, mk := range harmonyMarkers {
		if strings.Contains(s, mk) {
			t.Errorf("%s %q holds %s", what, s, mk)
		}
	}
	for _, ch := range []string{"analysis", "final", "commentary"} {
		if strings.HasPrefix(s, ch) {
			t.Errorf("%s %q starts with the channel name %s", what, s, ch)
		}
	}
}

// TestChatHarmony serves chat completions with gpt-oss's template on a
// fake engine: a json_schema answer comes with reasoning_content (the
// analysis channel) and content that validates, neither with markup;
// thinking off (budget 0, reasoning_effort none) still answers, with an
// empty analysis: no reasoning_content; required tools make a call whose
// arguments validate.
func TestChatHarmony(t *testing.T) {
	ts := newHarmonyServer(t)
	sch := compileSchema(t, cityParams)
	for _, tc := range []struct {
		name  string
		extra map[string]any
		think bool
	}{
		{"thinking", map[string]any{"thinking_token_budget": 12}, true},
		{"unbounded", nil, true},
		{"budget 0", map[string]any{"thinking_token_budget": 0}, false},
		{"effort none", map[string]any{"reasoning_effort": "none"}, false},
	} {
		for seed := 0; seed < 3; seed++ {
			r, out, ok := cityChat(t, ts, sch, seed, tc.extra)
			if !ok {
				continue
			}
			msg := r.Choices[0].Message
			noHarmonyMarkup(t, "content", *msg.Content)
			switch {
			case tc.think && msg.ReasoningContent == nil:
				t.Errorf("%s seed %d: no reasoning_content: %s", tc.name, seed, out)
			case !tc.think && msg.ReasoningContent != nil:
				t.Errorf("%s seed %d: thinking off, reasoning_content %q", tc.name, seed, *msg.ReasoningContent)
			case msg.ReasoningContent != nil:
				noHarmonyMarkup(t, "reasoning_content", *msg.ReasoningContent)
			}
		}
	}
	wsch := compileSchema(t, weatherParams)
	tsch := compileSchema(t, timeParams)
	calls := 0
	for seed := 0; seed < 4; seed++ {
		body := chatBody(map[string]any{"tools": testTools, "tool_choice": "required", "seed": seed, "max_tokens": 200})
		if seed%2 == 0 {
			body["thinking_token_budget"] = 12
		}
		resp, out := ts.post(t, "/v1/chat/completions", body)
		r := decodeChat(t, resp.StatusCode, out)
		msg := r.Choices[0].Message
		if r.Choices[0].FinishReason == "length" && len(msg.ToolCalls) == 0 {
			continue
		}
		if len(msg.ToolCalls) != 1 {
			t.Fatalf("seed %d: %d calls, want 1: %s", seed, len(msg.ToolCalls), out)
		}
		c := msg.ToolCalls[0]
		switch c.Function.Name {
		case "get_weather":
			validate(t, wsch, c.Function.Arguments)
		case "get_time":
			validate(t, tsch, c.Function.Arguments)
		default:
			t.Errorf("seed %d: call of %q", seed, c.Function.Name)
		}
		if msg.Content != nil {
			noHarmonyMarkup(t, "content", *msg.Content)
		}
		if msg.ReasoningContent != nil {
			noHarmonyMarkup(t, "reasoning_content", *msg.ReasoningContent)
		}
		calls++
	}
	if calls == 0 {
		t.Errorf("no request made its call")
	}
}

// TestHarmonyTemplateVars renders gpt-oss's template as chatTurn does: a
// reasoning_effort it does not know (none, minimal) is rendered as low,
// the others as they are; an earlier call message's reasoning_content is
// rendered as its analysis channel (the template reads thinking).
func TestHarmonyTemplateVars(t *testing.T) {
	src, err := os.ReadFile(sharedtest.Path(t, "templates", "openai-gpt-oss-120b.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := templates.Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	render := func(body string) string {
		t.Helper()
		var r ChatRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		j, err := FromChatRequest(&r, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		text, err := tmpl.Render(templates.Vars{Messages: j.Messages, AddGenerationPrompt: true, Extra: j.Thinking.templateVars(j.TemplateVars, turn.ReasoningHarmony)})
		if err != nil {
			t.Fatalf("render %s: %v", body, err)
		}
		return text
	}
	for _, tt := range []struct{ effort, want string }{{"none", "low"}, {"minimal", "low"}, {"low", "low"}, {"high", "high"}} {
		text := render(`{"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "` + tt.effort + `"}`)
		if !strings.Contains(text, "Reasoning: "+tt.want+"\n") {
			t.Errorf("reasoning_effort %s: prompt %q, want Reasoning: %s", tt.effort, text, tt.want)
		}
	}
	text := render(`{"messages": [{"role": "user", "content": "weather?"},
		{"role": "assistant", "content": "", "reasoning_content": "need the weather", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "sunny"}]}`)
	if want := "<|start|>assistant<|channel|>analysis<|message|>need the weather<|end|><|start|>assistant to=functions.get_weather"; !strings.Contains(text, want) {
		t.Errorf("prompt %q does not hold %q", text, want)
	}
}
