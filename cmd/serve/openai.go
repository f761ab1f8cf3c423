package main

// OpenAI wire types and the pure converters between them and the server's
// own request form (STYLE "HTTP layer": no gin, no I/O here).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"conform/runner"
	"conform/sampler"
	"conform/turn"
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

// Limits of the API, as OpenAI has them.
const (
	maxStop    = 4  // stop sequences
	maxChoices = 16 // n
)

// Limits bounds what one request may ask for, so that the expensive steps
// (rendering the chat template, tokenizing, compiling a constraint) only
// ever see inputs of a bounded size. Each is checked before the step it
// protects, and a request over one gets a 400 that names the limit and its
// flag. The zero value of a field means its default (config.go).
type Limits struct {
	MaxMessages    int // messages of a chat request (--max-messages)
	MaxTools       int // tools of a chat request (--max-tools)
	MaxPromptBytes int // the rendered chat prompt, or each completions prompt (--max-prompt-bytes)
	MaxSchemaBytes int // each schema, regex or choice list (--max-schema-bytes)
	MaxSchemaDepth int // the JSON nesting of each schema (--max-schema-depth)
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMessages, DefaultMaxMessages)
	def(&l.MaxTools, DefaultMaxTools)
	def(&l.MaxPromptBytes, DefaultMaxPromptBytes)
	def(&l.MaxSchemaBytes, DefaultMaxSchemaBytes)
	def(&l.MaxSchemaDepth, DefaultMaxSchemaDepth)
	return l
}

// overLimit is the 400 of a request over one of the server's limits: it says
// which limit, the size asked, and the flag that raises it.
func overLimit(param, code, what string, limit int, flag string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Param: param,
		Msg: fmt.Sprintf("%s, over the limit of %d (--%s, %s)", what, limit, flag, envName(flag))}
}

// ignoredFields are the request fields accepted and ignored, with why they
// may be: none changes the output. They are listed back in the
// X-Conform-Ignored header.
var ignoredFields = map[string]string{
	"store":                   "stored completions are an OpenAI platform feature",
	"metadata":                "tags for stored completions",
	"service_tier":            "scheduling on OpenAI's side",
	"prompt_cache_key":        "a cache hint; the KV cache is reused by prefix anyway",
	"safety_identifier":       "an end-user id for abuse monitoring",
	"prediction":              "predicted outputs change latency, not the output",
	"guided_decoding_backend": "Conform has one structured-output engine",
}

// refusedFields are request fields of OpenAI or vLLM that this server knows
// and does not implement, with what to do instead. Each would change the
// output, so it is refused rather than ignored.
var refusedFields = map[string]string{
	"functions":                 "the legacy functions parameter is not supported: send tools",
	"function_call":             "the legacy function_call parameter is not supported: send tool_choice",
	"audio":                     "audio output is not supported (text only)",
	"web_search_options":        "web search is not supported",
	"reasoning_effort":          "reasoning_effort is not supported: the model is not served as a reasoning model",
	"verbosity":                 "verbosity is not supported",
	"guided_grammar":            "guided_grammar (a context-free grammar) is not supported; the constraint kinds are guided_json, guided_regex and guided_choice",
	"guided_whitespace_pattern": "guided_whitespace_pattern is not supported: the whitespace JSON output may take is bounded by the server",
	"suffix":                    "suffix (text insertion) is not supported",
}

// jsonFields returns the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

var (
	chatFields       = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[ChatRequest]()) })
	completionFields = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[CompletionRequest]()) })
)

// invalidJSON is the 400 of a body that is not a JSON request at all.
func invalidJSON(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_json", Msg: msg}
}

// decodeRequest decodes a request body into v (*ChatRequest or
// *CompletionRequest) and returns the ignored fields it carried. It refuses
// a body that is not UTF-8, not exactly one JSON object (trailing data
// included), a field this server does not implement (unknown_parameter, or
// unsupported_parameter for a known one, see refusedFields), and a field of
// the wrong JSON type (invalid_type, naming it).
func decodeRequest(body []byte, v any) (ignored []string, err error) {
	var known map[string]bool
	switch v.(type) {
	case *ChatRequest:
		known = chatFields()
	case *CompletionRequest:
		known = completionFields()
	default:
		return nil, fmt.Errorf("decodeRequest: unexpected %T", v)
	}
	if !utf8.Valid(body) {
		return nil, invalidJSON("the request body is not valid UTF-8")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case len(bytes.TrimSpace(body)) == 0:
			return nil, invalidJSON("the request body is empty: send a JSON object")
		case errors.As(err, &se):
			return nil, invalidJSON(fmt.Sprintf("the request body is not valid JSON (at byte %d): %v", se.Offset, err))
		case errors.As(err, &te):
			return nil, invalidJSON(fmt.Sprintf("the request body must be a JSON object, not %s", te.Value))
		}
		return nil, invalidJSON("the request body is not valid JSON: " + err.Error())
	}
	if fields == nil {
		return nil, invalidJSON("the request body must be a JSON object, not null")
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case known[k]:
		case bytes.Equal(bytes.TrimSpace(fields[k]), []byte("null")):
			// null is "not set" (clients send explicit nulls for
			// defaults): nothing to refuse, nothing changes the output.
			ignored = append(ignored, k)
		case ignoredFields[k] != "":
			ignored = append(ignored, k)
		case refusedFields[k] != "":
			return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsupported_parameter", Param: k, Msg: refusedFields[k]}
		default:
			return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unknown_parameter", Param: k,
				Msg: fmt.Sprintf("unknown parameter %q: this server refuses the parameters it does not implement rather than ignore them (see the README's supported parameters)", clipText(k, 64))}
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			param := te.Field
			what := "the request body"
			if param != "" {
				what = param
			}
			return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_type", Param: param,
				Msg: fmt.Sprintf("%s must be %s, not %s", what, jsonTypeName(te.Type), te.Value)}
		}
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Msg: "the request body does not fit this endpoint: " + err.Error()}
	}
	return ignored, nil
}

// jsonTypeName names the JSON form of a Go type for a type error.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer (in range)"
	case reflect.Float32, reflect.Float64:
		return "a number (in range)"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another JSON type"
}

// clipText shortens user text quoted in an error message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// isNull reports whether a raw field is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// checkSchemaText bounds a schema's size and JSON nesting before anything
// parses it further (grammar compiles it later; both limits keep that step
// small).
func checkSchemaText(raw json.RawMessage, param string, lim Limits) error {
	if len(raw) > lim.MaxSchemaBytes {
		return overLimit(param, "schema_too_large", fmt.Sprintf("the schema is %d bytes", len(raw)), lim.MaxSchemaBytes, "max-schema-bytes")
	}
	if d := jsonDepth(raw, lim.MaxSchemaDepth); d > lim.MaxSchemaDepth {
		return overLimit(param, "schema_too_deep", fmt.Sprintf("the schema nests at least %d levels deep", d), lim.MaxSchemaDepth, "max-schema-depth")
	}
	return nil
}

// jsonDepth returns the nesting depth of a valid JSON text, stopping at
// limit+1.
func jsonDepth(b []byte, limit int) int {
	depth, deepest := 0, 0
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// schemaName is what OpenAI accepts as response_format.json_schema.name.
var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

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

// request is the turn request of g over t and the tokenized prompts (each
// generated g.N times); maxParam and promptParam name the request fields
// the budget errors speak of.
func (g genParams) request(t *turn.Turn, prompts [][]runner.TokenID, start time.Time, maxParam, promptParam string) turn.Request {
	return turn.Request{Turn: t, Prompts: prompts, N: g.N, Sampling: g.Params, Seeded: g.SeedSet, MaxTokens: g.MaxTokens, Stop: g.Stop,
		Start: start, MaxTokensParam: maxParam, PromptParam: promptParam}
}

// chatMaxParam names the field that set a chat request's token limit.
func chatMaxParam(r *ChatRequest) string {
	if r.MaxCompletionTokens != nil {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// chatJob is a chat request in the server's form: the template inputs (JSON
// that keeps key order), the constraint spec (Format and IsSpecial are filled
// in by the server from the model), and the generation parameters.
type chatJob struct {
	Model    string
	Messages []byte // JSON array for templates.DecodeJSON
	Tools    []byte // JSON array, or nil
	Spec     turn.Spec
	Gen      genParams
}

// FromChatRequest validates r against the API and lim and converts it.
// Errors are *apiError (400) naming the parameter. The size limits come
// first, so that nothing below runs on an unbounded input.
func FromChatRequest(r *ChatRequest, lim Limits) (*chatJob, error) {
	lim = lim.withDefaults()
	j := &chatJob{Model: r.Model}
	if len(r.Messages) == 0 {
		return nil, badParam("messages", "messages must hold at least one message")
	}
	if len(r.Messages) > lim.MaxMessages {
		return nil, overLimit("messages", "array_above_max_length", fmt.Sprintf("%d messages", len(r.Messages)), lim.MaxMessages, "max-messages")
	}
	if len(r.Tools) > lim.MaxTools {
		return nil, overLimit("tools", "array_above_max_length", fmt.Sprintf("%d tools", len(r.Tools)), lim.MaxTools, "max-tools")
	}
	if r.BestOf != nil && *r.BestOf != 1 {
		return nil, badParam("best_of", fmt.Sprintf("best_of %d: only 1 is supported (this server does not rank candidates; use n for several choices)", *r.BestOf))
	}
	for i, m := range r.Modalities {
		if m != "text" {
			return nil, badParam(fmt.Sprintf("modalities[%d]", i), fmt.Sprintf("modality %q is not supported (text only)", clipText(m, 32)))
		}
	}
	msgs, err := templateMessages(r.Messages)
	if err != nil {
		return nil, err
	}
	j.Messages = msgs
	if j.Tools, err = chatTools(r.Tools, lim, &j.Spec); err != nil {
		return nil, err
	}
	if err := parseToolChoice(r.ToolChoice, &j.Spec); err != nil {
		return nil, err
	}
	j.Spec.Parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	out, err := outputOf(r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice, lim)
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

// chatTools validates the tools, adds them to spec, and returns the JSON
// array handed to the chat template (nil without tools). Templates read
// fields the API leaves optional (Hermes concatenates tool.description and
// iterates tool.parameters.properties), so the template input gives them
// neutral values: an empty description, and an object schema with empty
// properties, which is what OpenAI takes an absent parameters to mean.
func chatTools(defs []ToolDef, lim Limits, spec *turn.Spec) ([]byte, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	tools := make([]map[string]any, len(defs))
	for i, t := range defs {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, badParam(p+".type", fmt.Sprintf("tool type %q is not supported (only \"function\")", clipText(t.Type, 32)))
		}
		params, err := toolParameters(t.Function.Parameters, p+".function.parameters", lim)
		if err != nil {
			return nil, err
		}
		spec.Tools = append(spec.Tools, turn.Tool{Name: t.Function.Name, Parameters: t.Function.Parameters, Strict: t.Function.Strict != nil && *t.Function.Strict})
		tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": t.Function.Name, "description": t.Function.Description, "parameters": params}}
	}
	b, err := marshalOrdered(tools, []string{"type", "function", "name", "description", "parameters"})
	if err != nil {
		return nil, badParam("tools", err.Error())
	}
	return b, nil
}

// toolParameters checks a tool's parameters (a JSON Schema of an object,
// within the schema limits) and returns the form the template sees: the
// schema itself, with "properties": {} added when it has none.
func toolParameters(raw json.RawMessage, param string, lim Limits) (json.RawMessage, error) {
	lim = lim.withDefaults()
	if isNull(raw) {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	raw = bytes.TrimSpace(raw)
	if err := checkSchemaText(raw, param, lim); err != nil {
		return nil, err
	}
	if raw[0] != '{' {
		return nil, badParam(param, "parameters must be a JSON Schema object describing the arguments object")
	}
	var top struct {
		Type       json.RawMessage `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, badParam(param, "parameters must be a JSON Schema object: "+err.Error())
	}
	if !isNull(top.Type) {
		var one string
		var many []string
		ok := json.Unmarshal(top.Type, &one) == nil && one == "object" ||
			json.Unmarshal(top.Type, &many) == nil && len(many) == 1 && many[0] == "object"
		if !ok {
			return nil, badParam(param, fmt.Sprintf(`parameters must describe an object (type "object"), not type %s: a call's arguments are a JSON object`, clipText(string(top.Type), 40)))
		}
	}
	if top.Properties == nil {
		// raw is a valid JSON object: add the member before its brace.
		body := bytes.TrimSpace(raw[:len(raw)-1])
		sep := ","
		if len(body) == 1 {
			sep = "" // {}
		}
		return append(append(bytes.Clone(body), sep...), `"properties":{}}`...), nil
	}
	return raw, nil
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

func parseToolChoice(raw json.RawMessage, spec *turn.Spec) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "none":
			spec.ToolMode = turn.ToolNone
		case "auto":
			spec.ToolMode = turn.ToolAuto
		case "required":
			spec.ToolMode = turn.ToolRequired
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
	spec.ToolMode = turn.ToolNamed
	spec.ToolName = o.Function.Name
	return nil
}

// outputOf turns the structured-output fields into one turn.Output; at
// most one of them may ask for a constraint. Each schema, regex and choice
// list is bounded by lim before anything compiles it, and a constraint kind
// this server does not implement is refused: ignoring it would answer
// unconstrained.
func outputOf(rf *ResponseFormat, so *StructuredOutputs, gJSON json.RawMessage, gRegex *string, gChoice []string, lim Limits) (turn.Output, error) {
	lim = lim.withDefaults()
	var outs []turn.Output
	schema := func(raw json.RawMessage, param string, strict bool) error {
		if err := checkSchemaText(bytes.TrimSpace(raw), param, lim); err != nil {
			return err
		}
		outs = append(outs, turn.Output{Kind: turn.OutputJSONSchema, Schema: raw, Strict: strict, Param: param})
		return nil
	}
	regex := func(re, param string) error {
		if len(re) > lim.MaxSchemaBytes {
			return overLimit(param, "schema_too_large", fmt.Sprintf("the regex is %d bytes", len(re)), lim.MaxSchemaBytes, "max-schema-bytes")
		}
		outs = append(outs, turn.Output{Kind: turn.OutputRegex, Regex: re, Param: param})
		return nil
	}
	choice := func(cs []string, param string) error {
		n := 0
		for _, c := range cs {
			n += len(c) + 1
		}
		if n > lim.MaxSchemaBytes {
			return overLimit(param, "schema_too_large", fmt.Sprintf("the choices take %d bytes", n), lim.MaxSchemaBytes, "max-schema-bytes")
		}
		outs = append(outs, turn.Output{Kind: turn.OutputChoice, Choice: cs, Param: param})
		return nil
	}
	if rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			outs = append(outs, turn.Output{Kind: turn.OutputJSONObject, Param: "response_format"})
		case "json_schema":
			js := rf.JSONSchema
			if js == nil || isNull(js.Schema) {
				return turn.Output{}, badParam("response_format.json_schema.schema", "json_schema needs a schema")
			}
			if !schemaName.MatchString(js.Name) {
				return turn.Output{}, badParam("response_format.json_schema.name",
					fmt.Sprintf("json_schema.name %q: use 1 to 64 of a-z, A-Z, 0-9, '_' and '-'", clipText(js.Name, 80)))
			}
			if err := schema(js.Schema, "response_format.json_schema.schema", js.Strict != nil && *js.Strict); err != nil {
				return turn.Output{}, err
			}
		default:
			return turn.Output{}, badParam("response_format.type", fmt.Sprintf("response_format type %q: want text, json_object or json_schema", clipText(rf.Type, 32)))
		}
	}
	if so != nil {
		if len(so.Unknown) > 0 {
			k := so.Unknown[0]
			return turn.Output{}, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsupported_parameter", Param: "structured_outputs." + clipText(k, 64),
				Msg: fmt.Sprintf("structured_outputs.%s is not supported; the kinds are %s", clipText(k, 64), structuredKinds)}
		}
		n := len(outs)
		if !isNull(so.JSON) {
			if err := schema(so.JSON, "structured_outputs.json", false); err != nil {
				return turn.Output{}, err
			}
		}
		if so.Regex != nil {
			if err := regex(*so.Regex, "structured_outputs.regex"); err != nil {
				return turn.Output{}, err
			}
		}
		if so.Choice != nil {
			if err := choice(so.Choice, "structured_outputs.choice"); err != nil {
				return turn.Output{}, err
			}
		}
		if so.JSONObject != nil && *so.JSONObject {
			outs = append(outs, turn.Output{Kind: turn.OutputJSONObject, Param: "structured_outputs.json_object"})
		}
		if len(outs) == n {
			return turn.Output{}, badParam("structured_outputs", "structured_outputs needs one of "+structuredKinds)
		}
	}
	if !isNull(gJSON) {
		if err := schema(gJSON, "guided_json", false); err != nil {
			return turn.Output{}, err
		}
	}
	if gRegex != nil {
		if err := regex(*gRegex, "guided_regex"); err != nil {
			return turn.Output{}, err
		}
	}
	if gChoice != nil {
		if err := choice(gChoice, "guided_choice"); err != nil {
			return turn.Output{}, err
		}
	}
	switch len(outs) {
	case 0:
		return turn.Output{}, nil
	case 1:
		return outs[0], nil
	}
	return turn.Output{}, badParam(outs[1].Param, fmt.Sprintf("%s and %s both constrain the output; give one", outs[0].Param, outs[1].Param))
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
// arguments decoded, and each tool message given the name of the function
// its tool_call_id answers (OpenAI's tool messages carry only the id, and
// templates such as Hermes' refuse a tool message without a name). A
// tool_call_id that answers no earlier call is refused, as OpenAI does.
func templateMessages(msgs []ChatMessage) ([]byte, error) {
	out := make([]templateMessage, len(msgs))
	calls := map[string]string{} // tool_call_id → function name, from earlier assistant messages
	for i, m := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		tm := templateMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		switch m.Role {
		case "system", "user", "assistant":
		case "developer":
			tm.Role = "system"
		case "tool":
		case "function":
			return nil, badParam(p+".role", `role "function" (the legacy functions API) is not supported: answer tool calls with role "tool" and tool_call_id`)
		default:
			return nil, badParam(p+".role", fmt.Sprintf("role %q: want system, developer, user, assistant or tool", clipText(m.Role, 32)))
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return nil, badParam(p+".tool_calls", "only assistant messages carry tool_calls")
		}
		if m.Role == "tool" {
			if m.ToolCallID == "" {
				return nil, badParam(p+".tool_call_id", "a tool message needs tool_call_id")
			}
			name, ok := calls[m.ToolCallID]
			if !ok {
				return nil, badParam(p+".tool_call_id", fmt.Sprintf("tool_call_id %q answers no tool call of an earlier assistant message", clipText(m.ToolCallID, 64)))
			}
			if tm.Name == "" {
				tm.Name = name
			}
		}
		if isNull(m.Content) && !(m.Role == "assistant" && len(m.ToolCalls) > 0) {
			if m.Role == "assistant" {
				return nil, badParam(p+".content", "an assistant message needs content or tool_calls")
			}
			return nil, badParam(p+".content", fmt.Sprintf("a %s message needs content (a string or an array of text parts)", m.Role))
		}
		text, err := contentText(m.Content, p+".content")
		if err != nil {
			return nil, err
		}
		tm.Content = text
		for k, tc := range m.ToolCalls {
			cp := fmt.Sprintf("%s.tool_calls[%d]", p, k)
			if tc.Function.Name == "" {
				return nil, badParam(cp+".function.name", "a tool call needs a function name")
			}
			typ := tc.Type
			if typ == "" {
				typ = "function"
			}
			if typ != "function" {
				return nil, badParam(cp+".type", fmt.Sprintf("tool call type %q is not supported (only \"function\")", clipText(typ, 32)))
			}
			args := json.RawMessage(strings.TrimSpace(tc.Function.Arguments))
			if !json.Valid(args) {
				b, _ := json.Marshal(tc.Function.Arguments)
				args = b
			}
			if tc.ID != "" {
				calls[tc.ID] = tc.Function.Name
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

// completionPrompt is one prompt of a completions request: text to
// tokenize, or token ids as given (Tokens not nil).
type completionPrompt struct {
	Text   string
	Tokens []runner.TokenID
}

// maxTokenID bounds a prompt token id before the model's vocabulary is
// known (the handler checks the vocabulary): no vocabulary has 2^31 tokens.
const maxTokenID = 1<<31 - 1

// parsePrompt reads a completions prompt in OpenAI's four forms: a string,
// an array of strings, an array of token ids, or an array of arrays of token
// ids. Token ids are non-negative integers; nothing is nested deeper.
func parsePrompt(raw json.RawMessage) ([]completionPrompt, error) {
	const forms = "prompt must be a string, an array of strings, an array of token ids or an array of arrays of token ids"
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, badParam("prompt", "prompt is required")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, badParam("prompt", "prompt must not be empty")
		}
		return []completionPrompt{{Text: one}}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, badParam("prompt", forms)
	}
	if len(items) == 0 {
		return nil, badParam("prompt", "prompt must not be an empty array")
	}
	tokenList := func(items []json.RawMessage, param string) ([]runner.TokenID, error) {
		ids := make([]runner.TokenID, len(items))
		for k, it := range items {
			// A JSON number (the decoder validated it), written as an
			// integer: not a string, array or fraction.
			it = bytes.TrimSpace(it)
			if len(it) == 0 || it[0] != '-' && (it[0] < '0' || it[0] > '9') {
				return nil, badParam(fmt.Sprintf("%s[%d]", param, k), forms+" (not a mix)")
			}
			id, err := strconv.ParseInt(string(it), 10, 64)
			if err != nil || id < 0 || id > maxTokenID {
				return nil, badParam(fmt.Sprintf("%s[%d]", param, k), fmt.Sprintf("token id %s is not a non-negative integer in range", clipText(string(it), 32)))
			}
			ids[k] = runner.TokenID(id)
		}
		return ids, nil
	}
	switch bytes.TrimSpace(items[0])[0] {
	case '"':
		out := make([]completionPrompt, len(items))
		for i, it := range items {
			if json.Unmarshal(it, &out[i].Text) != nil {
				return nil, badParam(fmt.Sprintf("prompt[%d]", i), forms+" (not a mix)")
			}
			if out[i].Text == "" {
				return nil, badParam(fmt.Sprintf("prompt[%d]", i), "prompt must not be empty")
			}
		}
		return out, nil
	case '[':
		out := make([]completionPrompt, len(items))
		for i, it := range items {
			var inner []json.RawMessage
			if json.Unmarshal(it, &inner) != nil {
				return nil, badParam(fmt.Sprintf("prompt[%d]", i), forms+" (not a mix)")
			}
			if len(inner) == 0 {
				return nil, badParam(fmt.Sprintf("prompt[%d]", i), "a token prompt must not be empty")
			}
			ids, err := tokenList(inner, fmt.Sprintf("prompt[%d]", i))
			if err != nil {
				return nil, err
			}
			out[i].Tokens = ids
		}
		return out, nil
	}
	ids, err := tokenList(items, "prompt")
	if err != nil {
		return nil, err
	}
	return []completionPrompt{{Tokens: ids}}, nil
}

// FromCompletionRequest validates r against the API and lim and converts it:
// the prompts, the output constraint and the generation parameters.
func FromCompletionRequest(r *CompletionRequest, lim Limits) (prompts []completionPrompt, out turn.Output, g genParams, err error) {
	lim = lim.withDefaults()
	if prompts, err = parsePrompt(r.Prompt); err != nil {
		return nil, out, g, err
	}
	for i, p := range prompts {
		if len(p.Text) > lim.MaxPromptBytes {
			return nil, out, g, overLimit(fmt.Sprintf("prompt[%d]", i), "prompt_too_large", fmt.Sprintf("the prompt is %d bytes", len(p.Text)), lim.MaxPromptBytes, "max-prompt-bytes")
		}
	}
	if r.Echo {
		return nil, out, g, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsupported_parameter", Param: "echo", Msg: "echo is not supported"}
	}
	if r.BestOf != nil && *r.BestOf != 1 {
		return nil, out, g, badParam("best_of", fmt.Sprintf("best_of %d: only 1 is supported (this server does not rank candidates; use n for several choices)", *r.BestOf))
	}
	if out, err = outputOf(r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice, lim); err != nil {
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
		if !r.Stream {
			return nil, out, g, badParam("stream_options", "stream_options is only allowed with stream: true")
		}
		g.IncludeUsage = r.StreamOptions.IncludeUsage
	}
	return prompts, out, g, nil
}

// finishReason is the OpenAI finish_reason of a runner finish for a
// generation that made calls tool calls.
func finishReason(f runner.FinishReason, calls int) string {
	return openAIReason(turn.ReasonOf(f, calls))
}

// openAIFinish is the OpenAI finish_reason of a choice's finish.
func openAIFinish(f *turn.Finish) string {
	if f == nil {
		return "stop"
	}
	return openAIReason(f.Reason)
}

// openAIReason maps a turn's finish reason to OpenAI's three: tool_calls,
// length (the token limit or the context), and stop for the rest (the
// model's end, a stop sequence).
func openAIReason(r turn.FinishReason) string {
	switch r {
	case turn.FinishToolCalls:
		return "tool_calls"
	case turn.FinishLength, turn.FinishContext:
		return "length"
	}
	return "stop"
}

// ToUsage converts a request's usage (turn.SumUsage over its choices).
func ToUsage(u runner.Usage) *Usage {
	return &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails: &PromptTokensDetails{CachedTokens: u.CachedTokens}}
}

// ToUnenforced converts constraint warnings for the response.
func ToUnenforced(us []turn.Unenforced) []UnenforcedKw {
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
func UnenforcedHeader(us []turn.Unenforced) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = u.String()
	}
	return strings.Join(s, ", ")
}

// ToChatCalls converts parsed calls into the response's tool_calls.
func ToChatCalls(calls []turn.Call, ids []string) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: ids[i], Type: "function", Function: FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}
