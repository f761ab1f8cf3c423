//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fsm

// mapNoReserve: these kernels commit anonymous pages on first touch anyway.
const mapNoReserve = 0

// adviseHuge: these kernels are not asked for huge pages.
func adviseHuge(mem []byte, on bool) {}

// dropPages cannot hand pages back here (no portable madvise in package
// syscall): only reservations small enough to keep whole are pooled.
func dropPages(mem []byte) bool { return false }

// residentBytes: all of mem, as far as the pool's bound is concerned.
func residentBytes(mem []byte) int { return len(mem) }
