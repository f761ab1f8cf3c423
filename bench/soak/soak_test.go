package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// validInstances holds one instance per responseSchemas entry that the
// schema accepts; the fake server answers with it.
var validInstances = []string{
	`{"ok":true,"n":3}`,
	`{"color":"red","tags":["a","bc"]}`,
	`{"user":{"code":"AB12","role":"dev","mail":"a@b.co"}}`,
	`{"id":7,"kind":"a"}`,
}

func TestWorkloadSchemas(t *testing.T) {
	w, err := newWorkload()
	if err != nil {
		t.Fatal(err)
	}
	if len(validInstances) != len(responseSchemas) {
		t.Fatalf("%d valid instances for %d schemas", len(validInstances), len(responseSchemas))
	}
	for i, inst := range validInstances {
		if err := validateJSON(w.schemas[i], inst); err != nil {
			t.Errorf("schema %d: validateJSON(%s) = %v, want nil", i, inst, err)
		}
	}
	// Each schema rejects what it must, formats included.
	for _, tc := range []struct {
		schema int
		inst   string
	}{
		{0, `{"ok":true,"n":10}`},
		{0, `{"ok":true}`},
		{0, `{"ok":true,"n":3`},
		{1, `{"color":"pink","tags":[]}`},
		{1, `{"color":"red","tags":["a","b","c"]}`},
		{2, `{"user":{"code":"ab12","role":"dev"}}`},
		{2, `{"user":{"code":"AB12","role":"root"}}`},
		{2, `{"user":{"code":"AB12","role":"dev","mail":"not-a-mail"}}`},
		{3, `{"id":0,"kind":"a"}`},
		{3, `{"id":1,"kind":4}`},
	} {
		if err := validateJSON(w.schemas[tc.schema], tc.inst); err == nil {
			t.Errorf("schema %d: validateJSON(%s) = nil, want an error", tc.schema, tc.inst)
		}
	}
	if err := validateJSON(w.tools["get_weather"], `{"city":"Oslo","unit":"c"}`); err != nil {
		t.Errorf("get_weather: %v", err)
	}
	if err := validateJSON(w.tools["get_time"], `{"tz":"utc"}`); err == nil {
		t.Errorf("get_time accepted a lower-case tz")
	}
}

func TestBody(t *testing.T) {
	w, err := newWorkload()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range Kinds {
		b, err := w.body(k, rng, "demo", 48, 1)
		if err != nil {
			t.Fatalf("body(%v): %v", k, err)
		}
		var req map[string]any
		if err := json.Unmarshal(b.json, &req); err != nil {
			t.Fatalf("body(%v) is not JSON: %v", k, err)
		}
		if req["stream"] != true || req["max_tokens"] != 48.0 || req["model"] != "demo" {
			t.Errorf("body(%v) = %s: want stream, max_tokens 48, model demo", k, b.json)
		}
		_, hasRF := req["response_format"]
		_, hasTools := req["tools"]
		if hasRF != (k == KindJSONSchema) || hasTools != (k == KindTool) {
			t.Errorf("body(%v) = %s: response_format %v, tools %v", k, b.json, hasRF, hasTools)
		}
		if k == KindTool && req["tool_choice"] != "required" {
			t.Errorf("body(tool) tool_choice = %v, want required", req["tool_choice"])
		}
	}
	if _, err := w.body(Kind(9), rng, "", 1, 1); err == nil {
		t.Error("body(Kind(9)) = nil error")
	}
}

func TestReadEvent(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string // of the read after want
	}{
		{"two events", "data: a\n\ndata: b\n\n", []string{"a", "b"}, "EOF"},
		{"crlf and no space", "data:a\r\n\r\n", []string{"a"}, "EOF"},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}, "EOF"},
		{"comments and other fields", ": ping\nevent: x\nid: 1\ndata: a\n\n\n\n", []string{"a"}, "EOF"},
		{"eof inside an event", "data: a\n\ndata: b\n", []string{"a"}, "stream ended inside an event"},
		{"eof inside a line", "data: a", nil, "stream ended inside an event"},
		{"line too long", "data: " + strings.Repeat("x", maxSSELine+10) + "\n\n", nil, "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := bufio.NewReaderSize(strings.NewReader(tc.in), 4096)
			for _, w := range tc.want {
				got, err := readEvent(rd)
				if err != nil || got != w {
					t.Fatalf("readEvent = %q, %v; want %q", got, err, w)
				}
			}
			_, err := readEvent(rd)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("last readEvent error = %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// sseChunk writes one chat.completion.chunk event.
func sseChunk(w io.Writer, delta string, finish string) {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	fmt.Fprintf(w, `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":%s,"finish_reason":%s}],"usage":null}`+"\n\n", delta, f)
}

func sseUsage(w io.Writer, completion int) {
	fmt.Fprintf(w, `data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d}}`+"\n\n", completion)
}

func content(s string) string {
	b, _ := json.Marshal(s)
	return `{"content":` + string(b) + `}`
}

func toolStart(i int, id, name, args string) string {
	b, _ := json.Marshal(args)
	return fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, i, id, name, b)
}

// script is a fake server's answer: it writes the stream, then returns.
type script func(w http.ResponseWriter, f http.Flusher, r *http.Request)

// streamOf answers 200 text/event-stream with the role chunk, one chunk per
// delta, the finish, the usage and [DONE].
func streamOf(finish string, completion int, deltas ...string) script {
	return func(w http.ResponseWriter, f http.Flusher, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseChunk(w, `{"role":"assistant","content":""}`, "")
		for _, d := range deltas {
			sseChunk(w, d, "")
		}
		sseChunk(w, `{}`, finish)
		sseUsage(w, completion)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// noOutput names the TestRunRequest cases in which no chunk with output
// reaches the client (so no TTFT).
var noOutput = map[string]bool{"http 429": true, "not an event stream": true, "tool call without id": true, "tool delta without index": true,
	"garbage chunk": true, "second choice": true, "disconnect after the first chunk": true, "disconnect point never reached": true}

func TestRunRequest(t *testing.T) {
	w, err := newWorkload()
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	defer close(hang)
	for _, tc := range []struct {
		name   string
		kind   Kind
		disc   disconnectAt
		script script
		want   Outcome
		detail string // a part of the result's detail
	}{
		{"json complete", KindJSONSchema, stayConnected, streamOf("stop", 9, content(`{"ok":`), content(`true,"n":3}`)), OutcomeComplete, ""},
		{"json valid at length", KindJSONSchema, stayConnected, streamOf("length", 9, content(`{"ok":true,"n":3}`)), OutcomeLengthValid, ""},
		{"json cut at length", KindJSONSchema, stayConnected, streamOf("length", 9, content(`{"ok":tr`)), OutcomeCut, "not JSON"},
		{"json invalid complete", KindJSONSchema, stayConnected, streamOf("stop", 9, content(`{"ok":true,"n":12}`)), OutcomeInvalid, "does not validate"},
		{"json not JSON complete", KindJSONSchema, stayConnected, streamOf("stop", 9, content(`{"ok":true,"n":3} x`)), OutcomeInvalid, "not JSON"},
		{"tool complete", KindTool, stayConnected, streamOf("tool_calls", 9, toolStart(0, "c1", "get_time", `{"tz":`), `{"tool_calls":[{"index":0,"function":{"arguments":"\"UTC\"}"}}]}`,
			toolStart(1, "c2", "get_weather", `{"city":"Oslo","unit":"c"}`)), OutcomeComplete, ""},
		{"tool no call", KindTool, stayConnected, streamOf("stop", 9, content("hi")), OutcomeInvalid, "no tool call"},
		{"tool unknown name", KindTool, stayConnected, streamOf("tool_calls", 9, toolStart(0, "c1", "rm", `{}`)), OutcomeInvalid, "undeclared tool"},
		{"tool bad arguments", KindTool, stayConnected, streamOf("tool_calls", 9, toolStart(0, "c1", "get_time", `{"tz":"utc"}`)), OutcomeInvalid, "get_time arguments"},
		{"tool cut", KindTool, stayConnected, streamOf("length", 9, toolStart(0, "c1", "get_time", `{"tz":"U`)), OutcomeCut, "get_time"},
		{"tool call without id", KindTool, stayConnected, streamOf("tool_calls", 9, toolStart(0, "", "get_time", `{"tz":"UTC"}`)), OutcomeStreamError, "without an id"},
		{"tool delta without index", KindTool, stayConnected, streamOf("tool_calls", 9, `{"tool_calls":[{"id":"c","function":{"name":"get_time","arguments":"{}"}}]}`), OutcomeStreamError, "without an index"},
		{"text at length", KindText, stayConnected, streamOf("length", 9, content("bla")), OutcomeLengthValid, ""},
		{"text stop", KindText, stayConnected, streamOf("stop", 2, content("bla")), OutcomeComplete, ""},
		{"text with a tool call", KindText, stayConnected, streamOf("tool_calls", 2, toolStart(0, "c1", "get_time", `{}`)), OutcomeInvalid, "without tools"},
		{"unknown finish", KindText, stayConnected, streamOf("content_filter", 2, content("x")), OutcomeStreamError, "content_filter"},
		{"usage above max_tokens", KindText, stayConnected, streamOf("length", 65, content("x")), OutcomeStreamError, "above max_tokens"},
		{"http 429", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			http.Error(w, `{"error":{"message":"queue full"}}`, http.StatusTooManyRequests)
		}, OutcomeHTTPError, "status 429"},
		{"not an event stream", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{}`)
		}, OutcomeStreamError, "Content-Type"},
		{"error event", KindJSONSchema, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content(`{"ok"`), "")
			fmt.Fprint(w, `data: {"error":{"message":"boom","type":"server_error","code":"internal_error"}}`+"\n\ndata: [DONE]\n\n")
		}, OutcomeStreamError, "internal_error: boom"},
		{"no [DONE]", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content("x"), "stop")
		}, OutcomeStreamError, "without [DONE]"},
		{"no finish", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content("x"), "")
			sseUsage(w, 1)
			fmt.Fprint(w, "data: [DONE]\n\n")
		}, OutcomeStreamError, "without a finish_reason"},
		{"no usage", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content("x"), "stop")
			fmt.Fprint(w, "data: [DONE]\n\n")
		}, OutcomeStreamError, "no usage chunk"},
		{"delta after finish", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content("x"), "stop")
			sseChunk(w, content("y"), "")
		}, OutcomeStreamError, "after finish_reason"},
		{"garbage chunk", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"object\n\n")
		}, OutcomeStreamError, "not JSON"},
		{"second choice", KindText, stayConnected, func(w http.ResponseWriter, _ http.Flusher, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"object":"chat.completion.chunk","choices":[{"index":1,"delta":{}}]}`+"\n\n")
		}, OutcomeStreamError, "choice index 1"},
		{"hang", KindText, stayConnected, func(w http.ResponseWriter, f http.Flusher, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseChunk(w, content("x"), "")
			f.Flush()
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, OutcomeTimeout, "no end within"},
		{"disconnect after the first chunk", KindJSONSchema, afterFirstChunk, streamOf("stop", 9, content(`{"ok":true,"n":3}`)), OutcomeDisconnect, ""},
		{"disconnect after the first token", KindTool, afterFirstToken, streamOf("tool_calls", 9, toolStart(0, "c1", "get_time", `{"tz":"UTC"}`)), OutcomeDisconnect, ""},
		{"disconnect point never reached", KindText, afterFirstToken, streamOf("stop", 0), OutcomeComplete, "before the disconnect point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer k" {
					http.Error(w, "wrong request", http.StatusBadRequest)
					return
				}
				tc.script(w, w.(http.Flusher), r)
			}))
			defer srv.Close()
			cfg := Config{BaseURL: srv.URL, APIKey: "k"}
			if err := cfg.defaults(); err != nil {
				t.Fatal(err)
			}
			cfg.RequestTimeout = 300 * time.Millisecond
			b, err := w.body(tc.kind, rand.New(rand.NewPCG(1, 1)), "", cfg.MaxTokens, 1)
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == KindJSONSchema {
				b.schema = 0 // the scripts answer schema 0
			}
			ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
			defer cancel()
			r := w.runRequest(ctx, srv.Client(), &cfg, b, tc.disc)
			if r.outcome != tc.want || !strings.Contains(r.detail, tc.detail) {
				t.Errorf("runRequest = %v %q, want %v with %q", r.outcome, r.detail, tc.want, tc.detail)
			}
			// A TTFT is measured exactly when a chunk with output arrived.
			if wantTTFT := !noOutput[tc.name]; (r.ttft > 0) != wantTTFT {
				t.Errorf("ttft = %v, want one: %v", r.ttft, wantTTFT)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	in := `# HELP conform_busy_slots Generations holding a slot.
# TYPE conform_busy_slots gauge
conform_busy_slots 2
conform_queue_depth 0
conform_requests_total{endpoint="/health",status="200"} 3
go_goroutines 17
process_resident_memory_bytes 1.2345e+08
go_gc_duration_seconds{quantile="0.5"} 1e-05
some_counter 4 1700000000000
`
	m, err := parseMetrics(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"conform_busy_slots": 2, "conform_queue_depth": 0, "go_goroutines": 17, "process_resident_memory_bytes": 1.2345e8, "some_counter": 4}
	if len(m) != len(want) {
		t.Errorf("parseMetrics = %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("parseMetrics[%s] = %v, want %v", k, m[k], v)
		}
	}
	for _, bad := range []string{"conform_busy_slots\n", "conform_busy_slots x\n", "a 1 2 3\n"} {
		if _, err := parseMetrics(strings.NewReader(bad)); err == nil {
			t.Errorf("parseMetrics(%q) = nil error", bad)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	m, err := parseProcStatus(strings.NewReader("Name:\tserve\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t9\n"))
	if err != nil || m.rss != 1024*1024 || m.hwm != 2048*1024 {
		t.Errorf("parseProcStatus = %+v, %v; want rss 1 MiB, hwm 2 MiB", m, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t1 MB\nVmHWM:\t1 kB\n", "VmRSS:\tx kB\nVmHWM:\t1 kB\n"} {
		if _, err := parseProcStatus(strings.NewReader(bad)); err == nil {
			t.Errorf("parseProcStatus(%q) = nil error", bad)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.5, 0}, {d[:1], 0.99, 1}, {d, 0.5, 50}, {d, 0.99, 99}, {d, 1, 100}, {d[:3], 0.5, 2}, {d[:3], 0.99, 3},
	} {
		if got := percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("percentile(%d values, %g) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{BaseURL: "http://x:1/"}
	if err := c.defaults(); err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://x:1" || c.Clients != DefaultClients || c.MaxTokens != DefaultMaxTokens || c.Temperature != 1 || c.Settle != DefaultSettle {
		t.Errorf("defaults() = %+v", c)
	}
	for _, tc := range []Config{
		{}, {BaseURL: "x:1"}, {BaseURL: "http://x", Clients: -1}, {BaseURL: "http://x", Duration: -1}, {BaseURL: "http://x", MaxTokens: -2},
		{BaseURL: "http://x", RequestTimeout: -1}, {BaseURL: "http://x", Temperature: 3}, {BaseURL: "http://x", PID: -1}, {BaseURL: "http://x", Settle: -1},
	} {
		err := tc.defaults()
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeConfig {
			t.Errorf("defaults(%+v) = %v, want a %s error", tc, err, CodeConfig)
		}
	}
	c = Config{DisconnectEvery: 4}
	for i, want := range []bool{false, false, false, true, false, false, false, true} {
		if got := c.disconnects(i); got != want {
			t.Errorf("DisconnectEvery 4: disconnects(%d) = %v, want %v", i, got, want)
		}
	}
	if c := (Config{DisconnectEvery: -1}); c.disconnects(7) {
		t.Error("DisconnectEvery -1: client 7 disconnects")
	}
}

// fakeServer is a Conform-shaped server for Run: it answers every kind with
// a valid stream (or, with invalid set, json_schema requests with an
// invalid complete answer), counts the requests a client cancelled, and
// reports busy as conform_busy_slots.
type fakeServer struct {
	*httptest.Server
	busy      atomic.Int64
	stuck     atomic.Int64 // added to busy in /metrics
	invalid   atomic.Bool
	cancelled atomic.Int64
	mu        sync.Mutex
	kinds     map[Kind]int
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{kinds: map[Kind]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE conform_busy_slots gauge\nconform_busy_slots %d\nconform_queue_depth 0\ngo_goroutines 5\nprocess_resident_memory_bytes 1e6\n", f.busy.Load()+f.stuck.Load())
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.busy.Add(1)
		defer f.busy.Add(-1)
		var req struct {
			ResponseFormat *struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
			Tools []any `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		kind := KindText
		var s script
		switch {
		case req.ResponseFormat != nil:
			kind = KindJSONSchema
			var i int
			fmt.Sscanf(req.ResponseFormat.JSONSchema.Name, "soak_%d", &i)
			inst := validInstances[i]
			if f.invalid.Load() {
				inst = `{"bad":1}`
			}
			s = streamOf("stop", 5, content(inst[:3]), content(inst[3:]))
		case len(req.Tools) > 0:
			kind = KindTool
			s = streamOf("tool_calls", 5, toolStart(0, "c", "get_time", `{"tz":"UTC"}`))
		default:
			s = streamOf("length", 5, content("a"), content("b"))
		}
		f.mu.Lock()
		f.kinds[kind]++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		// The first chunks go out, then a pause in which a disconnecting
		// client's cancel arrives.
		sseChunk(w, `{"role":"assistant","content":""}`, "")
		sseChunk(w, content(" "), "")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			f.cancelled.Add(1)
			return
		case <-time.After(20 * time.Millisecond):
		}
		s(w, w.(http.Flusher), r)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func TestRun(t *testing.T) {
	f := newFakeServer(t)
	rep, err := Run(context.Background(), Config{BaseURL: f.URL, Clients: 8, Duration: 400 * time.Millisecond, Settle: 10 * time.Millisecond, DisconnectEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	var tab strings.Builder
	if err := rep.Table(&tab); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + tab.String())
	if !rep.OK() || rep.Errors != 0 || !strings.Contains(tab.String(), "result: PASS") {
		t.Errorf("OK() = %v, Errors = %d, Failures = %v; want a pass", rep.OK(), rep.Errors, rep.Failures())
	}
	for _, k := range Kinds {
		s := rep.ByKind[k.String()]
		if s.Complete+s.LengthValid == 0 {
			t.Errorf("%s: no answered request: %+v", k, *s)
		}
	}
	// Clients 3 and 7 disconnect on every request; the server sees each.
	if rep.Total.Disconnects == 0 {
		t.Errorf("no disconnects")
	}
	deadline := time.Now().Add(2 * time.Second)
	for f.cancelled.Load() < int64(rep.Total.Disconnects) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// A disconnect after the role chunk may land after the server read the
	// first pause; those it sees, the rest it may not. Every cancelled
	// request the server saw is a disconnect of the report.
	if c := f.cancelled.Load(); c == 0 || c > int64(rep.Total.Disconnects) {
		t.Errorf("server saw %d cancels for %d disconnects", c, rep.Total.Disconnects)
	}
	if rep.TTFTSamples == 0 || rep.TTFTp50 <= 0 || rep.TTFTp99 < rep.TTFTp50 {
		t.Errorf("TTFT p50 %v p99 %v over %d samples", rep.TTFTp50, rep.TTFTp99, rep.TTFTSamples)
	}
	if rep.Before.Goroutines != 5 || rep.After.RSSBytes != 1e6 || rep.After.RSSSource != "metrics" || rep.After.PeakRSSBytes != -1 {
		t.Errorf("probes before %+v after %+v", rep.Before, rep.After)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(line, &back); err != nil || back["ok"] != true || back["errors"] != 0.0 || back["clients"] != 8.0 {
		t.Errorf("JSON line %s: ok, errors, clients wrong (%v)", line, err)
	}

	// A slot that stays busy fails the run, and so does an invalid answer.
	f.stuck.Store(1)
	rep, err = Run(context.Background(), Config{BaseURL: f.URL, Clients: 2, Duration: 100 * time.Millisecond, Settle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.After.BusySlots != 1 || !strings.Contains(fmt.Sprint(rep.Failures()), "busy slots") {
		t.Errorf("stuck slot: OK() = %v, busy %v, failures %v", rep.OK(), rep.After.BusySlots, rep.Failures())
	}
	f.stuck.Store(0)
	f.invalid.Store(true)
	rep, err = Run(context.Background(), Config{BaseURL: f.URL, Clients: 3, Duration: 100 * time.Millisecond, Settle: time.Millisecond, DisconnectEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.ByKind["json_schema"].Invalid == 0 || rep.Errors != rep.ByKind["json_schema"].Invalid || len(rep.ErrorSamples) == 0 {
		t.Errorf("invalid answers: OK() = %v, %+v, samples %v", rep.OK(), *rep.ByKind["json_schema"], rep.ErrorSamples)
	}
}

func TestRunProbeErrors(t *testing.T) {
	notConform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "up 1") }))
	defer notConform.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, url := range []string{notConform.URL, down.URL} {
		_, err := Run(context.Background(), Config{BaseURL: url, Duration: time.Millisecond})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeProbe {
			t.Errorf("Run(%s) = %v, want a %s error", url, err, CodeProbe)
		}
	}
}

func TestRunInterrupted(t *testing.T) {
	f := newFakeServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, Config{BaseURL: f.URL, Clients: 2, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.OK() || rep.Errors != 0 || rep.Before.BusySlots != 0 || rep.After.BusySlots != -1 {
		t.Errorf("interrupted run: Interrupted %v OK %v Errors %d, busy slots before %g after %g (want 0, -1: not probed)",
			rep.Interrupted, rep.OK(), rep.Errors, rep.Before.BusySlots, rep.After.BusySlots)
	}
}
