package main

// The converters from OpenAI's wire types to the server's request form:
// validation against the API and the server's Limits, and the mapping of
// every field onto a turn.Spec, the template inputs and the generation
// parameters. Pure functions (no gin, no I/O), tested by tables.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"time"

	"conform/runner"
	"conform/sampler"
	"conform/templates"
	"conform/turn"
)

// Limits of the API, as OpenAI has them.
const (
	maxStop    = 4  // stop sequences
	maxChoices = 16 // n
)

// isNull reports whether a raw field is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
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

// chatJob is a chat request in the server's form: the template inputs
// (template values, their keys in the order templates expect), the turn
// spec, and the generation parameters.
type chatJob struct {
	Model    string
	Messages templates.Value // a *templates.List of message dicts
	Tools    templates.Value // a *templates.List of tool dicts, or nil
	// TemplateVars are further template variables (chat_template_kwargs,
	// reasoning_effort); nil means none.
	TemplateVars map[string]templates.Value
	// Thinking is what the request says of the model's reasoning;
	// chatTurn makes Spec.Reasoning of it once the prompt is rendered.
	Thinking chatThinking
	Spec     turn.Spec
	Gen      genParams
}

// chatThinking is what a request says of the model's thinking before its
// prompt is rendered. The zero value is the server's default: thinking as
// the chat template has it (Qwen3 thinks unless told not to, DeepSeek-V3.1
// only when told to), within --reasoning-budget. The Messages and
// Responses converters fill it from their APIs' thinking and reasoning
// fields.
type chatThinking struct {
	// Off: the request turned thinking off (chat_template_kwargs
	// enable_thinking or thinking false, a budget of 0, effort none).
	Off bool
	// Budget is the request's budget of the block in tokens; nil means
	// the server's --reasoning-budget.
	Budget *int
}

// reasoning is the turn's Reasoning for a model of reasoning format f, the
// server's default budget, and the rendered prompt (whose tail says
// whether the template opened or closed the block).
func (th chatThinking) reasoning(f turn.ReasoningFormat, serverBudget int, prompt string) turn.Reasoning {
	r := turn.Reasoning{Format: f, Enabled: !th.Off, Budget: serverBudget, Prompt: f.PromptState(prompt)}
	if th.Budget != nil {
		r.Budget = *th.Budget
	}
	return r
}

// reservedTemplateVars are the template variables a request's
// chat_template_kwargs may not set: the server binds them.
var reservedTemplateVars = map[string]bool{"messages": true, "tools": true, "documents": true, "add_generation_prompt": true, "bos_token": true, "eos_token": true}

// thinkingOf reads the reasoning fields of a chat request: the template
// variables of chat_template_kwargs (reasoning_effort added as one unless
// the kwargs set it), and the thinking settings.
// thinking_token_budget wins over the budget of reasoning_effort.
func thinkingOf(kwargs map[string]json.RawMessage, effort *string, budget *int) (chatThinking, map[string]templates.Value, error) {
	var th chatThinking
	var vars map[string]templates.Value
	set := func(k string, v templates.Value) {
		if vars == nil {
			vars = map[string]templates.Value{}
		}
		vars[k] = v
	}
	keys := make([]string, 0, len(kwargs))
	for k := range kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := "chat_template_kwargs." + clipText(k, 64)
		if reservedTemplateVars[k] {
			return th, nil, badParam(p, fmt.Sprintf("chat_template_kwargs may not set %q: the server binds it from the request", k))
		}
		v, err := templates.DecodeJSON(kwargs[k])
		if err != nil {
			return th, nil, badParam(p, "the value could not be read for the chat template: "+err.Error())
		}
		set(k, v)
		if (k == "enable_thinking" || k == "thinking") && string(bytes.TrimSpace(kwargs[k])) == "false" {
			th.Off = true
		}
	}
	if effort != nil {
		b, ok := turn.EffortBudget(*effort)
		if !ok {
			return th, nil, badParam("reasoning_effort", fmt.Sprintf("reasoning_effort %q: want none, minimal, low, medium or high", clipText(*effort, 32)))
		}
		th.Budget = &b
		if _, given := kwargs["reasoning_effort"]; !given {
			set("reasoning_effort", templates.Str(*effort))
		}
	}
	if budget != nil {
		if *budget < -1 {
			return th, nil, badParam("thinking_token_budget", "thinking_token_budget must be -1 (no limit), 0 (no thinking) or a token count")
		}
		b := *budget
		th.Budget = &b
	}
	if th.Budget != nil && *th.Budget == 0 {
		th.Off = true
	}
	return th, vars, nil
}

// templateVars returns vars with enable_thinking set to whether the
// request thinks, unless vars set it already, for a model whose reasoning
// format f is not none (vars as they are otherwise). Hybrid templates
// then render what the model expects: Qwen3 and GLM-4.5 the closed empty
// block when it does not think, DeepSeek-R1-Distill (llama.cpp's
// template) the opened block when it does, as llama-server passes it.
//
// A model that always thinks (gpt-oss: turn.ReasoningFormat.AlwaysThinks)
// knows no reasoning_effort none or minimal (its template writes
// "Reasoning: low", "medium" or "high"): those are handed to the template
// as low, the turn having mapped them to an empty analysis, the smallest
// budget.
func (th chatThinking) templateVars(vars map[string]templates.Value, f turn.ReasoningFormat) map[string]templates.Value {
	if f == "" || f == turn.ReasoningNone {
		return vars
	}
	_, given := vars["enable_thinking"]
	effort, _ := vars["reasoning_effort"].(templates.Str)
	low := f.AlwaysThinks() && (effort == "none" || effort == "minimal")
	if given && !low {
		return vars
	}
	out := make(map[string]templates.Value, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	if !given {
		out["enable_thinking"] = templates.Bool(!th.Off)
	}
	if low {
		out["reasoning_effort"] = templates.Str("low")
	}
	return out
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
	if err := lim.checkCounts(len(r.Messages), len(r.Tools)); err != nil {
		return nil, err
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
	if j.Thinking, j.TemplateVars, err = thinkingOf(r.ChatTemplateKwargs, r.ReasoningEffort, r.ThinkingTokenBudget); err != nil {
		return nil, err
	}
	if j.Tools, err = (structured{r.Tools, r.ToolChoice, r.ParallelToolCalls, r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice}).spec(lim, &j.Spec); err != nil {
		return nil, err
	}
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
		repetition: r.RepetitionPenalty, logprobs: r.Logprobs, topLogprobs: top, stream: r.Stream, streamOptions: r.StreamOptions,
	})
	if err != nil {
		return nil, err
	}
	j.Gen = g
	return j, nil
}

// structured is what a chat request and an explain request share of the
// constraint: the tools, tool_choice, parallel_tool_calls and the
// structured-output fields.
type structured struct {
	tools      []ToolDef
	toolChoice json.RawMessage
	parallel   *bool
	rf         *ResponseFormat
	so         *StructuredOutputs
	gJSON      json.RawMessage
	gRegex     *string
	gChoice    []string
}

// spec sets spec's tools, tool mode and output from st and returns the
// tools as the chat template sees them.
func (st structured) spec(lim Limits, spec *turn.Spec) (templates.Value, error) {
	tools, err := chatTools(st.tools, lim, spec)
	if err != nil {
		return nil, err
	}
	if err := parseToolChoice(st.toolChoice, spec); err != nil {
		return nil, err
	}
	spec.Parallel = st.parallel == nil || *st.parallel
	if spec.Output, err = outputOf(st.rf, st.so, st.gJSON, st.gRegex, st.gChoice, lim); err != nil {
		return nil, err
	}
	return tools, nil
}

// chatTools validates the tools, adds them to spec, and returns the list
// handed to the chat template (nil without tools). Templates read fields
// the API leaves optional (Hermes concatenates tool.description and
// iterates tool.parameters.properties), so the template input gives them
// neutral values: an empty description, and an object schema with empty
// properties, which is what OpenAI takes an absent parameters to mean.
func chatTools(defs []ToolDef, lim Limits, spec *turn.Spec) (templates.Value, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	tools := &templates.List{Items: make([]templates.Value, len(defs))}
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
		if tools.Items[i], err = templateTool(t.Function.Name, t.Function.Description, params, p+".function.parameters"); err != nil {
			return nil, err
		}
	}
	return tools, nil
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

// sampling gathers the generation fields both endpoints share (sampling,
// limits, streaming), so that they are checked in one place: the
// endpoints cannot drift apart.
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
	stream                    bool
	streamOptions             *StreamOptions
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
	g.Stream = s.stream
	if s.streamOptions != nil {
		if !s.stream {
			return g, badParam("stream_options", "stream_options is only allowed with stream: true")
		}
		g.IncludeUsage = s.streamOptions.IncludeUsage
	}
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

// toolModeOf is the tool mode of OpenAI's string tool_choice values (chat
// and Responses): none, auto, required.
func toolModeOf(s string) (turn.ToolMode, bool) {
	switch s {
	case "none":
		return turn.ToolNone, true
	case "auto":
		return turn.ToolAuto, true
	case "required":
		return turn.ToolRequired, true
	}
	return 0, false
}

func parseToolChoice(raw json.RawMessage, spec *turn.Spec) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		mode, ok := toolModeOf(s)
		if !ok {
			return badParam("tool_choice", fmt.Sprintf("tool_choice %q: want none, auto, required or a function", clipText(s, 32)))
		}
		spec.ToolMode = mode
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
		repetition: r.RepetitionPenalty, logprobs: r.Logprobs != nil, topLogprobs: top, stream: r.Stream, streamOptions: r.StreamOptions,
	})
	if err != nil {
		return nil, out, g, err
	}
	if g.MaxTokens == 0 {
		g.MaxTokens = 16 // OpenAI's default for /v1/completions
	}
	return prompts, out, g, nil
}
