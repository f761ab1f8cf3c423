package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fake answers every chat completion with one content chunk cut at
// max_tokens (valid free text; constrained kinds count as cut: errors
// unless -allow-cut) and reports busy slots on /metrics.
func fake(t *testing.T, busy int) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "conform_busy_slots %d\nconform_queue_depth 0\n", busy)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			`{"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestRun(t *testing.T) {
	ok, stuck := fake(t, 0), fake(t, 1)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout, or in stderr when code is 2
	}{
		{"pass", []string{"-url", ok.URL, "-clients", "3", "-duration", "100ms", "-quiet", "-allow-cut"}, 0, "result: PASS"},
		{"cut outputs are errors", []string{"-url", ok.URL, "-clients", "2", "-duration", "50ms", "-quiet"}, 1, "failed requests"},
		{"rounds", []string{"-url", ok.URL, "-clients", "2", "-duration", "50ms", "-quiet", "-allow-cut", "-rounds", "2"}, 0, "round 2 of 2"},
		{"bad rounds", []string{"-url", ok.URL, "-rounds", "0"}, 2, "-rounds 0"},
		{"busy slot", []string{"-url", stuck.URL, "-clients", "1", "-duration", "50ms", "-quiet", "-allow-cut"}, 1, "busy slots"},
		{"neither url nor server", nil, 2, "give -url"},
		{"both", []string{"-url", ok.URL, "-server", "x"}, 2, "not both"},
		{"pid with server", []string{"-server", "x", "-pid", "1"}, 2, "-pid is for -url"},
		{"no such server binary", []string{"-server", "/nonexistent/serve"}, 2, "start /nonexistent/serve"},
		{"server exits", []string{"-server", "/bin/false"}, 2, "exited before it was ready"},
		{"bad config", []string{"-url", ok.URL, "-clients", "-3"}, 2, "clients -3"},
		{"extra arguments", []string{"-url", ok.URL, "more"}, 2, "unexpected arguments"},
		{"unreachable", []string{"-url", "http://127.0.0.1:1", "-quiet"}, 2, "GET /metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(context.Background(), tc.args, &stdout, &stderr)
			where := stdout.String()
			if tc.code == 2 {
				where = stderr.String()
			}
			if code != tc.code || !strings.Contains(where, tc.out) {
				t.Fatalf("run(%q) = %d, want %d with %q in\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, tc.out, stdout.String(), stderr.String())
			}
			if tc.code == 2 {
				return
			}
			// The last line of stdout is the JSON report.
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var rep struct {
				OK       bool     `json:"ok"`
				Clients  int      `json:"clients"`
				Failures []string `json:"failures"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
				t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
			}
			if rep.OK != (tc.code == 0) || rep.Clients == 0 {
				t.Errorf("JSON line %+v for exit %d", rep, code)
			}
		})
	}
}

func TestJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.json")
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-url", fake(t, 0).URL, "-clients", "2", "-duration", "50ms", "-quiet", "-allow-cut", "-rounds", "2", "-json", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%s has %d lines, want one per round (2)", path, len(lines))
	}
	for i, l := range lines {
		var rep struct {
			OK    bool `json:"ok"`
			Total struct {
				Requests int `json:"requests"`
			} `json:"total"`
		}
		if err := json.Unmarshal([]byte(l), &rep); err != nil || !rep.OK || rep.Total.Requests == 0 {
			t.Errorf("round %d line %q: %+v %v", i+1, l, rep, err)
		}
	}
}
