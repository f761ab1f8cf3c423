package main

import (
	"encoding/json"
	"fmt"
	"net/http"
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
// checkCounts refuses a conversation of more than MaxMessages messages or
// MaxTools tools (l with its defaults), before anything reads them.
func (l Limits) checkCounts(messages, tools int) error {
	if messages > l.MaxMessages {
		return overLimit("messages", "array_above_max_length", fmt.Sprintf("%d messages", messages), l.MaxMessages, "max-messages")
	}
	if tools > l.MaxTools {
		return overLimit("tools", "array_above_max_length", fmt.Sprintf("%d tools", tools), l.MaxTools, "max-tools")
	}
	return nil
}

func overLimit(param, code, what string, limit int, flag string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Param: param,
		Msg: fmt.Sprintf("%s, over the limit of %d (--%s, %s)", what, limit, flag, envName(flag))}
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
