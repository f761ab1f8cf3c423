package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/templates"
	"conform/turn"
)

// thinkTemplate is ChatML with Qwen3's reasoning conventions: earlier
// reasoning rendered from reasoning_content, and enable_thinking false
// closing an empty block in the generation prompt.
const thinkTemplate = `{%- for message in messages %}<|im_start|>{{ message.role }}
{% if message.role == 'assistant' and message.reasoning_content %}<think>
{{ message.reasoning_content }}
</think>

{% endif %}{{ message.content }}<|im_end|>
{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% if enable_thinking is defined and not enable_thinking %}<think>

</think>

{% endif %}{% if reasoning_effort is defined %}{% endif %}{% endif %}`

// openedTemplate opens the block in the generation prompt, as
// DeepSeek-R1-Distill's template does.
const openedTemplate = `{%- for message in messages %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
<think>
{% endif %}`

const cityParams = `{"type":"object","properties":{"city":{"type":"string","maxLength":10}},"required":["city"],"additionalProperties":false}`

func cityFormat() map[string]any {
	return map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "city", "strict": true, "schema": json.RawMessage(cityParams)}}
}

// cityChat posts a chat request for cityFormat's JSON with seed and the
// extra fields, and checks that the content validates against sch. ok is
// false when max_tokens cut the answer before any content.
func cityChat(t *testing.T, ts *testServer, sch *jsonschema.Schema, seed int, extra map[string]any) (r ChatResponse, out []byte, ok bool) {
	t.Helper()
	body := chatBody(map[string]any{"response_format": cityFormat(), "seed": seed, "max_tokens": 200})
	for k, v := range extra {
		body[k] = v
	}
	resp, out := ts.post(t, "/v1/chat/completions", body)
	r = decodeChat(t, resp.StatusCode, out)
	msg := r.Choices[0].Message
	if r.Choices[0].FinishReason == "length" && msg.Content == nil {
		return r, out, false
	}
	if msg.Content == nil {
		t.Fatalf("seed %d: no content: %s", seed, out)
	}
	validate(t, sch, *msg.Content)
	return r, out, true
}

// TestChatReasoning: reasoning_content comes with the answer when the
// model thinks, bounded by the budget the request or the server sets,
// never when thinking is off (by chat_template_kwargs, a budget of 0,
// effort none, a template that closed the block, or --reasoning-format
// none); the content validates either way and holds no markup, and the
// usage reports the reasoning tokens.
func TestChatReasoning(t *testing.T) {
	sch := compileSchema(t, cityParams)
	tests := []struct {
		name    string
		cfg     Config
		tmpl    string
		extra   map[string]any
		think   bool
		maxReas int // most reasoning tokens: the markers' bytes (7 + 8 one-byte tokens here), the budget, a cut character
	}{
		{name: "default: thinks within max_tokens", tmpl: thinkTemplate, think: true, maxReas: 200},
		{name: "thinking_token_budget", tmpl: thinkTemplate, extra: map[string]any{"thinking_token_budget": 5}, think: true, maxReas: 15 + 5 + 3},
		{name: "server budget", cfg: Config{ReasoningBudget: 3}, tmpl: thinkTemplate, think: true, maxReas: 15 + 3 + 3},
		{name: "reasoning_effort low", tmpl: thinkTemplate, extra: map[string]any{"reasoning_effort": "low"}, think: true, maxReas: 200},
		{name: "budget from the prompt opened by the template", tmpl: openedTemplate, extra: map[string]any{"thinking_token_budget": 4}, think: true, maxReas: 8 + 4 + 3},
		{name: "enable_thinking false", tmpl: thinkTemplate, extra: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}},
		{name: "budget 0", tmpl: thinkTemplate, extra: map[string]any{"thinking_token_budget": 0}},
		{name: "effort none", tmpl: thinkTemplate, extra: map[string]any{"reasoning_effort": "none"}},
		{name: "opened, budget 0: closed at once", tmpl: openedTemplate, extra: map[string]any{"thinking_token_budget": 0}},
		{name: "format none", cfg: Config{ReasoningFormat: "none"}, tmpl: thinkTemplate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.ReasoningBudget == 0 {
				cfg.ReasoningBudget = turn.NoBudget
			}
			ts := newTestServer(t, cfg, tt.tmpl)
			if cfg.ReasoningFormat == "none" {
				ts.model.Reasoning = turn.ReasoningNone
			}
			for seed := 0; seed < 4; seed++ {
				r, out, ok := cityChat(t, ts, sch, seed, tt.extra)
				if !ok {
					continue
				}
				msg := r.Choices[0].Message
				reas := 0
				if d := r.Usage.CompletionTokensDetails; d != nil {
					reas = d.ReasoningTokens
				}
				if !tt.think {
					// A block the prompt opened is still closed: its
					// marker (8 one-byte tokens here) is all it costs.
					if msg.ReasoningContent != nil || reas > 8 {
						t.Errorf("seed %d: thinking off, got reasoning %v and %d reasoning tokens: %s", seed, msg.ReasoningContent != nil, reas, out)
					}
					continue
				}
				if msg.ReasoningContent == nil || reas == 0 {
					t.Errorf("seed %d: no reasoning (%d tokens): %s", seed, reas, out)
					continue
				}
				if reas > tt.maxReas || reas > r.Usage.CompletionTokens {
					t.Errorf("seed %d: %d reasoning tokens of %d, want at most %d", seed, reas, r.Usage.CompletionTokens, tt.maxReas)
				}
				for _, mk := range []string{"<think>", "</think>", "\xff"} {
					if strings.Contains(*msg.ReasoningContent, mk) || strings.HasPrefix(*msg.Content, mk) {
						t.Errorf("seed %d: markup %q in reasoning %q or content %q", seed, mk, *msg.ReasoningContent, *msg.Content)
					}
				}
			}
		})
	}
}

// TestChatReasoningStream: streamed reasoning comes as
// delta.reasoning_content, all of it before the first content delta, and
// the content deltas join into an answer that validates.
func TestChatReasoningStream(t *testing.T) {
	ts := newTestServer(t, Config{ReasoningBudget: turn.NoBudget}, thinkTemplate)
	sch := compileSchema(t, cityParams)
	for seed := 0; seed < 4; seed++ {
		resp, body := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"response_format": cityFormat(), "stream": true,
			"stream_options": map[string]any{"include_usage": true}, "seed": seed, "max_tokens": 150, "thinking_token_budget": 12}))
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		evs := sseEvents(t, body)
		var reasoning, content strings.Builder
		finish := ""
		for _, e := range evs[:len(evs)-1] {
			var ck ChatChunk
			if err := json.Unmarshal([]byte(e), &ck); err != nil {
				t.Fatalf("chunk %s: %v", e, err)
			}
			if ck.Usage != nil {
				if d := ck.Usage.CompletionTokensDetails; d == nil || d.ReasoningTokens == 0 {
					t.Errorf("seed %d: usage chunk without reasoning tokens: %s", seed, e)
				}
				continue
			}
			d := ck.Choices[0].Delta
			if d.ReasoningContent != nil {
				if content.Len() > 0 {
					t.Errorf("seed %d: reasoning delta %q after content %q", seed, *d.ReasoningContent, content.String())
				}
				reasoning.WriteString(*d.ReasoningContent)
			}
			if d.Content != nil {
				content.WriteString(*d.Content)
			}
			if f := ck.Choices[0].FinishReason; f != nil {
				finish = *f
			}
		}
		if finish == "length" {
			continue
		}
		if reasoning.Len() == 0 || strings.Contains(reasoning.String(), "think>") {
			t.Errorf("seed %d: reasoning %q", seed, reasoning.String())
		}
		validate(t, sch, content.String())
	}
}

// TestThinkingOf: the reasoning fields of a chat request as template
// variables and thinking settings, and the refusals naming the field.
func TestThinkingOf(t *testing.T) {
	intp := func(n int) *int { return &n }
	strp := func(s string) *string { return &s }
	tests := []struct {
		name    string
		kwargs  string
		effort  *string
		budget  *int
		want    chatThinking
		vars    string // the variables, as JSON
		errPara string
	}{
		{name: "nothing", vars: "null"},
		{name: "kwargs passed", kwargs: `{"enable_thinking": true, "custom": {"a": [1]}}`, vars: `{"custom":{"a":[1]},"enable_thinking":true}`},
		{name: "enable_thinking false", kwargs: `{"enable_thinking": false}`, want: chatThinking{Off: true}, vars: `{"enable_thinking":false}`},
		{name: "thinking false", kwargs: `{"thinking": false}`, want: chatThinking{Off: true}, vars: `{"thinking":false}`},
		{name: "effort", effort: strp("medium"), want: chatThinking{Budget: intp(4096)}, vars: `{"reasoning_effort":"medium"}`},
		{name: "effort in kwargs wins as a variable", kwargs: `{"reasoning_effort": "max"}`, effort: strp("high"), want: chatThinking{Budget: intp(16384)}, vars: `{"reasoning_effort":"max"}`},
		{name: "budget wins over effort", effort: strp("low"), budget: intp(7), want: chatThinking{Budget: intp(7)}, vars: `{"reasoning_effort":"low"}`},
		{name: "budget 0 is off", budget: intp(0), want: chatThinking{Off: true, Budget: intp(0)}, vars: "null"},
		{name: "budget -1", budget: intp(-1), want: chatThinking{Budget: intp(-1)}, vars: "null"},
		{name: "bad effort", effort: strp("extreme"), errPara: "reasoning_effort"},
		{name: "bad budget", budget: intp(-2), errPara: "thinking_token_budget"},
		{name: "reserved variable", kwargs: `{"messages": []}`, errPara: "chat_template_kwargs.messages"},
	}
	for _, tt := range tests {
		var kw map[string]json.RawMessage
		if tt.kwargs != "" {
			if err := json.Unmarshal([]byte(tt.kwargs), &kw); err != nil {
				t.Fatal(err)
			}
		}
		th, vars, err := thinkingOf(kw, tt.effort, tt.budget)
		if tt.errPara != "" {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != tt.errPara {
				t.Errorf("%s: error %v, want a 400 naming %s", tt.name, err, tt.errPara)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: error %v", tt.name, err)
			continue
		}
		if th.Off != tt.want.Off || (th.Budget == nil) != (tt.want.Budget == nil) || th.Budget != nil && *th.Budget != *tt.want.Budget {
			t.Errorf("%s: thinking %+v, want %+v", tt.name, th, tt.want)
		}
		got := "null"
		if vars != nil {
			d := templates.NewDict()
			for _, k := range []string{"custom", "enable_thinking", "reasoning_effort", "thinking"} {
				if v, ok := vars[k]; ok {
					d.SetStr(k, v)
				}
			}
			got = valueJSON(t, d)
		}
		if got != tt.vars {
			t.Errorf("%s: variables %s, want %s", tt.name, got, tt.vars)
		}
	}
	// enable_thinking follows the request for a reasoning model, unless
	// the request set it.
	for _, tt := range []struct {
		th   chatThinking
		vars map[string]templates.Value
		f    turn.ReasoningFormat
		want templates.Value // nil: unset
	}{
		{chatThinking{}, nil, turn.ReasoningThink, templates.Bool(true)},
		{chatThinking{Off: true}, map[string]templates.Value{"x": templates.Str("y")}, turn.ReasoningThink, templates.Bool(false)},
		{chatThinking{Off: true}, map[string]templates.Value{"enable_thinking": templates.Bool(true)}, turn.ReasoningThink, templates.Bool(true)},
		{chatThinking{Off: true}, nil, turn.ReasoningNone, nil},
	} {
		got := tt.th.templateVars(tt.vars, tt.f)["enable_thinking"]
		if got != tt.want {
			t.Errorf("%+v.templateVars(%v, %s)[enable_thinking] = %v, want %v", tt.th, tt.vars, tt.f, got, tt.want)
		}
	}
	// The chat converter reads them.
	j, err := FromChatRequest(&ChatRequest{Messages: []ChatMessage{{Role: "user", Content: json.RawMessage(`"hi"`)}}, ThinkingTokenBudget: intp(9)}, Limits{})
	if err != nil || j.Thinking.Budget == nil || *j.Thinking.Budget != 9 {
		t.Errorf("FromChatRequest(thinking_token_budget 9) = %+v, %v", j, err)
	}
}

// TestReasoningOfPrompt: the turn's reasoning settings from the request's
// and the server's, and the rendered prompt's tail.
func TestReasoningOfPrompt(t *testing.T) {
	five := 5
	tests := []struct {
		th     chatThinking
		prompt string
		want   turn.Reasoning
	}{
		{chatThinking{}, "<|im_start|>assistant\n", turn.Reasoning{Format: turn.ReasoningThink, Enabled: true, Budget: 100}},
		{chatThinking{Budget: &five}, "assistant\n<think>\n", turn.Reasoning{Format: turn.ReasoningThink, Enabled: true, Budget: 5, Prompt: turn.PromptOpened}},
		{chatThinking{Off: true}, "assistant\n<think>\n\n</think>\n\n", turn.Reasoning{Format: turn.ReasoningThink, Budget: 100, Prompt: turn.PromptClosed}},
	}
	for _, tt := range tests {
		if got := tt.th.reasoning(turn.ReasoningThink, 100, tt.prompt); got != tt.want {
			t.Errorf("%+v.reasoning(%q) = %+v, want %+v", tt.th, tt.prompt, got, tt.want)
		}
	}
}

// TestTemplateReasoningContent: an assistant message's reasoning_content
// reaches the template (also as thinking, which gpt-oss's reads); on
// another role it is refused.
func TestTemplateReasoningContent(t *testing.T) {
	v, err := templateMessages([]ChatMessage{{Role: "user", Content: json.RawMessage(`"q"`)}, {Role: "assistant", Content: json.RawMessage(`"a"`), ReasoningContent: "because"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":"q"},{"role":"assistant","content":"a","reasoning_content":"because","thinking":"because"}]`
	if got := valueJSON(t, v); got != want {
		t.Errorf("template messages %s, want %s", got, want)
	}
	tmpl, err := templates.Parse(thinkTemplate)
	if err != nil {
		t.Fatal(err)
	}
	text, err := tmpl.Render(templates.Vars{Messages: v, AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "<think>\nbecause\n</think>\n\na<|im_end|>") {
		t.Errorf("rendered %q: no earlier reasoning", text)
	}
	_, err = templateMessages([]ChatMessage{{Role: "user", Content: json.RawMessage(`"q"`), ReasoningContent: "x"}})
	var ae *apiError
	if !errors.As(err, &ae) || ae.Param != "messages[0].reasoning_content" {
		t.Errorf("user reasoning_content: %v, want a 400 naming it", err)
	}
}

func TestPickReasoning(t *testing.T) {
	for _, tt := range []struct {
		flag, template string
		want           turn.ReasoningFormat
		source         string
	}{
		{"auto", thinkTemplate, turn.ReasoningThink, "detected"},
		{"", DemoTemplate, turn.ReasoningNone, "default"},
		{"none", thinkTemplate, turn.ReasoningNone, "flag"},
		{"think", DemoTemplate, turn.ReasoningThink, "flag"},
		{"harmony", DemoTemplate, turn.ReasoningHarmony, "flag"},
	} {
		f, src, err := pickReasoning(tt.flag, tt.template)
		if err != nil || f != tt.want || src != tt.source {
			t.Errorf("pickReasoning(%q) = %q, %q, %v; want %q, %q", tt.flag, f, src, err, tt.want, tt.source)
		}
	}
	if _, _, err := pickReasoning("bogus", ""); err == nil {
		t.Errorf("pickReasoning(bogus) = nil error")
	}
	for _, args := range [][]string{{"--reasoning-format", "bogus"}, {"--reasoning-budget", "-2"}} {
		if _, err := ParseConfig(append([]string{"--demo"}, args...), func(string) string { return "" }, nil); err == nil {
			t.Errorf("ParseConfig(%v) = nil error", args)
		}
	}
	c, err := ParseConfig([]string{"--demo", "--reasoning-format", "think", "--reasoning-budget", "64"}, func(string) string { return "" }, nil)
	if err != nil || c.ReasoningFormat != "think" || c.ReasoningBudget != 64 {
		t.Errorf("ParseConfig(think, 64) = %+v, %v", c, err)
	}
	if c, _ := ParseConfig([]string{"--demo"}, func(string) string { return "" }, nil); c.ReasoningFormat != "auto" || c.ReasoningBudget != -1 {
		t.Errorf("defaults: --reasoning-format %q --reasoning-budget %d, want auto -1", c.ReasoningFormat, c.ReasoningBudget)
	}
}
