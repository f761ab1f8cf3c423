// Package sharedtest finds the read-only ../shared folder (MaskBench, real
// vocabularies, chat templates) for tests, and skips the test with a message
// when it is absent, so that `make test` passes on a fresh clone without it.
//
// The folder is $CONFORM_SHARED when set, else the first "shared" folder
// found beside the repository root (the directory holding go.mod).
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared folder, or "" when it cannot be found.
func Dir() string {
	if d := os.Getenv("CONFORM_SHARED"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if st, err := os.Stat(s); err == nil && st.IsDir() {
				return s
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Path returns the path of rel inside the shared folder, skipping tb when the
// folder or the file is absent.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		tb.Skip("../shared is absent (set CONFORM_SHARED to its path): skipping a test that reads it")
	}
	p := filepath.Join(append([]string{d}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("%s is absent in the shared folder: skipping", filepath.Join(rel...))
	}
	return p
}
