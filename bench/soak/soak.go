// Package soak drives a running Conform server with concurrent streaming
// clients for a fixed time and checks that it stays correct and returns to
// idle: every constrained answer validates, no request fails, no slot stays
// busy after the load ends, and memory and goroutines come back.
//
// Each of Config.Clients clients loops until the deadline: it sends one
// streaming chat completion, reads it to the end, checks it, and sends the
// next. A client cycles through three request kinds (KindJSONSchema: a
// strict response_format json_schema picked from a small set; KindTool:
// tool_choice "required" over two function tools with JSON Schema
// parameters; KindText: unconstrained). One client in
// Config.DisconnectEvery cancels every request of its own right after the
// first chunk, alternately the role chunk (the cancel lands while the
// prompt is decoded) and the first chunk that carries output (mid-decode):
// the server must free the slot either way.
//
// A request's outcome (Outcome) is decided from the stream alone. The
// stream must be well formed (chat.completion.chunk objects, tool-call
// deltas with an index and, on a call's first delta, an id and a name, a
// finish_reason, the usage chunk asked for, [DONE]); an error event is a
// stream error. A constrained answer that finished (stop or tool_calls) and
// does not validate (github.com/santhosh-tekuri/jsonschema/v6, formats
// asserted) is an invalid output, an error. One that stopped at max_tokens
// is valid when it validates and cut when it does not: cut outputs are
// counted apart and are errors unless Config.AllowCut (the server keeps
// enough budget to close constrained output, so a cut answer is a broken
// guarantee; AllowCut is for servers that do not).
//
// Around the load, Run probes the server (GET /metrics: conform_busy_slots,
// conform_queue_depth, conform_constraint_cache_bytes, and go_goroutines
// and process_resident_memory_bytes from the Prometheus collectors;
// /proc/PID/status with Config.PID): once before the first request and
// once Config.Settle (1 s) after the last request ended and the client's
// idle connections were closed. Report.OK is false when any request failed
// or a slot is still busy or queued after the settle.
//
// The command bench/soak/cmd/soak is the CLI (it can start the server
// itself); cmd/serve's soak test runs a short soak against the in-process
// server in make test.
package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config is one soak run. The zero value of a field means its default.
type Config struct {
	// BaseURL is the server's root, e.g. http://127.0.0.1:8080 (required).
	BaseURL string
	// Clients is the number of concurrent clients (default 16).
	Clients int
	// Duration is how long clients start new requests (default 20 s);
	// requests in flight at the deadline run to their end.
	Duration time.Duration
	// MaxTokens is every request's max_tokens (default 64: small enough
	// that a request holds a slot for a short time, large enough that most
	// constrained answers close).
	MaxTokens int
	// RequestTimeout bounds one request from send to [DONE] (default 5 min:
	// a hang detector, far above a 64-token answer's time even with 64
	// clients queued on 4 slots of a loaded 2-core machine, where a 16-client
	// run saw a p99 time to first token of a minute).
	RequestTimeout time.Duration
	// DisconnectEvery makes one client in this many disconnect after the
	// first chunk of every request (default 8; negative: none).
	DisconnectEvery int
	// Temperature of every request (default 1: the widest spread of
	// outputs through the constraints).
	Temperature float64
	// Seed makes the request mix and the per-request seeds reproducible.
	Seed uint64
	// Model is the request's model field; empty leaves it out (the server
	// answers with the one model it serves).
	Model string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// PID is the server's process id, for its RSS from /proc; 0 reads RSS
	// from /metrics only.
	PID int
	// Settle is the wait between the end of the load and the last probe
	// (default 1 s).
	Settle time.Duration
	// AllowCut does not count cut outputs (a constrained answer stopped at
	// max_tokens before it validated) as errors.
	AllowCut bool
	// Progress, when not nil, gets a line of running totals every
	// ProgressEvery (default 10 s).
	Progress      io.Writer
	ProgressEvery time.Duration
	// HTTPClient is the client to use; nil makes a dedicated one with an
	// idle connection per client.
	HTTPClient *http.Client
}

// Defaults of Config.
const (
	DefaultClients         = 16
	DefaultDuration        = 20 * time.Second
	DefaultMaxTokens       = 64
	DefaultRequestTimeout  = 5 * time.Minute
	DefaultDisconnectEvery = 8
	DefaultSettle          = time.Second
	DefaultProgressEvery   = 10 * time.Second
)

// ErrorCode classifies an Error.
type ErrorCode string

// The error codes.
const (
	CodeConfig ErrorCode = "config" // a Config field out of range
	CodeProbe  ErrorCode = "probe"  // the server's /metrics or /proc could not be read
	CodeServer ErrorCode = "server" // the server the CLI starts did not come up
)

// Error is the package's error: what failed to start or probe a run.
// Request failures are not errors of Run: they are counted in the Report.
type Error struct {
	Code ErrorCode
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("soak: %s: %s: %v", e.Code, e.Msg, e.Err)
	}
	return fmt.Sprintf("soak: %s: %s", e.Code, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

func (c *Config) defaults() error {
	bad := func(format string, args ...any) error {
		return &Error{Code: CodeConfig, Msg: fmt.Sprintf(format, args...)}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.BaseURL == "" {
		return bad("no server URL")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return bad("server URL %q: want http://HOST:PORT", c.BaseURL)
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	set(&c.Clients, DefaultClients)
	set(&c.MaxTokens, DefaultMaxTokens)
	set(&c.DisconnectEvery, DefaultDisconnectEvery)
	setD(&c.Duration, DefaultDuration)
	setD(&c.RequestTimeout, DefaultRequestTimeout)
	setD(&c.Settle, DefaultSettle)
	setD(&c.ProgressEvery, DefaultProgressEvery)
	if c.Temperature == 0 {
		c.Temperature = 1
	}
	switch {
	case c.Clients < 1:
		return bad("clients %d: want ≥ 1", c.Clients)
	case c.Duration < 0:
		return bad("duration %s: want > 0", c.Duration)
	case c.MaxTokens < 1:
		return bad("max tokens %d: want ≥ 1", c.MaxTokens)
	case c.RequestTimeout < 0:
		return bad("request timeout %s: want > 0", c.RequestTimeout)
	case c.Settle < 0:
		return bad("settle %s: want ≥ 0", c.Settle)
	case c.ProgressEvery < 0:
		return bad("progress interval %s: want > 0", c.ProgressEvery)
	case c.Temperature < 0 || c.Temperature > 2:
		return bad("temperature %g: want 0 < t ≤ 2", c.Temperature)
	case c.PID < 0:
		return bad("pid %d: want > 0", c.PID)
	}
	return nil
}

// disconnects reports whether client i disconnects after the first chunk.
func (c *Config) disconnects(i int) bool {
	return c.DisconnectEvery > 0 && i%c.DisconnectEvery == c.DisconnectEvery-1
}

// Run soaks the server at cfg.BaseURL and returns the report. It fails only
// when the configuration is out of range or a probe cannot read the server;
// request failures are in the report (Report.OK). A cancelled ctx stops
// the clients (requests it cuts short are not counted) and returns the
// partial report with Interrupted set.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	w, err := newWorkload()
	if err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = cfg.Clients + 4
		tr.MaxIdleConnsPerHost = cfg.Clients + 4
		hc = &http.Client{Transport: tr}
	}
	rep := newReport(&cfg)
	if rep.Before, err = probe(ctx, hc, &cfg); err != nil {
		return nil, err
	}

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wg.Go(func() { client(ctx, hc, &cfg, w, i, deadline, rep) })
	}
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if cfg.Progress == nil {
			return
		}
		t := time.NewTicker(cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fmt.Fprintln(cfg.Progress, rep.progress(time.Since(start)))
			case <-stopProgress:
				return
			}
		}
	}()
	wg.Wait()
	close(stopProgress)
	<-progressDone
	rep.Elapsed = time.Since(start)
	rep.Interrupted = ctx.Err() != nil
	if rep.Interrupted {
		rep.finish()
		return rep, nil
	}

	hc.CloseIdleConnections()
	select {
	case <-time.After(cfg.Settle):
	case <-ctx.Done():
		rep.Interrupted = true
		rep.finish()
		return rep, nil
	}
	if rep.After, err = probe(ctx, hc, &cfg); err != nil {
		return nil, err
	}
	hc.CloseIdleConnections()
	rep.finish()
	return rep, nil
}

// client is one soak client: requests one after the other until the
// deadline.
func client(ctx context.Context, hc *http.Client, cfg *Config, w *workload, i int, deadline time.Time, rep *Report) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	disc := cfg.disconnects(i)
	for n := 0; ctx.Err() == nil && time.Now().Before(deadline); n++ {
		kind := Kinds[(i+n)%len(Kinds)]
		b, err := w.body(kind, rng, cfg.Model, cfg.MaxTokens, cfg.Temperature)
		if err != nil {
			rep.add(result{kind: kind, outcome: OutcomeHTTPError, detail: err.Error()})
			return
		}
		at := stayConnected
		if disc {
			at = []disconnectAt{afterFirstChunk, afterFirstToken}[n%2]
		}
		reqCtx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
		r := w.runRequest(reqCtx, hc, cfg, b, at)
		cancel()
		if ctx.Err() != nil {
			return
		}
		rep.add(r)
	}
}

// KindStats counts the requests of one kind by outcome.
type KindStats struct {
	Requests     int `json:"requests"`
	Complete     int `json:"complete"`
	LengthValid  int `json:"length_valid"`
	Cut          int `json:"cut_by_length"`
	Disconnects  int `json:"disconnects"`
	HTTPErrors   int `json:"http_errors"`
	StreamErrors int `json:"stream_errors"`
	Invalid      int `json:"invalid"`
	Timeouts     int `json:"timeouts"`
}

func (s *KindStats) add(o Outcome) {
	s.Requests++
	switch o {
	case OutcomeComplete:
		s.Complete++
	case OutcomeLengthValid:
		s.LengthValid++
	case OutcomeCut:
		s.Cut++
	case OutcomeDisconnect:
		s.Disconnects++
	case OutcomeHTTPError:
		s.HTTPErrors++
	case OutcomeStreamError:
		s.StreamErrors++
	case OutcomeInvalid:
		s.Invalid++
	case OutcomeTimeout:
		s.Timeouts++
	}
}

// errors is the count of failed requests.
func (s *KindStats) errors() int { return s.HTTPErrors + s.StreamErrors + s.Invalid + s.Timeouts }

// maxSamples bounds the failure and cut details a report keeps.
const maxSamples = 20

// Report is what a run measured. Its JSON form is the CLI's JSON line.
type Report struct {
	Clients   int           `json:"clients"`
	Duration  time.Duration `json:"-"`
	Elapsed   time.Duration `json:"-"`
	Settle    time.Duration `json:"-"`
	MaxTokens int           `json:"max_tokens"`
	AllowCut  bool          `json:"allow_cut"`
	// ByKind is keyed by Kind.String().
	ByKind map[string]*KindStats `json:"by_kind"`
	Total  KindStats             `json:"total"`
	// Errors counts failed requests (HTTP, stream, invalid complete
	// outputs, timeouts; and cut outputs unless AllowCut).
	Errors int `json:"errors"`
	// TTFT is the time from sending a request to its first chunk with
	// output, over every request that got one (disconnecting ones too).
	TTFTp50     time.Duration `json:"-"`
	TTFTp99     time.Duration `json:"-"`
	TTFTSamples int           `json:"ttft_samples"`
	Before      Probe         `json:"before"`
	// After is probed Config.Settle after the last request ended.
	After Probe `json:"after"`
	// ErrorSamples and CutSamples hold the first failures and cut outputs,
	// as "kind outcome: detail".
	ErrorSamples []string `json:"error_samples,omitempty"`
	CutSamples   []string `json:"cut_samples,omitempty"`
	Interrupted  bool     `json:"interrupted,omitempty"`

	mu    sync.Mutex
	ttfts []time.Duration
}

func newReport(cfg *Config) *Report {
	r := &Report{Clients: cfg.Clients, Duration: cfg.Duration, Settle: cfg.Settle, MaxTokens: cfg.MaxTokens, AllowCut: cfg.AllowCut,
		ByKind: map[string]*KindStats{}, Before: unprobed(), After: unprobed()}
	for _, k := range Kinds {
		r.ByKind[k.String()] = &KindStats{}
	}
	return r
}

func (r *Report) add(res result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ByKind[res.kind.String()].add(res.outcome)
	r.Total.add(res.outcome)
	if res.ttft > 0 {
		r.ttfts = append(r.ttfts, res.ttft)
	}
	line := fmt.Sprintf("%s %s: %s", res.kind, res.outcome, res.detail)
	switch {
	case res.outcome.failed() || (res.outcome == OutcomeCut && !r.AllowCut):
		if len(r.ErrorSamples) < maxSamples {
			r.ErrorSamples = append(r.ErrorSamples, line)
		}
	case res.outcome == OutcomeCut:
		if len(r.CutSamples) < maxSamples {
			r.CutSamples = append(r.CutSamples, line)
		}
	}
}

func (r *Report) progress(t time.Duration) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.Total
	return fmt.Sprintf("soak: %s: %d requests, %d complete, %d length, %d cut, %d disconnects, %d errors",
		t.Round(time.Second), s.Requests, s.Complete, s.LengthValid, s.Cut, s.Disconnects, s.errors())
}

// finish computes the totals once the clients are done.
func (r *Report) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Errors = r.Total.errors()
	if !r.AllowCut {
		r.Errors += r.Total.Cut
	}
	sort.Slice(r.ttfts, func(i, j int) bool { return r.ttfts[i] < r.ttfts[j] })
	r.TTFTSamples = len(r.ttfts)
	r.TTFTp50, r.TTFTp99 = percentile(r.ttfts, 0.50), percentile(r.ttfts, 0.99)
}

// percentile is the nearest-rank percentile of sorted durations (0 for
// none).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Failures lists why the run is not OK (empty when it is).
func (r *Report) Failures() []string {
	var out []string
	if r.Interrupted {
		out = append(out, "interrupted before the end")
	}
	if r.Errors > 0 {
		out = append(out, fmt.Sprintf("%d failed requests", r.Errors))
	}
	if r.Total.Requests == 0 && !r.Interrupted {
		out = append(out, "no request finished")
	}
	if r.After.BusySlots != 0 && !r.Interrupted {
		out = append(out, fmt.Sprintf("%g busy slots %s after the end", r.After.BusySlots, r.Settle))
	}
	if r.After.QueueDepth > 0 && !r.Interrupted {
		out = append(out, fmt.Sprintf("%g queued requests after the end", r.After.QueueDepth))
	}
	return out
}

// OK reports whether the run passed: no failed request, and no busy slot
// or queued request after the settle.
func (r *Report) OK() bool { return len(r.Failures()) == 0 }
