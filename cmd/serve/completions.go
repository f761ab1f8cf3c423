package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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
	toks := make([][]runner.TokenID, len(prompts))
	for i, p := range prompts {
		param := "prompt"
		if len(prompts) > 1 {
			param = fmt.Sprintf("prompt[%d]", i)
		}
		if p.Tokens != nil {
			for k, id := range p.Tokens {
				if int(id) >= len(m.Vocab.Tokens) {
					return badParam(fmt.Sprintf("%s[%d]", param, k), fmt.Sprintf("token id %d is outside the vocabulary (%d tokens)", id, len(m.Vocab.Tokens)))
				}
			}
			toks[i] = p.Tokens
			continue
		}
		if err := promptFits(m, len(p.Text), param); err != nil {
			return err
		}
		if toks[i], err = m.Tokenize(p.Text); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	cons, res, err := s.constraintFor(ctx, m, turn.Spec{Output: out})
	if err != nil {
		return err
	}
	if len(res.Unenforced) > 0 {
		c.Header("X-Conform-Unenforced", UnenforcedHeader(res.Unenforced))
	}
	jb := &job{model: m, gen: g, cons: cons, logprobs: g.Params.Logprobs, start: t0}
	for _, t := range toks {
		for range g.N {
			jb.prompts = append(jb.prompts, t)
		}
	}
	if err := checkBudget(jb, "max_tokens", "prompt"); err != nil {
		return err
	}
	pieces, err := s.start(ctx, jb)
	if err != nil {
		return err
	}
	id := newID("cmpl-")
	created := time.Now().Unix()
	n := len(jb.prompts)
	resp := func(choices []CompletionChoice) CompletionResponse {
		return CompletionResponse{ID: id, Object: "text_completion", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m), Choices: choices}
	}
	legacy := func(lps []TokenLogprob, offset int) *CompletionLogprobs {
		l := &CompletionLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
		for _, t := range lps {
			l.Tokens = append(l.Tokens, t.Token)
			l.TokenLogprobs = append(l.TokenLogprobs, t.Logprob)
			top := map[string]float64{}
			for _, a := range t.TopLogprobs {
				top[a.Token] = a.Logprob
			}
			l.TopLogprobs = append(l.TopLogprobs, top)
			l.TextOffset = append(l.TextOffset, offset)
			offset += len(t.Token)
		}
		return l
	}
	us := make([]*runner.Usage, n)
	if g.Stream {
		w := newSSE(c)
		offsets := make([]int, n)
		var failure error
		for pc := range pieces {
			if w.failed || failure != nil {
				cancel()
				continue
			}
			if pc.err != nil {
				failure = pc.err
				cancel()
				continue
			}
			content, _ := turn.Merge(pc.events)
			ch := CompletionChoice{Index: pc.choice, Text: content}
			if g.Params.Logprobs {
				ch.Logprobs = legacy(pc.logprobs, offsets[pc.choice])
			}
			offsets[pc.choice] += len(content)
			if pc.done {
				f := pc.finish
				ch.FinishReason = &f
				us[pc.choice] = pc.usage
			}
			w.data(resp([]CompletionChoice{ch}))
		}
		if failure != nil && !w.failed {
			w.fail(failure)
		} else if g.IncludeUsage {
			r := resp([]CompletionChoice{})
			r.Usage = ToUsage(us)
			w.data(r)
		}
		w.data("[DONE]")
		return nil
	}
	texts := make([]strings.Builder, n)
	lps := make([][]TokenLogprob, n)
	finish := make([]string, n)
	for pc := range pieces {
		if pc.err != nil {
			cancel()
			for range pieces {
			}
			return pc.err
		}
		content, _ := turn.Merge(pc.events)
		texts[pc.choice].WriteString(content)
		lps[pc.choice] = append(lps[pc.choice], pc.logprobs...)
		if pc.done {
			finish[pc.choice], us[pc.choice] = pc.finish, pc.usage
		}
	}
	choices := make([]CompletionChoice, n)
	for i := range choices {
		f := finish[i]
		choices[i] = CompletionChoice{Index: i, Text: texts[i].String(), FinishReason: &f}
		if g.Params.Logprobs {
			choices[i].Logprobs = legacy(lps[i], 0)
		}
	}
	r := resp(choices)
	// Usage: prompt tokens of every prompt once.
	u := &Usage{PromptTokensDetails: &PromptTokensDetails{}}
	for i, x := range us {
		if x == nil {
			continue
		}
		if i%g.N == 0 {
			u.PromptTokens += x.PromptTokens
		}
		u.CompletionTokens += x.CompletionTokens
		u.PromptTokensDetails.CachedTokens += x.CachedTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	r.Usage = u
	r.Unenforced = ToUnenforced(res.Unenforced)
	c.JSON(http.StatusOK, r)
	return nil
}
