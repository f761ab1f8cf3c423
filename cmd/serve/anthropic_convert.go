package main

// The converter from Anthropic's Messages wire types to the server's
// request form: the same chatJob the OpenAI chat endpoint builds, so that
// both APIs render through one template-value builder (templateMessages,
// toolParameters, templateTool) and compile one kind of turn.Spec. Pure
// functions, tested by tables.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"conform/templates"
	"conform/turn"
)

// maxAnthStop bounds stop_sequences (Anthropic documents no number; the
// bound keeps the runner's matching small).
const maxAnthStop = 16

// anthPrompt is what both Messages endpoints share: the conversation and
// the tools. FromMessagesRequest adds the generation parameters.
type anthPrompt struct {
	Model        string
	Messages     []AnthMessage
	System       json.RawMessage
	Tools        []AnthTool
	ToolChoice   *AnthToolChoice
	Thinking     *AnthThinking
	OutputConfig *AnthOutputCfg
	OutputFormat json.RawMessage
}

// FromMessagesRequest validates r against the API and lim and converts it.
// Errors are *apiError (400) naming the parameter.
func FromMessagesRequest(r *MessagesRequest, lim Limits) (*chatJob, error) {
	if r.MaxTokens == nil {
		return nil, badParam("max_tokens", "max_tokens: Field required")
	}
	if r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 1) {
		return nil, badParam("temperature", "temperature: must be between 0 and 1")
	}
	if th := r.Thinking; th != nil && th.Type == "enabled" && th.BudgetTokens >= *r.MaxTokens {
		return nil, badParam("max_tokens", fmt.Sprintf("max_tokens: must be greater than thinking.budget_tokens (%d), which it includes", th.BudgetTokens))
	}
	j, err := fromAnthPrompt(anthPrompt{Model: r.Model, Messages: r.Messages, System: r.System, Tools: r.Tools, ToolChoice: r.ToolChoice,
		Thinking: r.Thinking, OutputConfig: r.OutputConfig, OutputFormat: r.OutputFormat}, lim)
	if err != nil {
		return nil, err
	}
	g, err := genOf(sampling{maxTokens: r.MaxTokens, maxParam: "max_tokens", temperature: r.Temperature, topP: r.TopP, topK: r.TopK, stream: r.Stream})
	if err != nil {
		return nil, err
	}
	if len(r.StopSequences) > maxAnthStop {
		return nil, badParam("stop_sequences", fmt.Sprintf("stop_sequences: at most %d", maxAnthStop))
	}
	for _, s := range r.StopSequences {
		if s != "" {
			g.Stop = append(g.Stop, s)
		}
	}
	j.Gen = g
	return j, nil
}

// FromCountTokensRequest validates r and converts its prompt.
func FromCountTokensRequest(r *CountTokensRequest, lim Limits) (*chatJob, error) {
	return fromAnthPrompt(anthPrompt{Model: r.Model, Messages: r.Messages, System: r.System, Tools: r.Tools, ToolChoice: r.ToolChoice,
		Thinking: r.Thinking, OutputConfig: r.OutputConfig, OutputFormat: r.OutputFormat}, lim)
}

func fromAnthPrompt(p anthPrompt, lim Limits) (*chatJob, error) {
	lim = lim.withDefaults()
	if len(p.Messages) == 0 {
		return nil, badParam("messages", "messages: at least one message is required")
	}
	if err := lim.checkCounts(len(p.Messages), len(p.Tools)); err != nil {
		return nil, err
	}
	j := &chatJob{Model: p.Model}
	if p.Thinking != nil {
		switch p.Thinking.Type {
		case "adaptive":
			// The model decides, within --reasoning-budget: the
			// template's default.
		case "disabled":
			j.Thinking.Off = true
		case "enabled":
			// Anthropic's rule: at least 1024 tokens of thinking.
			if p.Thinking.BudgetTokens < 1024 {
				return nil, badParam("thinking.budget_tokens", "thinking.budget_tokens: must be at least 1024")
			}
			b := p.Thinking.BudgetTokens
			j.Thinking.Budget = &b
		default:
			return nil, badParam("thinking.type", fmt.Sprintf("thinking.type %q: want enabled, disabled or adaptive", clipText(p.Thinking.Type, 32)))
		}
	}
	if err := anthOutput(p, lim, &j.Spec); err != nil {
		return nil, err
	}
	msgs, err := anthChatMessages(p.System, p.Messages)
	if err != nil {
		return nil, err
	}
	if j.Messages, err = templateMessages(msgs); err != nil {
		return nil, err
	}
	if j.Tools, err = anthTools(p.Tools, lim, &j.Spec); err != nil {
		return nil, err
	}
	if err := anthToolChoice(p.ToolChoice, &j.Spec); err != nil {
		return nil, err
	}
	return j, nil
}

// anthOutput sets spec's output from output_config.format or the beta's
// output_format (one of them): {"type": "json_schema", "schema": …}.
// Anthropic's structured outputs are guaranteed, so the schema compiles
// strictly: a keyword this server cannot enforce exactly is refused.
func anthOutput(p anthPrompt, lim Limits, spec *turn.Spec) error {
	raw, param := p.OutputFormat, "output_format"
	if p.OutputConfig != nil && !isNull(p.OutputConfig.Format) {
		if !isNull(raw) {
			return badParam("output_format", "output_format and output_config.format both set the output format; give one (output_config.format)")
		}
		raw, param = p.OutputConfig.Format, "output_config.format"
	}
	if isNull(raw) {
		return nil
	}
	var f struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return badParam(param, param+": must be an object {\"type\": \"json_schema\", \"schema\": …}")
	}
	if f.Type != "json_schema" {
		return badParam(param+".type", fmt.Sprintf("%s.type %q: want json_schema", param, clipText(f.Type, 32)))
	}
	if isNull(f.Schema) {
		return badParam(param+".schema", param+".schema: Field required")
	}
	schema := bytes.TrimSpace(f.Schema)
	if err := checkSchemaText(schema, param+".schema", lim); err != nil {
		return err
	}
	spec.Output = turn.Output{Kind: turn.OutputJSONSchema, Schema: schema, Strict: true, Param: param + ".schema"}
	return nil
}

// unsupported is the 400 of a known field this server does not implement.
func unsupported(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "unsupported_parameter", Param: param, Msg: msg}
}

// rawString is s as a JSON string, the content form templateMessages reads.
func rawString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// anthChatMessages converts the system prompt and the messages into the
// OpenAI-style messages the chat template reads (templateMessages builds
// the values): system first; an assistant's text blocks joined as its
// content and its tool_use blocks as tool_calls (input as the arguments);
// a user's tool_result blocks as tool messages answering tool_use_id, in
// the order of the blocks, between the user text around them; an
// assistant's thinking blocks as its reasoning_content. A
// tool_result with is_error true has its text prefixed "Error: " (the
// templates have no error flag).
func anthChatMessages(system json.RawMessage, msgs []AnthMessage) ([]ChatMessage, error) {
	var out []ChatMessage
	if !isNull(system) {
		text, err := anthText(system, "system")
		if err != nil {
			return nil, err
		}
		out = append(out, ChatMessage{Role: "system", Content: rawString(text)})
	}
	for i, m := range msgs {
		p := fmt.Sprintf("messages.%d", i)
		if m.Role != "user" && m.Role != "assistant" {
			if m.Role == "system" {
				return nil, badParam(p+".role", fmt.Sprintf(`%s.role: Unexpected role "system". The Messages API accepts a top-level `+"`system`"+` parameter, not "system" as an input message role.`, p))
			}
			return nil, badParam(p+".role", fmt.Sprintf("%s.role: Input should be 'user' or 'assistant'", p))
		}
		if isNull(m.Content) {
			return nil, badParam(p+".content", p+".content: Field required")
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			out = append(out, ChatMessage{Role: m.Role, Content: rawString(s)})
			continue
		}
		var blocks []AnthBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, badParam(p+".content", p+".content: must be a string or an array of content blocks")
		}
		var text, thinking strings.Builder
		hasText := false
		flush := func() {
			if hasText {
				out = append(out, ChatMessage{Role: m.Role, Content: rawString(text.String())})
				text.Reset()
				hasText = false
			}
		}
		var asst *ChatMessage
		for k, b := range blocks {
			bp := fmt.Sprintf("%s.content.%d", p, k)
			switch b.Type {
			case "text":
				text.WriteString(b.Text)
				hasText = true
			case "thinking":
				if m.Role != "assistant" {
					return nil, badParam(bp+".type", bp+": thinking blocks belong to assistant messages")
				}
				thinking.WriteString(b.Thinking)
			case "redacted_thinking":
				return nil, unsupported(bp+".type", bp+": redacted_thinking blocks cannot be read by this server (it issues none); leave them out")
			case "tool_use":
				if m.Role != "assistant" {
					return nil, badParam(bp+".type", bp+": tool_use blocks belong to assistant messages")
				}
				if b.ID == "" || b.Name == "" {
					return nil, badParam(bp, bp+": a tool_use block needs id and name")
				}
				input := "{}"
				if !isNull(b.Input) {
					input = string(b.Input)
				}
				if asst == nil {
					asst = &ChatMessage{Role: "assistant"}
				}
				asst.ToolCalls = append(asst.ToolCalls, ToolCall{ID: b.ID, Type: "function", Function: FunctionCall{Name: b.Name, Arguments: input}})
			case "tool_result":
				if m.Role != "user" {
					return nil, badParam(bp+".type", bp+": tool_result blocks belong to user messages")
				}
				if b.ToolUseID == "" {
					return nil, badParam(bp+".tool_use_id", bp+".tool_use_id: Field required")
				}
				flush()
				res, err := anthText(b.Content, bp+".content")
				if err != nil {
					return nil, err
				}
				if b.IsError {
					res = "Error: " + res
				}
				out = append(out, ChatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: rawString(res)})
			default:
				return nil, badParam(bp+".type", fmt.Sprintf("%s.type: content block type %q is not supported (text, thinking, tool_use and tool_result)", bp, clipText(b.Type, 32)))
			}
		}
		if asst != nil || thinking.Len() > 0 {
			// One assistant turn: its thinking, its text, then its calls.
			if asst == nil {
				asst = &ChatMessage{Role: "assistant"}
			}
			asst.Content = rawString(text.String())
			asst.ReasoningContent = thinking.String()
			out = append(out, *asst)
			continue
		}
		flush()
	}
	return out, nil
}

// anthText reads a system prompt or a tool_result content: a string, or
// an array of text blocks joined (cache_control accepted and ignored).
func anthText(raw json.RawMessage, param string) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []AnthBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", badParam(param, param+": must be a string or an array of text blocks")
	}
	var b strings.Builder
	for k, bl := range blocks {
		if bl.Type != "text" {
			return "", badParam(fmt.Sprintf("%s.%d.type", param, k), fmt.Sprintf("%s.%d.type: block type %q is not supported here (text only)", param, k, clipText(bl.Type, 32)))
		}
		b.WriteString(bl.Text)
	}
	return b.String(), nil
}

// anthTools validates the tools, adds them to spec and returns the list
// the chat template reads, built by the OpenAI endpoint's builders.
func anthTools(defs []AnthTool, lim Limits, spec *turn.Spec) (templates.Value, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	list := &templates.List{Items: make([]templates.Value, len(defs))}
	for i, t := range defs {
		p := fmt.Sprintf("tools.%d", i)
		if t.Type != "" && t.Type != "custom" {
			return nil, unsupported(p+".type", fmt.Sprintf("%s.type: tool type %q is not supported: this server runs no server tools; define client tools with name and input_schema", p, clipText(t.Type, 48)))
		}
		if t.Name == "" {
			return nil, badParam(p+".name", p+".name: Field required")
		}
		if isNull(t.InputSchema) {
			return nil, badParam(p+".input_schema", p+".input_schema: Field required")
		}
		params, err := toolParameters(t.InputSchema, p+".input_schema", lim)
		if err != nil {
			return nil, err
		}
		spec.Tools = append(spec.Tools, turn.Tool{Name: t.Name, Parameters: t.InputSchema, Strict: t.Strict != nil && *t.Strict, Param: p + ".input_schema"})
		if list.Items[i], err = templateTool(t.Name, t.Description, params, p+".input_schema"); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// anthToolChoice sets spec's tool mode: auto (the default), any (calls
// only), tool (exactly one call of name), none; disable_parallel_tool_use
// allows one call at most.
func anthToolChoice(tc *AnthToolChoice, spec *turn.Spec) error {
	spec.Parallel = tc == nil || !tc.DisableParallelToolUse
	if tc == nil {
		return nil
	}
	switch tc.Type {
	case "auto":
		spec.ToolMode = turn.ToolAuto
	case "any":
		spec.ToolMode = turn.ToolRequired
	case "none":
		spec.ToolMode = turn.ToolNone
	case "tool":
		if tc.Name == "" {
			return badParam("tool_choice.name", "tool_choice.name: Field required")
		}
		spec.ToolMode = turn.ToolNamed
		spec.ToolName = tc.Name
	default:
		return badParam("tool_choice.type", fmt.Sprintf("tool_choice.type %q: want auto, any, tool or none", clipText(tc.Type, 32)))
	}
	if spec.ToolMode != turn.ToolNone && len(spec.Tools) == 0 {
		return badParam("tool_choice", "tool_choice: requires tools")
	}
	return nil
}
