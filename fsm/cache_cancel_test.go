package fsm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCacheCancelledBuild: when the request that builds a key goes away
// mid-build, its error (its own context's) is not cached and not handed to
// the requests waiting on the build: they build again, once, under their
// own contexts, and the result is cached. A build that fails for another
// reason hands its error to its waiters, who do not build.
func TestCacheCancelledBuild(t *testing.T) {
	ti := byteVocab(t)
	n := mustParse(t, `[a-z]+@[a-z]+`)
	for _, tt := range []struct {
		name      string
		cancel    bool  // the builder's request goes away mid-build
		buildErr  error // else the build fails with this
		wantShare bool  // the waiters get the builder's error
	}{
		{name: "cancelled", cancel: true},
		{name: "failed", buildErr: errors.New("boom"), wantShare: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := NewCache(0)
			key := CacheKey{Constraint: "regex:" + n.String(), Vocab: ti.Fingerprint()}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started, release := make(chan struct{}), make(chan struct{})
			builderErr := make(chan error, 1)
			go func() {
				_, err := cache.Get(ctx, key, func() (*Constraint, error) {
					close(started)
					<-release
					if tt.cancel {
						cancel()
						return CompileConstraint(ctx, n, ti, Options{}, ConstraintOptions{})
					}
					return nil, tt.buildErr
				})
				builderErr <- err
			}()
			<-started
			const waiters = 3
			var rebuilds atomic.Int32
			got := make([]*Constraint, waiters)
			errs := make([]error, waiters)
			var wg sync.WaitGroup
			for i := range waiters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = cache.Get(context.Background(), key, func() (*Constraint, error) {
						rebuilds.Add(1)
						return CompileConstraint(context.Background(), n, ti, Options{}, ConstraintOptions{})
					})
				}()
			}
			for cache.Stats().Shared < waiters {
				time.Sleep(time.Millisecond)
			}
			close(release)
			wg.Wait()
			err := <-builderErr
			if tt.cancel && !tokIsCode(err, ErrTimeout) {
				t.Errorf("the cancelled builder's Get = %v, want ErrTimeout", err)
			}
			if !tt.cancel && err != tt.buildErr {
				t.Errorf("the builder's Get = %v, want %v", err, tt.buildErr)
			}
			for i := range waiters {
				switch {
				case tt.wantShare && (errs[i] != tt.buildErr || got[i] != nil):
					t.Errorf("waiter %d: Get = %v, %v; want nil, the build's error %v", i, got[i], errs[i], tt.buildErr)
				case !tt.wantShare && (errs[i] != nil || got[i] == nil || got[i] != got[0]):
					t.Errorf("waiter %d: Get = %p, %v; want the one constraint built after the cancellation", i, got[i], errs[i])
				}
			}
			wantRebuilds, wantEntries := int32(1), 1
			if tt.wantShare {
				wantRebuilds, wantEntries = 0, 0
			}
			if r, st := rebuilds.Load(), cache.Stats(); r != wantRebuilds || st.Entries != wantEntries || st.Errors != 1 {
				t.Errorf("waiters built %d times, Stats %+v; want %d builds, %d entries, 1 error", r, st, wantRebuilds, wantEntries)
			}
			if tt.wantShare {
				return
			}
			hits := cache.Stats().Hits
			rebuilt := func() (*Constraint, error) { return nil, errors.New("not cached: built again") }
			if c, err := cache.Get(context.Background(), key, rebuilt); err != nil || c != got[0] || cache.Stats().Hits != hits+1 {
				t.Errorf("Get after the rebuild = %p, %v; want the cached %p", c, err, got[0])
			}
		})
	}
}

// TestCacheWaiterCancelledAfterRetry: a waiter whose own context is done
// by the time the cancelled build ends returns its context's error and
// does not build.
func TestCacheWaiterCancelledAfterRetry(t *testing.T) {
	ti := byteVocab(t)
	n := mustParse(t, `[a-z]+`)
	cache := NewCache(0)
	key := CacheKey{Constraint: "regex:[a-z]+", Vocab: ti.Fingerprint()}
	bctx, bcancel := context.WithCancel(context.Background())
	wctx, wcancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = cache.Get(bctx, key, func() (*Constraint, error) {
			close(started)
			<-release
			bcancel()
			return CompileConstraint(bctx, n, ti, Options{}, ConstraintOptions{})
		})
	}()
	<-started
	done := make(chan error, 1)
	built := false
	go func() {
		_, err := cache.Get(wctx, key, func() (*Constraint, error) { built = true; return nil, errors.New("built") })
		done <- err
	}()
	for cache.Stats().Shared == 0 {
		time.Sleep(time.Millisecond)
	}
	wcancel()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) || built {
		t.Errorf("cancelled waiter: Get = %v, built %v; want context.Canceled, no build", err, built)
	}
}
