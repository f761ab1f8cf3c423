package soak

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// The /metrics series a probe reads. busy slots and queue depth are the
// server's own gauges; go_goroutines and process_resident_memory_bytes come
// from the Prometheus Go and process collectors when the server registers
// them.
const (
	metricBusySlots  = "conform_busy_slots"
	metricQueueDepth = "conform_queue_depth"
	metricCacheBytes = "conform_constraint_cache_bytes"
	metricGoroutines = "go_goroutines"
	metricRSS        = "process_resident_memory_bytes"
)

// Probe is the server's state at one moment. A field is -1 when its source
// did not report it.
type Probe struct {
	BusySlots  float64 `json:"busy_slots"`
	QueueDepth float64 `json:"queue_depth"`
	Goroutines float64 `json:"goroutines"`
	// RSSBytes is VmRSS of the server process (/proc/PID/status) when the
	// pid is known, else the process collector's resident memory.
	RSSBytes float64 `json:"rss_bytes"`
	// PeakRSSBytes is VmHWM of the server process, -1 without a pid.
	PeakRSSBytes float64 `json:"peak_rss_bytes"`
	// CacheBytes is the memory the server's constraint cache reports.
	CacheBytes float64 `json:"constraint_cache_bytes"`
	// RSSSource says where RSSBytes came from: "proc", "metrics" or "".
	RSSSource string `json:"rss_source"`
}

// unprobed is a Probe with nothing reported (a run interrupted before its
// last probe keeps it).
func unprobed() Probe {
	return Probe{BusySlots: -1, QueueDepth: -1, Goroutines: -1, RSSBytes: -1, PeakRSSBytes: -1, CacheBytes: -1}
}

// probe scrapes GET /metrics and, with a pid, /proc/PID/status.
func probe(ctx context.Context, hc *http.Client, cfg *Config) (Probe, error) {
	p := unprobed()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.BaseURL+"/metrics", nil)
	if err != nil {
		return p, &Error{Code: CodeProbe, Msg: "GET /metrics", Err: err}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return p, &Error{Code: CodeProbe, Msg: "GET /metrics", Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return p, &Error{Code: CodeProbe, Msg: fmt.Sprintf("GET /metrics: status %d", resp.StatusCode)}
	}
	m, err := parseMetrics(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return p, &Error{Code: CodeProbe, Msg: "GET /metrics", Err: err}
	}
	var ok bool
	if p.BusySlots, ok = m[metricBusySlots]; !ok {
		return p, &Error{Code: CodeProbe, Msg: "GET /metrics has no " + metricBusySlots + " gauge (is this a Conform server?)"}
	}
	get := func(name string) float64 {
		if v, ok := m[name]; ok {
			return v
		}
		return -1
	}
	p.QueueDepth, p.Goroutines, p.CacheBytes = get(metricQueueDepth), get(metricGoroutines), get(metricCacheBytes)
	if v := get(metricRSS); v >= 0 {
		p.RSSBytes, p.RSSSource = v, "metrics"
	}
	if cfg.PID > 0 {
		st, err := procStatus(fmt.Sprintf("/proc/%d/status", cfg.PID))
		if err != nil {
			return p, &Error{Code: CodeProbe, Msg: fmt.Sprintf("server pid %d", cfg.PID), Err: err}
		}
		p.RSSBytes, p.PeakRSSBytes, p.RSSSource = st.rss, st.hwm, "proc"
	}
	return p, nil
}

// parseMetrics reads the Prometheus text format and returns the series
// without labels (the gauges a probe needs have none). Labelled series,
// comments and blank lines are skipped; a malformed unlabelled sample is an
// error.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("metrics line %d: %q is not NAME VALUE [TIMESTAMP]", n, line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: value of %s: %v", n, f[0], err)
		}
		out[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type procMem struct{ rss, hwm float64 }

// procStatus reads VmRSS and VmHWM (in kB) from a /proc/PID/status file.
func procStatus(path string) (procMem, error) {
	f, err := os.Open(path)
	if err != nil {
		return procMem{}, err
	}
	defer f.Close()
	return parseProcStatus(f)
}

func parseProcStatus(r io.Reader) (procMem, error) {
	m := procMem{rss: math.NaN(), hwm: math.NaN()}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return procMem{}, fmt.Errorf("%s: %q, want \"N kB\"", name, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return procMem{}, fmt.Errorf("%s: %v", name, err)
		}
		if name == "VmRSS" {
			m.rss = kb * 1024
		} else {
			m.hwm = kb * 1024
		}
	}
	if err := sc.Err(); err != nil {
		return procMem{}, err
	}
	if math.IsNaN(m.rss) || math.IsNaN(m.hwm) {
		return procMem{}, fmt.Errorf("no VmRSS or VmHWM line (a zombie or kernel thread?)")
	}
	return m, nil
}
