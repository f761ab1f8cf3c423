package main

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/turn"
)

// finishReason is the OpenAI finish_reason of a runner finish for a
// generation that made calls tool calls.
func finishReason(f runner.FinishReason, calls int) string {
	return openAIReason(turn.ReasonOf(f, calls))
}

// openAIFinish is the OpenAI finish_reason of a choice's finish.
func openAIFinish(f *turn.Finish) string {
	if f == nil {
		return "stop"
	}
	return openAIReason(f.Reason)
}

// openAIReason maps a turn's finish reason to OpenAI's three: tool_calls,
// length (the token limit or the context), and stop for the rest (the
// model's end, a stop sequence).
func openAIReason(r turn.FinishReason) string {
	switch r {
	case turn.FinishToolCalls:
		return "tool_calls"
	case turn.FinishLength, turn.FinishContext:
		return "length"
	}
	return "stop"
}

// ToUsage converts a request's usage (turn.SumUsage over its choices).
func ToUsage(u runner.Usage) *Usage {
	out := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails: &PromptTokensDetails{CachedTokens: u.CachedTokens}}
	if u.ReasoningTokens > 0 {
		out.CompletionTokensDetails = &CompletionTokensDetails{ReasoningTokens: u.ReasoningTokens}
	}
	return out
}

// ToUnenforced converts constraint warnings for the response.
func ToUnenforced(us []turn.Unenforced) []UnenforcedKw {
	if len(us) == 0 {
		return nil
	}
	out := make([]UnenforcedKw, len(us))
	for i, u := range us {
		out[i] = UnenforcedKw{Param: u.Param, Pointer: u.Pointer, Keyword: u.Keyword, Message: u.Message}
	}
	return out
}

// UnenforcedHeader is the X-Conform-Unenforced header value.
func UnenforcedHeader(us []turn.Unenforced) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = u.String()
	}
	return strings.Join(s, ", ")
}

// ToChatCalls converts parsed calls into the response's tool_calls.
func ToChatCalls(calls []turn.Call, ids []string) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: ids[i], Type: "function", Function: FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}

// fingerprint is the system_fingerprint: it changes with the model and the
// server build.
func fingerprint(m *Model) string {
	return fmt.Sprintf("fp_conform_%x", m.Tokens.Fingerprint().String()[:10])
}

// newID returns an id with a prefix and 24 random alphanumerics.
func newID(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b[:])
}

// toLogprobs converts a choice's token logprobs for the response.
func toLogprobs(lps []turn.Logprob) []TokenLogprob {
	if lps == nil {
		return nil
	}
	out := make([]TokenLogprob, len(lps))
	for i, l := range lps {
		out[i] = TokenLogprob{Token: l.Token, Logprob: l.Logprob, Bytes: byteInts(l.Bytes), TopLogprobs: []TopLogprob{}}
		for _, t := range l.Top {
			out[i].TopLogprobs = append(out[i].TopLogprobs, TopLogprob{Token: t.Token, Logprob: t.Logprob, Bytes: byteInts(t.Bytes)})
		}
	}
	return out
}

// byteInts is OpenAI's form of a token's bytes: a list of integers.
func byteInts(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// legacyLogprobs is the /v1/completions form of logprobs, whose text
// offsets count from offset (the text of the choice before them).
func legacyLogprobs(lps []TokenLogprob, offset int) *CompletionLogprobs {
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

// openAIResponse is what every OpenAI sink of a request shares: the
// response id, its creation time, the model and how it was asked.
type openAIResponse struct {
	c          *gin.Context
	id         string
	created    int64
	model      *Model
	gen        genParams
	unenforced []UnenforcedKw
}

func newOpenAIResponse(c *gin.Context, prefix string, m *Model, t *turn.Turn, g genParams) openAIResponse {
	return openAIResponse{c: c, id: newID(prefix), created: time.Now().Unix(), model: m, gen: g, unenforced: ToUnenforced(t.Unenforced())}
}

// messages gathers each choice's events and logprobs for a response body:
// the open and step of every aggregated sink.
type messages struct {
	msgs     []turn.Message
	logprobs [][]TokenLogprob
}

func (ms *messages) open(n int) {
	ms.msgs, ms.logprobs = make([]turn.Message, n), make([][]TokenLogprob, n)
}

func (ms *messages) step(st turn.Step) {
	ms.msgs[st.Choice].Add(st.Events...)
	ms.logprobs[st.Choice] = append(ms.logprobs[st.Choice], toLogprobs(st.Logprobs)...)
}

// chatSink is a chat completion: the sink of /v1/chat/completions for
// r.gen.Stream (chatStream) or not.
func chatSink(c *gin.Context, m *Model, t *turn.Turn, g genParams) sink {
	r := newOpenAIResponse(c, "chatcmpl-", m, t, g)
	if g.Stream {
		return &chatStream{openAIResponse: r}
	}
	return &chatJSON{openAIResponse: r}
}

// chatJSON is a chat completion as one JSON body.
type chatJSON struct {
	openAIResponse
	jsonSink
	messages
}

func (b *chatJSON) close(u runner.Usage) error {
	resp := ChatResponse{ID: b.id, Object: "chat.completion", Created: b.created, Model: b.model.Name, SystemFingerprint: fingerprint(b.model),
		Unenforced: b.unenforced, Usage: ToUsage(u)}
	for i := range b.msgs {
		m := &b.msgs[i]
		content, calls := m.Content(), m.Calls
		ids := make([]string, len(calls))
		for k := range ids {
			ids[k] = newID("call_")
		}
		msg := ResponseMessage{Role: "assistant", ToolCalls: ToChatCalls(calls, ids)}
		if content != "" || len(calls) == 0 {
			msg.Content = &content
		}
		if r := m.Reasoning(); r != "" {
			msg.ReasoningContent = &r
		}
		ch := ChatChoice{Index: i, Message: msg, FinishReason: openAIFinish(m.Finish)}
		if b.gen.Params.Logprobs {
			ch.Logprobs = &Logprobs{Content: b.logprobs[i]}
			if ch.Logprobs.Content == nil {
				ch.Logprobs.Content = []TokenLogprob{}
			}
		}
		resp.Choices = append(resp.Choices, ch)
	}
	b.c.JSON(http.StatusOK, resp)
	return nil
}

// chatStream is a streaming chat completion: a role delta per choice,
// content and tool_calls deltas as the parser releases them, a final chunk
// with finish_reason per choice, the usage chunk when asked, and [DONE].
type chatStream struct {
	openAIResponse
	streamSink
	callIDs []map[int]string // per choice: call index → id
}

func (s *chatStream) chunk(choices ...ChunkChoice) ChatChunk {
	return ChatChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model.Name, SystemFingerprint: fingerprint(s.model), Choices: choices}
}

func (s *chatStream) open(n int) {
	s.w = newSSE(s.c)
	s.callIDs = make([]map[int]string, n)
	empty := ""
	for i := range n {
		ck := s.chunk(ChunkChoice{Index: i, Delta: Delta{Role: "assistant", Content: &empty}})
		if i == 0 {
			ck.Unenforced = s.unenforced
		}
		s.w.data(ck)
	}
}

func (s *chatStream) step(st turn.Step) {
	// The step's logprobs go with its first delta, or alone.
	var lp *Logprobs
	if len(st.Logprobs) > 0 {
		lp = &Logprobs{Content: toLogprobs(st.Logprobs)}
	}
	for _, e := range st.Events {
		var d Delta
		switch e.Kind {
		case turn.EventContent:
			t := e.Text
			d.Content = &t
		case turn.EventReasoning:
			t := e.Text
			d.ReasoningContent = &t
		case turn.EventCallStart:
			if s.callIDs[st.Choice] == nil {
				s.callIDs[st.Choice] = map[int]string{}
			}
			cid := newID("call_")
			s.callIDs[st.Choice][e.Index] = cid
			k := e.Index
			d.ToolCalls = []ToolCall{{Index: &k, ID: cid, Type: "function", Function: FunctionCall{Name: e.Name, Arguments: ""}}}
		case turn.EventCallArgs:
			k := e.Index
			d.ToolCalls = []ToolCall{{Index: &k, Function: FunctionCall{Arguments: e.Text}}}
		default:
			continue
		}
		s.w.data(s.chunk(ChunkChoice{Index: st.Choice, Delta: d, Logprobs: lp}))
		lp = nil
	}
	if lp != nil {
		s.w.data(s.chunk(ChunkChoice{Index: st.Choice, Logprobs: lp}))
	}
	if fin := st.Finish(); fin != nil {
		f := openAIFinish(fin)
		s.w.data(s.chunk(ChunkChoice{Index: st.Choice, FinishReason: &f}))
	}
}

func (s *chatStream) close(u runner.Usage) error {
	if s.gen.IncludeUsage {
		ck := s.chunk()
		ck.Choices = []ChunkChoice{}
		ck.Usage = ToUsage(u)
		s.w.data(ck)
	}
	s.w.data("[DONE]")
	return nil
}

// completionSink is a text completion: the sink of /v1/completions for
// g.Stream (completionStream) or not.
func completionSink(c *gin.Context, m *Model, t *turn.Turn, g genParams) sink {
	r := newOpenAIResponse(c, "cmpl-", m, t, g)
	if g.Stream {
		return &completionStream{openAIResponse: r}
	}
	return &completionJSON{openAIResponse: r}
}

func (r *openAIResponse) completion(choices []CompletionChoice) CompletionResponse {
	return CompletionResponse{ID: r.id, Object: "text_completion", Created: r.created, Model: r.model.Name, SystemFingerprint: fingerprint(r.model), Choices: choices}
}

// completionJSON is a text completion as one JSON body.
type completionJSON struct {
	openAIResponse
	jsonSink
	messages
}

func (b *completionJSON) close(u runner.Usage) error {
	choices := make([]CompletionChoice, len(b.msgs))
	for i := range choices {
		f := openAIFinish(b.msgs[i].Finish)
		choices[i] = CompletionChoice{Index: i, Text: b.msgs[i].Content(), FinishReason: &f}
		if b.gen.Params.Logprobs {
			choices[i].Logprobs = legacyLogprobs(b.logprobs[i], 0)
		}
	}
	r := b.completion(choices)
	r.Usage = ToUsage(u)
	r.Unenforced = b.unenforced
	b.c.JSON(http.StatusOK, r)
	return nil
}

// completionStream is a streaming text completion: a chunk per step with
// the text it released (and its finish_reason at the end of a choice), the
// usage chunk when asked, and [DONE].
type completionStream struct {
	openAIResponse
	streamSink
	offsets []int // per choice: the text streamed so far, for logprob offsets
}

func (s *completionStream) open(n int) {
	s.w = newSSE(s.c)
	s.offsets = make([]int, n)
}

func (s *completionStream) step(st turn.Step) {
	content, _ := turn.Merge(st.Events)
	ch := CompletionChoice{Index: st.Choice, Text: content}
	if s.gen.Params.Logprobs {
		ch.Logprobs = legacyLogprobs(toLogprobs(st.Logprobs), s.offsets[st.Choice])
	}
	s.offsets[st.Choice] += len(content)
	if fin := st.Finish(); fin != nil {
		f := openAIFinish(fin)
		ch.FinishReason = &f
	}
	s.w.data(s.completion([]CompletionChoice{ch}))
}

func (s *completionStream) close(u runner.Usage) error {
	if s.gen.IncludeUsage {
		r := s.completion([]CompletionChoice{})
		r.Usage = ToUsage(u)
		s.w.data(r)
	}
	s.w.data("[DONE]")
	return nil
}
