package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Table writes the report for people: requests by kind and outcome, TTFT,
// the server's state before and after, and the verdict with its reasons.
func (r *Report) Table(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(out, "soak: %d clients for %s (ran %s), max_tokens %d\n", r.Clients, r.Duration, r.Elapsed.Round(time.Millisecond), r.MaxTokens)
	fmt.Fprintln(tw, "kind\trequests\tcomplete\tlength ok\tcut\tdisconnects\thttp err\tstream err\tinvalid\ttimeout\t")
	row := func(name string, s *KindStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, s.Requests, s.Complete, s.LengthValid, s.Cut, s.Disconnects, s.HTTPErrors, s.StreamErrors, s.Invalid, s.Timeouts)
	}
	for _, k := range Kinds {
		row(k.String(), r.ByKind[k.String()])
	}
	row("total", &r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	cut := "counted as errors"
	if r.AllowCut {
		cut = "not errors (-allow-cut)"
	}
	fmt.Fprintf(out, "errors: %d (cut outputs %s)\n", r.Errors, cut)
	fmt.Fprintf(out, "time to first token: p50 %s, p99 %s (%d requests)\n", roundDur(r.TTFTp50), roundDur(r.TTFTp99), r.TTFTSamples)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "server\tbefore\t%s after the end\t\n", r.Settle)
	num := func(v float64) string {
		if v < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%g", v)
	}
	mb := func(v float64) string {
		if v < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f MB", v/1e6)
	}
	fmt.Fprintf(tw, "busy slots\t%s\t%s\t\n", num(r.Before.BusySlots), num(r.After.BusySlots))
	fmt.Fprintf(tw, "queue depth\t%s\t%s\t\n", num(r.Before.QueueDepth), num(r.After.QueueDepth))
	fmt.Fprintf(tw, "goroutines\t%s\t%s\t\n", num(r.Before.Goroutines), num(r.After.Goroutines))
	fmt.Fprintf(tw, "RSS (%s)\t%s\t%s\t\n", orNA(r.After.RSSSource), mb(r.Before.RSSBytes), mb(r.After.RSSBytes))
	fmt.Fprintf(tw, "peak RSS\t%s\t%s\t\n", mb(r.Before.PeakRSSBytes), mb(r.After.PeakRSSBytes))
	fmt.Fprintf(tw, "constraint cache\t%s\t%s\t\n", mb(r.Before.CacheBytes), mb(r.After.CacheBytes))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.ErrorSamples {
		fmt.Fprintln(out, "  error:", s)
	}
	for i, s := range r.CutSamples {
		if i == 3 {
			fmt.Fprintf(out, "  (%d more cut samples in the JSON)\n", len(r.CutSamples)-i)
			break
		}
		fmt.Fprintln(out, "  cut:", s)
	}
	if f := r.Failures(); len(f) > 0 {
		_, err := fmt.Fprintf(out, "result: FAIL: %v\n", f)
		return err
	}
	_, err := fmt.Fprintln(out, "result: PASS")
	return err
}

// roundDur keeps three significant digits or so: milliseconds above 10 ms,
// 10 µs steps below.
func roundDur(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// MarshalJSON writes the report as one JSON object, durations in seconds
// and milliseconds, with the verdict.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		*plain
		DurationS float64  `json:"duration_s"`
		ElapsedS  float64  `json:"elapsed_s"`
		SettleS   float64  `json:"settle_s"`
		TTFTp50ms float64  `json:"ttft_p50_ms"`
		TTFTp99ms float64  `json:"ttft_p99_ms"`
		OK        bool     `json:"ok"`
		Failures  []string `json:"failures"`
	}{
		plain:     (*plain)(r),
		DurationS: r.Duration.Seconds(), ElapsedS: r.Elapsed.Seconds(), SettleS: r.Settle.Seconds(),
		TTFTp50ms: ms(r.TTFTp50), TTFTp99ms: ms(r.TTFTp99),
		OK: r.OK(), Failures: append([]string{}, r.Failures()...),
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
