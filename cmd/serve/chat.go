package main

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
)

// chat is POST /v1/chat/completions: the request converted (FromChatRequest),
// its turn compiled, the conversation rendered and tokenized, its choices
// generated and written by the chat sink.
func (s *Server) chat(c *gin.Context) error {
	t0 := time.Now()
	var req ChatRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	j, err := FromChatRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	t, err := s.compile(ctx, c, m, j.Spec)
	if err != nil {
		return err
	}
	prompt, err := chatPrompt(m.Model, j, s.cfg.Limits())
	if err != nil {
		return err
	}
	return s.generate(ctx, m, j.Gen.request(t, [][]runner.TokenID{prompt}, t0, chatMaxParam(&req), "messages"), chatSink(c, m.Model, t, j.Gen))
}
