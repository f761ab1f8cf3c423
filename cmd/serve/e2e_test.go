//go:build cgo

package main

// End-to-end tests: the real server (run) on a loopback port with the --demo
// model (tiny llama shape, cl100k vocabulary, random weights) through
// llama.cpp, driven by the official Go SDK. The model's text is nonsense; the
// structure is what the tests check, and the constraint guarantees it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// llama31Template is a Llama-3.1-style template teaching the llama3_json
// format (tools in the user turn, calls as {"name", "parameters"}).
const llama31Template = `{{- bos_token }}{%- for message in messages %}{%- if message.role == 'tool' %}<|start_header_id|>ipython<|end_header_id|>

{{ message.content }}<|eot_id|>{%- elif message.tool_calls %}<|start_header_id|>assistant<|end_header_id|>

{%- for tc in message.tool_calls %}{"name": "{{ tc.function.name }}", "parameters": {{ tc.function.arguments | tojson }}}{%- endfor %}<|eot_id|>{%- else %}<|start_header_id|>{{ message.role }}<|end_header_id|>

{%- if tools and loop.last and message.role == 'user' %}
Given the following functions, respond with a JSON for a function call with its proper arguments in the format {"name": function name, "parameters": dictionary of argument name and its value}. Use <|python_tag|> optionally.
{%- for t in tools %}
{{ t | tojson }}
{%- endfor %}
{%- endif %}
{{ message.content }}<|eot_id|>{%- endif %}{%- endfor %}{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>

{% endif %}`

type e2eServer struct {
	url    string
	client openai.Client
}

func startE2E(t *testing.T, extra ...string) *e2eServer {
	t.Helper()
	return startServer(t, append([]string{"--demo", "--port", "0", "--parallel", "4", "--ctx-size", "4096", "--served-model-name", "demo", "--log-level", "warn", "--threads", "1"}, extra...))
}

// startServer runs the server (run) with args on a loopback port until the
// test ends.
func startServer(t *testing.T, args []string) *e2eServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	var mu sync.Mutex
	go func() { done <- run(ctx, args, func(string) string { return "" }, lockedWriter{&mu, &logs}, ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run returned %v", err)
			}
		})
		base := "http://" + addr
		return &e2eServer{url: base, client: openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))}
	case err := <-done:
		cancel()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("server did not start: %v\n%s", err, logs.String())
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatalf("server did not start in 3 minutes")
	}
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var e2eWeather = map[string]any{"type": "object", "properties": map[string]any{
	"city": map[string]any{"type": "string", "maxLength": 8}, "unit": map[string]any{"type": "string", "enum": []string{"c", "f"}},
	"days": map[string]any{"type": "integer", "minimum": 1, "maximum": 7}}, "required": []string{"city", "unit"}, "additionalProperties": false}
var e2eTime = map[string]any{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string", "pattern": "^[A-Z]{3}$"}},
	"required": []string{"tz"}, "additionalProperties": false}

func e2eTools() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: openai.String("weather"), Parameters: e2eWeather, Strict: openai.Bool(true)}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time", Parameters: e2eTime}),
	}
}

func e2eSchemas(t *testing.T) map[string]*jsonschema.Schema {
	out := map[string]*jsonschema.Schema{}
	for name, s := range map[string]any{"get_weather": e2eWeather, "get_time": e2eTime} {
		b, _ := json.Marshal(s)
		out[name] = compileSchema(t, string(b))
	}
	return out
}

func userMsg(s string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(s)}
}

func TestE2EChat(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{{"hermes", nil}, {"llama3_json", []string{"--chat-template", writeTemplate(t, llama31Template)}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startE2E(t, tc.args...)
			ctx := context.Background()
			schemas := e2eSchemas(t)
			if resp, err := http.Get(s.url + "/health"); err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET /health once loaded: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}

			// Plain chat.
			r, err := s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("Hello"), MaxTokens: openai.Int(8), Seed: openai.Int(1)})
			if err != nil {
				t.Fatalf("plain chat: %v", err)
			}
			if len(r.Choices) != 1 || r.Choices[0].Message.Role != "assistant" || r.Usage.CompletionTokens == 0 {
				t.Errorf("plain chat response %+v", r)
			}

			// Every tool_choice mode.
			named := openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"})
			modes := []struct {
				name   string
				choice openai.ChatCompletionToolChoiceOptionUnionParam
				par    bool
				check  func(n int) bool
			}{
				{"required", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, true, func(n int) bool { return n >= 1 }},
				{"required single", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, false, func(n int) bool { return n == 1 }},
				{"named", named, true, func(n int) bool { return n == 1 }},
				{"auto", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}, true, func(int) bool { return true }},
				{"none", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}, true, func(n int) bool { return n == 0 }},
			}
			for _, m := range modes {
				r, err := s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("Weather in Oslo?"),
					Tools: e2eTools(), ToolChoice: m.choice, ParallelToolCalls: openai.Bool(m.par), MaxTokens: openai.Int(96), Seed: openai.Int(2), Temperature: openai.Float(1)})
				if err != nil {
					t.Fatalf("%s: %v", m.name, err)
				}
				ch := r.Choices[0]
				if ch.FinishReason == "length" {
					continue
				}
				if !m.check(len(ch.Message.ToolCalls)) {
					t.Errorf("%s: %d tool calls (finish %s)", m.name, len(ch.Message.ToolCalls), ch.FinishReason)
				}
				for _, c := range ch.Message.ToolCalls {
					if sch := schemas[c.Function.Name]; sch == nil {
						t.Errorf("%s: call to %q", m.name, c.Function.Name)
					} else {
						validate(t, sch, c.Function.Arguments)
					}
				}
				if strings.Contains(ch.Message.Content, "tool_call") || strings.Contains(ch.Message.Content, `{"name": "`) {
					t.Errorf("%s: markup in content %q", m.name, ch.Message.Content)
				}
			}

			// Streaming with tools and the usage chunk, through the SDK's accumulator.
			stream := s.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("Time?"), Tools: e2eTools(),
				ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, MaxTokens: openai.Int(96), Seed: openai.Int(3),
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
			var acc openai.ChatCompletionAccumulator
			chunks := 0
			for stream.Next() {
				acc.AddChunk(stream.Current())
				chunks++
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if chunks < 3 || acc.Usage.TotalTokens == 0 || len(acc.Choices) != 1 {
				t.Errorf("stream: %d chunks, usage %+v", chunks, acc.Usage)
			} else if acc.Choices[0].FinishReason != "length" {
				for _, c := range acc.Choices[0].Message.ToolCalls {
					validate(t, schemas[c.Function.Name], c.Function.Arguments)
				}
				if len(acc.Choices[0].Message.ToolCalls) == 0 {
					t.Errorf("stream: no tool call, finish %q", acc.Choices[0].FinishReason)
				}
			}

			// response_format json_schema (strict) and structured_outputs.
			rs := map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}, "n": map[string]any{"type": "integer", "minimum": 0, "maximum": 9}},
				"required": []string{"ok", "n"}, "additionalProperties": false}
			r, err = s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("json"), MaxTokens: openai.Int(64), Seed: openai.Int(4),
				ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "r", Schema: rs, Strict: openai.Bool(true)}}}})
			if err != nil {
				t.Fatalf("response_format: %v", err)
			}
			if r.Choices[0].FinishReason == "stop" {
				b, _ := json.Marshal(rs)
				validate(t, compileSchema(t, string(b)), r.Choices[0].Message.Content)
			}
			r, err = s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("pick"), MaxTokens: openai.Int(16)},
				option.WithJSONSet("structured_outputs", map[string]any{"choice": []string{"alpha", "beta"}}))
			if err != nil || (r.Choices[0].Message.Content != "alpha" && r.Choices[0].Message.Content != "beta") {
				t.Errorf("structured_outputs choice: %v %+v", err, r)
			}
			r, err = s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("code"), MaxTokens: openai.Int(16)},
				option.WithJSONSet("structured_outputs", map[string]any{"regex": "[A-Z]{2}[0-9]{3}"}))
			if err != nil || len(r.Choices[0].Message.Content) != 5 {
				t.Errorf("structured_outputs regex: %v %+v", err, r)
			}

			// Errors through the SDK.
			bad := map[string]any{"type": "object", "properties": map[string]any{"xs": map[string]any{"type": "array", "uniqueItems": true}}}
			_, err = s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("x"),
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "f", Parameters: bad, Strict: openai.Bool(true)})}})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tools[0].function.parameters" {
				t.Errorf("strict unsupported keyword: %v", err)
			}
			_, err = s.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nope", Messages: userMsg("x")})
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
				t.Errorf("unknown model: %v", err)
			}
		})
	}
}

// TestE2ERandomToolCalls: across ≥ 200 randomized requests at temperature 1,
// every returned tool call's arguments validate against its tool's schema.
func TestE2ERandomToolCalls(t *testing.T) {
	s := startE2E(t)
	schemas := e2eSchemas(t)
	ctx := context.Background()
	const requests = 200
	// auto is covered by TestE2EChat: with random weights it mostly writes
	// text until max_tokens, which validates nothing here.
	choices := []string{"required", "named"}
	var mu sync.Mutex
	calls, complete := 0, 0
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	start := time.Now()
	for i := 0; i < requests; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			p := openai.ChatCompletionNewParams{Model: "demo", Messages: userMsg("Call a tool."), Tools: e2eTools(), MaxTokens: openai.Int(96),
				Temperature: openai.Float(1), Seed: openai.Int(int64(i)), ParallelToolCalls: openai.Bool(rng.IntN(2) == 0)}
			switch choices[rng.IntN(len(choices))] {
			case "required":
				p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
			case "auto":
				p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
			case "named":
				p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: []string{"get_weather", "get_time"}[rng.IntN(2)]})
			}
			r, err := s.client.Chat.Completions.New(ctx, p)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			ch := r.Choices[0]
			mu.Lock()
			defer mu.Unlock()
			if ch.FinishReason == "length" {
				return
			}
			complete++
			for _, c := range ch.Message.ToolCalls {
				calls++
				sch := schemas[c.Function.Name]
				if sch == nil {
					t.Errorf("request %d: call to %q", i, c.Function.Name)
					continue
				}
				validate(t, sch, c.Function.Arguments)
			}
		}()
	}
	wg.Wait()
	t.Logf("%s for %d requests", time.Since(start).Round(time.Millisecond), requests)
	t.Logf("%d requests, %d complete turns, %d tool calls validated", requests, complete, calls)
	if calls < requests/4 {
		t.Errorf("only %d tool calls validated across %d requests", calls, requests)
	}
}

func writeTemplate(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "template.jinja")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
