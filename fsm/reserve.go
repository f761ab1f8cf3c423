package fsm

import (
	"runtime"
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
// from the start made every constraint fault its pages in afresh and cost
// ~10% of the time to first mask). Where the platform cannot reserve
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

// reservation is reserved address space, all zero until written.
type reservation struct {
	mem     []byte
	release func() // returns the address space
}

// reservedTable returns a table with room for n states of k classes whose
// arrays live in one reservation, or nil when the platform cannot reserve
// it or it would exceed maxReserveBytes.
func reservedTable(states int64, k int) (*table, *reservation) {
	rowBytes := int64(k)*4 + 4 + 1 // a row, its info word, its accept flag
	if states <= 0 || states > maxReserveBytes/rowBytes {
		return nil, nil
	}
	n := int(states)
	r := reserveBytes(int(states * rowBytes))
	if r == nil {
		return nil, nil
	}
	words := unsafe.Slice((*uint32)(unsafe.Pointer(&r.mem[0])), n*k+n)
	return &table{
		trans:  words[: n*k : n*k],
		info:   words[n*k:],
		accept: unsafe.Slice((*bool)(unsafe.Pointer(&r.mem[(n*k+n)*4])), n),
	}, r
}

// reserveElemsAbove is the length past which growArray moves an array into
// a reservation (a variable for tests); set with reserveAbove.
var reserveElemsAbove = 1 << 15

// growArray returns s with room for n more elements. When s must grow past
// reserveElemsAbove elements and limit (the most it can ever hold) is
// larger, it moves, once, into a reservation of limit elements, which keep
// ties to the array's owner (released with it); otherwise, and past limit,
// it doubles on the Go heap. T must hold no pointers.
func growArray[T any](s []T, n, limit int, keep func(*reservation)) []T {
	want := len(s) + n
	if want <= cap(s) {
		return s
	}
	if want > reserveElemsAbove && limit >= want && cap(s) < limit {
		var zero T
		size := int64(unsafe.Sizeof(zero))
		if size > 0 && int64(limit)*size <= maxReserveBytes {
			if r := reserveBytes(int(int64(limit) * size)); r != nil {
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
