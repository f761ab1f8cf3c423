package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// loadBar shows how far the model's weights have loaded: one line redrawn
// in place on a terminal, a plain line every 25% otherwise.
type loadBar struct {
	mu   sync.Mutex
	w    io.Writer
	tty  bool
	last int // last percent shown
}

func newLoadBar(w io.Writer) *loadBar {
	b := &loadBar{w: w, last: -1}
	if f, ok := w.(*os.File); ok {
		b.tty = term.IsTerminal(int(f.Fd()))
	}
	return b
}

// update is llama.cpp's progress callback (fraction 0..1).
func (b *loadBar) update(frac float32) {
	if b == nil || b.w == nil {
		return
	}
	pct := int(frac*100 + 0.5)
	pct = max(0, min(pct, 100))
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.tty && pct != b.last:
		const width = 30
		n := pct * width / 100
		fmt.Fprintf(b.w, "\rloading model [%s%s] %3d%%", strings.Repeat("=", n), strings.Repeat(" ", width-n), pct)
		b.last = pct
	case !b.tty && (b.last < 0 || pct/25 > b.last/25):
		fmt.Fprintf(b.w, "loading model: %d%%\n", pct)
		b.last = pct
	}
}

// done ends the bar's line.
func (b *loadBar) done(ok bool) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty && b.last >= 0 {
		if ok {
			fmt.Fprintln(b.w)
		} else {
			fmt.Fprintln(b.w, " failed")
		}
	}
}
