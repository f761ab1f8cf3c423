//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fsm

// reserveBytes cannot reserve address space on this platform: tables grow
// by copying.
func reserveBytes(n int) *reservation { return nil }
