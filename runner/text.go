package runner

import (
	"bytes"
	"unicode/utf8"
)

// textState turns token pieces into text events. It releases text only when
// it is certain: it holds back the longest suffix that could still begin a
// stop sequence, and an incomplete UTF-8 sequence at the end, so that a
// stop sequence split across tokens is never streamed and a multi-byte
// character split across tokens is streamed whole.
type textState struct {
	stops   [][]byte
	buf     []byte // text not yet released
	matched string // the stop sequence found, once push reported it
}

func (t *textState) reset(stops []string) {
	t.stops = t.stops[:0]
	for _, s := range stops {
		if s != "" {
			t.stops = append(t.stops, []byte(s))
		}
	}
	t.buf = t.buf[:0]
	t.matched = ""
}

// push adds a piece and returns the text now certain. stopped reports that
// a stop sequence was found: release then ends just before it, and the stop
// sequence and everything after it are dropped, and matched names the
// sequence (the one that starts first).
func (t *textState) push(piece []byte) (release string, stopped bool) {
	t.buf = append(t.buf, piece...)
	first := -1
	for _, s := range t.stops {
		if i := bytes.Index(t.buf, s); i >= 0 && (first < 0 || i < first) {
			first, t.matched = i, string(s)
		}
	}
	if first >= 0 {
		release = string(t.buf[:first])
		t.buf = t.buf[:0]
		return release, true
	}
	cut := len(t.buf) - t.heldForStop()
	cut = utf8Cut(t.buf[:cut])
	release = string(t.buf[:cut])
	t.buf = append(t.buf[:0], t.buf[cut:]...)
	return release, false
}

// flush releases everything still held (at the end of a request).
func (t *textState) flush() string {
	s := string(t.buf)
	t.buf = t.buf[:0]
	return s
}

// heldForStop returns the length of the longest suffix of buf that is a
// proper prefix of some stop sequence.
func (t *textState) heldForStop() int {
	best := 0
	for _, s := range t.stops {
		for n := min(len(s)-1, len(t.buf)); n > best; n-- {
			if bytes.HasSuffix(t.buf, s[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// utf8Cut returns the length of the longest prefix of b that does not end
// inside an incomplete (but possibly completable) UTF-8 sequence.
func utf8Cut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}
