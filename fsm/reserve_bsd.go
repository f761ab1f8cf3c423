//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fsm

// mapNoReserve: these kernels commit anonymous pages on first touch anyway.
const mapNoReserve = 0
