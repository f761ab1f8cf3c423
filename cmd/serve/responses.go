package main

import (
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"conform/turn"
)

// responsesIgnored are the Responses fields accepted and ignored, with why
// they may be: none changes the output.
var responsesIgnored = map[string]string{
	"prompt_cache_key":       "a cache hint; the KV cache is reused by prefix anyway",
	"prompt_cache_retention": "a cache hint",
	"safety_identifier":      "an end-user id for abuse monitoring",
	"service_tier":           "scheduling on OpenAI's side",
	"client_metadata":        "client tags (Codex sends them)",
	"context_management":     "server-side compaction of long conversations; the input is rendered as sent and one longer than the context is refused",
}

// responsesRefused are Responses fields this server knows and does not
// implement; each would change the output, or needs state this stateless
// server does not keep.
var responsesRefused = map[string]string{
	"previous_response_id": "previous_response_id is not supported: this server is stateless and stores no responses; send the whole conversation in input (store: false)",
	"conversation":         "conversation is not supported: this server is stateless and stores no conversations; send the whole conversation in input",
	"background":           "background responses are not supported: this server is stateless; send the request in the foreground (stream: true for long ones)",
	"prompt":               "prompt (a stored prompt template) is not supported: this server stores no prompts; send instructions and input",
	"moderation":           "moderation is not supported",
	"image":                "image inputs and outputs are not supported (text only)",
}

var responsesFields = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[ResponsesRequest]()) })

// DefaultMaxOutputTokens is the output cap of a Responses request without
// max_output_tokens (Codex sends none): --default-max-output-tokens.
const DefaultMaxOutputTokens = 8192

// responses is POST /v1/responses: the request converted
// (FromResponsesRequest), its turn compiled, the conversation rendered and
// tokenized through the chat template, one response generated and written
// by the Responses sink. Hosted tools it cannot run are named in the
// X-Conform-Ignored-Tools header.
func (s *Server) responses(c *gin.Context) error {
	t0 := time.Now()
	var req ResponsesRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromResponsesRequest(&req, s.cfg.Limits(), s.cfg.defaultMaxOutput())
	if err != nil {
		return err
	}
	if len(j.IgnoredTools) > 0 {
		c.Header("X-Conform-Ignored-Tools", strings.Join(j.IgnoredTools, ", "))
	}
	if req.Reasoning != nil && !thinks(m.Model.Reasoning) {
		// Codex always sends it; a model that does not think has no use
		// for it.
		appendHeader(c, "X-Conform-Ignored", "reasoning")
	}
	if req.Store == nil || *req.Store {
		// store defaults to true in OpenAI's API; nothing is stored here,
		// and the response says store: false.
		appendHeader(c, "X-Conform-Ignored", "store")
	}
	model := answeredModel(req.Model, m)
	return s.runChat(c, m, j.chatJob, t0, "max_output_tokens", "input", func(*turn.Turn, int) sink { return responsesSink(c, model, j) })
}

// appendHeader adds v to a comma-separated header.
func appendHeader(c *gin.Context, name, v string) {
	if old := c.Writer.Header().Get(name); old != "" {
		v = old + ", " + v
	}
	c.Header(name, v)
}
