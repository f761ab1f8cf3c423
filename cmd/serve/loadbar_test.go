package main

import (
	"bytes"
	"testing"
)

func TestLoadBarPlain(t *testing.T) {
	var buf bytes.Buffer
	b := newLoadBar(&buf)
	for _, f := range []float32{0, 0.1, 0.26, 0.3, 0.5, 0.74, 0.76, 1, 1} {
		b.update(f)
	}
	b.done(true)
	want := "loading model: 0%\nloading model: 26%\nloading model: 50%\nloading model: 76%\nloading model: 100%\n"
	if got := buf.String(); got != want {
		t.Errorf("plain load bar:\ngot  %q\nwant %q", got, want)
	}
	var nilBar *loadBar
	nilBar.update(0.5) // a nil bar is a no-op
	newLoadBar(nil).update(0.5)
}
