//go:build linux

package fsm

import "syscall"

// mapNoReserve keeps the reservation out of the kernel's commit accounting
// until pages are touched.
const mapNoReserve = syscall.MAP_NORESERVE
