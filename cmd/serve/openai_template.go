package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"conform/templates"
)

// The template inputs of a chat request, built as template values straight
// from the decoded request: each message and tool is a *templates.Dict with
// its keys in transformers' order (templates print and iterate them in
// that order), with no JSON round trip between the request and the
// template.

// templateMessages converts the OpenAI messages into the list handed to the
// chat template: content parts joined, "developer" as "system", tool-call
// arguments decoded, and each tool message given the name of the function
// its tool_call_id answers (OpenAI's tool messages carry only the id, and
// templates such as Hermes' refuse a tool message without a name). A
// tool_call_id that answers no earlier call is refused, as OpenAI does.
// Each message is a dict of role, content, then name, tool_calls and
// tool_call_id when set.
func templateMessages(msgs []ChatMessage) (templates.Value, error) {
	out := &templates.List{Items: make([]templates.Value, 0, len(msgs))}
	calls := map[string]string{} // tool_call_id → function name, from earlier assistant messages
	for i, m := range msgs {
		p := fmt.Sprintf("messages[%d]", i)
		role, name := m.Role, m.Name
		switch m.Role {
		case "system", "user", "assistant":
		case "developer":
			role = "system"
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
			called, ok := calls[m.ToolCallID]
			if !ok {
				return nil, badParam(p+".tool_call_id", fmt.Sprintf("tool_call_id %q answers no tool call of an earlier assistant message", clipText(m.ToolCallID, 64)))
			}
			if name == "" {
				name = called
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
		d := templates.NewDict()
		d.SetStr("role", templates.Str(role))
		d.SetStr("content", templates.Str(text))
		if m.ReasoningContent != "" {
			if m.Role != "assistant" {
				return nil, badParam(p+".reasoning_content", "only assistant messages carry reasoning_content")
			}
			// Templates that render earlier reasoning read it here
			// (Qwen3, DeepSeek-R1, GLM-4.5); others ignore it.
			d.SetStr("reasoning_content", templates.Str(m.ReasoningContent))
			// gpt-oss's reads it as thinking (its analysis channel),
			// and refuses thinking beside the content of a call
			// message: the content is then what it renders there.
			if len(m.ToolCalls) == 0 || text == "" {
				d.SetStr("thinking", templates.Str(m.ReasoningContent))
			}
		}
		if name != "" {
			d.SetStr("name", templates.Str(name))
		}
		var tcs []templates.Value
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
			args, err := callArguments(tc.Function.Arguments, cp+".function.arguments")
			if err != nil {
				return nil, err
			}
			if tc.ID != "" {
				calls[tc.ID] = tc.Function.Name
			}
			fn := templates.NewDict()
			fn.SetStr("name", templates.Str(tc.Function.Name))
			fn.SetStr("arguments", args)
			call := templates.NewDict()
			if tc.ID != "" {
				call.SetStr("id", templates.Str(tc.ID))
			}
			call.SetStr("type", templates.Str(typ))
			call.SetStr("function", fn)
			tcs = append(tcs, call)
		}
		if len(tcs) > 0 {
			d.SetStr("tool_calls", &templates.List{Items: tcs})
		}
		if m.ToolCallID != "" {
			d.SetStr("tool_call_id", templates.Str(m.ToolCallID))
		}
		out.Items = append(out.Items, d)
	}
	return out, nil
}

// callArguments is a tool call's arguments as templates see them: the
// decoded value when the string holds JSON (as vLLM and transformers hand
// it to templates), else the string itself.
func callArguments(s, param string) (templates.Value, error) {
	raw := []byte(strings.TrimSpace(s))
	if !json.Valid(raw) {
		return templates.Str(s), nil
	}
	v, err := templates.DecodeJSON(raw)
	if err != nil {
		// Valid JSON the template values refuse: nested too deep.
		return nil, badParam(param, "the arguments nest too deeply for the chat template: "+err.Error())
	}
	return v, nil
}

// templateTool is one tool as templates see it: {"type": "function",
// "function": {"name", "description", "parameters"}}, the description ""
// when the request has none and parameters the schema toolParameters
// returns (Hermes' template concatenates the description and iterates the
// properties, which OpenAI leaves optional).
func templateTool(name, description string, parameters json.RawMessage, param string) (templates.Value, error) {
	params, err := templates.DecodeJSON(parameters)
	if err != nil {
		return nil, badParam(param, "parameters could not be read for the chat template: "+err.Error())
	}
	fn := templates.NewDict()
	fn.SetStr("name", templates.Str(name))
	fn.SetStr("description", templates.Str(description))
	fn.SetStr("parameters", params)
	t := templates.NewDict()
	t.SetStr("type", templates.Str("function"))
	t.SetStr("function", fn)
	return t, nil
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
