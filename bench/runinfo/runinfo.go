package runinfo

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// Stamp is embedded in a benchmark's JSON report: its fields appear at the
// top level of the object as "date", "commit" and "dirty".
type Stamp struct {
	// Date is when the run started, RFC 3339 in UTC.
	Date string `json:"date"`
	// Commit is the short hash of HEAD ("" when neither git nor the build
	// information knows it).
	Commit string `json:"commit"`
	// Dirty reports uncommitted changes to tracked files.
	Dirty bool `json:"dirty,omitempty"`
}

// Now returns the stamp of a run starting now in the working directory.
func Now() Stamp {
	bi, _ := debug.ReadBuildInfo()
	return stamp(time.Now(), gitCommand, bi)
}

// gitCommand runs git with args and returns its trimmed output.
func gitCommand(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// shortHash is the length of an abbreviated hash, as git prints it by
// default in a repository of this size.
const shortHash = 7

// stamp is Now with its sources passed in, for the tests.
func stamp(t time.Time, git func(args ...string) (string, error), bi *debug.BuildInfo) Stamp {
	s := Stamp{Date: t.UTC().Format(time.RFC3339)}
	if h, err := git("rev-parse", "--short", "HEAD"); err == nil && h != "" {
		s.Commit = h
		st, err := git("status", "--porcelain", "--untracked-files=no")
		s.Dirty = err == nil && st != ""
		return s
	}
	if bi == nil {
		return s
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit = kv.Value[:min(len(kv.Value), shortHash)]
		case "vcs.modified":
			s.Dirty = kv.Value == "true"
		}
	}
	return s
}
