package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"conform/turn"
)

// thinkServer is a fake-engine server whose template thinks (Qwen3's
// conventions), with no server budget.
func thinkServer(t *testing.T) *testServer {
	return newTestServer(t, Config{ReasoningBudget: turn.NoBudget}, thinkTemplate)
}

// TestMessagesThinking: thinking enabled on a reasoning model answers a
// thinking block before the text, streamed as thinking_delta events the
// SDK accumulates, with the JSON answer of output_config.format valid and
// free of markup; thinking disabled answers no thinking block.
func TestMessagesThinking(t *testing.T) {
	ts := thinkServer(t)
	cl := anthClient(ts)
	var schema map[string]any
	_ = json.Unmarshal([]byte(cityParams), &schema)
	sch := compileSchema(t, cityParams)
	thought, validated := 0, 0
	for _, stream := range []bool{false, true} {
		for _, enabled := range []bool{true, false} {
			for range 4 {
				p := anthParams(func(p *anthropic.MessageNewParams) {
					p.MaxTokens = 1400
					p.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
					if enabled {
						p.Thinking = anthropic.ThinkingConfigParamOfEnabled(1024)
					} else {
						p.Thinking = anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}
					}
				})
				msg, err := anthSend(cl, p, stream)
				if err != nil {
					t.Fatal(err)
				}
				var text strings.Builder
				for k, b := range msg.Content {
					switch b.Type {
					case "thinking":
						if k != 0 || !enabled {
							t.Errorf("thinking block at %d (enabled %v)", k, enabled)
						}
						if strings.Contains(b.Thinking, "<think>") || strings.Contains(b.Thinking, "</think>") {
							t.Errorf("markup in thinking %q", b.Thinking)
						}
						thought++
					case "text":
						text.WriteString(b.Text)
					default:
						t.Errorf("block %s", b.Type)
					}
				}
				if strings.Contains(text.String(), "think>") {
					t.Errorf("markup in text %q", text.String())
				}
				if msg.StopReason == "end_turn" {
					validate(t, sch, text.String())
					validated++
				}
			}
		}
	}
	if thought == 0 || validated == 0 {
		t.Errorf("%d thinking blocks, %d answers validated", thought, validated)
	}
}

func TestMessagesThinkingErrors(t *testing.T) {
	plain := newTestServer(t, Config{}, "")
	body := map[string]any{"model": "fake", "max_tokens": 2000, "messages": []any{map[string]any{"role": "user", "content": "hi"}},
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}
	resp, out := plain.post(t, "/v1/messages", body)
	checkAnthError(t, resp, out, 400, "invalid_request_error", "reasoning model")
	ts := thinkServer(t)
	body["thinking"] = map[string]any{"type": "enabled", "budget_tokens": 100}
	resp, out = ts.post(t, "/v1/messages", body)
	checkAnthError(t, resp, out, 400, "invalid_request_error", "at least 1024")
	body["thinking"], body["max_tokens"] = map[string]any{"type": "enabled", "budget_tokens": 2000}, 2000
	resp, out = ts.post(t, "/v1/messages", body)
	checkAnthError(t, resp, out, 400, "invalid_request_error", "greater than thinking.budget_tokens")
	// Earlier thinking comes back in the history as a thinking block.
	hist := map[string]any{"model": "fake", "max_tokens": 50, "messages": []any{
		map[string]any{"role": "user", "content": "q"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "thinking", "thinking": "I pondered.", "signature": "x"}, map[string]any{"type": "text", "text": "a"}}},
		map[string]any{"role": "user", "content": "again"}}}
	delete(hist, "max_tokens")
	resp, out = ts.post(t, "/v1/messages/count_tokens", hist)
	var withThinking CountTokensResponse
	if resp.StatusCode != 200 || json.Unmarshal(out, &withThinking) != nil {
		t.Fatalf("count_tokens with a thinking block: %d %s", resp.StatusCode, out)
	}
	hist["messages"].([]any)[1] = map[string]any{"role": "assistant", "content": "a"}
	_, out = ts.post(t, "/v1/messages/count_tokens", hist)
	var without CountTokensResponse
	_ = json.Unmarshal(out, &without)
	if withThinking.InputTokens <= without.InputTokens {
		t.Errorf("the thinking block did not reach the template: %d tokens with it, %d without", withThinking.InputTokens, without.InputTokens)
	}
	hist["messages"].([]any)[1] = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "redacted_thinking", "data": "x"}}}
	hist["max_tokens"] = 50
	resp, out = ts.post(t, "/v1/messages", hist)
	checkAnthError(t, resp, out, 400, "invalid_request_error", "redacted_thinking")
}

// TestResponsesReasoning: a reasoning model answers a reasoning item
// (reasoning_text content) before the message, streamed as
// response.reasoning_text events, with reasoning tokens in the usage;
// effort none answers none; a model that does not think names reasoning
// in X-Conform-Ignored.
func TestResponsesReasoning(t *testing.T) {
	ts := thinkServer(t)
	cl := respClient(ts)
	var schema map[string]any
	_ = json.Unmarshal([]byte(cityParams), &schema)
	sch := compileSchema(t, cityParams)
	thought := 0
	for _, stream := range []bool{false, true} {
		for _, effort := range []string{"low", "none"} {
			for range 4 {
				p := respParams(func(p *responses.ResponseNewParams) {
					p.MaxOutputTokens = openai.Int(1400)
					p.Reasoning.Effort = openai.ReasoningEffort(effort)
					f := responses.ResponseFormatTextConfigParamOfJSONSchema("city", schema)
					f.OfJSONSchema.Strict = openai.Bool(true)
					p.Text = responses.ResponseTextConfigParam{Format: f}
				})
				r := respSend(t, cl, p, stream)
				if r == nil {
					return
				}
				var text strings.Builder
				for k, it := range r.Output {
					switch it.Type {
					case "reasoning":
						if k != 0 || effort == "none" || !strings.HasPrefix(it.ID, "rs_") || len(it.Content) != 1 || it.Content[0].Type != "reasoning_text" {
							t.Errorf("reasoning item at %d (effort %s): %s", k, effort, it.RawJSON())
							continue
						}
						if strings.Contains(it.Content[0].Text, "think>") {
							t.Errorf("markup in reasoning %q", it.Content[0].Text)
						}
						thought++
						if r.Usage.OutputTokensDetails.ReasoningTokens <= 0 {
							t.Errorf("reasoning without reasoning tokens: %+v", r.Usage)
						}
					case "message":
						text.WriteString(it.Content[0].Text)
					}
				}
				if r.Status == "completed" {
					validate(t, sch, text.String())
				}
			}
		}
	}
	if thought == 0 {
		t.Error("no reasoning item")
	}
	plain := newTestServer(t, Config{}, "")
	resp, out := plain.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "max_output_tokens": 5, "reasoning": map[string]any{"effort": "high"}})
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("X-Conform-Ignored"), "reasoning") {
		t.Errorf("non-reasoning model: %d, X-Conform-Ignored %q: %s", resp.StatusCode, resp.Header.Get("X-Conform-Ignored"), out)
	}
	resp, out = ts.post(t, "/v1/responses", map[string]any{"model": "fake", "input": "hi", "reasoning": map[string]any{"effort": "extreme"}})
	checkRespError(t, resp, out, 400, "reasoning.effort", "want none")
}
