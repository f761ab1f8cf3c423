package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"

	"conform/runner"
)

// panicMatcher wraps a request's constraint and panics in its first
// FillMask after at least `at` tokens were accepted (forced tokens are
// accepted in runs, so the count may jump past `at`).
type panicMatcher struct {
	runner.Guide
	at, n int
}

func (m *panicMatcher) FillMask(dst []uint64) error {
	if m.n >= m.at {
		panic("injected constraint panic")
	}
	return m.Guide.FillMask(dst)
}

func (m *panicMatcher) Accept(t runner.TokenID) error {
	m.n++
	return m.Guide.Accept(t)
}

// panicFormat's every output samples at least six tokens (the string's
// characters), so the engine's third Logits call and the constraint's
// FillMask after two accepted tokens always come.
var panicFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "city", "strict": true,
	"schema": json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","minLength":6,"maxLength":12}},"required":["city"],"additionalProperties":false}`)}}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestPanicFailsOneRequest injects a panic through the engine (Logits) and
// through a constraint (FillMask): that request ends with a 500 in OpenAI's
// envelope (streaming: an error event, then [DONE]), the panic is logged
// with the request id and a stack and counted in /metrics, its slot is
// freed, and the server answers the next requests normally.
func TestPanicFailsOneRequest(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		engine bool // inject through the engine, else through the constraint
	}{
		{"engine", false, true},
		{"engine, streaming", true, true},
		{"constraint", false, false},
		{"constraint, streaming", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, Config{Parallel: 1}, "")
			var logs syncBuffer
			ts.Server.log = slog.New(slog.NewJSONHandler(&logs, nil))
			var armed atomic.Bool
			armed.Store(true)
			if tt.engine {
				calls := 0
				ts.eng.mu.Lock()
				ts.eng.onLogits = func() { // runs under eng.mu
					calls++
					if calls == 3 && armed.Swap(false) {
						panic("injected engine panic")
					}
				}
				ts.eng.mu.Unlock()
			} else {
				ts.wrapGuide = func(c runner.Guide) runner.Guide {
					if armed.Swap(false) {
						return &panicMatcher{Guide: c, at: 2}
					}
					return c
				}
			}
			body := chatBody(map[string]any{"response_format": panicFormat, "max_tokens": 40, "stream": tt.stream})
			resp, out := ts.post(t, "/v1/chat/completions", body, "X-Request-Id", "req-panic-test")
			var env ErrorBody
			if tt.stream {
				evs := sseEvents(t, out)
				if resp.StatusCode != http.StatusOK || len(evs) < 2 || evs[len(evs)-1] != "[DONE]" {
					t.Fatalf("streamed panic: status %d, events %q; want 200, then an error event and [DONE]", resp.StatusCode, evs)
				}
				if err := json.Unmarshal([]byte(evs[len(evs)-2]), &env); err != nil {
					t.Fatalf("event before [DONE] %q is not an error envelope: %v", evs[len(evs)-2], err)
				}
			} else {
				if resp.StatusCode != http.StatusInternalServerError {
					t.Fatalf("status %d, body %s; want 500", resp.StatusCode, out)
				}
				if err := json.Unmarshal(out, &env); err != nil {
					t.Fatalf("body %s is not an error envelope: %v", out, err)
				}
			}
			if env.Error.Type != "server_error" || env.Error.Code == nil || *env.Error.Code != "internal_error" || env.Error.Message == "" {
				t.Errorf("error envelope %+v, want server_error / internal_error with a message", env.Error)
			}
			if armed.Load() {
				t.Fatalf("the panic was never injected")
			}
			l := logs.String()
			if !strings.Contains(l, `"request_id":"req-panic-test"`) || !strings.Contains(l, "injected") || !strings.Contains(l, `"stack":"goroutine`) {
				t.Errorf("log %s\nwant the panic with request id req-panic-test and a stack", l)
			}
			// The slot is free and the server serves on (Parallel 1: a leaked
			// slot would queue these forever).
			for i := range 3 {
				resp, out := ts.post(t, "/v1/chat/completions", chatBody(map[string]any{"response_format": panicFormat, "max_tokens": 40}))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d after the panic: status %d, body %s", i, resp.StatusCode, out)
				}
			}
			if code := httptestDo(ts.Server, "GET", "/health"); code != http.StatusOK {
				t.Errorf("/health = %d after the panic, want 200", code)
			}
			mresp, err := http.Get(ts.http.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			m, _ := io.ReadAll(mresp.Body)
			mresp.Body.Close()
			if !strings.Contains(string(m), "conform_runner_panics_total 1") || !strings.Contains(string(m), "conform_busy_slots 0") {
				t.Errorf("/metrics lacks conform_runner_panics_total 1 or conform_busy_slots 0:\n%s", grepLines(string(m), "panics", "busy"))
			}
		})
	}
}

// grepLines returns the lines of s that contain any of words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestEdgePanicEnvelope: a panic in a handler is a 500 in the envelope of
// the route's API: Anthropic's on the Messages routes, OpenAI's elsewhere.
func TestEdgePanicEnvelope(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	ts.Server.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	boom := func(c *gin.Context) { panic("injected handler panic") }
	ts.Server.engine.POST("/v1/messages/boom", boom)
	ts.Server.engine.POST("/v1/boom", boom)
	resp, out := ts.post(t, "/v1/messages/boom", map[string]any{})
	var anth AnthError
	if resp.StatusCode != 500 || json.Unmarshal(out, &anth) != nil || anth.Type != "error" || anth.Error.Type != "api_error" {
		t.Errorf("Messages route: %d %s, want 500 with Anthropic's api_error", resp.StatusCode, out)
	}
	resp, out = ts.post(t, "/v1/boom", map[string]any{})
	var env ErrorBody
	if resp.StatusCode != 500 || json.Unmarshal(out, &env) != nil || env.Error.Type != "server_error" {
		t.Errorf("OpenAI route: %d %s, want 500 with OpenAI's server_error", resp.StatusCode, out)
	}
}
