package hub

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// lockPoll is how often a process waiting for another one's download of the
// same file tries the lock again: short next to any real download.
const lockPoll = 100 * time.Millisecond

// lockFile serialises work on one cache file across processes (two servers
// started at once with the same --hf) through an advisory lock on
// <file>.lock. It waits until the lock is free or ctx is done, telling
// progress once that it waits. The lock file stays behind (removing it would
// race with a process about to lock it); the lock ends with unlock or when
// the process exits.
func lockFile(ctx context.Context, name string, progress io.Writer) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fsError(name, err, "creating the lock file")
	}
	told := false
	for {
		busy, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fsError(name, err, "locking")
		}
		if !busy {
			return func() { f.Close() }, nil
		}
		if !told && progress != nil {
			fmt.Fprintf(progress, "hub: waiting for another process downloading %s\n", name[:len(name)-len(".lock")])
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, errorf(CodeCanceled, name, context.Cause(ctx), "stopped while waiting for another download").
				withHint("start again once the other process is done")
		case <-time.After(lockPoll):
		}
	}
}
