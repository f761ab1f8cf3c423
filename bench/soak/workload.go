package soak

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind is the shape of one soak request.
type Kind int

// The request kinds, in the order a client cycles through them.
const (
	KindJSONSchema Kind = iota // response_format json_schema, strict
	KindTool                   // tool_choice "required" over function tools
	KindText                   // unconstrained text
)

// Kinds lists every kind, for reports and tests.
var Kinds = []Kind{KindJSONSchema, KindTool, KindText}

func (k Kind) String() string {
	switch k {
	case KindJSONSchema:
		return "json_schema"
	case KindTool:
		return "tool"
	case KindText:
		return "text"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// responseSchemas are the json_schema response formats a request picks
// from. They are small enough that a random-weight model often closes them
// within a 64-token budget, and between them they reach the parts of the
// compiled constraint a long-lived server shares across requests: enums,
// bounded integers and strings, a pattern, a format, a not-enum, an array
// and a nested object built lazily (fsm.Defer) when a generation first gets
// there.
var responseSchemas = []string{
	`{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer","minimum":0,"maximum":9}},"required":["ok","n"],"additionalProperties":false}`,
	`{"type":"object","properties":{"color":{"enum":["red","green","blue"]},"tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":2}},"required":["color","tags"],"additionalProperties":false}`,
	`{"type":"object","properties":{"user":{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2}[0-9]{2}$"},"role":{"type":"string","maxLength":5,"not":{"enum":["root","admin"]}},"mail":{"type":"string","format":"email","maxLength":12}},"required":["code","role"],"additionalProperties":false}},"required":["user"],"additionalProperties":false}`,
	`{"type":"object","properties":{"id":{"type":"integer","minimum":1,"maximum":999},"kind":{"anyOf":[{"const":"a"},{"type":"integer","minimum":0,"maximum":3}]}},"required":["id","kind"],"additionalProperties":false}`,
}

// tools are the function tools of a KindTool request; tool_choice
// "required" makes the answer at least one call to one of them.
var tools = []struct {
	name, description, parameters string
}{
	{"get_weather", "Current weather in a city.", `{"type":"object","properties":{"city":{"type":"string","maxLength":8},"unit":{"type":"string","enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}`},
	{"get_time", "Current time in a time zone.", `{"type":"object","properties":{"tz":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["tz"],"additionalProperties":false}`},
}

var prompts = []string{"Hello", "Reply in JSON.", "What is the weather in Oslo?", "Tell me the time in UTC.", "Pick a color."}

// workload holds the request bodies' parts and the validators, compiled
// once and shared by every client (a *jsonschema.Schema is safe for
// concurrent Validate).
type workload struct {
	schemas  []*jsonschema.Schema // by responseSchemas index
	tools    map[string]*jsonschema.Schema
	toolDefs []map[string]any
}

func newWorkload() (*workload, error) {
	w := &workload{tools: map[string]*jsonschema.Schema{}}
	for i, s := range responseSchemas {
		sch, err := compileValidator(fmt.Sprintf("response%d.json", i), s)
		if err != nil {
			return nil, err
		}
		w.schemas = append(w.schemas, sch)
	}
	for _, t := range tools {
		sch, err := compileValidator(t.name+".json", t.parameters)
		if err != nil {
			return nil, err
		}
		w.tools[t.name] = sch
		w.toolDefs = append(w.toolDefs, map[string]any{"type": "function", "function": map[string]any{
			"name": t.name, "description": t.description, "parameters": json.RawMessage(t.parameters), "strict": true}})
	}
	return w, nil
}

// compileValidator compiles a schema for the reference validator, with
// formats asserted (the server guarantees them).
func compileValidator(name, s string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("soak: schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("soak: schema %s: %w", name, err)
	}
	sch, err := c.Compile(name)
	if err != nil {
		return nil, fmt.Errorf("soak: schema %s: %w", name, err)
	}
	return sch, nil
}

// validateJSON checks that s is one JSON text that sch accepts.
func validateJSON(sch *jsonschema.Schema, s string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("does not validate: %v", err)
	}
	return nil
}

// body is one request's JSON body and what its answer is checked against.
type body struct {
	kind   Kind
	schema int // responseSchemas index, for KindJSONSchema
	json   []byte
}

func (w *workload) body(kind Kind, rng *rand.Rand, model string, maxTokens int, temperature float64) (body, error) {
	req := map[string]any{
		"messages":       []map[string]any{{"role": "user", "content": prompts[rng.IntN(len(prompts))]}},
		"max_tokens":     maxTokens,
		"temperature":    temperature,
		"seed":           rng.Int64N(1 << 31),
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if model != "" {
		req["model"] = model
	}
	b := body{kind: kind, schema: -1}
	switch kind {
	case KindJSONSchema:
		b.schema = rng.IntN(len(responseSchemas))
		req["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": fmt.Sprintf("soak_%d", b.schema), "schema": json.RawMessage(responseSchemas[b.schema]), "strict": true}}
	case KindTool:
		req["tools"] = w.toolDefs
		req["tool_choice"] = "required"
		req["parallel_tool_calls"] = rng.IntN(2) == 0
	case KindText:
	default:
		return body{}, fmt.Errorf("soak: unknown request kind %v", kind)
	}
	var err error
	b.json, err = json.Marshal(req)
	return b, err
}
