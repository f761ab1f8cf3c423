package hub

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock advances only when told to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	const mib = 1 << 20
	p := newProgress(&buf, "o/r/m.gguf", 100*mib, 0, clk.now)
	// 1 MiB per second: a line at each 10% step (every 10 s), and one after
	// 5 s without a step.
	for range 100 {
		clk.advance(time.Second)
		p.add(mib)
	}
	p.finish(nil)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if got, want := lines[0], "hub: downloading o/r/m.gguf (100.0 MiB)"; got != want {
		t.Errorf("first line = %q, want %q", got, want)
	}
	if got, want := lines[1], "hub: o/r/m.gguf: 5.0 MiB / 100.0 MiB    5%  1.0 MiB/s  ETA 1m35s"; got != want {
		t.Errorf("second line = %q, want %q", got, want)
	}
	if got, want := lines[2], "hub: o/r/m.gguf: 10.0 MiB / 100.0 MiB   10%  1.0 MiB/s  ETA 1m30s"; got != want {
		t.Errorf("third line = %q, want %q", got, want)
	}
	if got, want := lines[len(lines)-1], "hub: o/r/m.gguf: done, 100.0 MiB in 1m40s (1.0 MiB/s)"; got != want {
		t.Errorf("last line = %q, want %q", got, want)
	}
	// 10 steps and 10 time-based lines in between, plus the first and last.
	if len(lines) != 22 {
		t.Errorf("%d lines, want 22:\n%s", len(lines), buf.String())
	}
	if strings.Contains(buf.String(), "\r") {
		t.Errorf("plain output has a carriage return")
	}
}

func TestProgressResume(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := newProgress(&buf, "f", 1000, 600, clk.now)
	clk.advance(2 * time.Second)
	p.add(100) // 70%: a step; rate counts only the 100 new bytes
	clk.advance(2 * time.Second)
	p.add(300)
	p.finish(nil)
	want := "hub: resuming f (1000 B) from 600 B\n" +
		"hub: f: 700 B / 1000 B   70%  50 B/s  ETA 6s\n" +
		"hub: f: 1000 B / 1000 B  100%  100 B/s  ETA 0s\n" +
		"hub: f: done, 1000 B in 4s (100 B/s)\n"
	if got := buf.String(); got != want {
		t.Errorf("resume output:\n%s\nwant:\n%s", got, want)
	}
}

func TestProgressSilentAndFailed(t *testing.T) {
	p := newProgress(nil, "f", 10, 0, nil)
	p.add(5)
	p.finish(nil) // must not panic with no writer
	var buf bytes.Buffer
	p = newProgress(&buf, "f", 10, 0, nil)
	p.finish(errors.New("boom"))
	if got, want := buf.String(), "hub: downloading f (10 B)\n"; got != want {
		t.Errorf("failed transfer output = %q, want %q", got, want)
	}
}

func TestFormatting(t *testing.T) {
	sizes := []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 30, "5.0 GiB"}, {1 << 62, "4096.0 PiB"}}
	for _, tt := range sizes {
		if got := size(tt.n); got != tt.want {
			t.Errorf("size(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	durs := []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {1400 * time.Millisecond, "1s"}, {65 * time.Second, "1m05s"}, {3723 * time.Second, "1h02m03s"}}
	for _, tt := range durs {
		if got := dur(tt.d); got != tt.want {
			t.Errorf("dur(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	// A very slow transfer prints "?" rather than an overflowing ETA.
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := newProgress(nil, "f", 1<<50, 0, clk.now)
	p.done = 1
	clk.advance(time.Second)
	if got := p.line(clk.now()); !strings.HasSuffix(got, "ETA ?") {
		t.Errorf("line for 1 B/s of 1 PiB = %q, want an ETA of ?", got)
	}
}

func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := newProgress(&buf, "o/r/m.gguf", 4096, 0, clk.now)
	p.tty = true // as if buf were a terminal
	buf.Reset()
	p.add(1024) // too soon after the start: no redraw
	clk.advance(time.Second)
	p.add(1024)
	clk.advance(time.Second)
	p.add(2048)
	p.finish(nil)
	want := "\r2.0 KiB / 4.0 KiB   50%  2.0 KiB/s  ETA 1s\x1b[K" +
		"\r4.0 KiB / 4.0 KiB  100%  2.0 KiB/s  ETA 0s\x1b[K" +
		"\r4.0 KiB in 2s (2.0 KiB/s)\x1b[K\n"
	if got := buf.String(); got != want {
		t.Errorf("terminal output = %q, want %q", got, want)
	}
}
