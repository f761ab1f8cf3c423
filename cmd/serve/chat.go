package main

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
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
	t, prompt, err := s.chatTurn(ctx, c, m, j)
	if err != nil {
		return err
	}
	return s.generate(ctx, m, j.Gen.request(t, [][]runner.TokenID{prompt}, t0, chatMaxParam(&req), "messages"), chatSink(c, m.Model, t, j.Gen))
}

// chatTurn compiles j's turn and renders and tokenizes its conversation
// through the chat template: what every endpoint that takes a conversation
// (chat completions, Messages) does before generating.
func (s *Server) chatTurn(ctx context.Context, c *gin.Context, m *served, j *chatJob) (*turn.Turn, []runner.TokenID, error) {
	t, err := s.compile(ctx, c, m, j.Spec)
	if err != nil {
		return nil, nil, err
	}
	prompt, err := chatPrompt(m.Model, j, s.cfg.Limits())
	if err != nil {
		return nil, nil, err
	}
	return t, prompt, nil
}
