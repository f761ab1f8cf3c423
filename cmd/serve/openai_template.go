package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

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
