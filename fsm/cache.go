package fsm

import (
	"container/list"
	"context"
	"sync"
)

// CacheKey identifies a compiled constraint in a Cache.
type CacheKey struct {
	// Constraint is the constraint's source: its kind and text (say
	// "json-schema:" + the schema bytes, or "regex:" + the pattern), or a
	// strong hash of them. Property order in a schema is meaningful, so do
	// not canonicalize it away.
	Constraint string
	// Options is a canonical encoding of every option that changes the DFA
	// or the masks (compile Options, grammar options, ConstraintOptions).
	Options string
	// Vocab is the vocabulary's fingerprint (TokenIndex.Fingerprint).
	Vocab Fingerprint
}

// CacheStats is a snapshot of a Cache's counters, for metrics.
type CacheStats struct {
	Hits      int64 // Get calls served from the cache
	Misses    int64 // Get calls that ran build
	Shared    int64 // waits for another caller's build of the same key (a Get whose builder was cancelled waits again or builds, and counts again)
	Errors    int64 // builds that failed (errors are not cached)
	Evictions int64 // entries dropped to stay within MaxBytes
	Entries   int   // entries held now
	Bytes     int64 // their memory as last measured
	MaxBytes  int64 // the bound
}

// Cache holds compiled constraints shared across requests, keyed by
// (constraint, options, vocabulary fingerprint). Concurrent Gets of the same
// missing key run one build (singleflight) and share its result. The cache
// is bounded by bytes: Constraint.MemoryBytes, which grows as masks fill in
// lazily, is re-measured when an entry is hit and whenever an entry is added,
// and the least recently used entries are evicted while the total is over
// the bound (the most recent entry is always kept). An evicted Constraint
// stays valid for the Matchers still using it. Failed builds are not cached.
// A Cache is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	maxBytes int64
	lru      list.List // of *cacheEntry; front = most recently used
	entries  map[CacheKey]*list.Element
	inflight map[CacheKey]*cacheCall
	bytes    int64
	stats    CacheStats
}

type cacheEntry struct {
	key  CacheKey
	c    *Constraint
	size int64
}

// cacheCall is one build in flight; done is closed when c, err and
// cancelled are set. cancelled: the build failed while its caller's
// context was done, so the waiters must not take its error for theirs.
type cacheCall struct {
	done      chan struct{}
	c         *Constraint
	err       error
	cancelled bool
}

// DefaultCacheBytes is the default bound of a Cache: room for a few hundred
// typical constraints (tens of KB to a few MB each once their masks are
// filled) without competing with the model for host memory.
const DefaultCacheBytes = 1 << 30

// NewCache returns a cache bounded to maxBytes (0 means DefaultCacheBytes).
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	return &Cache{
		maxBytes: maxBytes,
		entries:  make(map[CacheKey]*list.Element),
		inflight: make(map[CacheKey]*cacheCall),
	}
}

// Get returns the constraint cached under key, or runs build to make it. If
// another caller is already building key, Get waits for that build (or for
// ctx to be done, returning ctx's error). build runs under ctx (the caller
// passes it to CompileConstraint): a build that fails while ctx is done
// may have failed for that reason alone, so its error goes to this caller
// only, and the callers waiting on it build again themselves (or wait for
// one of them to), under their own contexts. Other errors go to every
// waiter, and no error is cached. A panic in build is turned into an error
// for the callers waiting on it and then re-raised in the caller that ran
// build.
func (c *Cache) Get(ctx context.Context, key CacheKey, build func() (*Constraint, error)) (*Constraint, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.lru.MoveToFront(el)
			e := el.Value.(*cacheEntry)
			size := e.c.MemoryBytes()
			c.bytes += size - e.size
			e.size = size
			c.stats.Hits++
			c.evictLocked()
			c.mu.Unlock()
			return e.c, nil
		}
		call, ok := c.inflight[key]
		if !ok {
			break // this caller builds, with c.mu held
		}
		c.stats.Shared++
		c.mu.Unlock()
		select {
		case <-call.done:
			if !call.cancelled {
				return call.c, call.err
			}
			// The builder's request went away; try again.
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	call := &cacheCall{done: make(chan struct{})}
	c.inflight[key] = call
	c.stats.Misses++
	c.mu.Unlock()

	finished := false
	defer func() {
		if !finished { // build panicked: release the waiters, then re-panic
			r := recover()
			call.err = tokError(ErrInternal, "constraint build panicked: %v", r)
			c.mu.Lock()
			delete(c.inflight, key)
			c.stats.Errors++
			c.mu.Unlock()
			close(call.done)
			panic(r)
		}
	}()
	call.c, call.err = build()
	finished = true
	call.cancelled = call.err != nil && ctx.Err() != nil

	c.mu.Lock()
	delete(c.inflight, key)
	if call.err != nil {
		c.stats.Errors++
	} else if call.c != nil {
		e := &cacheEntry{key: key, c: call.c, size: call.c.MemoryBytes()}
		c.entries[key] = c.lru.PushFront(e)
		c.bytes += e.size
		// Re-measure every entry: masks filled since the last look.
		for el := c.lru.Front(); el != nil; el = el.Next() {
			e := el.Value.(*cacheEntry)
			size := e.c.MemoryBytes()
			c.bytes += size - e.size
			e.size = size
		}
		c.evictLocked()
	}
	c.mu.Unlock()
	close(call.done)
	return call.c, call.err
}

// evictLocked drops least recently used entries while over the bound,
// always keeping the most recent one.
func (c *Cache) evictLocked() {
	for c.bytes > c.maxBytes && c.lru.Len() > 1 {
		el := c.lru.Back()
		e := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.entries, e.key)
		c.bytes -= e.size
		c.stats.Evictions++
	}
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Entries = c.lru.Len()
	st.Bytes = c.bytes
	st.MaxBytes = c.maxBytes
	return st
}

// Purge drops every entry (builds in flight are unaffected).
func (c *Cache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	clear(c.entries)
	c.bytes = 0
}
