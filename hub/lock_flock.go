//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hub

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive advisory lock (flock) on f without waiting;
// busy is true when another open file holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK || err == syscall.EINTR {
		return true, nil
	}
	return false, err
}
