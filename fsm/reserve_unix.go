//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fsm

import "syscall"

// mapBytes maps n bytes of address space (zero-filled, committed on first
// touch), or returns nil when it cannot.
func mapBytes(n int) []byte {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|mapNoReserve)
	if err != nil {
		return nil
	}
	return mem
}

// unmapBytes returns a mapping from mapBytes.
func unmapBytes(mem []byte) { _ = syscall.Munmap(mem) }
