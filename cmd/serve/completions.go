package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// completions is POST /v1/completions (the legacy text API): each prompt as
// is, no chat template; structured outputs apply to the generated text.
func (s *Server) completions(c *gin.Context) error {
	t0 := time.Now()
	var req CompletionRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := s.ready(req.Model)
	if err != nil {
		return err
	}
	prompts, out, g, err := FromCompletionRequest(&req, s.cfg.Limits())
	if err != nil {
		return err
	}
	// Every generation needs an admission: more than the server can ever
	// admit at once is a 400, not a 429 that no retry would clear.
	if total, most := len(prompts)*g.N, s.cfg.Parallel+s.cfg.MaxQueue; total > most {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "array_above_max_length", Param: "prompt",
			Msg: fmt.Sprintf("%d prompts × n %d ask for %d generations, more than the %d this server admits at once (--parallel plus --max-queue)", len(prompts), g.N, total, most)}
	}
	toks, err := completionTokens(m.Model, prompts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	t, err := s.compile(ctx, c, m, turn.Spec{Output: out})
	if err != nil {
		return err
	}
	return s.generate(ctx, m, g.request(t, toks, t0, "max_tokens", "prompt"), completionSink(c, m.Model, t, g))
}

// completionTokens tokenizes the prompts of a completions request; token
// prompts are checked against the vocabulary, text prompts against the
// context before tokenizing (promptFits).
func completionTokens(m *Model, prompts []completionPrompt) ([][]runner.TokenID, error) {
	toks := make([][]runner.TokenID, len(prompts))
	for i, p := range prompts {
		param := "prompt"
		if len(prompts) > 1 {
			param = fmt.Sprintf("prompt[%d]", i)
		}
		if p.Tokens != nil {
			for k, id := range p.Tokens {
				if int(id) >= m.Tokens.Len() {
					return nil, badParam(fmt.Sprintf("%s[%d]", param, k), fmt.Sprintf("token id %d is outside the vocabulary (%d tokens)", id, m.Tokens.Len()))
				}
			}
			toks[i] = p.Tokens
			continue
		}
		if err := promptFits(m, len(p.Text), param); err != nil {
			return nil, err
		}
		var err error
		if toks[i], err = m.Tokenize(p.Text); err != nil {
			return nil, err
		}
	}
	return toks, nil
}
