package fsm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCacheSingleflight(t *testing.T) {
	ti := tokToyIndex(t)
	cache := NewCache(0)
	key := CacheKey{Constraint: "regex:abc", Vocab: ti.Fingerprint()}
	var builds atomic.Int32
	release := make(chan struct{})
	build := func() (*Constraint, error) {
		builds.Add(1)
		<-release
		return NewConstraint(testDFAFromStrings("abc"), ti, ConstraintOptions{})
	}
	const n = 16
	got := make([]*Constraint, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := cache.Get(context.Background(), key, build)
			if err != nil {
				t.Errorf("Get = %v", err)
			}
			got[i] = c
		}()
	}
	// Let every goroutine reach Get before the build finishes.
	for cache.Stats().Misses+cache.Stats().Shared < n {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if b := builds.Load(); b != 1 {
		t.Errorf("builds = %d, want 1", b)
	}
	for i := range got {
		if got[i] == nil || got[i] != got[0] {
			t.Fatalf("Get #%d returned %p, want the shared %p", i, got[i], got[0])
		}
	}
	st := cache.Stats()
	if st.Misses != 1 || st.Shared != n-1 || st.Entries != 1 {
		t.Errorf("Stats = %+v, want Misses 1, Shared %d, Entries 1", st, n-1)
	}
	if _, err := cache.Get(context.Background(), key, build); err != nil || cache.Stats().Hits != 1 {
		t.Errorf("second Get: err %v, Hits %d; want nil, 1", err, cache.Stats().Hits)
	}
}

func TestCacheLRUBytes(t *testing.T) {
	ti := tokToyIndex(t)
	mk := func(s string) func() (*Constraint, error) {
		return func() (*Constraint, error) {
			return NewConstraint(testDFAFromStrings(s), ti, ConstraintOptions{})
		}
	}
	probe, _ := mk("aaa")()
	size := probe.MemoryBytes()
	cache := NewCache(2*size + size/2) // room for two
	ctx := context.Background()
	key := func(s string) CacheKey { return CacheKey{Constraint: s, Vocab: ti.Fingerprint()} }
	for _, s := range []string{"aaa", "bbb"} {
		if _, err := cache.Get(ctx, key(s), mk(s)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cache.Get(ctx, key("aaa"), mk("aaa")); err != nil { // aaa is now most recent
		t.Fatal(err)
	}
	if _, err := cache.Get(ctx, key("ccc"), mk("ccc")); err != nil { // evicts bbb
		t.Fatal(err)
	}
	st := cache.Stats()
	if st.Entries != 2 || st.Evictions != 1 || st.Hits != 1 || st.Misses != 3 || st.Bytes > st.MaxBytes {
		t.Errorf("Stats = %+v, want Entries 2, Evictions 1, Hits 1, Misses 3, Bytes ≤ MaxBytes", st)
	}
	var rebuilt bool
	if _, err := cache.Get(ctx, key("bbb"), func() (*Constraint, error) { rebuilt = true; return mk("bbb")() }); err != nil || !rebuilt {
		t.Errorf("Get(bbb) after eviction: err %v, rebuilt %v; want nil, true", err, rebuilt)
	}
	// Another vocabulary or options are other keys.
	k2 := key("aaa")
	k2.Options = "minimize=false"
	if _, err := cache.Get(ctx, k2, func() (*Constraint, error) { rebuilt = false; return mk("aaa")() }); err != nil || rebuilt {
		t.Errorf("Get with other options: err %v, built %v; want nil, true", err, !rebuilt)
	}
	cache.Purge()
	if st := cache.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("after Purge: Stats = %+v, want no entries", st)
	}
}

func TestCacheErrorsAndPanics(t *testing.T) {
	ti := tokToyIndex(t)
	cache := NewCache(0)
	ctx := context.Background()
	key := CacheKey{Constraint: "bad", Vocab: ti.Fingerprint()}
	boom := errors.New("boom")
	calls := 0
	for range 2 {
		if _, err := cache.Get(ctx, key, func() (*Constraint, error) { calls++; return nil, boom }); err != boom {
			t.Errorf("Get = %v, want %v", err, boom)
		}
	}
	if calls != 2 || cache.Stats().Errors != 2 || cache.Stats().Entries != 0 {
		t.Errorf("calls %d, Stats %+v; want 2 calls, 2 errors, no entries (errors are not cached)", calls, cache.Stats())
	}
	// A panicking build releases its waiters with an error and re-panics.
	pkey := CacheKey{Constraint: "panic", Vocab: ti.Fingerprint()}
	started := make(chan struct{})
	release := make(chan struct{})
	waiterErr := make(chan error, 1)
	go func() {
		defer func() { _ = recover() }()
		_, _ = cache.Get(ctx, pkey, func() (*Constraint, error) {
			close(started)
			<-release
			panic("bug")
		})
	}()
	<-started
	go func() {
		_, err := cache.Get(ctx, pkey, func() (*Constraint, error) { return nil, errors.New("second build ran") })
		waiterErr <- err
	}()
	for cache.Stats().Shared == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-waiterErr; !tokIsCode(err, ErrInternal) {
		t.Errorf("waiter on a panicking build got %v, want ErrInternal", err)
	}
	// A waiter whose context ends stops waiting.
	ckey := CacheKey{Constraint: "slow", Vocab: ti.Fingerprint()}
	hold := make(chan struct{})
	before := cache.Stats().Misses
	go func() {
		_, _ = cache.Get(ctx, ckey, func() (*Constraint, error) {
			<-hold
			return NewConstraint(testDFAFromStrings("a"), ti, ConstraintOptions{})
		})
	}()
	for cache.Stats().Misses == before {
		time.Sleep(time.Millisecond)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cache.Get(cctx, ckey, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v, want context.Canceled", err)
	}
	close(hold)
}
