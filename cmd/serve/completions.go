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
		if err := promptFits(m.Model, len(p.Text), param); err != nil {
			return err
		}
		if toks[i], err = m.Tokenize(p.Text); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(c.Request.Context())
	defer cancel()
	tn, err := m.turns.Compile(ctx, turn.Spec{Output: out})
	if err != nil {
		return err
	}
	if len(tn.Unenforced()) > 0 {
		c.Header("X-Conform-Unenforced", UnenforcedHeader(tn.Unenforced()))
	}
	stream, err := s.driver(m.Model).Generate(ctx, g.request(tn, toks, t0, "max_tokens", "prompt"))
	if err != nil {
		return err
	}
	defer stream.Close()
	id := newID("cmpl-")
	created := time.Now().Unix()
	n := stream.Choices()
	resp := func(choices []CompletionChoice) CompletionResponse {
		return CompletionResponse{ID: id, Object: "text_completion", Created: created, Model: m.Name, SystemFingerprint: fingerprint(m.Model), Choices: choices}
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
	if g.Stream {
		w := newSSE(c)
		offsets := make([]int, n)
		for {
			st, ok := stream.Next()
			if !ok {
				break
			}
			if w.failed {
				stream.Close()
				return nil
			}
			if err := st.Err(); err != nil {
				stream.Close()
				w.fail(err)
				w.data("[DONE]")
				return nil
			}
			content, _ := turn.Merge(st.Events)
			ch := CompletionChoice{Index: st.Choice, Text: content}
			if g.Params.Logprobs {
				ch.Logprobs = legacy(toLogprobs(st.Logprobs), offsets[st.Choice])
			}
			offsets[st.Choice] += len(content)
			if fin := st.Finish(); fin != nil {
				f := openAIFinish(fin)
				ch.FinishReason = &f
			}
			w.data(resp([]CompletionChoice{ch}))
		}
		if g.IncludeUsage {
			r := resp([]CompletionChoice{})
			r.Usage = ToUsage(stream.Usage())
			w.data(r)
		}
		w.data("[DONE]")
		return nil
	}
	msgs := make([]turn.Message, n)
	lps := make([][]TokenLogprob, n)
	for {
		st, ok := stream.Next()
		if !ok {
			break
		}
		if err := st.Err(); err != nil {
			return err
		}
		for _, e := range st.Events {
			msgs[st.Choice].Add(e)
		}
		lps[st.Choice] = append(lps[st.Choice], toLogprobs(st.Logprobs)...)
	}
	choices := make([]CompletionChoice, n)
	for i := range choices {
		f := openAIFinish(msgs[i].Finish)
		choices[i] = CompletionChoice{Index: i, Text: msgs[i].Content(), FinishReason: &f}
		if g.Params.Logprobs {
			choices[i].Logprobs = legacy(lps[i], 0)
		}
	}
	r := resp(choices)
	r.Usage = ToUsage(stream.Usage())
	r.Unenforced = ToUnenforced(tn.Unenforced())
	c.JSON(http.StatusOK, r)
	return nil
}
