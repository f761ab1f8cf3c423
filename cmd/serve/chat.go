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
	return s.runChat(c, m, j, t0, chatMaxParam(&req), "messages", func(t *turn.Turn, _ int) sink { return chatSink(c, m.Model, t, j.Gen) })
}

// runChat is what every endpoint that takes a conversation does once its
// request is converted: the turn compiled and the prompt rendered and
// tokenized (chatTurn), then the generation written by the sink mk makes
// for the turn and the prompt's token count. maxParam and promptParam
// name the request fields the budget errors speak of.
func (s *Server) runChat(c *gin.Context, m *served, j *chatJob, t0 time.Time, maxParam, promptParam string, mk func(t *turn.Turn, prompt int) sink) error {
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	t, prompt, err := s.chatTurn(ctx, c, m, j)
	if err != nil {
		return err
	}
	return s.generate(ctx, m, j.Gen.request(t, [][]runner.TokenID{prompt}, t0, maxParam, promptParam), mk(t, len(prompt)))
}

// answeredModel is the model name a response reports: the one the request
// asked for, or the served model's when it named none.
func answeredModel(asked string, m *served) string {
	if asked == "" {
		return m.Name
	}
	return asked
}

// chatTurn renders j's conversation through the chat template, compiles
// its turn and tokenizes the prompt: what every endpoint that takes a
// conversation (chat completions, Messages, Responses) does before
// generating. The turn's reasoning block depends on how the rendered
// prompt leaves it (chatThinking.reasoning), so the prompt is rendered
// first; when rendering fails, the turn is compiled anyway (as if the
// prompt left the block to the model), so that a request's own schema
// errors still come before its template's.
func (s *Server) chatTurn(ctx context.Context, c *gin.Context, m *served, j *chatJob) (*turn.Turn, []runner.TokenID, error) {
	f, budget := m.Model.Reasoning, s.cfg.ReasoningBudget
	text, err := renderChat(m.Model, j, s.cfg.Limits())
	if err != nil {
		j.Spec.Reasoning = j.Thinking.reasoning(f, budget, "")
		if _, cerr := s.compile(ctx, c, m, j.Spec); cerr != nil {
			return nil, nil, cerr
		}
		return nil, nil, err
	}
	j.Spec.Reasoning = j.Thinking.reasoning(f, budget, text)
	t, err := s.compile(ctx, c, m, j.Spec)
	if err != nil {
		return nil, nil, err
	}
	prompt, err := m.Tokenize(text)
	if err != nil {
		return nil, nil, err
	}
	return t, prompt, nil
}
