package main

// The bad-input catalog (issue 13 item 5): one line per request, each with
// the status it must get. It runs against any base URL: TestCatalogFake
// drives the fake-engine server, TestCatalogE2E (cgo) the real server with
// the --demo model through llama.cpp. Every refusal must come in OpenAI's
// envelope, no case may take a 5xx or hang, and /health stays 200 after the
// run. Cases that legitimately generate use a small max_tokens.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// catalogKey is the API key both catalog servers require.
const catalogKey = "catalog-key"

// catalogBodyLimit is the --max-body-bytes of both catalog servers: large
// enough for the 100,000-message and 10,000-tool cases to reach the
// message and tool limits, small enough for one case to exceed it.
const catalogBodyLimit = 4 << 20

// catalogBound is the hang check of a case: every case, the ones that
// generate included, ends far sooner on either server.
const catalogBound = 5 * time.Second

// hermesTemplatePath is the Hermes tool-call template of the shared
// corpus; it reads tool.description and a tool message's name, which the
// server derives (cases "tool without description", "tool loop").
const hermesTemplatePath = "../../../shared/templates/tool_chat_template_hermes.jinja"

// catalogTemplate returns the Hermes template when the shared corpus is
// there, else "" (the server's default).
func catalogTemplate() (text, path string) {
	b, err := os.ReadFile(hermesTemplatePath)
	if err != nil {
		return "", ""
	}
	return string(b), hermesTemplatePath
}

// catalogCase is one request of the catalog.
type catalogCase struct {
	name   string
	method string // "" is POST
	path   string // "" is /v1/chat/completions
	body   string
	hdr    []string // extra headers, name then value
	noAuth bool     // send no Authorization header
	status int
	code   string // the error code it must carry ("" checks only the envelope)
	param  string // the error param it must carry ("" checks nothing)
}

// obj builds a JSON object from raw `"key": value` members; chat and
// completion fill in defaults for the members not given.
func obj(members ...string) string { return "{" + strings.Join(members, ",") + "}" }

func withDefaults(defs, members []string) string {
	have := map[string]bool{}
	for _, m := range members {
		k, _, _ := strings.Cut(m, ":")
		have[strings.TrimSpace(k)] = true
	}
	for _, d := range defs {
		k, _, _ := strings.Cut(d, ":")
		if !have[strings.TrimSpace(k)] {
			members = append(members, d)
		}
	}
	return obj(members...)
}

// chat is a chat body: one user message and max_tokens 4 unless given.
func chat(members ...string) string {
	return withDefaults([]string{`"messages":[{"role":"user","content":"hi"}]`, `"max_tokens":4`}, members)
}

// cmpl is a completions body: prompt "hi" and max_tokens 4 unless given.
func cmpl(members ...string) string {
	return withDefaults([]string{`"prompt":"hi"`, `"max_tokens":4`}, members)
}

// msgs is a messages member.
func msgs(ms ...string) string { return `"messages":[` + strings.Join(ms, ",") + `]` }

// tools is a tools member over function definitions.
func tools(fns ...string) string {
	out := make([]string, len(fns))
	for i, f := range fns {
		out[i] = `{"type":"function","function":` + f + `}`
	}
	return `"tools":[` + strings.Join(out, ",") + `]`
}

// fn is a function definition with a small object schema.
func fn(name string) string {
	return `{"name":"` + name + `","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}}`
}

// schema is a response_format json_schema member (strict) over s.
func schema(s string) string {
	return `"response_format":{"type":"json_schema","json_schema":{"name":"s","strict":true,"schema":` + s + `}}`
}

// lenient is the same without strict.
func lenient(s string) string {
	return `"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":` + s + `}}`
}

func repeatJoin(s string, n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = s
	}
	return strings.Join(parts, sep)
}

// nested is a schema nesting depth object levels through properties.
func nested(depth int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, depth) + `{"type":"string"}` + strings.Repeat(`}}`, depth)
}

// catalog is the table. Expected statuses: 400 for an invalid request, 401
// auth, 404 unknown path or model, 405 wrong method, 413 over
// --max-body-bytes, 200 where the input is legal.
func catalog() []catalogCase {
	const cp = "/v1/completions"
	user := `{"role":"user","content":"hi"}`
	callAsst := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":\"x\"}"}}]}`
	toolMsg := `{"role":"tool","tool_call_id":"call_1","content":"42"}`
	manyEnum := make([]string, 100_000)
	for i := range manyEnum {
		manyEnum[i] = fmt.Sprint(i)
	}
	manyTools := make([]string, 10_000)
	for i := range manyTools {
		manyTools[i] = fn(fmt.Sprintf("f%d", i))
	}
	return []catalogCase{
		// Malformed bodies.
		{name: "empty body", body: "", status: 400, code: "invalid_json"},
		{name: "whitespace body", body: "  \n", status: 400, code: "invalid_json"},
		{name: "open brace", body: "{", status: 400, code: "invalid_json"},
		{name: "truncated in a string", body: `{"messages":[{"role":"user","content":"hel`, status: 400, code: "invalid_json"},
		{name: "truncated after a comma", body: `{"messages":[{"role":"user","content":"hi"},`, status: 400, code: "invalid_json"},
		{name: "invalid UTF-8 in a string", body: "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", status: 400, code: "invalid_json"},
		{name: "invalid UTF-8 outside strings", body: "{\"messages\":[]\xc3}", status: 400, code: "invalid_json"},
		{name: "overlong UTF-8", body: "{\"messages\":[{\"role\":\"user\",\"content\":\"\xc0\xaf\"}]}", status: 400, code: "invalid_json"},
		{name: "100k-deep arrays", body: `{"messages":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, status: 400, code: "invalid_json"},
		{name: "100k-deep objects", body: `{"metadata":` + strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000) + `}`, status: 400, code: "invalid_json"},
		{name: "trailing garbage", body: chat() + " x", status: 400, code: "invalid_json"},
		{name: "two JSON values", body: chat() + chat(), status: 400, code: "invalid_json"},
		{name: "top-level array", body: `[` + chat() + `]`, status: 400, code: "invalid_json"},
		{name: "top-level string", body: `"hi"`, status: 400, code: "invalid_json"},
		{name: "top-level null", body: `null`, status: 400, code: "invalid_json"},
		{name: "top-level number", body: `42`, status: 400, code: "invalid_json"},
		{name: "comment", body: `{/* c */"messages":[]}`, status: 400, code: "invalid_json"},
		{name: "single quotes", body: `{'messages':[]}`, status: 400, code: "invalid_json"},
		{name: "NaN literal", body: chat(`"temperature":NaN`), status: 400, code: "invalid_json"},
		{name: "byte order mark", body: "\xef\xbb\xbf" + chat(), status: 400, code: "invalid_json"},
		{name: "over --max-body-bytes", body: chat(`"user":"` + strings.Repeat("x", catalogBodyLimit) + `"`), status: 413, code: "request_too_large"},
		{name: "completions truncated", path: cp, body: `{"prompt":"hi`, status: 400, code: "invalid_json"},

		// Unknown and unsupported fields: refused unless they cannot change the output.
		{name: "unknown field", body: chat(`"temprature":0.5`), status: 400, code: "unknown_parameter", param: "temprature"},
		{name: "functions (legacy)", body: chat(`"functions":[{"name":"f"}]`), status: 400, code: "unsupported_parameter", param: "functions"},
		{name: "function_call (legacy)", body: chat(`"function_call":"auto"`), status: 400, code: "unsupported_parameter", param: "function_call"},
		{name: "audio", body: chat(`"audio":{"voice":"alloy","format":"wav"}`), status: 400, code: "unsupported_parameter", param: "audio"},
		{name: "modalities audio", body: chat(`"modalities":["text","audio"]`), status: 400, param: "modalities[1]"},
		{name: "modalities text", body: chat(`"modalities":["text"]`), status: 200},
		{name: "reasoning_effort", body: chat(`"reasoning_effort":"high"`), status: 200},
		{name: "reasoning_effort unknown", body: chat(`"reasoning_effort":"extreme"`), status: 400, param: "reasoning_effort"},
		{name: "thinking_token_budget below -1", body: chat(`"thinking_token_budget":-2`), status: 400, param: "thinking_token_budget"},
		{name: "chat_template_kwargs not an object", body: chat(`"chat_template_kwargs":[1]`), status: 400, param: "chat_template_kwargs"},
		{name: "chat_template_kwargs setting messages", body: chat(`"chat_template_kwargs":{"messages":[]}`), status: 400, param: "chat_template_kwargs.messages"},
		{name: "guided_grammar", body: chat(`"guided_grammar":"root ::= \"a\""`), status: 400, code: "unsupported_parameter", param: "guided_grammar"},
		{name: "guided_whitespace_pattern", body: chat(`"guided_whitespace_pattern":" "`), status: 400, code: "unsupported_parameter"},
		{name: "web_search_options", body: chat(`"web_search_options":{}`), status: 400, code: "unsupported_parameter"},
		{name: "store and metadata are ignored", body: chat(`"store":true`, `"metadata":{"k":"v"}`), status: 200},
		{name: "completions suffix", path: cp, body: cmpl(`"suffix":"end"`), status: 400, code: "unsupported_parameter", param: "suffix"},
		{name: "completions unknown field", path: cp, body: cmpl(`"messages":[]`), status: 400, code: "unknown_parameter"},

		// Wrong types, field by field.
		{name: "model number", body: chat(`"model":1`), status: 400, code: "invalid_type", param: "model"},
		{name: "messages string", body: chat(`"messages":"hi"`), status: 400, code: "invalid_type", param: "messages"},
		{name: "messages object", body: chat(`"messages":{"role":"user"}`), status: 400, code: "invalid_type", param: "messages"},
		{name: "message number", body: chat(msgs(`1`)), status: 400, code: "invalid_type"},
		{name: "message null", body: chat(msgs(`null`)), status: 400},
		{name: "role number", body: chat(msgs(`{"role":1,"content":"x"}`)), status: 400, code: "invalid_type"},
		{name: "content number", body: chat(msgs(`{"role":"user","content":1}`)), status: 400, param: "messages[0].content"},
		{name: "content object", body: chat(msgs(`{"role":"user","content":{"text":"x"}}`)), status: 400, param: "messages[0].content"},
		{name: "content part text number", body: chat(msgs(`{"role":"user","content":[{"type":"text","text":1}]}`)), status: 400, param: "messages[0].content"},
		{name: "name number", body: chat(msgs(`{"role":"user","content":"x","name":1}`)), status: 400, code: "invalid_type"},
		{name: "tool_calls object", body: chat(msgs(`{"role":"assistant","tool_calls":{}}`)), status: 400, code: "invalid_type"},
		{name: "tool_call_id number", body: chat(msgs(callAsst, `{"role":"tool","tool_call_id":1,"content":"x"}`)), status: 400, code: "invalid_type"},
		{name: "tools object", body: chat(`"tools":{}`), status: 400, code: "invalid_type", param: "tools"},
		{name: "tools of strings", body: chat(`"tools":["f"]`), status: 400, code: "invalid_type"},
		{name: "tool_choice number", body: chat(tools(fn("f")), `"tool_choice":1`), status: 400, param: "tool_choice"},
		{name: "tool_choice true", body: chat(tools(fn("f")), `"tool_choice":true`), status: 400, param: "tool_choice"},
		{name: "parallel_tool_calls string", body: chat(`"parallel_tool_calls":"yes"`), status: 400, code: "invalid_type", param: "parallel_tool_calls"},
		{name: "response_format string", body: chat(`"response_format":"json"`), status: 400, code: "invalid_type", param: "response_format"},
		{name: "response_format.type number", body: chat(`"response_format":{"type":1}`), status: 400, code: "invalid_type"},
		{name: "json_schema string", body: chat(`"response_format":{"type":"json_schema","json_schema":"s"}`), status: 400, code: "invalid_type"},
		{name: "stream string", body: chat(`"stream":"true"`), status: 400, code: "invalid_type", param: "stream"},
		{name: "stream_options bool", body: chat(`"stream":true`, `"stream_options":true`), status: 400, code: "invalid_type"},
		{name: "max_tokens string", body: chat(`"max_tokens":"5"`), status: 400, code: "invalid_type", param: "max_tokens"},
		{name: "max_tokens fraction", body: chat(`"max_tokens":1.5`), status: 400, code: "invalid_type", param: "max_tokens"},
		{name: "max_completion_tokens string", body: chat(`"max_completion_tokens":"x"`), status: 400, code: "invalid_type"},
		{name: "temperature string", body: chat(`"temperature":"hot"`), status: 400, code: "invalid_type", param: "temperature"},
		{name: "top_p array", body: chat(`"top_p":[]`), status: 400, code: "invalid_type", param: "top_p"},
		{name: "stop number", body: chat(`"stop":1`), status: 400, param: "stop"},
		{name: "stop numbers", body: chat(`"stop":[1,2]`), status: 400, param: "stop"},
		{name: "seed string", body: chat(`"seed":"x"`), status: 400, code: "invalid_type", param: "seed"},
		{name: "seed fraction", body: chat(`"seed":1.5`), status: 400, code: "invalid_type", param: "seed"},
		{name: "seed beyond int64", body: chat(`"seed":1e30`), status: 400, code: "invalid_type", param: "seed"},
		{name: "n string", body: chat(`"n":"2"`), status: 400, code: "invalid_type", param: "n"},
		{name: "logprobs string", body: chat(`"logprobs":"yes"`), status: 400, code: "invalid_type", param: "logprobs"},
		{name: "top_logprobs string", body: chat(`"logprobs":true`, `"top_logprobs":"2"`), status: 400, code: "invalid_type"},
		{name: "presence_penalty string", body: chat(`"presence_penalty":"x"`), status: 400, code: "invalid_type"},
		{name: "frequency_penalty object", body: chat(`"frequency_penalty":{}`), status: 400, code: "invalid_type"},
		{name: "logit_bias array", body: chat(`"logit_bias":[]`), status: 400, code: "invalid_type", param: "logit_bias"},
		{name: "logit_bias string value", body: chat(`"logit_bias":{"1":"x"}`), status: 400, code: "invalid_type"},
		{name: "user number", body: chat(`"user":1`), status: 400, code: "invalid_type", param: "user"},
		{name: "top_k fraction", body: chat(`"top_k":1.5`), status: 400, code: "invalid_type"},
		{name: "min_p string", body: chat(`"min_p":"x"`), status: 400, code: "invalid_type"},
		{name: "repetition_penalty string", body: chat(`"repetition_penalty":"x"`), status: 400, code: "invalid_type"},
		{name: "structured_outputs number", body: chat(`"structured_outputs":1`), status: 400},
		{name: "guided_json string", body: chat(`"guided_json":"x"`), status: 400, param: "guided_json"},
		{name: "guided_regex number", body: chat(`"guided_regex":1`), status: 400, code: "invalid_type"},
		{name: "guided_choice string", body: chat(`"guided_choice":"a"`), status: 400, code: "invalid_type"},
		{name: "best_of string", body: chat(`"best_of":"1"`), status: 400, code: "invalid_type"},
		{name: "completions prompt number", path: cp, body: cmpl(`"prompt":1`), status: 400, param: "prompt"},
		{name: "completions prompt object", path: cp, body: cmpl(`"prompt":{}`), status: 400, param: "prompt"},
		{name: "completions prompt bool", path: cp, body: cmpl(`"prompt":true`), status: 400, param: "prompt"},
		{name: "completions prompt null", path: cp, body: cmpl(`"prompt":null`), status: 400, param: "prompt"},
		{name: "completions echo string", path: cp, body: cmpl(`"echo":"yes"`), status: 400, code: "invalid_type"},
		{name: "completions logprobs bool", path: cp, body: cmpl(`"logprobs":true`), status: 400, code: "invalid_type"},

		// Sampling parameters out of range.
		{name: "temperature -1", body: chat(`"temperature":-1`), status: 400, param: "temperature"},
		{name: "temperature 2.5", body: chat(`"temperature":2.5`), status: 400, param: "temperature"},
		{name: "temperature 1e400", body: chat(`"temperature":1e400`), status: 400, param: "temperature"},
		{name: "top_p 0", body: chat(`"top_p":0`), status: 400, param: "top_p"},
		{name: "top_p 1.5", body: chat(`"top_p":1.5`), status: 400, param: "top_p"},
		{name: "top_k -2", body: chat(`"top_k":-2`), status: 400, param: "top_k"},
		{name: "min_p 1.5", body: chat(`"min_p":1.5`), status: 400, param: "min_p"},
		{name: "min_p -0.1", body: chat(`"min_p":-0.1`), status: 400, param: "min_p"},
		{name: "repetition_penalty 0", body: chat(`"repetition_penalty":0`), status: 400, param: "repetition_penalty"},
		{name: "presence_penalty 3", body: chat(`"presence_penalty":3`), status: 400, param: "presence_penalty"},
		{name: "frequency_penalty -2.1", body: chat(`"frequency_penalty":-2.1`), status: 400, param: "frequency_penalty"},
		{name: "max_tokens 0", body: chat(`"max_tokens":0`), status: 400, param: "max_tokens"},
		{name: "max_tokens -5", body: chat(`"max_tokens":-5`), status: 400, param: "max_tokens"},
		{name: "max_completion_tokens 0", body: chat(`"max_completion_tokens":0`), status: 400, param: "max_completion_tokens"},
		{name: "n 0", body: chat(`"n":0`), status: 400, param: "n"},
		{name: "n 17", body: chat(`"n":17`), status: 400, param: "n"},
		{name: "top_logprobs 21", body: chat(`"logprobs":true`, `"top_logprobs":21`), status: 400, param: "top_logprobs"},
		{name: "top_logprobs without logprobs", body: chat(`"top_logprobs":2`), status: 400, param: "top_logprobs"},
		{name: "logit_bias 101", body: chat(`"logit_bias":{"1":101}`), status: 400, param: "logit_bias"},
		{name: "logit_bias key word", body: chat(`"logit_bias":{"abc":1}`), status: 400, param: "logit_bias"},
		{name: "logit_bias key negative", body: chat(`"logit_bias":{"-1":1}`), status: 400, param: "logit_bias"},
		{name: "logit_bias outside the vocabulary", body: chat(`"logit_bias":{"10000000":1}`), status: 400, param: "logit_bias"},
		{name: "five stop sequences", body: chat(`"stop":["a","b","c","d","e"]`), status: 400, param: "stop"},
		{name: "best_of 0", body: chat(`"best_of":0`), status: 400, param: "best_of"},
		{name: "best_of 2", body: chat(`"best_of":2`), status: 400, param: "best_of"},
		{name: "stream_options without stream", body: chat(`"stream_options":{"include_usage":true}`), status: 400, param: "stream_options"},
		{name: "completions logprobs 6", path: cp, body: cmpl(`"logprobs":6`), status: 400, param: "logprobs"},
		{name: "completions best_of 0", path: cp, body: cmpl(`"best_of":0`), status: 400, param: "best_of"},
		{name: "completions stream_options without stream", path: cp, body: cmpl(`"stream_options":{"include_usage":true}`), status: 400, param: "stream_options"},
		{name: "sampling in range", body: chat(`"temperature":2`, `"top_p":1`, `"top_k":-1`, `"min_p":0`, `"presence_penalty":-2`, `"seed":-7`, `"n":2`, `"logprobs":true`, `"top_logprobs":20`, `"stop":[]`), status: 200},

		// Messages.
		{name: "no messages", body: chat(msgs()), status: 400, param: "messages"},
		{name: "messages null", body: chat(`"messages":null`), status: 400, param: "messages"},
		{name: "unknown role", body: chat(msgs(`{"role":"robot","content":"x"}`)), status: 400, param: "messages[0].role"},
		{name: "function role", body: chat(msgs(`{"role":"function","name":"f","content":"x"}`)), status: 400, param: "messages[0].role"},
		{name: "missing role", body: chat(msgs(`{"content":"x"}`)), status: 400, param: "messages[0].role"},
		{name: "user content null", body: chat(msgs(`{"role":"user","content":null}`)), status: 400, param: "messages[0].content"},
		{name: "user content absent", body: chat(msgs(`{"role":"user"}`)), status: 400, param: "messages[0].content"},
		{name: "system content null", body: chat(msgs(`{"role":"system","content":null}`, user)), status: 400, param: "messages[0].content"},
		{name: "assistant with neither content nor calls", body: chat(msgs(user, `{"role":"assistant","content":null}`, user)), status: 400, param: "messages[1].content"},
		{name: "tool message without id", body: chat(msgs(user, callAsst, `{"role":"tool","content":"42"}`)), status: 400, param: "messages[2].tool_call_id"},
		{name: "tool_call_id that answers no call", body: chat(msgs(user, callAsst, `{"role":"tool","tool_call_id":"call_9","content":"42"}`)), status: 400, param: "messages[2].tool_call_id"},
		{name: "tool message first", body: chat(msgs(toolMsg)), status: 400, param: "messages[0].tool_call_id"},
		{name: "tool content null", body: chat(msgs(user, callAsst, `{"role":"tool","tool_call_id":"call_1","content":null}`)), status: 400, param: "messages[2].content"},
		{name: "tool_calls object arguments", body: chat(msgs(user, `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]}`)), status: 400, code: "invalid_type"},
		{name: "tool_calls without a name", body: chat(msgs(user, `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}`)), status: 400, param: "messages[1].tool_calls[0].function.name"},
		{name: "tool_calls of another type", body: chat(msgs(user, `{"role":"assistant","tool_calls":[{"id":"c","type":"custom","function":{"name":"f","arguments":"{}"}}]}`)), status: 400, param: "messages[1].tool_calls[0].type"},
		{name: "tool_calls on a user message", body: chat(msgs(`{"role":"user","content":"x","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]}`)), status: 400, param: "messages[0].tool_calls"},
		{name: "image part", body: chat(msgs(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}`)), status: 400, param: "messages[0].content[0].type"},
		{name: "part without type", body: chat(msgs(`{"role":"user","content":[{"text":"x"}]}`)), status: 400, param: "messages[0].content[0].type"},
		{name: "2049 messages", body: chat(msgs(repeatJoin(user, 2049, ","))), status: 400, code: "array_above_max_length", param: "messages"},
		{name: "100,000 one-word messages", body: chat(msgs(repeatJoin(`{"role":"user","content":"word"}`, 100_000, ","))), status: 400, code: "array_above_max_length", param: "messages"},
		{name: "a prompt longer than the context", body: chat(msgs(`{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 17_000) + `"}`)), status: 400, code: "context_length_exceeded"},
		{name: "a prompt over --max-prompt-bytes", body: chat(msgs(`{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 200_000) + `"}`)), status: 400, code: "prompt_too_large"},
		{name: "developer role and text parts", body: chat(msgs(`{"role":"developer","content":[{"type":"text","text":"be brief"}]}`, `{"role":"user","content":[{"type":"text","text":"hi"}]}`)), status: 200},
		{name: "tool loop without names", body: chat(tools(fn("f")), msgs(user, callAsst, toolMsg)), status: 200},
		{name: "tool loop with a name", body: chat(tools(fn("f")), msgs(user, callAsst, `{"role":"tool","tool_call_id":"call_1","name":"f","content":"42"}`)), status: 200},
		{name: "assistant empty content", body: chat(msgs(user, `{"role":"assistant","content":""}`, user)), status: 200},

		// Tools.
		{name: "duplicate tool names", body: chat(tools(fn("f"), fn("f"))), status: 400, param: "tools[1].function.name"},
		{name: "tool name with spaces", body: chat(tools(fn("get weather"))), status: 400, param: "tools[0].function.name"},
		{name: "tool name of 65 characters", body: chat(tools(fn(strings.Repeat("a", 65)))), status: 400, param: "tools[0].function.name"},
		{name: "tool name empty", body: chat(tools(fn(""))), status: 400, param: "tools[0].function.name"},
		{name: "tool name missing", body: chat(tools(`{"parameters":{"type":"object"}}`)), status: 400, param: "tools[0].function.name"},
		{name: "parameters a string", body: chat(tools(`{"name":"f","parameters":"x"}`)), status: 400, param: "tools[0].function.parameters"},
		{name: "parameters an array", body: chat(tools(`{"name":"f","parameters":[1]}`)), status: 400, param: "tools[0].function.parameters"},
		{name: "parameters of type string", body: chat(tools(`{"name":"f","parameters":{"type":"string"}}`)), status: 400, param: "tools[0].function.parameters"},
		{name: "parameters true", body: chat(tools(`{"name":"f","parameters":true}`)), status: 400, param: "tools[0].function.parameters"},
		{name: "tool type custom", body: chat(`"tools":[{"type":"custom","custom":{"name":"f"}}]`), status: 400, param: "tools[0].type"},
		{name: "tool type missing", body: chat(`"tools":[{"function":` + fn("f") + `}]`), status: 400, param: "tools[0].type"},
		{name: "129 tools", body: chat(`"tools":[` + repeatJoin(`{"type":"function","function":{"name":"f"}}`, 129, ",") + `]`), status: 400, code: "array_above_max_length", param: "tools"},
		{name: "10,000 tools", body: chat(tools(manyTools...)), status: 400, code: "array_above_max_length", param: "tools"},
		{name: "tool_choice unknown function", body: chat(tools(fn("f")), `"tool_choice":{"type":"function","function":{"name":"g"}}`), status: 400, param: "tool_choice.function.name"},
		{name: "tool_choice maybe", body: chat(tools(fn("f")), `"tool_choice":"maybe"`), status: 400, param: "tool_choice"},
		{name: "tool_choice required without tools", body: chat(`"tool_choice":"required"`), status: 400, param: "tool_choice"},
		{name: "tool_choice object without name", body: chat(tools(fn("f")), `"tool_choice":{"type":"function"}`), status: 400, param: "tool_choice"},
		{name: "tool parameters invalid schema", body: chat(tools(`{"name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"strng"}}}}`), `"tool_choice":"required"`), status: 400, param: "tools[0].function.parameters"},
		{name: "tools without description", body: chat(tools(`{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}`), `"tool_choice":"auto"`), status: 200},
		{name: "tools without parameters", body: chat(tools(`{"name":"f"}`, `{"name":"g","parameters":{"type":"object"}}`), `"tool_choice":"auto"`), status: 200},
		{name: "required call, one at a time", body: chat(tools(fn("f")), `"tool_choice":"required"`, `"parallel_tool_calls":false`, `"max_tokens":96`), status: 200},

		// Schemas and other constraints.
		{name: "unresolvable $ref", body: chat(schema(`{"$ref":"#/$defs/nope"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "remote $ref", body: chat(schema(`{"$ref":"https://example.com/s.json"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "$ref cycle without progress", body: chat(schema(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "$ref mutual cycle", body: chat(schema(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "pattern not a regex", body: chat(schema(`{"type":"string","pattern":"("}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "pattern not a regex, lenient", body: chat(lenient(`{"type":"string","pattern":"("}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "pattern reversed range, lenient", body: chat(lenient(`{"type":"string","pattern":"[z-a]"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "pattern catastrophic for backtracking", body: chat(schema(`{"type":"string","pattern":"^(a+)+$","maxLength":4}`), `"max_tokens":16`), status: 200},
		{name: "pattern huge repeat", body: chat(schema(`{"type":"string","pattern":"^a{100000000}$"}`)), status: 400, param: "response_format.json_schema.schema"},
		{name: "guided_regex not a regex", body: chat(`"guided_regex":"("`), status: 400, param: "guided_regex"},
		{name: "guided_regex lookahead", body: chat(`"guided_regex":"(?=a)a"`), status: 400, param: "guided_regex"},
		{name: "guided_regex huge repeat", body: chat(`"guided_regex":"a{1000000000}"`), status: 400, param: "guided_regex"},
		{name: "guided_regex nested huge repeats", body: chat(`"guided_regex":"((a{1000}){1000}){1000}"`), status: 400},
		{name: "guided_regex catastrophic for backtracking", body: chat(`"guided_regex":"(a|aa)*b"`, `"max_tokens":8`), status: 200},
		{name: "100k-value enum", body: chat(schema(`{"enum":[` + strings.Join(manyEnum, ",") + `]}`)), status: 200},
		{name: "1 MB const", body: chat(schema(`{"const":"` + strings.Repeat("x", 1_000_000) + `"}`)), status: 400, code: "constraint_too_large"},
		{name: "schema over --max-schema-bytes", body: chat(schema(`{"type":"string","description":"` + strings.Repeat("x", 1<<20) + `"}`)), status: 400, code: "schema_too_large"},
		{name: "1000-deep nesting", body: chat(schema(nested(1000))), status: 400, code: "schema_too_deep"},
		{name: "over --max-schema-depth", body: chat(schema(nested(40))), status: 400, code: "schema_too_deep"},
		{name: "minimum above maximum", body: chat(schema(`{"type":"integer","minimum":5,"maximum":1}`)), status: 400},
		{name: "minLength above maxLength", body: chat(schema(`{"type":"string","minLength":5,"maxLength":2}`)), status: 400},
		{name: "minItems above maxItems", body: chat(schema(`{"type":"array","minItems":3,"maxItems":1}`)), status: 400},
		{name: "multipleOf 0", body: chat(schema(`{"type":"number","multipleOf":0}`)), status: 400},
		{name: "multipleOf negative", body: chat(schema(`{"type":"number","multipleOf":-2}`)), status: 400},
		{name: "minimum 1e400", body: chat(schema(`{"type":"number","minimum":1e400}`)), status: 400, code: "invalid_schema"},
		{name: "minimum 1e400, lenient", body: chat(lenient(`{"type":"number","minimum":1e400}`)), status: 400, code: "invalid_schema"},
		{name: "const 1e400", body: chat(`"guided_json":{"const":1e400}`), status: 400, code: "invalid_schema"},
		{name: "empty enum", body: chat(schema(`{"enum":[]}`)), status: 400},
		{name: "false schema", body: chat(schema(`false`)), status: 400},
		{name: "type nonsense", body: chat(schema(`{"type":"nonsense"}`)), status: 400},
		{name: "type number", body: chat(schema(`{"type":1}`)), status: 400},
		{name: "required not an array", body: chat(schema(`{"type":"object","required":"a"}`)), status: 400},
		{name: "schema a string", body: chat(schema(`"object"`)), status: 400},
		{name: "unknown format, strict", body: chat(schema(`{"type":"string","format":"nonsense"}`)), status: 400},
		{name: "uniqueItems, strict", body: chat(schema(`{"type":"array","uniqueItems":true}`)), status: 400},
		{name: "json_schema without schema", body: chat(`"response_format":{"type":"json_schema","json_schema":{"name":"s"}}`), status: 400, param: "response_format.json_schema.schema"},
		{name: "json_schema name with spaces and slashes", body: chat(`"response_format":{"type":"json_schema","json_schema":{"name":"my schema/v1","schema":{"type":"string"}}}`), status: 400, param: "response_format.json_schema.name"},
		{name: "json_schema name of 65 characters", body: chat(`"response_format":{"type":"json_schema","json_schema":{"name":"` + strings.Repeat("n", 65) + `","schema":{"type":"string"}}}`), status: 400, param: "response_format.json_schema.name"},
		{name: "json_schema name missing", body: chat(`"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"string"}}}`), status: 400, param: "response_format.json_schema.name"},
		{name: "response_format type grammar", body: chat(`"response_format":{"type":"grammar","grammar":"root ::= x"}`), status: 400, param: "response_format.type"},
		{name: "refused field set to null", body: chat(`"reasoning_effort":null,"functions":null`), status: 200},
		{name: "unknown field set to null", body: chat(`"frobnicate":null`), status: 200},
		{name: "structured_outputs lark", body: chat(`"structured_outputs":{"lark":"start: \"a\""}`), status: 400, code: "unsupported_parameter", param: "structured_outputs.lark"},
		{name: "structured_outputs grammar", body: chat(`"structured_outputs":{"grammar":"root ::= \"a\""}`), status: 400, code: "unsupported_parameter", param: "structured_outputs.grammar"},
		{name: "structured_outputs structural_tag", body: chat(`"structured_outputs":{"structural_tag":"{}"}`), status: 400, code: "unsupported_parameter"},
		{name: "structured_outputs empty", body: chat(`"structured_outputs":{}`), status: 400, param: "structured_outputs"},
		{name: "structured_outputs empty choice", body: chat(`"structured_outputs":{"choice":[]}`), status: 400, param: "structured_outputs.choice"},
		{name: "guided_choice empty", body: chat(`"guided_choice":[]`), status: 400, param: "guided_choice"},
		{name: "two structured outputs: response_format and guided_json", body: chat(schema(`{"type":"string"}`), `"guided_json":{"type":"string"}`), status: 400, param: "guided_json"},
		{name: "two structured outputs: regex and choice", body: chat(`"structured_outputs":{"regex":"a","choice":["a"]}`), status: 400, param: "structured_outputs.choice"},
		{name: "two structured outputs: json_object and guided_regex", body: chat(`"response_format":{"type":"json_object"}`, `"guided_regex":"a"`), status: 400, param: "guided_regex"},
		{name: "structured_outputs json_object", body: chat(`"structured_outputs":{"json_object":true}`, `"max_tokens":16`), status: 200},
		{name: "structured_outputs choice", body: chat(`"structured_outputs":{"choice":["yes","no"]}`, `"max_tokens":8`), status: 200},
		{name: "true schema", body: chat(schema(`true`), `"max_tokens":8`), status: 200},
		{name: "schema with a lookahead, lenient", body: chat(lenient(`{"type":"string","pattern":"(?=a)a","maxLength":3}`), `"max_tokens":8`), status: 200},
		{name: "streaming with a bad schema", body: chat(`"stream":true`, schema(`{"type":"string","pattern":"("}`)), status: 400},

		// Completions prompts.
		{name: "completions empty prompt", path: cp, body: cmpl(`"prompt":""`), status: 400, param: "prompt"},
		{name: "completions empty array", path: cp, body: cmpl(`"prompt":[]`), status: 400, param: "prompt"},
		{name: "completions empty token list", path: cp, body: cmpl(`"prompt":[[]]`), status: 400, param: "prompt[0]"},
		{name: "completions token id out of range", path: cp, body: cmpl(`"prompt":[1,10000000]`), status: 400, param: "prompt[1]"},
		{name: "completions token id beyond int32", path: cp, body: cmpl(`"prompt":[1,99999999999]`), status: 400, param: "prompt[1]"},
		{name: "completions token id negative", path: cp, body: cmpl(`"prompt":[-1]`), status: 400, param: "prompt[0]"},
		{name: "completions token id fraction", path: cp, body: cmpl(`"prompt":[1.5]`), status: 400, param: "prompt[0]"},
		{name: "completions nested arrays", path: cp, body: cmpl(`"prompt":[[[1]]]`), status: 400, param: "prompt[0][0]"},
		{name: "completions mixed strings and ids", path: cp, body: cmpl(`"prompt":["a",1]`), status: 400, param: "prompt[1]"},
		{name: "completions mixed ids and strings", path: cp, body: cmpl(`"prompt":[1,"a"]`), status: 400, param: "prompt[1]"},
		{name: "completions id lists out of range", path: cp, body: cmpl(`"prompt":[[1],[10000000]]`), status: 400, param: "prompt[1][0]"},
		{name: "completions echo", path: cp, body: cmpl(`"echo":true`), status: 400, code: "unsupported_parameter", param: "echo"},
		{name: "completions 1000 prompts", path: cp, body: cmpl(`"prompt":[` + repeatJoin(`"a"`, 1000, ",") + `]`), status: 400, param: "prompt"},
		{name: "completions bad regex", path: cp, body: cmpl(`"guided_regex":"("`), status: 400, param: "guided_regex"},
		{name: "completions token ids", path: cp, body: cmpl(`"prompt":[1,2,3]`), status: 200},
		{name: "completions token id lists", path: cp, body: cmpl(`"prompt":[[1,2],[3]]`), status: 200},
		{name: "completions strings", path: cp, body: cmpl(`"prompt":["a","b"]`), status: 200},

		// Paths and methods.
		{name: "GET chat", method: "GET", body: "", status: 405, code: "method_not_allowed"},
		{name: "PUT completions", method: "PUT", path: cp, body: cmpl(), status: 405, code: "method_not_allowed"},
		{name: "DELETE models", method: "DELETE", path: "/v1/models", status: 405, code: "method_not_allowed"},
		{name: "POST health", method: "POST", path: "/health", status: 405, code: "method_not_allowed"},
		{name: "unknown path", path: "/v1/nope", body: chat(), status: 404, code: "not_found"},
		{name: "v2 path", path: "/v2/chat/completions", body: chat(), status: 404, code: "not_found"},
		{name: "trailing slash", path: "/v1/chat/completions/", body: chat(), status: 404, code: "not_found"},
		{name: "root", method: "POST", path: "/", status: 405, code: "method_not_allowed"}, // HEAD / is answered (Claude Code probes it), GET / is the playground (ui.go)
		{name: "unknown model", body: chat(`"model":"gpt-9"`), status: 404, code: "model_not_found", param: "model"},

		// Auth.
		{name: "no key", body: chat(), noAuth: true, status: 401, code: "invalid_api_key"},
		{name: "wrong key", body: chat(), noAuth: true, hdr: []string{"Authorization", "Bearer nope"}, status: 401, code: "invalid_api_key"},
		{name: "basic scheme", body: chat(), noAuth: true, hdr: []string{"Authorization", "Basic " + catalogKey}, status: 401, code: "invalid_api_key"},
		{name: "empty bearer", body: chat(), noAuth: true, hdr: []string{"Authorization", "Bearer "}, status: 401, code: "invalid_api_key"},
		{name: "models without a key", method: "GET", path: "/v1/models", noAuth: true, status: 401, code: "invalid_api_key"},
		{name: "completions without a key", path: cp, body: cmpl(), noAuth: true, status: 401, code: "invalid_api_key"},
		{name: "lower-case scheme", body: chat(), noAuth: true, hdr: []string{"Authorization", "bearer " + catalogKey}, status: 200},
	}
}

// runCatalog sends every case to base and checks its status, its envelope
// and its time, then that /health is still 200.
func runCatalog(t *testing.T, base string) {
	cases := catalog()
	if len(cases) < 150 {
		t.Fatalf("the catalog has %d cases, want at least 150", len(cases))
	}
	client := &http.Client{Timeout: 60 * time.Second}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			method, path := tc.method, tc.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/v1/chat/completions"
			}
			var body io.Reader
			if tc.body != "" || method == "POST" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(method, base+path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if !tc.noAuth {
				req.Header.Set("Authorization", "Bearer "+catalogKey)
			}
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("reading the response: %v", err)
			}
			if elapsed > catalogBound {
				t.Errorf("took %v, over the %v bound", elapsed.Round(time.Millisecond), catalogBound)
			}
			if resp.StatusCode >= 500 {
				t.Errorf("status %d (a server fault): %s", resp.StatusCode, clipBody(raw))
			}
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, clipBody(raw))
				return
			}
			if tc.status == 200 {
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
					t.Errorf("200 with Content-Type %q", ct)
				}
				var ok struct {
					Choices []json.RawMessage `json:"choices"`
				}
				if err := json.Unmarshal(raw, &ok); err != nil || len(ok.Choices) == 0 {
					t.Errorf("200 without choices: %s", clipBody(raw))
				}
				return
			}
			checkEnvelope(t, raw, tc.code, tc.param)
		})
	}
	resp, err := client.Get(base + "/health")
	if err != nil {
		t.Fatalf("GET /health after the catalog: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /health after the catalog = %d, want 200", resp.StatusCode)
	}
}

// checkEnvelope checks OpenAI's error envelope: every key present, message
// and type set, code and param as the case says.
func checkEnvelope(t *testing.T, raw []byte, code, param string) {
	t.Helper()
	var env struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Error == nil {
		t.Errorf("not an error envelope: %s", clipBody(raw))
		return
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := env.Error[k]; !ok {
			t.Errorf("envelope without %q: %s", k, clipBody(raw))
		}
	}
	var msg, typ string
	var gotCode, gotParam *string
	json.Unmarshal(env.Error["message"], &msg)
	json.Unmarshal(env.Error["type"], &typ)
	json.Unmarshal(env.Error["code"], &gotCode)
	json.Unmarshal(env.Error["param"], &gotParam)
	if len(msg) < 10 || typ == "" {
		t.Errorf("envelope message %q, type %q: want a message that says what is wrong", msg, typ)
	}
	if code != "" && (gotCode == nil || *gotCode != code) {
		t.Errorf("code %v, want %q: %s", deref(gotCode), code, clipBody(raw))
	}
	if param != "" && (gotParam == nil || *gotParam != param) {
		t.Errorf("param %v, want %q: %s", deref(gotParam), param, clipBody(raw))
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

func clipBody(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// TestCatalogFake runs the catalog against the fake-engine server (no
// model), with the Hermes template when the shared corpus is there.
func TestCatalogFake(t *testing.T) {
	tmpl, _ := catalogTemplate()
	ts := newTestServer(t, Config{APIKey: catalogKey, MaxBodyBytes: catalogBodyLimit}, tmpl)
	runCatalog(t, ts.http.URL)
}
