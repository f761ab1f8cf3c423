package main

// POST /v1/conform/explain: what the server makes of a request's
// structured-output fields, without generating. The request is the
// structured-output part of a chat request, converted by the chat
// converter's own pieces (chatTools, parseToolChoice, outputOf) under the
// same limits; the answer is turn.Compiler.Explain's, in JSON.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"conform/turn"
)

// Explain's sample counts: a handful by default, and a bound on what one
// request may ask (each sample is up to MinTokens+64 masks).
const (
	defaultExplainSamples = 3
	maxExplainSamples     = 10
)

// ExplainRequest is the body of POST /v1/conform/explain: the fields of a
// chat request that shape its constraint, with the same meaning, plus
// samples and seed for the random outputs.
type ExplainRequest struct {
	Model             string             `json:"model"`
	Tools             []ToolDef          `json:"tools,omitempty"`
	ToolChoice        json.RawMessage    `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool              `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    *ResponseFormat    `json:"response_format,omitempty"`
	StructuredOutputs *StructuredOutputs `json:"structured_outputs,omitempty"`
	GuidedJSON        json.RawMessage    `json:"guided_json,omitempty"`
	GuidedRegex       *string            `json:"guided_regex,omitempty"`
	GuidedChoice      []string           `json:"guided_choice,omitempty"`
	// Samples is the number of random outputs (default 3, at most 10).
	Samples *int `json:"samples,omitempty"`
	// Seed seeds them (default 0): the same seed draws the same outputs.
	Seed *int64 `json:"seed,omitempty"`
}

var explainFields = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[ExplainRequest]()) })

// explainJob is an explain request in the server's form.
type explainJob struct {
	Model string
	Spec  turn.Spec
	Opts  turn.ExplainOptions
	Seed  int64
}

// FromExplainRequest validates r against the API and lim and converts it,
// as FromChatRequest does the same fields.
func FromExplainRequest(r *ExplainRequest, lim Limits) (*explainJob, error) {
	lim = lim.withDefaults()
	j := &explainJob{Model: r.Model}
	if len(r.Tools) > lim.MaxTools {
		return nil, overLimit("tools", "array_above_max_length", fmt.Sprintf("%d tools", len(r.Tools)), lim.MaxTools, "max-tools")
	}
	if _, err := (structured{r.Tools, r.ToolChoice, r.ParallelToolCalls, r.ResponseFormat, r.StructuredOutputs, r.GuidedJSON, r.GuidedRegex, r.GuidedChoice}).spec(lim, &j.Spec); err != nil {
		return nil, err
	}
	j.Opts.Samples = defaultExplainSamples
	if r.Samples != nil {
		if *r.Samples < 0 || *r.Samples > maxExplainSamples {
			return nil, badParam("samples", fmt.Sprintf("samples must be between 0 and %d", maxExplainSamples))
		}
		j.Opts.Samples = *r.Samples
	}
	if r.Seed != nil {
		j.Seed = *r.Seed
		j.Opts.Seed = uint64(*r.Seed)
	}
	return j, nil
}

// The response of POST /v1/conform/explain (see the README's "Explain").
type (
	// ExplainResponse is the whole answer.
	ExplainResponse struct {
		Object  string          `json:"object"` // "conform.explanation"
		Model   string          `json:"model"`
		Schemas []ExplainSchema `json:"schemas"`
		// Error is the error a chat request with these fields would
		// get, when its constraint does not compile (a schema refused);
		// nothing below is set then.
		Error       *ErrorDetail  `json:"error,omitempty"`
		Constrained bool          `json:"constrained"`
		ToolCalls   bool          `json:"tool_calls"`
		Sizes       *ExplainSizes `json:"sizes,omitempty"`
		CompileMS   *float64      `json:"compile_ms,omitempty"`
		Cache       string        `json:"cache,omitempty"` // "hit" or "miss"
		// StartAllowedTokens is the number of tokens the first step may
		// take (EOS included).
		StartAllowedTokens *int `json:"start_allowed_tokens,omitempty"`
		// MinTokens is the shortest output's length: the smallest
		// max_tokens that completes an output.
		MinTokens      *int            `json:"min_tokens,omitempty"`
		MinTokensError string          `json:"min_tokens_error,omitempty"`
		Shortest       *ExplainOutput  `json:"shortest,omitempty"`
		Seed           int64           `json:"seed"`
		Samples        []ExplainOutput `json:"samples"`
		// SamplesError says why the walks stopped early (the closing
		// search ran out of its budget).
		SamplesError string `json:"samples_error,omitempty"`
	}
	// ExplainSchema is one schema of the request and its keywords.
	ExplainSchema struct {
		Param    string           `json:"param"`
		Strict   bool             `json:"strict"`
		Keywords []ExplainKeyword `json:"keywords"`
		// StrictError is the error strict mode raises for this schema
		// (absent: every keyword is enforced exactly).
		StrictError *ErrorDetail `json:"strict_error,omitempty"`
	}
	// ExplainKeyword is one keyword: where it is and how it is enforced.
	ExplainKeyword struct {
		Pointer string `json:"pointer"`
		Keyword string `json:"keyword"`
		Status  string `json:"status"` // exact, approximated, refused or annotation
		Message string `json:"message,omitempty"`
	}
	// ExplainSizes are the sizes of the constraint's automata.
	ExplainSizes struct {
		ASTNodes  int `json:"ast_nodes"`
		NFAStates int `json:"nfa_states"`
		// DFAStates are the states built to reach the first mask (the
		// rest are built as decoding reaches them).
		DFAStates int `json:"dfa_states"`
	}
	// ExplainOutput is one output the constraint accepts.
	ExplainOutput struct {
		Text      string            `json:"text"`
		Tokens    int               `json:"tokens"`
		Content   string            `json:"content"`
		ToolCalls []ExplainToolCall `json:"tool_calls,omitempty"`
	}
	// ExplainToolCall is a call of an output, as chat would return it.
	ExplainToolCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
)

// explain serves POST /v1/conform/explain.
func (s *Server) explain(c *gin.Context) error {
	var req ExplainRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromExplainRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	// The samples are read back as generations are: with the runner's
	// detokenizer (model.go).
	j.Opts.Detokenize = m.Tokens.DetokenizerWith(m.Format, m.Reasoning)
	if m.Description != nil {
		j.Opts.Detokenize = m.Tokens.DetokenizerOf(*m.Description, m.Reasoning)
	}
	ex, err := m.turns.Explain(c.Request.Context(), j.Spec, j.Opts)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, explainResponse(answeredModel(j.Model, m), j.Seed, ex))
	return nil
}

// explainResponse writes ex in the endpoint's JSON.
func explainResponse(model string, seed int64, ex *turn.Explanation) ExplainResponse {
	r := ExplainResponse{Object: "conform.explanation", Model: model, Schemas: []ExplainSchema{}, Seed: seed, Samples: []ExplainOutput{}}
	for _, sc := range ex.Schemas {
		es := ExplainSchema{Param: sc.Param, Strict: sc.Strict, Keywords: []ExplainKeyword{}}
		for _, k := range sc.Keywords {
			es.Keywords = append(es.Keywords, ExplainKeyword{Pointer: k.Pointer, Keyword: k.Keyword, Status: string(k.Status), Message: k.Message})
		}
		if sc.StrictErr != nil {
			d := envelope(toAPIError(sc.StrictErr)).Error
			es.StrictError = &d
		}
		r.Schemas = append(r.Schemas, es)
	}
	if ex.Err != nil {
		d := envelope(toAPIError(ex.Err)).Error
		r.Error = &d
		return r
	}
	r.Constrained, r.ToolCalls = ex.Constrained, ex.Calls
	if !ex.Constrained {
		return r
	}
	r.Sizes = &ExplainSizes{ASTNodes: ex.ASTNodes, NFAStates: ex.NFAStates, DFAStates: ex.DFAStates}
	ms := float64(ex.CompileTime) / float64(time.Millisecond)
	r.CompileMS = &ms
	r.Cache = "miss"
	if ex.CacheHit {
		r.Cache = "hit"
	}
	r.StartAllowedTokens = &ex.StartAllowed
	if ex.MinErr != nil {
		r.MinTokensError = ex.MinErr.Error()
		return r
	}
	r.MinTokens = &ex.MinTokens
	out := func(s turn.Sample) ExplainOutput {
		o := ExplainOutput{Text: s.Text, Tokens: s.Tokens, Content: s.Content}
		for _, c := range s.Calls {
			o.ToolCalls = append(o.ToolCalls, ExplainToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		return o
	}
	if ex.Shortest != nil {
		sh := out(*ex.Shortest)
		r.Shortest = &sh
	}
	for _, s := range ex.Samples {
		r.Samples = append(r.Samples, out(s))
	}
	if ex.WalkErr != nil {
		r.SamplesError = ex.WalkErr.Error()
	}
	return r
}
