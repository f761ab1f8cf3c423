//go:build cgo

package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"conform/bench/soak"
)

// TestSoakShort is the short soak of make test: 16 streaming clients for
// 20 s against the real server (tiny synthetic model, 4 slots), a mix of
// json_schema, tool_choice "required" and free text, two clients
// disconnecting after the first chunk of every request. No request may
// fail, no complete constrained output may be invalid, every slot must be
// free one second after the end, and each kind must have answers that
// were checked. Latency is reported, never asserted: the machine may be
// shared.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: 20 s of load")
	}
	// A queue for every client and the cancelled requests the
	// disconnecting ones leave while their slots are freed.
	s := startE2E(t, "--max-queue", "64")
	rep, err := soak.Run(context.Background(), soak.Config{
		BaseURL:  s.url,
		Clients:  16,
		Duration: 20 * time.Second,
		// 64 tokens close most of the soak's schemas on the random-weight
		// model; the request bound (soak.DefaultRequestTimeout, 5 min)
		// catches a hang, far above a request's time even when 16 clients
		// queue on 4 slots of a loaded 2-core machine.
		MaxTokens: 64,
		PID:       os.Getpid(),
		Seed:      7,
	})
	if err != nil {
		t.Fatal(err)
	}
	var tab strings.Builder
	if err := rep.Table(&tab); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + tab.String())
	if rep.Errors != 0 {
		t.Errorf("%d failed requests: %v", rep.Errors, rep.ErrorSamples)
	}
	if rep.Total.Invalid != 0 {
		t.Errorf("%d invalid complete outputs", rep.Total.Invalid)
	}
	if rep.After.BusySlots != 0 || rep.After.QueueDepth != 0 {
		t.Errorf("%g busy slots and %g queued 1 s after the end, want 0", rep.After.BusySlots, rep.After.QueueDepth)
	}
	// go_goroutines counts this whole test process (server and clients);
	// the clients are gone and their connections closed by the last probe.
	// A goroutine left per request or per disconnect (dozens of each) is a
	// leak; a few are the server's own background work.
	if rep.Before.Goroutines < 0 || rep.After.Goroutines > rep.Before.Goroutines+8 {
		t.Errorf("goroutines %g before, %g after the soak", rep.Before.Goroutines, rep.After.Goroutines)
	}
	if rep.Total.Disconnects == 0 {
		t.Errorf("no request disconnected")
	}
	for _, k := range soak.Kinds {
		st := rep.ByKind[k.String()]
		// Answers stopped at max_tokens that validate were checked too
		// (free text always validates).
		if st.Complete+st.LengthValid == 0 {
			t.Errorf("%s: no answer that finished and was checked: %+v", k, *st)
		}
	}
	if !rep.OK() {
		t.Errorf("soak failed: %v", rep.Failures())
	}
}
