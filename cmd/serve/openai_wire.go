package main

// OpenAI wire types: the JSON of /v1/chat/completions, /v1/completions and
// /v1/models, and OpenAI's error envelope (STYLE "HTTP layer": plain
// structs, no gin, no I/O). openai_decode.go reads a body into them,
// openai_convert.go turns them into turn requests, openai_sink.go writes
// turn events back in their shape.

import (
	"encoding/json"
	"reflect"
	"sort"
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
	// Reasoning (see README "Reasoning models"). ChatTemplateKwargs are
	// variables for the chat template (enable_thinking, thinking,
	// reasoning_effort, ...), as vLLM and llama-server take them;
	// ReasoningEffort is OpenAI's (none, minimal, low, medium, high: a
	// budget, and the template variable reasoning_effort);
	// ThinkingTokenBudget is vLLM's budget of the reasoning block in
	// tokens (-1: no limit but max_tokens, 0: no thinking).
	ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs,omitempty"`
	ReasoningEffort     *string                    `json:"reasoning_effort,omitempty"`
	ThinkingTokenBudget *int                       `json:"thinking_token_budget,omitempty"`
	// BestOf is vLLM's best_of: only 1 (the default) is served.
	BestOf *int `json:"best_of,omitempty"`
	// Modalities is OpenAI's output modalities: only ["text"].
	Modalities []string `json:"modalities,omitempty"`
}

// ChatMessage is one message of a conversation. Content is a string, an array
// of content parts, or null.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	// ReasoningContent is an assistant message's earlier reasoning, for
	// templates that render it.
	ReasoningContent string `json:"reasoning_content,omitempty"`
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
	JSON       json.RawMessage `json:"json,omitempty"`
	Regex      *string         `json:"regex,omitempty"`
	Choice     []string        `json:"choice,omitempty"`
	JSONObject *bool           `json:"json_object,omitempty"`
	// DisableFallback asks vLLM not to switch backends; Conform has one
	// and never falls back to unconstrained output, so it changes nothing.
	DisableFallback *bool `json:"disable_fallback,omitempty"`
	// Unknown lists the keys this server does not implement (vLLM's
	// grammar, structural_tag, whitespace options, or a misspelling):
	// outputOf refuses them, since ignoring a constraint kind would answer
	// unconstrained.
	Unknown []string `json:"-"`
}

// UnmarshalJSON decodes the known keys and records the others in Unknown.
func (so *StructuredOutputs) UnmarshalJSON(b []byte) error {
	type plain StructuredOutputs
	// Type errors get the path from the request's root from the outer
	// decoder.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	known := jsonFields(reflect.TypeFor[plain]())
	for k := range keys {
		if !known[k] {
			p.Unknown = append(p.Unknown, k)
		}
	}
	sort.Strings(p.Unknown)
	*so = StructuredOutputs(p)
	return nil
}

// structuredKinds are the constraint kinds structured_outputs takes here.
const structuredKinds = "json, regex, choice, json_object"

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
	Role    string  `json:"role"`
	Content *string `json:"content"`
	// ReasoningContent is the model's reasoning, when it thought (the
	// field DeepSeek, vLLM and llama-server clients read).
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	Refusal          *string    `json:"refusal"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// Usage counts a completion's tokens.
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
	// CompletionTokensDetails is set when some completion tokens were
	// reasoning.
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// CompletionTokensDetails says how many completion tokens were reasoning
// (the block's markers included; they count against max_tokens and
// max_completion_tokens, as OpenAI's do).
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
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
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	// ReasoningContent is the next piece of the reasoning; every one
	// comes before the first content delta.
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
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
	BestOf            *int               `json:"best_of,omitempty"`
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
