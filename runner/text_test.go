package runner

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTextState checks the streaming text properties: splitting the same
// output into pieces anywhere gives the same text, cut just before the first
// stop sequence; and when the output and the stop are valid UTF-8, every
// released piece is too.
func FuzzTextState(f *testing.F) {
	f.Add("hello END world", "END", []byte{3, 1, 7})
	f.Add("h\u00e9llo \u20ac\u20ac", "\u20ac", []byte{1, 1, 1, 2})
	f.Add("aaab", "aab", []byte{1})
	f.Add("no stop here", "", []byte{2, 5})
	f.Fuzz(func(t *testing.T, full, stop string, cuts []byte) {
		var ts textState
		if stop == "" {
			ts.reset(nil)
		} else {
			ts.reset([]string{stop})
		}
		var got strings.Builder
		stopped := false
		rest := full
		for i := 0; len(rest) > 0 && !stopped; i++ {
			n := len(rest)
			if i < len(cuts) {
				n = min(n, 1+int(cuts[i])%8)
			}
			rel, st := ts.push([]byte(rest[:n]))
			if utf8.ValidString(full) && utf8.ValidString(stop) && !utf8.ValidString(rel) {
				t.Fatalf("push released invalid UTF-8 %q from valid text %q (stop %q)", rel, full, stop)
			}
			got.WriteString(rel)
			stopped = st
			rest = rest[n:]
		}
		want := full
		if i := strings.Index(full, stop); stop != "" && i >= 0 {
			want = full[:i]
			if !stopped {
				t.Fatalf("text %q with stop %q: not stopped", full, stop)
			}
		} else {
			if stopped {
				t.Fatalf("text %q with stop %q: stopped", full, stop)
			}
			got.WriteString(ts.flush())
		}
		if got.String() != want {
			t.Fatalf("text %q stop %q cuts %v: streamed %q, want %q", full, stop, cuts, got.String(), want)
		}
	})
}
