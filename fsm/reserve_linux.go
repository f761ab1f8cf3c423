//go:build linux

package fsm

import "syscall"

// mapNoReserve keeps the reservation out of the kernel's commit accounting
// until pages are touched.
const mapNoReserve = syscall.MAP_NORESERVE

// dropPages hands the pages of mem back to the kernel (they read as zero
// and are committed again on first touch); false when it cannot.
func dropPages(mem []byte) bool { return syscall.Madvise(mem, syscall.MADV_DONTNEED) == nil }
