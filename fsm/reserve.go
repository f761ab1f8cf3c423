package fsm

import (
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
)

// Reserved address space for large growing arrays.
//
// A lazy constraint's transition table grows while masks are computed
// (lazy.go), by doubling: each growth allocates a zeroed table twice the
// size and copies the rows. Past a few megabytes that stalls one mask for
// tens of milliseconds (at ~65k states × ~100 classes, a 26 MB copy into a
// fresh 52 MB table: 37 ms on the benchmark machine). A table about to grow
// past reserveAbove bytes instead moves, once, into address space reserved
// for the most states the budgets allow (MaxDFAStates and MaxDFABytes; 64
// MiB of rows by default), which the kernel commits page by page as rows
// are first written: it never grows again. Small tables stay on the Go heap,
// where a new constraint reuses memory that is already mapped (reserving
// fresh address space from the start made every constraint fault its pages
// in afresh and cost ~10% of the time to first mask), unless a recycled
// reservation is at hand (below). Where the platform cannot reserve
// (reserveBytes returns nil) tables grow by copying.
//
// The NFA of a lazy constraint grows the same way (any-order objects stamp
// their members again for every subset of written keys: o65323 reaches
// 870k NFA states), and so do the determinizer's per-NFA-state arrays; one
// doubling at that size stalled a mask for 20-40 ms. Past
// reserveElemsAbove elements these arrays move once into reservations
// sized for MaxNFAStates (growArray), released when their owner is
// collected. Only pointer-free element types may live there: the garbage
// collector does not scan reserved memory.

// reserveAbove is the table size (transition bytes) past which a growing
// table moves into a reservation (a variable for tests). At 1 MB (about
// 2,500 states) the MaskBench every-5th sample gave TBM p99.9 1.35-1.38 ms
// and max 7-11 ms against 1.6-1.8 ms and 9-14 ms at 8 MB, for ~50 MB more
// peak RSS; p99 and TTFM did not move beyond the noise.
var reserveAbove = 1 << 20

// maxReserveBytes bounds one reservation.
const maxReserveBytes = 1 << 30

// Recycling. A page touched for the first time costs a page fault: ~4 µs
// on the benchmark machine, so ~1 ms per megabyte of rows or NFA states,
// paid by whichever mask first writes there (MaskBench's every-5th sample:
// a mask in the slowest 1% took ~40 faults). A released reservation
// therefore goes to a pool, its first poolKeepBytes left committed and the
// rest handed back to the kernel, and the next reservation of its size
// class takes it over with those pages already in place; a constraint
// that finds a pooled one starts in it (table and arrays alike) and never
// grows by copying at all. The pool keeps at most poolMaxBytes committed;
// past that a released reservation is unmapped. The pool never shrinks
// below what it holds: an idle server keeps up to poolMaxBytes.
//
// Pooled memory is not zero: whoever reserves initializes what it reads.
// Table rows and info words are written when their state is created
// (initRows), extendTo clears the elements it adds, and the other arrays
// only grow by appending.

// Huge pages. Table reservations, and the NFA's states and epsilon
// targets, are advised to use transparent huge pages (setHuge; Linux,
// where the THP setting is madvise or always): the masks walk rows all
// over a table, and a huge page commits 2 MB in one fault. A 4 KB page
// faulted in costs ~11 µs on the benchmark machine (a Firecracker guest),
// ~5.8 ms per 2 MB; a 2 MB huge page ~0.12 ms when the guest has used that
// memory recently and ~3.7 ms when it has not, paid by one mask. The
// determinizer's four per-NFA-state arrays (4 bytes a state, growing
// together) are not: they gain little and would each pay that first touch
// in the same mask. MaskBench, one thread, 2026-12-02 (bench/README.md):
// TBM p99 189 → 142-150 µs, p99.9 1.12-1.18 → 0.68-0.71 ms, masks over 1 ms
// 2,039-2,142 → 861-934, all masks 26.9-27.2 → 21.5-22.7 s; masks over 10 ms
// 12-21 → 21-29 (of 1.77 million). Advising every reservation gave p99
// 126-136 µs but 48-95 masks over 10 ms; committing pages ahead on another
// goroutine (MADV_POPULATE_WRITE) made the stalls more frequent, and huge
// pages only past a reservation's first 2 MB lost the gain.

// Pool limits (variables for tests): per reservation, the bytes kept
// committed; in all, the committed bytes (counted with mincore where the
// platform has it, so a reservation a small constraint barely touched
// costs little); per size class, the reservations. 64 MB in all let the
// pool take a quarter of the reservations MaskBench releases (the garbage
// collector frees constraints in batches); 256 MB takes all of them, for
// TBM p99 ~18% lower and ~90 MB more peak RSS on its every-5th sample.
var (
	poolKeepBytes = 4 << 20
	poolMaxBytes  = 256 << 20
	poolPerClass  = 64
)

// reservation is reserved address space: a mapping of a power of two
// bytes, zero when fresh, holding old data when it came from the pool.
type reservation struct {
	mem  []byte
	kept int  // committed bytes, while pooled
	huge bool // advised to use huge pages (setHuge)
}

// setHuge advises r's memory to use transparent huge pages, or not.
func (r *reservation) setHuge(on bool) {
	if r.huge != on {
		adviseHuge(r.mem, on)
		r.huge = on
	}
}

// pool holds released reservations by size.
var pool struct {
	sync.Mutex
	free map[int][]*reservation
	kept int // committed bytes of the pooled reservations
}

// sizeClass rounds n up to the power of two its reservation maps.
func sizeClass(n int) int { return 1 << bits.Len(uint(n-1)) }

// pooledBytes returns a pooled reservation of at least n bytes, or nil.
func pooledBytes(n int) *reservation {
	c := sizeClass(n)
	pool.Lock()
	defer pool.Unlock()
	l := pool.free[c]
	if len(l) == 0 {
		return nil
	}
	r := l[len(l)-1]
	pool.free[c] = l[:len(l)-1]
	pool.kept -= r.kept
	return r
}

// reserveBytes returns a reservation of at least n bytes, pooled or fresh,
// or nil when the platform cannot reserve address space.
func reserveBytes(n int) *reservation {
	if n <= 0 || n > maxReserveBytes {
		return nil
	}
	if r := pooledBytes(n); r != nil {
		return r
	}
	mem := mapBytes(sizeClass(n))
	if mem == nil {
		return nil
	}
	return &reservation{mem: mem}
}

// release gives r back: to the pool, its pages past poolKeepBytes
// returned to the kernel, or, when the pool is full or the platform cannot
// drop pages, to the kernel.
func (r *reservation) release() {
	keep := min(len(r.mem), poolKeepBytes)
	if keep < len(r.mem) && !dropPages(r.mem[keep:]) {
		unmapBytes(r.mem)
		return
	}
	r.kept = residentBytes(r.mem[:keep])
	pool.Lock()
	ok := pool.kept+r.kept <= poolMaxBytes && len(pool.free[len(r.mem)]) < poolPerClass
	if ok {
		if pool.free == nil {
			pool.free = make(map[int][]*reservation)
		}
		pool.free[len(r.mem)] = append(pool.free[len(r.mem)], r)
		pool.kept += r.kept
	}
	pool.Unlock()
	if !ok {
		unmapBytes(r.mem)
	}
}

// reservedTable returns a table with room for n states of k classes whose
// arrays live in one reservation (a pooled one only, with pooledOnly), or
// nil when there is none or it would exceed maxReserveBytes. Its rows,
// info words and accepting flags hold old data until initialized.
//
// The info words and accepting flags come first, the rows after them
// (aligned to a cache line): a pooled reservation keeps only its first
// poolKeepBytes committed, and with the rows first the info words and flags
// of a new constraint's first states lay past them, in pages dropped at
// release, so every constraint started in a pooled table faulted two fresh
// pages (huge ones, up to ~3.7 ms each here) before its first mask. At the
// default budgets the info words and flags take at most 1 MB.
func reservedTable(states int64, k int, pooledOnly bool) (*table, *reservation) {
	rowBytes := int64(k)*4 + 4 + 1 // a row, its info word, its accept flag
	if states <= 0 || states > (maxReserveBytes-64)/rowBytes {
		return nil, nil
	}
	n := int(states)
	transAt := (n*5 + 63) &^ 63
	size := transAt + n*k*4
	var r *reservation
	if pooledOnly {
		r = pooledBytes(size)
	} else {
		r = reserveBytes(size)
	}
	if r == nil {
		return nil, nil
	}
	r.setHuge(true)
	return &table{
		info:   unsafe.Slice((*uint32)(unsafe.Pointer(&r.mem[0])), n),
		accept: unsafe.Slice((*bool)(unsafe.Pointer(&r.mem[n*4])), n),
		trans:  unsafe.Slice((*uint32)(unsafe.Pointer(&r.mem[transAt])), n*k),
	}, r
}

// reserveElemsAbove is the length past which growArray moves an array into
// a reservation (a variable for tests); set with reserveAbove. A pooled
// reservation is taken from poolElemsAbove on.
var (
	reserveElemsAbove = 1 << 15
	poolElemsAbove    = 1 << 10
)

// growArray returns s with room for n more elements. When s must grow past
// reserveElemsAbove elements (poolElemsAbove when a pooled reservation is
// at hand) and limit (the most it can ever hold) is larger, it moves, once,
// into a reservation of limit elements, which keep ties to the array's
// owner (released with it); otherwise, and past limit, it doubles on the
// Go heap. T must hold no pointers. The elements past len(s) hold old data
// when the reservation came from the pool (extendTo clears them).
func growArray[T any](s []T, n, limit int, keep func(*reservation), huge bool) []T {
	want := len(s) + n
	if want <= cap(s) {
		return s
	}
	if want > min(poolElemsAbove, reserveElemsAbove) && limit >= want && cap(s) < limit {
		var zero T
		size := int64(unsafe.Sizeof(zero))
		if size > 0 && int64(limit)*size <= maxReserveBytes {
			bytes := int(int64(limit) * size)
			r := pooledBytes(bytes)
			if r == nil && want > reserveElemsAbove {
				r = reserveBytes(bytes)
			}
			if r != nil {
				r.setHuge(huge)
				keep(r)
				t := unsafe.Slice((*T)(unsafe.Pointer(&r.mem[0])), limit)[:len(s)]
				copy(t, s)
				return t
			}
		}
	}
	return double(s, n)
}

// keepUntil ties r to owner: r is released once owner is collected.
func keepUntil[T any](owner *T) func(*reservation) {
	return func(r *reservation) { runtime.AddCleanup(owner, func(r *reservation) { r.release() }, r) }
}
