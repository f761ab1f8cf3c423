package main

import (
	"crypto/subtle"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"conform/turn"
)

// anthropicIgnored are the Messages fields accepted and ignored, with why
// they may be: none changes the output.
var anthropicIgnored = map[string]string{
	"metadata":           "an end-user id for abuse monitoring",
	"service_tier":       "scheduling on Anthropic's side",
	"context_management": "server-side context editing of earlier turns; the request's messages are rendered as sent",
	"container":          "a code-execution container; this server runs no server tools",
}

// anthropicRefused are Messages fields this server knows and does not
// implement; each would change the output.
var anthropicRefused = map[string]string{
	"mcp_servers": "mcp_servers: remote MCP servers are not supported; define the tools as client tools",
}

var (
	messagesFields    = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[MessagesRequest]()) })
	countTokensFields = sync.OnceValue(func() map[string]bool { return jsonFields(reflect.TypeFor[CountTokensRequest]()) })
)

// anthropicFields is the known field set of a Messages request type.
func anthropicFields(v any) map[string]bool {
	if _, ok := v.(*CountTokensRequest); ok {
		f := countTokensFields()
		return f
	}
	return messagesFields()
}

// anthropicType is Anthropic's error type for an HTTP status, as its
// reference lists them; other 4xx are invalid_request_error, other 5xx
// api_error. 503 (loading, shutting down, timeouts) is overloaded_error:
// the client should retry later.
func anthropicType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// anthropicEnvelope is Anthropic's error body for ae: the classification
// is toAPIError's, only the envelope differs.
func anthropicEnvelope(ae *apiError) AnthError {
	msg := ae.Msg
	if ae.Code == "context_length_exceeded" {
		// Anthropic's wording, which Claude Code reads to compact the
		// conversation.
		msg = "prompt is too long: " + msg
	}
	return AnthError{Type: "error", Error: AnthErrorDetail{Type: anthropicType(ae.Status), Message: msg}}
}

// renderAnthropicError is renderError with Anthropic's envelope.
func renderAnthropicError(c *gin.Context, err error) {
	renderErrorAs(c, err, func(ae *apiError) any { return anthropicEnvelope(ae) })
}

// handleAnthropic is handle with Anthropic's error envelope.
func (s *Server) handleAnthropic(h func(c *gin.Context) error) gin.HandlerFunc {
	return handleWith(renderAnthropicError, h)
}

// anthropicAuth checks the API key of the Messages routes: the x-api-key
// header of Anthropic's clients, or Authorization: Bearer (--api-key
// applies to both).
func (s *Server) anthropicAuth(c *gin.Context) {
	if s.cfg.APIKey == "" {
		return
	}
	key := []byte(s.cfg.APIKey)
	if k := c.GetHeader("X-Api-Key"); k != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(k)), key) == 1 {
		return
	}
	h := c.GetHeader("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[7:])), key) == 1 {
		return
	}
	renderAnthropicError(c, &apiError{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key",
		Msg: "invalid x-api-key: send x-api-key: <key> or Authorization: Bearer <key> (--api-key)"})
}

// messages is POST /v1/messages: the request converted
// (FromMessagesRequest), its turn compiled, the conversation rendered and
// tokenized through the chat template, one choice generated and written by
// the Anthropic sink. The anthropic-version and anthropic-beta headers and
// ?beta=true are accepted: the fields this server implements mean the same
// in every version.
func (s *Server) messages(c *gin.Context) error {
	t0 := time.Now()
	var req MessagesRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromMessagesRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	if req.Thinking != nil && req.Thinking.Type == "enabled" && !thinks(m.Model.Reasoning) {
		return unsupported("thinking", "thinking: extended thinking needs a reasoning model; this one is not served as one (--reasoning-format): send thinking {\"type\": \"disabled\"} or \"adaptive\", or omit it")
	}
	model := answeredModel(req.Model, m)
	return s.runChat(c, m, j, t0, "max_tokens", "messages", func(_ *turn.Turn, prompt int) sink { return anthropicSink(c, model, prompt, j.Gen) })
}

// thinks reports whether a model of reasoning format f can think (it has
// a reasoning block).
func thinks(f turn.ReasoningFormat) bool { return f != "" && f != turn.ReasoningNone }

// countTokens is POST /v1/messages/count_tokens: the conversation and
// tools rendered through the chat template and tokenized, as a Messages
// request with the same fields would be.
func (s *Server) countTokens(c *gin.Context) error {
	var req CountTokensRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromCountTokensRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	prompt, err := chatPrompt(m.Model, j, s.cfg.Limits())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, CountTokensResponse{InputTokens: len(prompt)})
	return nil
}
