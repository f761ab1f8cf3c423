package hub

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Progress pacing. A terminal gets a redrawn line at most every ttyEvery; a
// log (plain mode) gets a line at each 10% step or after plainEvery,
// whichever comes first, so a slow download still shows it is alive without
// flooding a log file.
const (
	ttyEvery   = 200 * time.Millisecond
	plainEvery = 5 * time.Second
	maxETA     = 100 * time.Hour // longer estimates print as "?" (and would overflow a Duration at a few B/s)
)

// progress reports the transfer of one file: bytes, total, rate and ETA.
// It is driven by the downloading goroutine only.
type progress struct {
	w     io.Writer // nil: no output
	tty   bool      // redraw one line with \r
	name  string    // what is being downloaded, e.g. "org/repo/file.gguf"
	total int64     // expected size; <= 0 when unknown
	done  int64     // bytes of the file present so far (resumed bytes included)
	base  int64     // bytes present when this run started (excluded from the rate)
	now   func() time.Time

	start    time.Time
	last     time.Time // time of the last line written
	lastStep int64     // last 10% step written (plain mode)
}

// isTerminal reports whether w is a terminal (an *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress starts reporting a transfer of total bytes of which have are
// already present (a resume).
func newProgress(w io.Writer, name string, total, have int64, now func() time.Time) *progress {
	if now == nil {
		now = time.Now
	}
	p := &progress{w: w, tty: isTerminal(w), name: name, total: total, done: have, base: have, now: now}
	p.start = now()
	p.last = p.start
	p.lastStep = p.step()
	if w != nil {
		verb := "downloading"
		if have > 0 {
			verb = "resuming"
		}
		if p.tty {
			fmt.Fprintf(w, "%s %s (%s)\n", verb, name, size(total))
		} else {
			fmt.Fprintf(w, "hub: %s %s (%s)", verb, name, size(total))
			if have > 0 {
				fmt.Fprintf(w, " from %s", size(have))
			}
			fmt.Fprintln(w)
		}
	}
	return p
}

// restart is called when the server ignored a range request and the file
// starts again from byte 0.
func (p *progress) restart() {
	p.done, p.base = 0, 0
	p.start = p.now()
	p.lastStep = 0
}

// step returns the 10% step reached (0..10), or -1 when the total is unknown.
func (p *progress) step() int64 {
	if p.total <= 0 {
		return -1
	}
	return p.done * 10 / p.total
}

// add counts n more bytes written and prints a line when one is due.
func (p *progress) add(n int) {
	p.done += int64(n)
	if p.w == nil {
		return
	}
	t := p.now()
	if p.tty {
		if t.Sub(p.last) >= ttyEvery {
			p.last = t
			fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(t))
		}
		return
	}
	if s := p.step(); s > p.lastStep || t.Sub(p.last) >= plainEvery {
		p.last, p.lastStep = t, s
		fmt.Fprintf(p.w, "hub: %s: %s\n", p.name, p.line(t))
	}
}

// finish ends the report: a last full line and how long it took, or nothing
// more than a line break on a terminal when the transfer failed (the error is
// the caller's to print).
func (p *progress) finish(err error) {
	if p.w == nil {
		return
	}
	t := p.now()
	if err != nil {
		if p.tty {
			fmt.Fprintln(p.w)
		}
		return
	}
	el := t.Sub(p.start)
	msg := fmt.Sprintf("%s in %s (%s/s)", size(p.done), dur(el), size(rate(p.done-p.base, el)))
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", msg)
		return
	}
	fmt.Fprintf(p.w, "hub: %s: done, %s\n", p.name, msg)
}

// line renders "123.0 MiB / 1.2 GiB  10%  45.6 MiB/s  ETA 25s".
func (p *progress) line(t time.Time) string {
	var b strings.Builder
	b.WriteString(size(p.done))
	if p.total > 0 {
		fmt.Fprintf(&b, " / %s  %3d%%", size(p.total), p.done*100/p.total)
	}
	el := t.Sub(p.start)
	r := rate(p.done-p.base, el)
	fmt.Fprintf(&b, "  %s/s", size(r))
	if p.total > 0 {
		b.WriteString("  ETA ")
		if secs := float64(p.total-p.done) / float64(r); r > 0 && secs < maxETA.Seconds() {
			b.WriteString(dur(time.Duration(secs * float64(time.Second))))
		} else {
			b.WriteString("?")
		}
	}
	return b.String()
}

// rate returns bytes per second over el (0 when el is not positive).
func rate(n int64, el time.Duration) int64 {
	if el <= 0 || n <= 0 {
		return 0
	}
	return int64(float64(n) / el.Seconds())
}

// size formats a byte count in binary units with one decimal.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, 0
	for v >= unit && u < 4 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[u])
}

// dur formats a duration to the second ("1h02m03s", "4m05s", "7s").
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}
