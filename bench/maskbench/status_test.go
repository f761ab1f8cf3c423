package main

import (
	"bytes"
	"flag"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"conform/grammar"
	"conform/internal/sharedtest"
)

var update = flag.Bool("update", false, "rewrite "+statusFile+" from this run")

// ratchetTimeout is the per-schema budget of the ratchet's run: far above
// the slowest schema (a 1.7 s compile), so that a loaded CI machine never
// turns a pass into a timeout, while a hang still ends.
const ratchetTimeout = 5 * time.Minute

// TestConformanceRatchet runs the MaskBench protocol over every dev schema
// (what make maskbench runs, on two threads, without the report) and
// compares each schema's status with testdata/status.tsv: a schema that
// passed must still pass, no invalid instance may be accepted, and any
// other change (an improvement too) means the file is to be rewritten in
// the same commit (-update). Skipped without ../shared, and in a build
// with cgo unless CONFORM_RATCHET=1: the protocol needs no cgo, and make
// test runs the package in both passes.
func TestConformanceRatchet(t *testing.T) {
	data := sharedtest.Path(t, "maskbench", "dev.jsonl")
	tok := sharedtest.Path(t, "vocab", "llama3_1", "tokenizer.json")
	if withCgo && os.Getenv("CONFORM_RATCHET") == "" {
		t.Skip("the ratchet runs in the CGO_ENABLED=0 pass of make test (set CONFORM_RATCHET=1 to run it here)")
	}
	if testing.Short() && !*update {
		t.Skip("the ratchet runs the whole protocol (~1 min of CPU): skipped with -short")
	}
	cfg := config{data: data, tokenizer: tok, engine: "conform", threads: 2, every: 1,
		order: grammar.OrderAny, timeout: ratchetTimeout}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(3 << 30))
	entries, err := loadEntries(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := newEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rs := runAll(eng, entries, cfg)
	passing := 0
	for _, r := range rs {
		if r.Status == StatusPass {
			passing++
		}
	}
	t.Logf("%d schemas, %d passing, in %v", len(rs), passing, time.Since(start).Round(time.Second))
	if *update {
		if err := writeStatusFile(statusFile, rs); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", statusFile)
		return
	}
	b, err := os.ReadFile(statusFile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readStatus(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", statusFile, err)
	}
	d := compareStatus(want, rs)
	report := func(what string, xs []string) {
		if len(xs) == 0 {
			return
		}
		const show = 40
		n, more := len(xs), ""
		if len(xs) > show {
			more = "\n  ..."
			xs = xs[:show]
		}
		t.Errorf("%s (%d):\n  %s%s", what, n, strings.Join(xs, "\n  "), more)
	}
	report("REGRESSED: schemas that passed and no longer do", d.regressed)
	report("INVALID INSTANCES ACCEPTED", d.invalidated)
	report("improved: schemas that pass now (rewrite the file with -update in this commit)", d.improved)
	report("changed: a failing schema fails differently (rewrite the file with -update)", d.changed)
	report("in the file but not in the data", d.missing)
	report("in the data but not in the file", d.added)
}

// TestCompareStatus checks the ratchet's comparison on a small table.
func TestCompareStatus(t *testing.T) {
	file := statusHeader + "a\tpass\nb\tpass\nc\tcompile_error\tgrammar: unsupported uniqueItems\nd\tvalidation_error\ne\tpass\ngone\tpass\n"
	want, err := readStatus(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	rs := []*schemaResult{
		{ID: "a", Status: StatusPass},
		{ID: "b", Status: StatusValidation, Cause: "test #1: valid instance rejected at token 3 of 9"},
		{ID: "c", Status: StatusPass},
		{ID: "d", Status: StatusCompileError, Cause: "grammar: unsupported contains"},
		{ID: "e", Status: StatusInvalidation, Cause: "test #2: invalid instance accepted"},
		{ID: "new", Status: StatusPass},
	}
	d := compareStatus(want, rs)
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("regressed", d.regressed, "b: was pass, now validation_error", "e: was pass, now invalidation_error")
	check("invalidated", d.invalidated, "e: test #2: invalid instance accepted")
	check("improved", d.improved, "c: was compile_error\tgrammar: unsupported uniqueItems, now pass")
	check("changed", d.changed, "d: was validation_error, now compile_error\tgrammar: unsupported contains")
	check("missing", d.missing, "gone")
	check("added", d.added, "new")
	if !d.failed() {
		t.Error("failed() = false, want true")
	}
	var buf bytes.Buffer
	if err := writeStatus(&buf, rs[:1]); err != nil {
		t.Fatal(err)
	}
	back, err := readStatus(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := compareStatus(back, rs[:1]); d.failed() {
		t.Errorf("a written file does not compare equal to its run: %+v", d)
	}
	if _, err := readStatus(strings.NewReader("no-tab-here\n")); err == nil {
		t.Error("readStatus accepted a line without a status")
	}
}
