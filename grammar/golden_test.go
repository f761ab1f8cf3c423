package grammar

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.regex")

// TestGolden compiles testdata/golden/<case>.json and compares the AST's
// String() form with <case>.regex (rewrite with -update).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			schema, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := CompileSchema(schema, Options{AnyValueDepth: eagerAnyDepth})
			if err != nil {
				t.Fatalf("CompileSchema(%s) error: %v", f, err)
			}
			got := res.Node.String() + "\n"
			want := strings.TrimSuffix(f, ".json") + ".regex"
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(w) {
				t.Errorf("CompileSchema(%s).Node.String() =\n%s\nwant\n%s", f, got, w)
			}
		})
	}
}
