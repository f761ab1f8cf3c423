// Package runinfo stamps a benchmark's JSON output with when and from
// which commit it was taken, so that a plot or a table made from the file
// later can say so (bench/README.md records every result with its date
// and commit).
//
// The commit comes from git in the working directory (`go run`, which the
// make targets use, does not stamp the binary with VCS information), and
// from the binary's build information when git is not there. A tree with
// uncommitted changes to tracked files is marked dirty: what ran was not
// exactly that commit.
package runinfo
