package main

// The converter from the Responses wire types to the server's request
// form: the chatJob the chat endpoint builds (so that the three APIs render
// through one template-value builder and compile one kind of turn.Spec),
// plus what a Responses answer echoes and how its calls are named. Pure
// functions, tested by tables.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"conform/templates"
	"conform/turn"
)

// respHostedTools are the tool types of OpenAI's hosted tools: the server
// cannot run them, so it accepts and ignores them (agents such as Codex
// always send web_search), naming each in the X-Conform-Ignored-Tools
// header. The model is not told of them and cannot call them.
var respHostedTools = map[string]bool{
	"web_search": true, "web_search_preview": true, "web_search_2025_08_26": true, "web_search_preview_2025_03_11": true,
	"file_search": true, "computer": true, "computer_use_preview": true, "code_interpreter": true, "image_generation": true,
	"mcp": true, "local_shell": true, "shell": true, "apply_patch": true, "tool_search": true, "programmatic_tool_calling": true,
	"custom": true,
}

// respJob is a Responses request in the server's form: the chat job, what
// the answer echoes, and the function behind each turn tool name.
type respJob struct {
	*chatJob
	Echo         RespObject          // the request's settings as the response reports them
	Funcs        map[string]respFunc // turn tool name → the function as Responses names it
	IgnoredTools []string            // hosted and custom tools accepted and ignored, as "tools[i] (type)"
	MaxDefault   bool                // max_output_tokens was absent: the server's cap applies
}

// respFunc is a function as a function_call item names it: its name, and
// the namespace it was declared in ("" for a top-level function).
type respFunc struct {
	Namespace, Name string
}

// turnName is the tool name the model sees for a function: the name, or
// namespace.name inside a namespace (so that functions of two namespaces
// may share a name).
func (f respFunc) turnName() string {
	if f.Namespace == "" {
		return f.Name
	}
	return f.Namespace + "." + f.Name
}

// FromResponsesRequest validates r against the API and lim and converts
// it. maxDefault is the output cap of a request without max_output_tokens.
// Errors are *apiError (400) naming the parameter.
func FromResponsesRequest(r *ResponsesRequest, lim Limits, maxDefault int) (*respJob, error) {
	lim = lim.withDefaults()
	j := &respJob{chatJob: &chatJob{Model: r.Model}, Funcs: map[string]respFunc{}}
	if r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2) {
		return nil, badParam("temperature", "temperature must be between 0 and 2")
	}
	if r.Truncation != nil && *r.Truncation != "disabled" {
		return nil, unsupported("truncation", fmt.Sprintf("truncation %q is not supported: a conversation longer than the context is refused (truncation \"disabled\")", clipText(*r.Truncation, 32)))
	}
	if r.TopLogprobs != nil && *r.TopLogprobs != 0 {
		return nil, unsupported("top_logprobs", "top_logprobs is not supported on /v1/responses; use /v1/chat/completions with logprobs")
	}
	for i, inc := range r.Include {
		if inc != "reasoning.encrypted_content" {
			return nil, unsupported(fmt.Sprintf("include[%d]", i), fmt.Sprintf("include %q is not supported (only reasoning.encrypted_content, which this stateless server answers with the reasoning text itself)", clipText(inc, 64)))
		}
	}
	if r.Text != nil && r.Text.Verbosity != nil && *r.Text.Verbosity != "medium" {
		return nil, unsupported("text.verbosity", fmt.Sprintf("text.verbosity %q is not supported: the served model has no verbosity setting (send medium or omit it)", clipText(*r.Text.Verbosity, 16)))
	}
	msgs, err := respMessages(r.Instructions, r.Input, lim)
	if err != nil {
		return nil, err
	}
	if j.Messages, err = templateMessages(msgs); err != nil {
		return nil, err
	}
	if j.Tools, err = j.tools(r.Tools, lim); err != nil {
		return nil, err
	}
	if err := j.toolChoice(r.ToolChoice); err != nil {
		return nil, err
	}
	j.Spec.Parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	if r.MaxToolCalls != nil {
		switch {
		case *r.MaxToolCalls == 1:
			j.Spec.Parallel = false
		case *r.MaxToolCalls < 1:
			return nil, badParam("max_tool_calls", "max_tool_calls must be at least 1")
		default:
			return nil, unsupported("max_tool_calls", "max_tool_calls above 1 is not supported: a turn makes one call (max_tool_calls 1 or parallel_tool_calls false) or any number (omit it)")
		}
	}
	if err := j.reasoning(r.Reasoning); err != nil {
		return nil, err
	}
	format := RespFormat{Type: "text"}
	if r.Text != nil && r.Text.Format != nil {
		format = *r.Text.Format
		if j.Spec.Output, err = respOutput(format, lim); err != nil {
			return nil, err
		}
	}
	maxTok := r.MaxOutputTokens
	if maxTok == nil {
		j.MaxDefault = true
		maxTok = &maxDefault
	}
	g, err := genOf(sampling{maxTokens: maxTok, maxParam: "max_output_tokens", temperature: r.Temperature, topP: r.TopP, stream: r.Stream})
	if err != nil {
		return nil, err
	}
	j.Gen = g
	j.Echo = respEcho(r, format, j.Spec.Parallel)
	return j, nil
}

// reasoning reads reasoning.effort: none turns thinking off, the others
// bound the block as chat's reasoning_effort does (xhigh as high) and are
// handed to the template as reasoning_effort (gpt-oss's reads it). On a
// model that does not think it changes nothing (the handler says so).
func (j *respJob) reasoning(r *RespReasoning) error {
	if r == nil || r.Effort == nil {
		return nil
	}
	effort := *r.Effort
	if effort == "xhigh" {
		effort = "high"
	}
	b, ok := turn.EffortBudget(effort)
	if !ok {
		return badParam("reasoning.effort", fmt.Sprintf("reasoning.effort %q: want none, minimal, low, medium, high or xhigh", clipText(*r.Effort, 32)))
	}
	j.Thinking.Budget = &b
	j.Thinking.Off = b == 0
	j.TemplateVars = map[string]templates.Value{"reasoning_effort": templates.Str(effort)}
	return nil
}

// respEcho is the response object's settings part: what the request asked,
// with OpenAI's defaults for what it left out. store is always false: this
// server keeps nothing.
func respEcho(r *ResponsesRequest, format RespFormat, parallel bool) RespObject {
	o := RespObject{Object: "response", Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model,
		ParallelToolCalls: parallel, Temperature: 1, TopP: 1, Truncation: "disabled", Tools: r.Tools, Metadata: json.RawMessage("{}")}
	if r.Temperature != nil {
		o.Temperature = *r.Temperature
	}
	if r.TopP != nil {
		o.TopP = *r.TopP
	}
	if r.Reasoning != nil {
		o.Reasoning = RespReasoningEcho{Effort: r.Reasoning.Effort, Summary: r.Reasoning.Summary}
	}
	if o.Tools == nil {
		o.Tools = []RespTool{}
	}
	o.ToolChoice = json.RawMessage(`"auto"`)
	if !isNull(r.ToolChoice) {
		o.ToolChoice = bytes.TrimSpace(r.ToolChoice)
	}
	if !isNull(r.Metadata) {
		o.Metadata = bytes.TrimSpace(r.Metadata)
	}
	format.Schema = nil // the schema is the request's; the echo names the format
	o.Text = RespTextEcho{Format: format}
	return o
}

// respMessages converts instructions and input into the chat messages the
// template reads: instructions as a system message first; a string input
// as one user message; input items in order, where a message is its role
// and text (developer as system, as the chat endpoint does), consecutive
// function_call items join the assistant turn before them as its tool
// calls, a function_call_output is a tool message answering call_id, and a
// reasoning item's text goes with the assistant turn after it.
func respMessages(instructions *string, input json.RawMessage, lim Limits) ([]ChatMessage, error) {
	var out []ChatMessage
	if instructions != nil && *instructions != "" {
		out = append(out, ChatMessage{Role: "system", Content: rawString(*instructions)})
	}
	if isNull(input) {
		return nil, badParam("input", "input: Field required (this server is stateless: send the whole conversation)")
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		return append(out, ChatMessage{Role: "user", Content: rawString(s)}), nil
	}
	var items []RespItem
	if err := json.Unmarshal(input, &items); err != nil {
		return nil, badParam("input", "input must be a string or an array of input items")
	}
	if len(items) == 0 {
		return nil, badParam("input", "input must hold at least one item")
	}
	if len(items) > lim.MaxMessages {
		return nil, overLimit("input", "array_above_max_length", fmt.Sprintf("%d input items", len(items)), lim.MaxMessages, "max-messages")
	}
	// asst is the index in out of the assistant turn that function calls
	// join, or -1 when the next one starts a new turn; reasoning is the
	// text of reasoning items waiting for the assistant turn they precede.
	asst := -1
	reasoning := ""
	assistant := func(text string) {
		m := ChatMessage{Role: "assistant", Content: rawString(text)}
		setReasoning(&m, reasoning)
		reasoning = ""
		out = append(out, m)
		asst = len(out) - 1
	}
	for i, it := range items {
		p := fmt.Sprintf("input[%d]", i)
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		switch typ {
		case "message":
			text, err := respContentText(it.Content, p+".content")
			if err != nil {
				return nil, err
			}
			switch it.Role {
			case "assistant":
				assistant(text)
				continue
			case "user", "system", "developer":
			default:
				return nil, badParam(p+".role", fmt.Sprintf("%s.role %q: want user, system, developer or assistant", p, clipText(it.Role, 32)))
			}
			if reasoning != "" {
				assistant("") // reasoning that led to no answer is still the model's turn
			}
			out = append(out, ChatMessage{Role: it.Role, Content: rawString(text)})
			asst = -1
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, badParam(p, p+": a function_call item needs call_id and name")
			}
			if asst < 0 || reasoning != "" {
				assistant("")
			}
			name := respFunc{Namespace: it.Namespace, Name: it.Name}.turnName()
			out[asst].ToolCalls = append(out[asst].ToolCalls, ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: name, Arguments: it.Arguments}})
		case "function_call_output":
			if it.CallID == "" {
				return nil, badParam(p+".call_id", p+".call_id: Field required")
			}
			text, err := respContentText(it.Output, p+".output")
			if err != nil {
				return nil, err
			}
			out = append(out, ChatMessage{Role: "tool", ToolCallID: it.CallID, Content: rawString(text)})
			asst = -1
		case "reasoning":
			text, err := respReasoningText(it, p)
			if err != nil {
				return nil, err
			}
			if reasoning != "" && text != "" {
				reasoning += "\n\n"
			}
			reasoning += text
		case "item_reference":
			return nil, unsupported(p+".type", p+": item_reference is not supported: this server is stateless and stores no items; send the item itself")
		default:
			return nil, unsupported(p+".type", fmt.Sprintf("%s.type %q is not supported (message, function_call, function_call_output and reasoning)", p, clipText(typ, 48)))
		}
	}
	if reasoning != "" {
		assistant("")
	}
	return out, nil
}

// respContentText is a message's content, or a function_call_output's
// output, as text: a string, or its text parts joined (input_text,
// output_text, refusal). Images, files and audio are refused: this server
// serves text models.
func respContentText(raw json.RawMessage, param string) (string, error) {
	if isNull(raw) {
		return "", badParam(param, param+": Field required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []RespPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badParam(param, param+" must be a string or an array of content parts")
	}
	var b strings.Builder
	for k, pt := range parts {
		switch pt.Type {
		case "input_text", "output_text", "text":
			b.WriteString(pt.Text)
		case "refusal":
			b.WriteString(pt.Refusal)
		default:
			return "", unsupported(fmt.Sprintf("%s[%d].type", param, k), fmt.Sprintf("%s[%d].type %q is not supported (text parts only: input_text, output_text, refusal)", param, k, clipText(pt.Type, 32)))
		}
	}
	return b.String(), nil
}

// respReasoningText is a reasoning item's text: its reasoning_text content
// when present, else its summary texts joined by blank lines. An item with
// only encrypted_content (another server's opaque state) is refused: it
// cannot be read here.
func respReasoningText(it RespItem, p string) (string, error) {
	if !isNull(it.Content) {
		var parts []RespPart
		if err := json.Unmarshal(it.Content, &parts); err != nil {
			return "", badParam(p+".content", p+".content must be an array of reasoning_text parts")
		}
		var b strings.Builder
		for _, pt := range parts {
			b.WriteString(pt.Text)
		}
		if b.Len() > 0 {
			return b.String(), nil
		}
	}
	var texts []string
	for _, s := range it.Summary {
		texts = append(texts, s.Text)
	}
	if len(texts) == 0 && it.EncryptedContent != nil && *it.EncryptedContent != "" {
		return "", unsupported(p+".encrypted_content", p+": a reasoning item with only encrypted_content cannot be read by this server (it issues none); send its summary or content, or leave the item out")
	}
	return strings.Join(texts, "\n\n"), nil
}

// tools validates the tools, adds the callable ones to the spec (each
// function, and each function of a namespace as namespace.name) and
// returns the list handed to the chat template. Hosted and custom tools are
// accepted and recorded in IgnoredTools.
func (j *respJob) tools(defs []RespTool, lim Limits) (templates.Value, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	list := &templates.List{}
	add := func(t RespTool, ns, p string) error {
		if t.Name == "" {
			return badParam(p+".name", p+".name: Field required")
		}
		f := respFunc{Namespace: ns, Name: t.Name}
		name := f.turnName()
		if _, dup := j.Funcs[name]; dup {
			return badParam(p+".name", fmt.Sprintf("%s.name: the function %q is declared twice", p, clipText(name, 64)))
		}
		if len(j.Funcs) >= lim.MaxTools {
			return overLimit("tools", "array_above_max_length", fmt.Sprintf("more than %d functions", lim.MaxTools), lim.MaxTools, "max-tools")
		}
		params, err := toolParameters(t.Parameters, p+".parameters", lim)
		if err != nil {
			return err
		}
		// Responses functions are strict unless they say otherwise.
		strict := t.Strict == nil || *t.Strict
		j.Funcs[name] = f
		spec := turn.Tool{Name: name, Parameters: params, Strict: strict, Param: p + ".parameters"}
		j.Spec.Tools = append(j.Spec.Tools, spec)
		v, err := templateTool(name, t.Description, params, p+".parameters")
		if err != nil {
			return err
		}
		list.Items = append(list.Items, v)
		return nil
	}
	for i, t := range defs {
		p := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Type == "function":
			if err := add(t, "", p); err != nil {
				return nil, err
			}
		case t.Type == "namespace":
			if t.Name == "" {
				return nil, badParam(p+".name", p+".name: Field required")
			}
			for k, nt := range t.Tools {
				np := fmt.Sprintf("%s.tools[%d]", p, k)
				switch {
				case nt.Type == "function":
					if err := add(nt, t.Name, np); err != nil {
						return nil, err
					}
				case respHostedTools[nt.Type]:
					j.IgnoredTools = append(j.IgnoredTools, fmt.Sprintf("%s (%s)", np, nt.Type))
				default:
					return nil, badParam(np+".type", fmt.Sprintf("%s.type %q: a namespace holds function and custom tools", np, clipText(nt.Type, 48)))
				}
			}
		case respHostedTools[t.Type]:
			j.IgnoredTools = append(j.IgnoredTools, fmt.Sprintf("%s (%s)", p, t.Type))
		default:
			return nil, badParam(p+".type", fmt.Sprintf("%s.type %q: want function, namespace or one of OpenAI's hosted tool types", p, clipText(t.Type, 48)))
		}
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return list, nil
}

// toolChoice sets the spec's tool mode from tool_choice: "none", "auto",
// "required", {"type": "function", "name"} (exactly one call of it), or
// {"type": "allowed_tools", "mode": "auto"|"required", "tools": [...]},
// which keeps every tool in the prompt and lets the model call only the
// listed functions. A hosted tool type cannot be chosen: this server
// cannot run it.
func (j *respJob) toolChoice(raw json.RawMessage) error {
	spec := &j.Spec
	if isNull(raw) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		mode, ok := toolModeOf(s)
		if !ok {
			return badParam("tool_choice", fmt.Sprintf("tool_choice %q: want none, auto, required or an object", clipText(s, 32)))
		}
		spec.ToolMode = mode
		return j.needTools("tool_choice")
	}
	var o struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Mode  string `json:"mode"`
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return badParam("tool_choice", `tool_choice must be "none", "auto", "required", {"type": "function", "name": …} or {"type": "allowed_tools", …}`)
	}
	switch o.Type {
	case "function":
		if o.Name == "" {
			return badParam("tool_choice.name", "tool_choice.name: Field required")
		}
		if _, ok := j.Funcs[o.Name]; !ok {
			return badParam("tool_choice.name", fmt.Sprintf("tool_choice names %q, which is not among the functions", clipText(o.Name, 64)))
		}
		spec.ToolMode, spec.ToolName = turn.ToolNamed, o.Name
		return nil
	case "allowed_tools":
		switch o.Mode {
		case "auto", "":
			spec.ToolMode = turn.ToolAuto
		case "required":
			spec.ToolMode = turn.ToolRequired
		default:
			return badParam("tool_choice.mode", fmt.Sprintf("tool_choice.mode %q: want auto or required", clipText(o.Mode, 32)))
		}
		allowed := map[string]bool{}
		for k, t := range o.Tools {
			if t.Type != "function" || t.Name == "" {
				return badParam(fmt.Sprintf("tool_choice.tools[%d]", k), fmt.Sprintf("tool_choice.tools[%d]: only functions ({\"type\": \"function\", \"name\": …}) can be allowed", k))
			}
			if _, ok := j.Funcs[t.Name]; !ok {
				return badParam(fmt.Sprintf("tool_choice.tools[%d].name", k), fmt.Sprintf("tool_choice.tools[%d] names %q, which is not among the functions", k, clipText(t.Name, 64)))
			}
			allowed[t.Name] = true
		}
		kept := spec.Tools[:0:0]
		for _, t := range spec.Tools {
			if allowed[t.Name] {
				kept = append(kept, t)
			}
		}
		spec.Tools = kept
		return j.needTools("tool_choice.tools")
	}
	return unsupported("tool_choice.type", fmt.Sprintf("tool_choice.type %q is not supported: want function or allowed_tools (hosted tools cannot run on this server)", clipText(o.Type, 48)))
}

// needTools refuses a tool mode that asks for calls when no function can
// be called.
func (j *respJob) needTools(param string) error {
	if (j.Spec.ToolMode == turn.ToolRequired || j.Spec.ToolMode == turn.ToolNamed) && len(j.Spec.Tools) == 0 {
		return badParam(param, param+": required needs at least one function tool")
	}
	return nil
}

// respOutput is the turn output of text.format: text (none), json_object,
// or json_schema with name, schema and strict.
func respOutput(f RespFormat, lim Limits) (turn.Output, error) {
	switch f.Type {
	case "text":
		return turn.Output{}, nil
	case "json_object":
		return turn.Output{Kind: turn.OutputJSONObject, Param: "text.format"}, nil
	case "json_schema":
		if isNull(f.Schema) {
			return turn.Output{}, badParam("text.format.schema", "text.format.schema: Field required")
		}
		if !schemaName.MatchString(f.Name) {
			return turn.Output{}, badParam("text.format.name", fmt.Sprintf("text.format.name %q: use 1 to 64 of a-z, A-Z, 0-9, '_' and '-'", clipText(f.Name, 80)))
		}
		schema := bytes.TrimSpace(f.Schema)
		if err := checkSchemaText(schema, "text.format.schema", lim); err != nil {
			return turn.Output{}, err
		}
		return turn.Output{Kind: turn.OutputJSONSchema, Schema: schema, Strict: f.Strict != nil && *f.Strict, Param: "text.format.schema"}, nil
	}
	return turn.Output{}, badParam("text.format.type", fmt.Sprintf("text.format.type %q: want text, json_object or json_schema", clipText(f.Type, 32)))
}

// setReasoning gives an assistant message the reasoning text of the
// Responses reasoning items before it: templates that render earlier
// reasoning read it as reasoning_content.
func setReasoning(m *ChatMessage, text string) {
	if text != "" {
		m.ReasoningContent = text
	}
}
