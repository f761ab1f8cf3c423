package fsm

import "unsafe"

// Reserved address space for large lazy tables.
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

// reserveAbove is the table size (transition bytes) past which a growing
// table moves into a reservation (a variable for tests).
var reserveAbove = 8 << 20

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
func reservedTable(n, k int) (*table, *reservation) {
	rowBytes := int64(k)*4 + 4 + 1 // a row, its info word, its accept flag
	if n <= 0 || int64(n)*rowBytes > maxReserveBytes {
		return nil, nil
	}
	r := reserveBytes(int(int64(n) * rowBytes))
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
