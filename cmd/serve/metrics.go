package main

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"conform/fsm"
	"conform/runner"
	"conform/turn"
)

// metrics are the server's Prometheus series, on a registry of their own (so
// that tests can run several servers).
type metrics struct {
	reg              *prometheus.Registry
	requests         *prometheus.CounterVec
	promptTokens     prometheus.Counter
	completionTokens prometheus.Counter
	forcedTokens     prometheus.Counter
	ttft             prometheus.Histogram
	itl              prometheus.Histogram
	compile          prometheus.Histogram
	panics           prometheus.Counter // recovered in the HTTP handlers and the choice goroutines
	// runnerPanics reads the panics the runner recovered (set with the model).
	runnerPanics  atomic.Pointer[func() int64]
	inflight      atomic.Int64
	forcedN, outN atomic.Int64 // for the forced-token share
}

func newMetrics(slots int, cache *fsm.Cache) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "conform_requests_total", Help: "HTTP requests by endpoint and status code.",
	}, []string{"endpoint", "status"})
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "conform_prompt_tokens_total", Help: "Prompt tokens processed."})
	m.completionTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "conform_completion_tokens_total", Help: "Output tokens generated (sampled and forced)."})
	m.forcedTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "conform_forced_tokens_total", Help: "Output tokens forced by a constraint (no sampling)."})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "conform_time_to_first_token_seconds", Help: "From request arrival to the first output token.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	})
	m.itl = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "conform_inter_token_latency_seconds", Help: "Between consecutive output tokens of a request.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	})
	m.compile = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "conform_constraint_compile_seconds", Help: "Building a constraint on a cache miss (schema to DFA to token index).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	})
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{Name: "conform_server_panics_total", Help: "Panics recovered in the HTTP handlers and response goroutines (each failed one request)."})
	m.reg.MustRegister(m.requests, m.promptTokens, m.completionTokens, m.forcedTokens, m.ttft, m.itl, m.compile, m.panics)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "conform_busy_slots", Help: "Generations holding a slot."}, func() float64 {
			return float64(min(m.inflight.Load(), int64(slots)))
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "conform_runner_panics_total", Help: "Panics the decode loop recovered (each ended the requests it hit; the loop went on)."}, func() float64 {
			if f := m.runnerPanics.Load(); f != nil {
				return float64((*f)())
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "conform_queue_depth", Help: "Generations waiting for a slot."}, func() float64 {
			return float64(max(m.inflight.Load()-int64(slots), 0))
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "conform_forced_token_share", Help: "Share of output tokens forced by constraints since start (0..1)."}, func() float64 {
			if n := m.outN.Load(); n > 0 {
				return float64(m.forcedN.Load()) / float64(n)
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "conform_constraint_cache_hits_total", Help: "Constraint cache hits (including waits on a build in flight)."}, func() float64 {
			s := cache.Stats()
			return float64(s.Hits + s.Shared)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "conform_constraint_cache_misses_total", Help: "Constraint cache misses (builds)."}, func() float64 {
			return float64(cache.Stats().Misses)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "conform_constraint_cache_bytes", Help: "Memory of the cached constraints."}, func() float64 {
			return float64(cache.Stats().Bytes)
		}),
	)
	return m
}

// metrics observes the turns (turn.Observer): compiles, token latencies,
// finished generations and panics in their event handling.
var _ turn.Observer = (*metrics)(nil)

// Compiled records a constraint compiled on a cache miss.
func (m *metrics) Compiled(d time.Duration) { m.compile.Observe(d.Seconds()) }

// FirstToken records a generation's time to its first token.
func (m *metrics) FirstToken(d time.Duration) { m.ttft.Observe(d.Seconds()) }

// NextToken records the time between two tokens of a generation.
func (m *metrics) NextToken(d time.Duration) { m.itl.Observe(d.Seconds()) }

// Finished records one finished generation's tokens.
func (m *metrics) Finished(u runner.Usage) {
	m.promptTokens.Add(float64(u.PromptTokens))
	m.completionTokens.Add(float64(u.CompletionTokens))
	m.forcedTokens.Add(float64(u.ForcedTokens))
	m.outN.Add(int64(u.CompletionTokens))
	m.forcedN.Add(int64(u.ForcedTokens))
}

// Panicked counts a panic recovered in a generation's event handling.
func (m *metrics) Panicked() { m.panics.Inc() }

func (m *metrics) request(endpoint string, status int) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
}
