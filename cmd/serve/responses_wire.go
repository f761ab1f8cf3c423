package main

import "encoding/json"

// The wire types of OpenAI's Responses API (POST /v1/responses), stateless:
// the conversation comes whole in input on every request. Fields that come
// in several forms (input, content, tool_choice, a function call's output)
// stay raw here and are read by responses_convert.go.

// ResponsesRequest is the body of POST /v1/responses. Output-neutral fields
// the server accepts and ignores are named in responsesIgnored; fields that
// would change the output and are not implemented are refused
// (responsesRefused).
type ResponsesRequest struct {
	Model             string          `json:"model"`
	Input             json.RawMessage `json:"input"`
	Instructions      *string         `json:"instructions,omitempty"`
	Tools             []RespTool      `json:"tools,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	MaxToolCalls      *int            `json:"max_tool_calls,omitempty"`
	Text              *RespText       `json:"text,omitempty"`
	MaxOutputTokens   *int            `json:"max_output_tokens,omitempty"`
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	Reasoning         *RespReasoning  `json:"reasoning,omitempty"`
	Store             *bool           `json:"store,omitempty"`
	Stream            bool            `json:"stream,omitempty"`
	StreamOptions     json.RawMessage `json:"stream_options,omitempty"`
	Include           []string        `json:"include,omitempty"`
	Truncation        *string         `json:"truncation,omitempty"`
	TopLogprobs       *int            `json:"top_logprobs,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	User              *string         `json:"user,omitempty"`
}

// RespItem is one item of input: a message (type "message", or no type
// with a role), a function_call the assistant made, the
// function_call_output answering it, or a reasoning item. Content, Output
// and Arguments stay raw: each comes as a string or an array of parts.
type RespItem struct {
	Type      string          `json:"type,omitempty"`
	ID        string          `json:"id,omitempty"`
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Status    string          `json:"status,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Summary   []RespPart      `json:"summary,omitempty"`
	// EncryptedContent is a reasoning item's opaque state; this server
	// issues none and reads none.
	EncryptedContent *string `json:"encrypted_content,omitempty"`
}

// RespPart is one content part: input_text / output_text / refusal in a
// message, summary_text in a reasoning summary, reasoning_text in a
// reasoning item's content.
type RespPart struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Refusal     string          `json:"refusal,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// RespTool is one entry of tools: a function (name, description, JSON
// Schema parameters, strict), a namespace grouping functions under a name,
// or one of OpenAI's hosted tool types, which this server cannot run.
type RespTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
	Tools       []RespTool      `json:"tools,omitempty"` // a namespace's tools
}

// RespText is text: the output format (text, json_object or json_schema)
// and the verbosity hint.
type RespText struct {
	Format    *RespFormat `json:"format,omitempty"`
	Verbosity *string     `json:"verbosity,omitempty"`
}

// RespFormat is text.format. A json_schema format carries name, schema,
// description and strict flat in it (not nested as chat's response_format
// does).
type RespFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Description string          `json:"description,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// RespReasoning is reasoning: the effort asked of a reasoning model, and
// summary / generate_summary (a summary of the reasoning; this server
// returns the reasoning text itself).
type RespReasoning struct {
	Effort          *string `json:"effort,omitempty"`
	Summary         *string `json:"summary,omitempty"`
	GenerateSummary *string `json:"generate_summary,omitempty"`
}

// RespReasoningEcho is the reasoning setting a response reports (nulls
// when the request set none).
type RespReasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// RespObject is a response as POST /v1/responses answers it and as the
// stream's response.created / in_progress / completed / incomplete events
// carry it.
type RespObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"` // "response"
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"` // in_progress, completed, incomplete, failed
	Error              *RespError        `json:"error"`
	IncompleteDetails  *RespIncomplete   `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []RespOutItem     `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          RespReasoningEcho `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               RespTextEcho      `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []RespTool        `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *RespUsage        `json:"usage"`
	Metadata           json.RawMessage   `json:"metadata"`
}

// RespTextEcho is the text setting a response reports.
type RespTextEcho struct {
	Format RespFormat `json:"format"`
}

// RespError is a failed response's error.
type RespError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RespIncomplete says why a response is incomplete: "max_output_tokens"
// (the limit, or the context, ended it).
type RespIncomplete struct {
	Reason string `json:"reason"`
}

// RespOutItem is one output item: a message (content: output_text parts),
// a function_call (arguments validate against the function's parameters),
// or a reasoning item (content: reasoning_text parts).
type RespOutItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Status    string        `json:"status,omitempty"`
	Role      string        `json:"role,omitempty"`
	Content   []RespOutPart `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Summary   []RespPart    `json:"summary,omitempty"`
}

// RespOutPart is one part of an output item's content: output_text (with
// its annotations, none here) or reasoning_text.
type RespOutPart struct {
	Type string
	Text string
}

// MarshalJSON writes an output_text part with its annotations and
// logprobs arrays (empty here: no citations, no logprobs), a
// reasoning_text part with its text only.
func (p RespOutPart) MarshalJSON() ([]byte, error) {
	if p.Type != "output_text" {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{p.Type, p.Text})
	}
	return json.Marshal(struct {
		Type        string            `json:"type"`
		Text        string            `json:"text"`
		Annotations []json.RawMessage `json:"annotations"`
		Logprobs    []json.RawMessage `json:"logprobs"`
	}{p.Type, p.Text, []json.RawMessage{}, []json.RawMessage{}})
}

// RespUsage is a response's token usage.
type RespUsage struct {
	InputTokens         int               `json:"input_tokens"`
	InputTokensDetails  RespInputDetails  `json:"input_tokens_details"`
	OutputTokens        int               `json:"output_tokens"`
	OutputTokensDetails RespOutputDetails `json:"output_tokens_details"`
	TotalTokens         int               `json:"total_tokens"`
}

// RespInputDetails breaks input_tokens down.
type RespInputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// RespOutputDetails breaks output_tokens down.
type RespOutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// MarshalJSON writes an item with the fields of its type only, each
// required one present even when empty (a message's content [], a
// reasoning item's summary [], a call's arguments "").
func (it RespOutItem) MarshalJSON() ([]byte, error) {
	parts := func(p []RespOutPart) []RespOutPart {
		if p == nil {
			return []RespOutPart{}
		}
		return p
	}
	switch it.Type {
	case "message":
		return json.Marshal(struct {
			Type    string        `json:"type"`
			ID      string        `json:"id"`
			Status  string        `json:"status"`
			Role    string        `json:"role"`
			Content []RespOutPart `json:"content"`
		}{it.Type, it.ID, it.Status, it.Role, parts(it.Content)})
	case "function_call":
		args := ""
		if it.Arguments != nil {
			args = *it.Arguments
		}
		return json.Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Status    string `json:"status"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
			Arguments string `json:"arguments"`
		}{it.Type, it.ID, it.Status, it.CallID, it.Name, it.Namespace, args})
	case "reasoning":
		sum := it.Summary
		if sum == nil {
			sum = []RespPart{}
		}
		return json.Marshal(struct {
			Type    string        `json:"type"`
			ID      string        `json:"id"`
			Status  string        `json:"status,omitempty"`
			Summary []RespPart    `json:"summary"`
			Content []RespOutPart `json:"content"`
		}{it.Type, it.ID, it.Status, sum, parts(it.Content)})
	}
	type plain RespOutItem
	return json.Marshal(plain(it))
}
