//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fsm

import "syscall"

// reserveBytes reserves n bytes of address space (zero-filled, committed
// on first touch), or returns nil when it cannot.
func reserveBytes(n int) *reservation {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapNoReserve)
	if err != nil {
		return nil
	}
	return &reservation{mem: mem, release: func() { _ = syscall.Munmap(mem) }}
}
