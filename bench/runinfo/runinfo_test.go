package runinfo

import (
	"errors"
	"runtime/debug"
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	noGit := func(...string) (string, error) { return "", errors.New("git: not found") }
	git := func(status string) func(...string) (string, error) {
		return func(args ...string) (string, error) {
			if args[0] == "rev-parse" {
				return "3fdc076", nil
			}
			return status, nil
		}
	}
	built := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "44b9788aa0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name string
		git  func(...string) (string, error)
		bi   *debug.BuildInfo
		want Stamp
	}{
		{"git, clean", git(""), built, Stamp{Date: "2026-12-02T02:04:05Z", Commit: "3fdc076"}},
		{"git, dirty", git(" M bench/README.md"), nil, Stamp{Date: "2026-12-02T02:04:05Z", Commit: "3fdc076", Dirty: true}},
		{"build info", noGit, built, Stamp{Date: "2026-12-02T02:04:05Z", Commit: "44b9788", Dirty: true}},
		{"build info without vcs", noGit, &debug.BuildInfo{}, Stamp{Date: "2026-12-02T02:04:05Z"}},
		{"nothing", noGit, nil, Stamp{Date: "2026-12-02T02:04:05Z"}},
	}
	for _, tt := range tests {
		if got := stamp(at, tt.git, tt.bi); got != tt.want {
			t.Errorf("%s: stamp() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestNowInRepo checks the real sources: the tests run inside the
// repository, so git knows the commit.
func TestNowInRepo(t *testing.T) {
	if _, err := gitCommand("rev-parse", "HEAD"); err != nil {
		t.Skipf("git cannot read this repository here: %v", err)
	}
	s := Now()
	if len(s.Commit) < shortHash {
		t.Errorf("Now().Commit = %q, want a short hash", s.Commit)
	}
	if _, err := time.Parse(time.RFC3339, s.Date); err != nil {
		t.Errorf("Now().Date = %q: %v", s.Date, err)
	}
}
