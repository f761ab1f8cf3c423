package main

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"

	"conform/runner"
	"conform/tokenizer"
)

// fakeVocab is a small byte-level vocabulary: the 256 bytes, a few words and
// markup pieces (so that constrained output takes multi-byte tokens), and the
// ChatML specials, <|im_end|> being EOS.
func fakeVocab() *tokenizer.Vocabulary {
	v := &tokenizer.Vocabulary{BOS: tokenizer.NoToken, Name: "fake"}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, []byte{byte(b)})
	}
	for _, w := range []string{"<tool_call>", "</tool_call>", `{"name": "`, `", "arguments": `, "get_weather", "city", " the", "hello", "Paris", `": "`, `"}`, "\n"} {
		v.Tokens = append(v.Tokens, []byte(w))
	}
	for _, sp := range []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>"} {
		v.Tokens = append(v.Tokens, append([]byte{tokenizer.SpecialPrefix}, sp...))
	}
	v.Special = make([]bool, len(v.Tokens))
	for i := len(v.Tokens) - 3; i < len(v.Tokens); i++ {
		v.Special[i] = true
	}
	v.EOS = []tokenizer.TokenID{tokenizer.TokenID(len(v.Tokens) - 2)}
	v.Width = len(v.Tokens) + 6 // logits wider than the vocabulary, as real models have
	return v
}

// fakeTokenize encodes ChatML specials as their tokens and the rest byte by
// byte.
func fakeTokenize(v *tokenizer.Vocabulary) func(string) ([]runner.TokenID, error) {
	specials := map[string]runner.TokenID{}
	for i, t := range v.Tokens {
		if v.Special[i] {
			specials[string(t[1:])] = runner.TokenID(i)
		}
	}
	return func(s string) ([]runner.TokenID, error) {
		var out []runner.TokenID
		for len(s) > 0 {
			matched := false
			for name, id := range specials {
				if strings.HasPrefix(s, name) {
					out = append(out, id)
					s = s[len(name):]
					matched = true
					break
				}
			}
			if !matched {
				out = append(out, runner.TokenID(s[0]))
				s = s[1:]
			}
		}
		return out, nil
	}
}

// fakeEngine is a runner.Engine with random logits: readable ASCII is
// favoured, EOS is likely enough that free text ends. Without a constraint
// its output is noise; with one it is a random member of the constraint's
// language, which is what the handler tests check.
type fakeEngine struct {
	mu    sync.Mutex
	width int
	eos   int
	rng   *rand.Rand
	// block, when set, makes Decode wait (queue tests).
	block chan struct{}
	// onLogits, when set, runs at the start of every Logits call (fault
	// injection: it may panic).
	onLogits func()
}

func (e *fakeEngine) NumVocab() int { return e.width }

func (e *fakeEngine) Decode(b runner.Batch) error {
	e.mu.Lock()
	block := e.block
	e.mu.Unlock()
	if block != nil {
		<-block
	}
	return nil
}

// setBlock makes Decode wait until block is closed.
func (e *fakeEngine) setBlock(block chan struct{}) {
	e.mu.Lock()
	e.block = block
	e.mu.Unlock()
}

func (e *fakeEngine) Logits(i int) ([]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.onLogits != nil {
		e.onLogits()
	}
	row := make([]float32, e.width)
	for t := range row {
		row[t] = float32(e.rng.NormFloat64())
		if t >= 'a' && t <= 'z' || t == ' ' {
			row[t] += 3
		}
		if t >= 256 && t < 256+12 {
			row[t] += 2
		}
	}
	row[e.eos] += 2.5
	return row, nil
}

func (e *fakeEngine) RemoveKV(seq, from, to int) error { return nil }

// testServer is a Server over the fake engine, with its runner running.
type testServer struct {
	*Server
	http  *httptest.Server
	model *Model
	eng   *fakeEngine
}

func newTestServer(t testing.TB, cfg Config, tmpl string) *testServer {
	t.Helper()
	return newTestServerOf(t, cfg, tmpl, fakeVocab(), rand.New(rand.NewPCG(1, 2)))
}

// newTestServerOf is newTestServer over vocabulary v, the fake engine
// drawing from rng.
func newTestServerOf(t testing.TB, cfg Config, tmpl string, v *tokenizer.Vocabulary, rng *rand.Rand) *testServer {
	t.Helper()
	gin.SetMode(gin.TestMode)
	if cfg.Parallel == 0 {
		cfg.Parallel = 2
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxQueue == 0 {
		cfg.MaxQueue = 16
	}
	if cfg.ToolCallParser == "" {
		cfg.ToolCallParser = "auto"
	}
	if tmpl == "" {
		tmpl = DemoTemplate
	}
	ctxSize := 4096
	if cfg.CtxSize > 0 {
		ctxSize = cfg.CtxSize
	}
	eng := &fakeEngine{width: v.Width, eos: int(v.EOS[0]), rng: rng}
	m, err := NewModel(ModelSpec{Name: "fake", Vocab: v, Template: tmpl, TemplateFrom: "test", Parser: cfg.ToolCallParser,
		Tokenize: fakeTokenize(v), Engine: eng, Runner: runner.Config{Slots: cfg.Parallel, ContextSize: ctxSize}, Info: "fake engine"})
	if err != nil {
		t.Fatalf("NewModel: %v", err)
	}
	srv := NewServer(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	if err := srv.SetModel(m); err != nil {
		t.Fatalf("SetModel: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		cancel()
		<-done
	})
	return &testServer{Server: srv, http: hs, model: m, eng: eng}
}

// httptestDo runs one request through s's handler and returns the status.
func httptestDo(s *Server, method, path string) int {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, path, nil)
	s.Handler().ServeHTTP(rec, req)
	return rec.Code
}
