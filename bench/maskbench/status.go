package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// The conformance ratchet: testdata/status.tsv holds the outcome of every
// dev schema (pass, or the status and, for a compile error, its cause) as
// the default protocol gives it, and TestConformanceRatchet runs the same
// protocol and compares. A schema that passed and no longer does, and any
// invalid instance accepted, fail the test; so does any other difference
// (an improvement included), so that the file is rewritten in the commit
// that changes it and a later regression cannot hide behind a stale entry.

// statusFile is the ratchet's file, relative to this package.
const statusFile = "testdata/status.tsv"

// statusHeader opens the file: what it is and how to rewrite it.
const statusHeader = `# MaskBench dev.jsonl: the status of every schema under the default protocol
# (Llama-3.1 tokenizer, strict, -property-order any). TestConformanceRatchet
# compares a fresh run with this file. Rewrite it with
#   CGO_ENABLED=0 go test ./bench/maskbench -run TestConformanceRatchet -update
# or  go run ./bench/maskbench ... -write-status bench/maskbench/testdata/status.tsv
# id<TAB>status[<TAB>cause of a compile error]
`

// statusLine is one schema's entry: its status, and for a compile error
// the cause the breakdown table uses (the code and keyword, not the
// message, so that a reworded message does not move the ratchet).
func statusLine(r *schemaResult) string {
	if r.Status == StatusCompileError {
		return string(r.Status) + "\t" + r.Cause
	}
	return string(r.Status)
}

// writeStatus writes the status of every result, in the data's order.
func writeStatus(w io.Writer, rs []*schemaResult) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(statusHeader)
	for _, r := range rs {
		fmt.Fprintf(bw, "%s\t%s\n", r.ID, statusLine(r))
	}
	return bw.Flush()
}

// writeStatusFile is writeStatus to a file (-write-status).
func writeStatusFile(path string, rs []*schemaResult) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeStatus(f, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// statusEntry is one line of a status file.
type statusEntry struct {
	id, status string // status: statusLine's form
}

// readStatus reads a status file written by writeStatus.
func readStatus(r io.Reader) ([]statusEntry, error) {
	var out []statusEntry
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, st, ok := strings.Cut(line, "\t")
		if !ok || id == "" || st == "" {
			return nil, fmt.Errorf("line %d: want id<TAB>status, got %q", n, line)
		}
		out = append(out, statusEntry{id, st})
	}
	return out, sc.Err()
}

// statusDiff is how a fresh run differs from a status file.
type statusDiff struct {
	regressed   []string // passed in the file, not now
	invalidated []string // an invalid instance accepted now
	improved    []string // passes now, did not in the file
	changed     []string // another change between two failing statuses
	missing     []string // in the file, not in the run
	added       []string // in the run, not in the file
}

// failed reports whether the run does not match the file.
func (d *statusDiff) failed() bool {
	return len(d.regressed)+len(d.invalidated)+len(d.improved)+len(d.changed)+len(d.missing)+len(d.added) > 0
}

// compareStatus compares a run's results with a status file's entries.
func compareStatus(want []statusEntry, rs []*schemaResult) *statusDiff {
	d := &statusDiff{}
	got := make(map[string]string, len(rs))
	for _, r := range rs {
		got[r.ID] = statusLine(r)
		if r.Status == StatusInvalidation {
			d.invalidated = append(d.invalidated, fmt.Sprintf("%s: %s", r.ID, r.Cause))
		}
	}
	seen := make(map[string]bool, len(want))
	for _, e := range want {
		seen[e.id] = true
		g, ok := got[e.id]
		switch {
		case !ok:
			d.missing = append(d.missing, e.id)
		case g == e.status:
		case e.status == string(StatusPass):
			d.regressed = append(d.regressed, fmt.Sprintf("%s: was pass, now %s", e.id, g))
		case g == string(StatusPass):
			d.improved = append(d.improved, fmt.Sprintf("%s: was %s, now pass", e.id, e.status))
		default:
			d.changed = append(d.changed, fmt.Sprintf("%s: was %s, now %s", e.id, e.status, g))
		}
	}
	for _, r := range rs {
		if !seen[r.ID] {
			d.added = append(d.added, r.ID)
		}
	}
	return d
}
