//go:build linux

package fsm

import (
	"syscall"
	"unsafe"
)

// mapNoReserve keeps the reservation out of the kernel's commit accounting
// until pages are touched.
const mapNoReserve = syscall.MAP_NORESERVE

// adviseHuge asks for transparent huge pages in mem, or for none (on
// false). Where the kernel's THP setting is never it changes nothing. See
// reserve.go's Huge pages.
func adviseHuge(mem []byte, on bool) {
	advice := syscall.MADV_NOHUGEPAGE
	if on {
		advice = syscall.MADV_HUGEPAGE
	}
	_ = syscall.Madvise(mem, advice)
}

// dropPages hands the pages of mem back to the kernel (they read as zero
// and are committed again on first touch); false when it cannot.
func dropPages(mem []byte) bool { return syscall.Madvise(mem, syscall.MADV_DONTNEED) == nil }

// residentBytes returns how much of mem is committed (mincore), or all of
// it when that cannot be told.
func residentBytes(mem []byte) int {
	page := syscall.Getpagesize()
	if len(mem) == 0 {
		return 0
	}
	vec := make([]byte, (len(mem)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return len(mem)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n * page
}
