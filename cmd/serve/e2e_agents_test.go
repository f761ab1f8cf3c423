//go:build cgo

package main

// End-to-end runs of the Messages and Responses APIs: the real server on a
// loopback port with the --demo model through llama.cpp, driven by the
// official SDKs (anthropic-sdk-go/v2, openai-go/v3 Responses) with 200
// randomized requests each at temperature 1, half of them streamed, under
// both tool-call formats of the demo templates. Every tool input,
// function-call arguments and JSON answer that completed validates against
// its schema.

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const e2eAgentRequests = 200

// e2eCount tallies one randomized run.
type e2eCount struct {
	mu                        sync.Mutex
	requests, complete, calls int
	answers                   int // JSON answers validated
	thoughts                  int // answers with reasoning
}

func (c *e2eCount) log(t *testing.T, api string, start time.Time) {
	t.Logf("%s: %d requests in %s: %d complete, %d calls and %d JSON answers validated, %d with reasoning", api, c.requests, time.Since(start).Round(time.Millisecond), c.complete, c.calls, c.answers, c.thoughts)
	if strings.HasSuffix(api, "/think") && c.thoughts == 0 {
		t.Errorf("%s: no answer carried reasoning", api)
	}
	// The floor only keeps the run from being vacuous (what is checked is
	// that every completed call and answer validates). Under the thinking
	// template the reasoning takes 24 or more of the 64–127 tokens, so
	// fewer turns complete: messages/think validated 21, 28, 31 and 29 of
	// 100 in four runs (2026-12-02), against 43–52 for the other servers;
	// its floor is an eighth.
	floor := c.requests / 4
	if strings.HasSuffix(api, "/think") {
		floor = c.requests / 8
	}
	if c.calls+c.answers < floor {
		t.Errorf("%s: only %d calls and %d answers validated across %d requests (floor %d)", api, c.calls, c.answers, c.requests, floor)
	}
}

// runRandom runs n requests, four at a time, each with its own rng.
func runRandom(n int, f func(i int, rng *rand.Rand)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i, rand.New(rand.NewPCG(uint64(i), 7)))
		}()
	}
	wg.Wait()
}

func e2eAnthTools() []anthropic.ToolUnionParam {
	var w, tm anthropic.ToolInputSchemaParam
	b, _ := json.Marshal(e2eWeather)
	_ = json.Unmarshal(b, &w)
	b, _ = json.Marshal(e2eTime)
	_ = json.Unmarshal(b, &tm)
	return []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("weather"), InputSchema: w, Strict: anthropic.Bool(true)}},
		{OfTool: &anthropic.ToolParam{Name: "get_time", InputSchema: tm}},
	}
}

func validateCall(t *testing.T, schemas map[string]*jsonschema.Schema, i int, name, args string) {
	t.Helper()
	sch := schemas[name]
	if sch == nil {
		t.Errorf("request %d: call of %q", i, name)
		return
	}
	validate(t, sch, args)
}

// e2eAgentServers are the servers the agent APIs' random tests run
// against: the demo model with its hermes template, with Llama 3.1's
// template (llama3_json calls), and with a thinking template under a
// reasoning budget of 24 tokens.
func e2eAgentServers(t *testing.T) []struct {
	name string
	args []string
} {
	return []struct {
		name string
		args []string
	}{{"hermes", nil}, {"llama3_json", []string{"--chat-template", writeTemplate(t, llama31Template)}},
		{"think", []string{"--chat-template", writeTemplate(t, thinkTemplate), "--reasoning-budget", "24"}}}
}

func TestE2EMessagesRandom(t *testing.T) {
	for _, tc := range e2eAgentServers(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := startE2E(t, tc.args...)
			cl := anthropic.NewClient(aoption.WithBaseURL(s.url), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
			schemas := e2eSchemas(t)
			// The SDK's params have no temperature field: it goes as JSON.
			temp1 := aoption.WithJSONSet("temperature", 1)
			var c e2eCount
			start := time.Now()
			runRandom(e2eAgentRequests/2, func(i int, rng *rand.Rand) {
				p := anthropic.MessageNewParams{Model: "demo", MaxTokens: int64(64 + rng.IntN(64)), Tools: e2eAnthTools(),
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Call a tool."))}}
				switch rng.IntN(4) {
				case 0:
					p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: anthropic.Bool(rng.IntN(2) == 0)}}
				case 1:
					p.ToolChoice = anthropic.ToolChoiceParamOfTool([]string{"get_weather", "get_time"}[rng.IntN(2)])
				case 2:
					p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
				case 3:
					p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
				}
				msg, err := anthSend(cl, p, rng.IntN(2) == 0, temp1)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				c.requests++
				for _, b := range msg.Content {
					if b.Type == "thinking" {
						c.thoughts++
					}
					if strings.Contains(b.Text+b.Thinking, "think>") {
						t.Errorf("request %d: markup in a %s block: %q", i, b.Type, b.Text+b.Thinking)
					}
				}
				if msg.StopReason == "max_tokens" {
					return
				}
				c.complete++
				for _, b := range msg.Content {
					if b.Type == "tool_use" {
						c.calls++
						validateCall(t, schemas, i, b.Name, string(b.Input))
					}
				}
				if p.ToolChoice.OfAny != nil || p.ToolChoice.OfTool != nil {
					if msg.StopReason != "tool_use" {
						t.Errorf("request %d: tool_choice forces a call, stop_reason %q", i, msg.StopReason)
					}
				}
			})
			c.log(t, "messages/"+tc.name, start)
		})
	}
}

func TestE2EResponsesRandom(t *testing.T) {
	for _, tc := range e2eAgentServers(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := startE2E(t, tc.args...)
			cl := s.client
			schemas := e2eSchemas(t)
			weather := compileSchema(t, mustJSON(e2eWeather))
			var c e2eCount
			start := time.Now()
			runRandom(e2eAgentRequests/2, func(i int, rng *rand.Rand) {
				p := responses.ResponseNewParams{Model: "demo", MaxOutputTokens: openai.Int(int64(64 + rng.IntN(64))), Temperature: openai.Float(1),
					Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Call a tool.")}}
				tools := []responses.ToolUnionParam{
					{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: e2eWeather, Strict: openai.Bool(true)}},
					{OfFunction: &responses.FunctionToolParam{Name: "get_time", Parameters: e2eTime, Strict: openai.Bool(false)}},
				}
				mode := rng.IntN(5)
				forced := false
				switch mode {
				case 0:
					p.Tools, forced = tools, true
					p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}
					p.ParallelToolCalls = openai.Bool(rng.IntN(2) == 0)
				case 1:
					p.Tools, forced = tools, true
					p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: []string{"get_weather", "get_time"}[rng.IntN(2)]}}
				case 2:
					p.Tools, forced = tools, true
					p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfAllowedTools: &responses.ToolChoiceAllowedParam{Mode: responses.ToolChoiceAllowedModeRequired,
						Tools: []map[string]any{{"type": "function", "name": "get_time"}}}}
				case 3:
					p.Tools = tools
					p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsAuto)}
				case 4:
					f := responses.ResponseFormatTextConfigParamOfJSONSchema("weather", e2eWeather)
					f.OfJSONSchema.Strict = openai.Bool(true)
					p.Text = responses.ResponseTextConfigParam{Format: f}
				}
				r := respSend(t, cl, p, rng.IntN(2) == 0)
				if r == nil {
					return
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				c.requests++
				// --reasoning-budget 24 bounds the block's text; reasoning_tokens
				// counts the markers too. Under random weights each marker may
				// be written a byte a token: <think> at most 7 tokens, then 24
				// of text, up to 3 finishing a character the budget cut, and
				// </think> within its length + 3 (turn/reasoning_guide.go).
				if rt, most := r.Usage.OutputTokensDetails.ReasoningTokens, int64(len("<think>")+24+3+len("</think>")+3); rt > most {
					t.Errorf("request %d: %d reasoning tokens, over the budget of 24 (at most %d with the markers)", i, rt, most)
				}
				for _, it := range r.Output {
					if it.Type == "reasoning" {
						c.thoughts++
					}
					if strings.Contains(it.RawJSON(), "think>") {
						t.Errorf("request %d: markup in a %s item: %s", i, it.Type, it.RawJSON())
					}
				}
				if r.Status != "completed" {
					if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
						t.Errorf("request %d: status %q %+v", i, r.Status, r.IncompleteDetails)
					}
					return
				}
				c.complete++
				var text strings.Builder
				calls := 0
				for _, it := range r.Output {
					switch it.Type {
					case "function_call":
						calls++
						c.calls++
						validateCall(t, schemas, i, it.Name, it.Arguments.OfString)
						if mode == 2 && it.Name != "get_time" {
							t.Errorf("request %d: allowed_tools get_time, called %q", i, it.Name)
						}
					case "message":
						text.WriteString(it.Content[0].Text)
					}
				}
				if forced && calls == 0 {
					t.Errorf("request %d: tool_choice forces a call, none made", i)
				}
				if mode == 4 {
					c.answers++
					validate(t, weather, text.String())
				}
			})
			c.log(t, "responses/"+tc.name, start)
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestE2EClaudeCodeShape replays Claude Code's request shape (24 tool
// schemas, no tool_choice, streamed) on the demo model through llama.cpp:
// every request ends normally (no closing search may fail it, however
// large the automaton of 24 tools) and every tool_use input validates,
// those of turns cut by max_tokens included.
func TestE2EClaudeCodeShape(t *testing.T) {
	s := startE2E(t, "--ctx-size", "32768", "--parallel", "2")
	tools, schemas := agentTools(t)
	cl := anthropic.NewClient(aoption.WithBaseURL(s.url), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	var defs []anthropic.ToolUnionParam
	for _, tl := range tools {
		var in anthropic.ToolInputSchemaParam
		b, _ := json.Marshal(tl["input_schema"])
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: tl["name"].(string), Description: anthropic.String(tl["description"].(string)), InputSchema: in}})
	}
	var mu sync.Mutex
	calls, done := 0, 0
	start := time.Now()
	runRandom(10, func(i int, rng *rand.Rand) {
		p := anthropic.MessageNewParams{Model: "demo", MaxTokens: 200, Tools: defs,
			System:   []anthropic.TextBlockParam{{Text: "You are Claude Code.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("list the files"))}}
		if rng.IntN(4) != 0 {
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		}
		msg, err := anthSend(cl, p, true, aoption.WithJSONSet("temperature", 1), aoption.WithJSONSet("thinking", map[string]any{"type": "adaptive"}))
		if err != nil {
			t.Errorf("request %d: %v", i, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		// Even a turn cut by max_tokens is complete (the budget closes
		// the output in time): every input validates.
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				calls++
				sch := schemas[b.Name]
				if sch == nil {
					t.Errorf("request %d: tool_use of %q", i, b.Name)
					continue
				}
				validate(t, sch, string(b.Input))
			}
		}
	})
	t.Logf("%d requests in %s, %d tool inputs validated", done, time.Since(start).Round(time.Millisecond), calls)
}
