package main

import "encoding/json"

// The wire types of Anthropic's Messages API (POST /v1/messages and
// /v1/messages/count_tokens). Content that comes in several forms (a
// string or blocks) stays raw here and is read by anthropic_convert.go.

// MessagesRequest is the body of POST /v1/messages. Output-neutral fields
// the server accepts and ignores are named in anthropicIgnored; fields
// that would change the output and are not implemented are refused
// (anthropicRefused).
type MessagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     *int            `json:"max_tokens"`
	Messages      []AnthMessage   `json:"messages"`
	System        json.RawMessage `json:"system,omitempty"`
	Tools         []AnthTool      `json:"tools,omitempty"`
	ToolChoice    *AnthToolChoice `json:"tool_choice,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Thinking      *AnthThinking   `json:"thinking,omitempty"`
	OutputConfig  *AnthOutputCfg  `json:"output_config,omitempty"`
	// OutputFormat is the structured-outputs beta's top-level form of
	// output_config.format.
	OutputFormat json.RawMessage `json:"output_format,omitempty"`
}

// CountTokensRequest is the body of POST /v1/messages/count_tokens: the
// prompt fields of a MessagesRequest (no max_tokens, no sampling).
type CountTokensRequest struct {
	Model        string          `json:"model"`
	Messages     []AnthMessage   `json:"messages"`
	System       json.RawMessage `json:"system,omitempty"`
	Tools        []AnthTool      `json:"tools,omitempty"`
	ToolChoice   *AnthToolChoice `json:"tool_choice,omitempty"`
	Thinking     *AnthThinking   `json:"thinking,omitempty"`
	OutputConfig *AnthOutputCfg  `json:"output_config,omitempty"`
	OutputFormat json.RawMessage `json:"output_format,omitempty"`
}

// AnthMessage is one input message: role user or assistant, content a
// string or an array of blocks (AnthBlock).
type AnthMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// AnthBlock is one content block of an input message: text, tool_use (an
// assistant's call) or tool_result (a user's answer to one).
type AnthBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	Citations    json.RawMessage `json:"citations,omitempty"`
	// Thinking is a thinking block's text (an earlier turn's reasoning);
	// its signature is not checked.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// AnthTool is a client tool: a name, a description and the JSON Schema of
// its input. Type is empty or "custom"; Anthropic's server tools (typed
// web_search_…, bash_…) are refused.
type AnthTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       *bool           `json:"strict,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// AnthToolChoice is tool_choice: type auto, any, tool (with name) or none.
type AnthToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// AnthThinking is thinking: {type: enabled, budget_tokens} asks a
// reasoning model to think within budget_tokens (refused for a model not
// served as one); disabled turns thinking off; adaptive leaves it to the
// model (and its template), within --reasoning-budget.
type AnthThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// AnthOutputCfg is output_config: effort is accepted and ignored (the
// served model has no effort setting); format is structured output,
// {"type": "json_schema", "schema": …}, enforced exactly (strict).
type AnthOutputCfg struct {
	Effort string          `json:"effort,omitempty"`
	Format json.RawMessage `json:"format,omitempty"`
}

// AnthResponse is a message as POST /v1/messages answers it, and the
// message of a stream's message_start event.
type AnthResponse struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"` // "message"
	Role         string         `json:"role"` // "assistant"
	Model        string         `json:"model"`
	Content      []AnthOutBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        AnthUsage      `json:"usage"`
}

// AnthOutBlock is one content block of a response: text, or tool_use
// with its input (a JSON object that validates against the tool's
// input_schema).
type AnthOutBlock struct {
	Type string  `json:"type"`
	Text *string `json:"text,omitempty"`
	// Thinking and Signature are a thinking block's (the signature is
	// empty: this server signs nothing).
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// AnthUsage is a response's token usage.
type AnthUsage struct {
	InputTokens          int `json:"input_tokens"`
	OutputTokens         int `json:"output_tokens"`
	CacheReadInputTokens int `json:"cache_read_input_tokens"`
}

// AnthError is Anthropic's error body: {"type": "error", "error": {"type",
// "message"}}.
type AnthError struct {
	Type  string          `json:"type"` // "error"
	Error AnthErrorDetail `json:"error"`
}

// AnthErrorDetail is the error of an AnthError.
type AnthErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// CountTokensResponse is the answer of /v1/messages/count_tokens.
type CountTokensResponse struct {
	InputTokens int `json:"input_tokens"`
}
