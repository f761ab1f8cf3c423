//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hub

import "os"

// tryLock is a no-op where flock is not available: concurrent downloads of
// the same file into the same cache are then not coordinated.
func tryLock(f *os.File) (busy bool, err error) { return false, nil }
