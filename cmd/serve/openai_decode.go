package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

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
	ignoredFields, refusedFields := ignoredFields, refusedFields
	switch v.(type) {
	case *ChatRequest:
		known = chatFields()
	case *CompletionRequest:
		known = completionFields()
	case *MessagesRequest, *CountTokensRequest:
		known, ignoredFields, refusedFields = anthropicFields(v), anthropicIgnored, anthropicRefused
	case *ResponsesRequest:
		known, ignoredFields, refusedFields = responsesFields(), responsesIgnored, responsesRefused
	case *ExplainRequest:
		known = explainFields()
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
