//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fsm

// mapBytes cannot reserve address space on this platform: tables grow by
// copying.
func mapBytes(n int) []byte { return nil }

func unmapBytes(mem []byte) {}

func dropPages(mem []byte) bool { return false }

func residentBytes(mem []byte) int { return len(mem) }

func adviseHuge(mem []byte, on bool) {}
