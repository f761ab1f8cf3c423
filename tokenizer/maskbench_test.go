package tokenizer

import (
	"os"
	"slices"
	"strconv"
	"testing"

	"conform/internal/sharedtest"
)

// maskBenchAllEnv makes TestEncodeMaskBench check all 5,700 MaskBench
// schemas instead of the first maskBenchShort.
const (
	maskBenchAllEnv = "CONFORM_MASKBENCH_ALL"
	maskBenchShort  = 500
)

type maskBenchSchema struct {
	ID    string `json:"id"`
	Tests []struct {
		Text string `json:"text"`
	} `json:"tests"`
}

type maskBenchTokens struct {
	ID     string      `json:"id"`
	Tokens [][]TokenID `json:"tokens"` // nil entry: text not valid UTF-8
}

// TestEncodeMaskBench checks that the Llama-3.1 encoder reproduces the
// reference token ids of MaskBench's test instances exactly.
func TestEncodeMaskBench(t *testing.T) {
	_, enc, _ := sharedHF(t, "llama3_1")
	limit := maskBenchShort
	if os.Getenv(maskBenchAllEnv) != "" {
		limit = 0
	}
	var want []maskBenchTokens
	readJSONL(t, sharedtest.Path(t, "maskbench", "dev.tokens.llama3_1.jsonl"), limit, func(_ int, v maskBenchTokens) {
		want = append(want, v)
	})
	var texts, same, skipped, schemas int
	readJSONL(t, sharedtest.Path(t, "maskbench", "dev.jsonl"), limit, func(i int, s maskBenchSchema) {
		schemas++
		if i >= len(want) || want[i].ID != s.ID || len(want[i].Tokens) != len(s.Tests) {
			t.Fatalf("dev.jsonl line %d (%s) does not line up with dev.tokens.llama3_1.jsonl", i+1, s.ID)
		}
		for j, tc := range s.Tests {
			w := want[i].Tokens[j]
			if w == nil {
				skipped++
				continue
			}
			texts++
			got := enc.Encode(tc.Text)
			if slices.Equal(got, w) || len(got) == 0 && len(w) == 0 {
				same++
				continue
			}
			if texts-same <= 10 {
				t.Errorf("%s test %d: Encode(%s) =\n %v, want\n %v", s.ID, j, strconv.Quote(tc.Text), got, w)
			}
		}
	})
	t.Logf("MaskBench llama3_1: %d schemas, %d/%d texts exact (%.4f%%), %d without reference ids",
		schemas, same, texts, 100*float64(same)/float64(max(texts, 1)), skipped)
	if texts == 0 {
		t.Fatal("no MaskBench texts were checked")
	}
	if same != texts {
		t.Errorf("%d of %d MaskBench texts differ from the reference", texts-same, texts)
	}
}
