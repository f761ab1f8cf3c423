package grammar

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"conform/fsm"
	"conform/internal/sharedtest"
)

// TestMaskBenchStrings runs MaskBench's dev split at the string level:
// compile each schema (strict), then every valid text must match and every
// invalid one must not. Off unless CONFORM_MASKBENCH=1 (it takes a while);
// CONFORM_MASKBENCH_LIMIT=N stops after N schemas.
func TestMaskBenchStrings(t *testing.T) {
	if os.Getenv("CONFORM_MASKBENCH") == "" {
		t.Skip("set CONFORM_MASKBENCH=1 to run MaskBench at the string level")
	}
	path := sharedtest.Path(t, "maskbench", "dev.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	limit := 0
	fmt.Sscan(os.Getenv("CONFORM_MASKBENCH_LIMIT"), &limit)
	only := os.Getenv("CONFORM_MASKBENCH_ID")
	split := os.Getenv("CONFORM_MASKBENCH_SPLIT")
	var opts Options
	if o := os.Getenv("CONFORM_MASKBENCH_OPTS"); o != "" {
		if err := json.Unmarshal([]byte(o), &opts); err != nil {
			t.Fatalf("CONFORM_MASKBENCH_OPTS: %v", err)
		}
	}
	type test struct {
		Valid bool   `json:"valid"`
		Text  string `json:"text"`
	}
	type rec struct {
		ID     string          `json:"id"`
		Schema json.RawMessage `json:"schema"`
		Tests  []test          `json:"tests"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<20), 64<<20)
	var (
		schemas, passing, compileErr, fsmErr int
		validRejected, invalidAccepted       int
		validTests, invalidTests             int
		errCauses                            = map[string]int{}
		times                                []time.Duration
		worst                                []string
	)
	verbose := os.Getenv("CONFORM_MASKBENCH_VERBOSE") != ""
	grammarOnly := os.Getenv("CONFORM_MASKBENCH_GRAMMAR_ONLY") != "" // tally grammar errors only (fast)
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if only != "" && r.ID != only || !splitMatch(split, r.ID) {
			continue
		}
		if limit > 0 && schemas >= limit {
			break
		}
		schemas++
		start := time.Now()
		res, err := CompileSchema(r.Schema, opts)
		var d *fsm.DFA
		if grammarOnly {
			if el := time.Since(start); el > 200*time.Millisecond {
				t.Logf("slow grammar: %s %v (err %v)", r.ID, el, err)
			}
		}
		if err == nil && grammarOnly {
			passing++
			continue
		}
		if err == nil {
			d, err = fsm.Compile(res.Node, fsm.Options{})
			if err != nil {
				fsmErr++
				errCauses["fsm: "+fsmCause(err)]++
				if verbose {
					t.Logf("%s: fsm: %v", r.ID, err)
				}
				times = append(times, time.Since(start))
				continue
			}
		}
		el := time.Since(start)
		times = append(times, el)
		if el > time.Second {
			t.Logf("slow: %s %v (err %v)", r.ID, el, err)
		}
		if err != nil {
			compileErr++
			if ge, ok := err.(*Error); ok {
				cause := ge.Code.String()
				if ge.Keyword != "" {
					cause += " " + ge.Keyword
				}
				if ge.Code == CodeUnknownFormat {
					cause += " " + ge.Message[:strings.Index(ge.Message, ";")]
				}
				errCauses[cause]++
			} else {
				errCauses["other"]++
			}
			if verbose {
				t.Logf("%s: %v", r.ID, err)
			}
			continue
		}
		ok := true
		for _, tc := range r.Tests {
			got := fsm.Matches(d, []byte(tc.Text))
			if tc.Valid {
				validTests++
				if !got {
					validRejected++
					ok = false
					if verbose {
						t.Logf("%s: valid rejected: %.300s", r.ID, tc.Text)
					}
				}
			} else {
				invalidTests++
				if got {
					invalidAccepted++
					ok = false
					t.Errorf("%s: invalid accepted: %.300s", r.ID, tc.Text)
				}
			}
		}
		if ok {
			passing++
		}
		if el > 100*time.Millisecond {
			worst = append(worst, fmt.Sprintf("%s %v", r.ID, el))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	pct := func(p float64) time.Duration {
		if len(times) == 0 {
			return 0
		}
		return times[int(p*float64(len(times)-1))]
	}
	t.Logf("schemas %d, passing %d (%.1f%%), compile errors %d (grammar %d, fsm %d)", schemas, passing, 100*float64(passing)/float64(schemas), compileErr+fsmErr, compileErr, fsmErr)
	t.Logf("valid tests %d, rejected %d (%.2f%%); invalid tests %d, accepted %d", validTests, validRejected, 100*float64(validRejected)/float64(max(validTests, 1)), invalidTests, invalidAccepted)
	t.Logf("compile time p50 %v p90 %v p99 %v max %v", pct(0.5), pct(0.9), pct(0.99), pct(1))
	type kv struct {
		k string
		n int
	}
	var causes []kv
	for k, n := range errCauses {
		causes = append(causes, kv{k, n})
	}
	sort.Slice(causes, func(i, j int) bool {
		return causes[i].n > causes[j].n || causes[i].n == causes[j].n && causes[i].k < causes[j].k
	})
	for _, c := range causes {
		t.Logf("  %5d %s", c.n, c.k)
	}
	if len(worst) > 0 && verbose {
		t.Logf("slow: %s", strings.Join(worst, ", "))
	}
}

func fsmCause(err error) string {
	s := err.Error()
	if i := strings.Index(s, ":"); i > 0 {
		if j := strings.Index(s[i+1:], ":"); j > 0 {
			return s[:i+1+j]
		}
	}
	return s
}

// splitMatch selects ids by prefix; a leading "!" inverts it.
func splitMatch(split, id string) bool {
	if rest, ok := strings.CutPrefix(split, "!"); ok {
		return !strings.HasPrefix(id, rest)
	}
	return strings.HasPrefix(id, split)
}
