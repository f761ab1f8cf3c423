package hub

import (
	"strconv"
	"testing"
	"time"
)

func strconvFormat(n int64) string { return strconv.FormatInt(n, 10) }

// waitFor polls cond until it holds, failing the test after a generous
// deadline (this is synchronisation, not a timing assertion).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
