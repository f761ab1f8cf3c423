//go:build cgo && unix

package llama

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// generate clears sequence 0, decodes ids and then n greedy steps, and
// returns every logits row it read.
func generate(t testing.TB, m *Model, ids []TokenID, n int) [][]float32 {
	t.Helper()
	if err := m.ClearSeq(0); err != nil {
		t.Fatal(err)
	}
	if err := m.Decode(promptBatch(ids, 0, 0)); err != nil {
		t.Fatalf("Decode(prompt): %v", err)
	}
	last := len(ids) - 1
	var rows [][]float32
	for k := range n {
		l, err := m.Logits(last)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, l)
		if err := m.Decode(Batch{{Token: argmax(l), Pos: len(ids) + k, Logits: true}}); err != nil {
			t.Fatalf("Decode(step %d): %v", k, err)
		}
		last = 0
	}
	return rows
}

// TestDecodeThread: on unix a Model decodes on its own thread (the check
// of ollama's batch layout passed), and that thread's logits are the cgo
// call's, bit for bit, over a prompt and greedy steps.
func TestDecodeThread(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 256, BatchSize: 64, Threads: 2})
	if m.dec == nil || m.cbatch == nil {
		t.Fatalf("no decode thread (context %v, batch %v)", m.cctx != nil, m.cbatch != nil)
	}
	ids, err := m.Tokenize("<|im_start|>user\nHello, world!<|im_end|>\n", false, true)
	if err != nil {
		t.Fatal(err)
	}
	threaded := generate(t, m, ids, 6)
	dec := m.dec
	m.dec = nil
	called := generate(t, m, ids, 6)
	m.dec = dec
	for k := range threaded {
		if d := maxDiff(threaded[k], called[k]); d != 0 {
			t.Errorf("step %d: the decode thread's logits differ from the cgo call's by up to %g", k, d)
		}
	}
}

// contextSwitches is the process's context switches (voluntary and not)
// over all its threads, from /proc; ok false where there is no /proc.
func contextSwitches() (n int, ok bool) {
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasSuffix(f[0], "ctxt_switches:") {
				v, _ := strconv.Atoi(f[1])
				n += v
				ok = true
			}
		}
	}
	return n, ok
}

// BenchmarkDecodeThread is greedy generation (decode a token, copy its
// row, argmax) with the decode on the thread and in a cgo call, at GOMAXPROCS 2 (at least), with the context
// switches of all the process's threads per step where /proc has them.
// With two decode threads on two cores the cgo call showed ~60 switches a
// step (sysmon, see decoder_unix.go) and the thread ~5.
func BenchmarkDecodeThread(b *testing.B) {
	m := benchModel(b, Params{ContextSize: 4096, BatchSize: 64})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	dec := m.dec
	defer func() { m.dec = dec }()
	for _, mode := range []string{"thread", "cgo-call"} {
		b.Run(mode, func(b *testing.B) {
			m.dec = dec
			if mode == "cgo-call" {
				m.dec = nil
			}
			if err := m.ClearSeq(0); err != nil {
				b.Fatal(err)
			}
			pos, tok := 0, TokenID(100)
			var row []float32
			sw0, ok := contextSwitches()
			for b.Loop() {
				if pos == m.SeqContextSize() {
					m.ClearSeq(0)
					pos = 0
				}
				if err := m.Decode(Batch{{Token: tok, Pos: pos, Logits: true}}); err != nil {
					b.Fatal(err)
				}
				var err error
				if row, err = m.LogitsInto(0, row); err != nil {
					b.Fatal(err)
				}
				tok = argmax(row)
				pos++
			}
			if sw1, _ := contextSwitches(); ok {
				b.ReportMetric(float64(sw1-sw0)/float64(b.N), "ctxsw/step")
			}
		})
	}
}
