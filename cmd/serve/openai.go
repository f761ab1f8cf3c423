package main

// OpenAI wire types and the pure converters between them and the server's
// own request form (STYLE "HTTP layer": no gin, no I/O here).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"conform/constraint"
	"conform/runner"
	"conform/sampler"
)

// ChatRequest is POST /v1/chat/completions.
type ChatRequest struct {
	Model               string             `json:"model"`
	Messages            []ChatMessage      `json:"messages"`
	Tools               []ToolDef          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage    `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      *ResponseFormat    `json:"response_format,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *StreamOptions     `json:"stream_options,omitempty"`
	MaxTokens           *int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int               `json:"max_completion_tokens,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	TopP                *float64           `json:"top_p,omitempty"`
	Stop                json.RawMessage    `json:"stop,omitempty"`
	Seed                *int64             `json:"seed,omitempty"`
	N                   *int               `json:"n,omitempty"`
	Logprobs            bool               `json:"logprobs,omitempty"`
	TopLogprobs         *int               `json:"top_logprobs,omitempty"`
	PresencePenalty     *float64           `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64           `json:"frequency_penalty,omitempty"`
	LogitBias           map[string]float64 `json:"logit_bias,omitempty"`
	User                string             `json:"user,omitempty"`
	// vLLM extras.
	TopK              *int               `json:"top_k,omitempty"`
	MinP              *float64           `json:"min_p,omitempty"`
	RepetitionPenalty *float64           `json:"repetition_penalty,omitempty"`
	StructuredOutputs *StructuredOutputs `json:"structured_outputs,omitempty"`
	GuidedJSON        json.RawMessage    `json:"guided_json,omitempty"`
	GuidedRegex       *string            `json:"guided_regex,omitempty"`
	GuidedChoice      []string           `json:"guided_choice,omitempty"`
}

// ChatMessage is one message of a conversation. Content is a string, an array
// of content parts, or null.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// ContentPart is one element of an array content.
type ContentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolDef is one entry of tools.
type ToolDef struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a function tool.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToolCall is a call in an assistant message or a stream delta (Index is set
// in deltas only).
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a call's function and its arguments as a JSON string.
type FunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ResponseFormat is response_format.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// StreamOptions is stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// StructuredOutputs is vLLM's structured_outputs.
type StructuredOutputs struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	Regex  *string         `json:"regex,omitempty"`
	Choice []string        `json:"choice,omitempty"`
}

// ChatResponse is a non-streaming chat completion.
type ChatResponse struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	SystemFingerprint string         `json:"system_fingerprint"`
	Choices           []ChatChoice   `json:"choices"`
	Usage             *Usage         `json:"usage"`
	Unenforced        []UnenforcedKw `json:"conform_unenforced,omitempty"`
}

// ChatChoice is one choice of a ChatResponse.
type ChatChoice struct {
	Index        int             `json:"index"`
	Message      ResponseMessage `json:"message"`
	Logprobs     *Logprobs       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// ResponseMessage is the assistant message of a choice.
type ResponseMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Usage counts a completion's tokens.
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails says how much of the prompt came from the KV cache.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Logprobs is a choice's logprobs.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
}

// TokenLogprob is one output token's logprob and alternatives.
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one alternative.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// ChatChunk is one server-sent event of a streaming chat completion.
type ChatChunk struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	SystemFingerprint string         `json:"system_fingerprint"`
	Choices           []ChunkChoice  `json:"choices"`
	Usage             *Usage         `json:"usage"`
	Unenforced        []UnenforcedKw `json:"conform_unenforced,omitempty"`
}

// ChunkChoice is one choice's delta.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	Logprobs     *Logprobs `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// Delta is the new part of a streamed message.
type Delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// UnenforcedKw is one schema keyword the server did not enforce (strict was
// false): the conform_unenforced response field.
type UnenforcedKw struct {
	Param   string `json:"param"`
	Pointer string `json:"pointer"`
	Keyword string `json:"keyword"`
	Message string `json:"message,omitempty"`
}

// CompletionRequest is POST /v1/completions.
type CompletionRequest struct {
	Model             string             `json:"model"`
	Prompt            json.RawMessage    `json:"prompt"`
	MaxTokens         *int               `json:"max_tokens,omitempty"`
	Temperature       *float64           `json:"temperature,omitempty"`
	TopP              *float64           `json:"top_p,omitempty"`
	N                 *int               `json:"n,omitempty"`
	Stream            bool               `json:"stream,omitempty"`
	StreamOptions     *StreamOptions     `json:"stream_options,omitempty"`
	Stop              json.RawMessage    `json:"stop,omitempty"`
	Seed              *int64             `json:"seed,omitempty"`
	Logprobs          *int               `json:"logprobs,omitempty"`
	Echo              bool               `json:"echo,omitempty"`
	PresencePenalty   *float64           `json:"presence_penalty,omitempty"`
	FrequencyPenalty  *float64           `json:"frequency_penalty,omitempty"`
	LogitBias         map[string]float64 `json:"logit_bias,omitempty"`
	User              string             `json:"user,omitempty"`
	TopK              *int               `json:"top_k,omitempty"`
	MinP              *float64           `json:"min_p,omitempty"`
	RepetitionPenalty *float64           `json:"repetition_penalty,omitempty"`
	ResponseFormat    *ResponseFormat    `json:"response_format,omitempty"`
	StructuredOutputs *StructuredOutputs `json:"structured_outputs,omitempty"`
	GuidedJSON        json.RawMessage    `json:"guided_json,omitempty"`
	GuidedRegex       *string            `json:"guided_regex,omitempty"`
	GuidedChoice      []string           `json:"guided_choice,omitempty"`
}

// CompletionResponse is a text completion (also each streamed chunk).
type CompletionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []CompletionChoice `json:"choices"`
	Usage             *Usage             `json:"usage"`
	Unenforced        []UnenforcedKw     `json:"conform_unenforced,omitempty"`
}

// CompletionChoice is one choice of a text completion.
type CompletionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *CompletionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

// CompletionLogprobs is the legacy logprobs shape.
type CompletionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// ModelList is GET /v1/models.
type ModelList struct {
	Object string      `json:"object"`
	Data   []ModelCard `json:"data"`
}

// ModelCard is one served model.
type ModelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ErrorBody is OpenAI's error envelope.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of the envelope.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Limits of the API, as OpenAI has them.
const (
	maxStop    = 4  // stop sequences
	maxChoices = 16 // n
)

// genParams is what a request asks of each generation, in the server's form.
type genParams struct {
	Params       sampler.Params
	MaxTokens    int
	Stop         []string
	N            int
	SeedSet      bool
	Stream       bool
	IncludeUsage bool
}

// chatJob is a chat request in the server's form: the template inputs (JSON
// that keeps key order), the constraint spec (Format and IsSpecial are filled
// in by the server from the model), and the generation parameters.
type chatJob struct {
	Model    string
	Messages []byte // JSON array for templates.DecodeJSON
	Tools    []byte // JSON array, or nil
	Spec     constraint.Spec
	Gen      genParams
}

// FromChatRequest validates r and converts it. Errors are *apiError (400)
// naming the parameter.
func FromChatRequest(r *ChatRequest) (*chatJob, error) {
	j := &chatJob{Model: r.Model}
	if len(r.Messages) == 0 {
		return nil, badParam("messages", "messages must hold at least one message")
	}
	msgs, err := templateMessages(r.Messages)
	if err != nil {
		return nil, err
	}
	j.Messages = msgs
	for i, t := range r.Tools {
		if t.Type != "function" {
			return nil, badParam(fmt.Sprintf("tools[%d].type", i), fmt.Sprintf("tool type %q is not supported (only \"function\")", t.Type))
		}
		j.Spec.Tools = append(j.Spec.Tools, constraint.Tool{Name: t.Function.Name, Parameters: t.Function.Parameters, Strict: t.Function.Strict != nil && *t.Function.Strict})
	}
	if len(r.Tools) > 0 {
		tools := make([]map[string]any, len(r.Tools))
		for i, t := range r.Tools {
			fn := map[string]any{"name": t.Function.Name}
			if t.Function.Description != "" {
				fn["description"] = t.Function.Description
			}
			if len(t.Function.Parameters) > 0 {
				fn["parameters"] = t.Function.Parameters
			}
			tools[i] = map[string]any{"type": "function", "function": fn}
		}
		if j.Tools, err = marshalOrdered(tools, []string{"type", "function", "name", "description", "parameters"}); err != nil {
			return nil, badParam("tools", err.Error())
		}
	}
	if err := parseToolChoice(r.ToolChoice, &j.Spec); err != nil {
		return nil, err
	}
	j.Spec.Parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	out, err := outputOf(r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice)
	if err != nil {
		return nil, err
	}
	j.Spec.Output = out
	maxTok := r.MaxCompletionTokens
	maxParam := "max_completion_tokens"
	if maxTok == nil {
		maxTok, maxParam = r.MaxTokens, "max_tokens"
	}
	top := 0
	if r.TopLogprobs != nil {
		top = *r.TopLogprobs
		if !r.Logprobs && top > 0 {
			return nil, badParam("top_logprobs", "top_logprobs requires logprobs: true")
		}
		if top < 0 || top > sampler.MaxTopLogprobs {
			return nil, badParam("top_logprobs", fmt.Sprintf("top_logprobs must be between 0 and %d", sampler.MaxTopLogprobs))
		}
	}
	g, err := genOf(sampling{
		maxTokens: maxTok, maxParam: maxParam, temperature: r.Temperature, topP: r.TopP, stop: r.Stop, seed: r.Seed, n: r.N,
		presence: r.PresencePenalty, frequency: r.FrequencyPenalty, logitBias: r.LogitBias, topK: r.TopK, minP: r.MinP,
		repetition: r.RepetitionPenalty, logprobs: r.Logprobs, topLogprobs: top,
	})
	if err != nil {
		return nil, err
	}
	g.Stream = r.Stream
	if r.StreamOptions != nil {
		if !r.Stream {
			return nil, badParam("stream_options", "stream_options is only allowed with stream: true")
		}
		g.IncludeUsage = r.StreamOptions.IncludeUsage
	}
	j.Gen = g
	return j, nil
}

// sampling gathers the sampling fields both endpoints share.
type sampling struct {
	maxTokens                 *int
	maxParam                  string
	temperature, topP         *float64
	stop                      json.RawMessage
	seed                      *int64
	n                         *int
	presence, frequency, minP *float64
	logitBias                 map[string]float64
	topK                      *int
	repetition                *float64
	logprobs                  bool
	topLogprobs               int
}

func genOf(s sampling) (genParams, error) {
	var g genParams
	p := &g.Params
	if s.maxTokens != nil {
		if *s.maxTokens < 1 {
			return g, badParam(s.maxParam, s.maxParam+" must be at least 1")
		}
		g.MaxTokens = *s.maxTokens
	}
	if s.temperature != nil {
		if *s.temperature < 0 || *s.temperature > 2 {
			return g, badParam("temperature", "temperature must be between 0 and 2")
		}
		p.Temperature = sampler.Temp(*s.temperature)
	}
	if s.topP != nil {
		if *s.topP <= 0 || *s.topP > 1 {
			return g, badParam("top_p", "top_p must be in (0, 1]")
		}
		p.TopP = *s.topP
	}
	if s.topK != nil {
		if *s.topK < -1 {
			return g, badParam("top_k", "top_k must be -1 (off), 0 (off) or positive")
		}
		if *s.topK > 0 {
			p.TopK = *s.topK
		}
	}
	if s.minP != nil {
		if *s.minP < 0 || *s.minP > 1 {
			return g, badParam("min_p", "min_p must be between 0 and 1")
		}
		p.MinP = *s.minP
	}
	if s.repetition != nil {
		if *s.repetition <= 0 {
			return g, badParam("repetition_penalty", "repetition_penalty must be positive")
		}
		p.RepetitionPenalty = *s.repetition
	}
	if s.presence != nil {
		if *s.presence < -2 || *s.presence > 2 {
			return g, badParam("presence_penalty", "presence_penalty must be between -2 and 2")
		}
		p.PresencePenalty = *s.presence
	}
	if s.frequency != nil {
		if *s.frequency < -2 || *s.frequency > 2 {
			return g, badParam("frequency_penalty", "frequency_penalty must be between -2 and 2")
		}
		p.FrequencyPenalty = *s.frequency
	}
	if len(s.logitBias) > 0 {
		p.LogitBias = make(map[sampler.TokenID]float64, len(s.logitBias))
		for k, v := range s.logitBias {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 {
				return g, badParam("logit_bias", fmt.Sprintf("logit_bias key %q is not a token id", k))
			}
			if v < -100 || v > 100 {
				return g, badParam("logit_bias", fmt.Sprintf("logit_bias value %v for token %s must be between -100 and 100", v, k))
			}
			p.LogitBias[sampler.TokenID(id)] = v
		}
	}
	if s.seed != nil {
		p.Seed = uint64(*s.seed)
		g.SeedSet = true
	}
	p.Logprobs = s.logprobs
	p.TopLogprobs = s.topLogprobs
	g.N = 1
	if s.n != nil {
		if *s.n < 1 || *s.n > maxChoices {
			return g, badParam("n", fmt.Sprintf("n must be between 1 and %d", maxChoices))
		}
		g.N = *s.n
	}
	stop, err := parseStop(s.stop)
	if err != nil {
		return g, err
	}
	g.Stop = stop
	return g, nil
}

func parseStop(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badParam("stop", "stop must be a string or an array of strings")
	}
	if len(many) > maxStop {
		return nil, badParam("stop", fmt.Sprintf("at most %d stop sequences", maxStop))
	}
	out := many[:0]
	for _, s := range many {
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func parseToolChoice(raw json.RawMessage, spec *constraint.Spec) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "none":
			spec.ToolMode = constraint.ToolNone
		case "auto":
			spec.ToolMode = constraint.ToolAuto
		case "required":
			spec.ToolMode = constraint.ToolRequired
		default:
			return badParam("tool_choice", fmt.Sprintf("tool_choice %q: want none, auto, required or a function", s))
		}
		return nil
	}
	var o struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.Type != "function" || o.Function.Name == "" {
		return badParam("tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}`)
	}
	spec.ToolMode = constraint.ToolNamed
	spec.ToolName = o.Function.Name
	return nil
}

// outputOf turns the structured-output fields into one constraint.Output; at
// most one of them may ask for a constraint.
func outputOf(rf *ResponseFormat, so *StructuredOutputs, gJSON json.RawMessage, gRegex *string, gChoice []string) (constraint.Output, error) {
	var outs []constraint.Output
	if rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			outs = append(outs, constraint.Output{Kind: constraint.OutputJSONObject, Param: "response_format"})
		case "json_schema":
			if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 {
				return constraint.Output{}, badParam("response_format.json_schema.schema", "json_schema needs a schema")
			}
			outs = append(outs, constraint.Output{Kind: constraint.OutputJSONSchema, Schema: rf.JSONSchema.Schema,
				Strict: rf.JSONSchema.Strict != nil && *rf.JSONSchema.Strict, Param: "response_format.json_schema.schema"})
		default:
			return constraint.Output{}, badParam("response_format.type", fmt.Sprintf("response_format type %q: want text, json_object or json_schema", rf.Type))
		}
	}
	if so != nil {
		if len(so.JSON) > 0 && string(so.JSON) != "null" {
			outs = append(outs, constraint.Output{Kind: constraint.OutputJSONSchema, Schema: so.JSON, Param: "structured_outputs.json"})
		}
		if so.Regex != nil {
			outs = append(outs, constraint.Output{Kind: constraint.OutputRegex, Regex: *so.Regex, Param: "structured_outputs.regex"})
		}
		if so.Choice != nil {
			outs = append(outs, constraint.Output{Kind: constraint.OutputChoice, Choice: so.Choice, Param: "structured_outputs.choice"})
		}
	}
	if len(gJSON) > 0 && string(gJSON) != "null" {
		outs = append(outs, constraint.Output{Kind: constraint.OutputJSONSchema, Schema: gJSON, Param: "guided_json"})
	}
	if gRegex != nil {
		outs = append(outs, constraint.Output{Kind: constraint.OutputRegex, Regex: *gRegex, Param: "guided_regex"})
	}
	if gChoice != nil {
		outs = append(outs, constraint.Output{Kind: constraint.OutputChoice, Choice: gChoice, Param: "guided_choice"})
	}
	switch len(outs) {
	case 0:
		return constraint.Output{}, nil
	case 1:
		return outs[0], nil
	}
	return constraint.Output{}, badParam(outs[1].Param, fmt.Sprintf("%s and %s both constrain the output; give one", outs[0].Param, outs[1].Param))
}

// templateMessage is a message as chat templates expect it, with keys in
// transformers' order.
type templateMessage struct {
	Role       string             `json:"role"`
	Content    string             `json:"content"`
	Name       string             `json:"name,omitempty"`
	ToolCalls  []templateToolCall `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
}

type templateToolCall struct {
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type"`
	Function templateFunction `json:"function"`
}

type templateFunction struct {
	Name string `json:"name"`
	// Arguments is the decoded object when the string holds JSON (as vLLM
	// and transformers hand it to templates), else the string.
	Arguments json.RawMessage `json:"arguments"`
}

// templateMessages converts the OpenAI messages into the JSON array handed to
// the chat template: content parts joined, "developer" as "system", tool-call
// arguments decoded.
func templateMessages(msgs []ChatMessage) ([]byte, error) {
	out := make([]templateMessage, len(msgs))
	for i, m := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		tm := templateMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		switch m.Role {
		case "system", "user", "assistant":
		case "developer":
			tm.Role = "system"
		case "tool":
			if m.ToolCallID == "" {
				return nil, badParam(p+".tool_call_id", "a tool message needs tool_call_id")
			}
		default:
			return nil, badParam(p+".role", fmt.Sprintf("role %q: want system, developer, user, assistant or tool", m.Role))
		}
		text, err := contentText(m.Content, p+".content")
		if err != nil {
			return nil, err
		}
		tm.Content = text
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return nil, badParam(p+".tool_calls", "only assistant messages carry tool_calls")
		}
		for k, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return nil, badParam(fmt.Sprintf("%s.tool_calls[%d].function.name", p, k), "a tool call needs a function name")
			}
			args := json.RawMessage(strings.TrimSpace(tc.Function.Arguments))
			if !json.Valid(args) {
				b, _ := json.Marshal(tc.Function.Arguments)
				args = b
			}
			typ := tc.Type
			if typ == "" {
				typ = "function"
			}
			tm.ToolCalls = append(tm.ToolCalls, templateToolCall{ID: tc.ID, Type: typ, Function: templateFunction{Name: tc.Function.Name, Arguments: args}})
		}
		out[i] = tm
	}
	return json.Marshal(out)
}

// contentText returns a message content as text: a string as is, an array of
// text parts joined, null as "".
func contentText(raw json.RawMessage, param string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []ContentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badParam(param, "content must be a string or an array of content parts")
	}
	var b strings.Builder
	for k, pt := range parts {
		if pt.Type != "text" {
			return "", badParam(fmt.Sprintf("%s[%d].type", param, k), fmt.Sprintf("content part type %q is not supported (text only)", pt.Type))
		}
		b.WriteString(pt.Text)
	}
	return b.String(), nil
}

// marshalOrdered marshals v (maps) with the keys in the given order first
// (json.Marshal sorts map keys; templates show tools in the order written).
func marshalOrdered(v any, order []string) ([]byte, error) {
	rank := map[string]int{}
	for i, k := range order {
		rank[k] = i
	}
	var buf bytes.Buffer
	var enc func(v any) error
	enc = func(v any) error {
		switch x := v.(type) {
		case []map[string]any:
			buf.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := enc(e); err != nil {
					return err
				}
			}
			buf.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sortByRank(keys, rank)
			buf.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					buf.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				buf.Write(kb)
				buf.WriteByte(':')
				if err := enc(x[k]); err != nil {
					return err
				}
			}
			buf.WriteByte('}')
		case json.RawMessage:
			if !json.Valid(x) {
				return fmt.Errorf("parameters are not valid JSON")
			}
			buf.Write(x)
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return err
			}
			buf.Write(b)
		}
		return nil
	}
	err := enc(v)
	return buf.Bytes(), err
}

func sortByRank(keys []string, rank map[string]int) {
	for i := 1; i < len(keys); i++ {
		for k := i; k > 0 && rank[keys[k]] < rank[keys[k-1]]; k-- {
			keys[k], keys[k-1] = keys[k-1], keys[k]
		}
	}
}

// FromCompletionRequest validates r and converts it: the prompts (a string or
// an array of strings), the output constraint and the generation parameters.
func FromCompletionRequest(r *CompletionRequest) (prompts []string, out constraint.Output, g genParams, err error) {
	raw := bytes.TrimSpace(r.Prompt)
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		prompts = []string{one}
	} else if err := json.Unmarshal(raw, &prompts); err != nil || len(prompts) == 0 {
		return nil, out, g, badParam("prompt", "prompt must be a string or a non-empty array of strings")
	}
	for i, p := range prompts {
		if p == "" {
			return nil, out, g, badParam(fmt.Sprintf("prompt[%d]", i), "prompt must not be empty")
		}
	}
	if out, err = outputOf(r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice); err != nil {
		return nil, out, g, err
	}
	top := 0
	if r.Logprobs != nil {
		top = *r.Logprobs
		if top < 0 || top > 5 {
			return nil, out, g, badParam("logprobs", "logprobs must be between 0 and 5")
		}
	}
	g, err = genOf(sampling{
		maxTokens: r.MaxTokens, maxParam: "max_tokens", temperature: r.Temperature, topP: r.TopP, stop: r.Stop, seed: r.Seed, n: r.N,
		presence: r.PresencePenalty, frequency: r.FrequencyPenalty, logitBias: r.LogitBias, topK: r.TopK, minP: r.MinP,
		repetition: r.RepetitionPenalty, logprobs: r.Logprobs != nil, topLogprobs: top,
	})
	if err != nil {
		return nil, out, g, err
	}
	if g.MaxTokens == 0 {
		g.MaxTokens = 16 // OpenAI's default for /v1/completions
	}
	g.Stream = r.Stream
	if r.StreamOptions != nil {
		g.IncludeUsage = r.StreamOptions.IncludeUsage
	}
	return prompts, out, g, nil
}

// finishReason is the OpenAI finish_reason of a generation: tool_calls when it
// made calls and ended normally.
func finishReason(f runner.FinishReason, calls int) string {
	r := f.OpenAI()
	if calls > 0 && r == "stop" {
		return "tool_calls"
	}
	if r == "" {
		return "stop"
	}
	return r
}

// ToUsage converts the runner's usage of all choices.
func ToUsage(us []*runner.Usage) *Usage {
	u := &Usage{}
	cached := 0
	for i, x := range us {
		if x == nil {
			continue
		}
		if i == 0 {
			u.PromptTokens = x.PromptTokens
		}
		u.CompletionTokens += x.CompletionTokens
		cached += x.CachedTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.PromptTokensDetails = &PromptTokensDetails{CachedTokens: cached}
	return u
}

// ToUnenforced converts constraint warnings for the response.
func ToUnenforced(us []constraint.Unenforced) []UnenforcedKw {
	if len(us) == 0 {
		return nil
	}
	out := make([]UnenforcedKw, len(us))
	for i, u := range us {
		out[i] = UnenforcedKw{Param: u.Param, Pointer: u.Pointer, Keyword: u.Keyword, Message: u.Message}
	}
	return out
}

// UnenforcedHeader is the X-Conform-Unenforced header value.
func UnenforcedHeader(us []constraint.Unenforced) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = u.String()
	}
	return strings.Join(s, ", ")
}

// ToChatCalls converts parsed calls into the response's tool_calls.
func ToChatCalls(calls []constraint.Call, ids []string) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: ids[i], Type: "function", Function: FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}
