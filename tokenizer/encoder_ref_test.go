package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"

	"conform/internal/sharedtest"
)

// refCase is one line of ../shared/vocab/*/reference.jsonl: a text and the
// ids the HuggingFace tokenizers library gives it (add_special_tokens=False).
type refCase struct {
	Text string    `json:"text"`
	IDs  []TokenID `json:"ids"`
}

func readJSONL[T any](t testing.TB, path string, limit int, f func(i int, v T)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for i := 0; sc.Scan() && (limit <= 0 || i < limit); i++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		f(i, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// sharedPathFor returns the reference.jsonl of a ../shared vocabulary.
func sharedPathFor(t testing.TB, name string) string {
	return sharedtest.Path(t, "vocab", name, "reference.jsonl")
}

var sharedVocabs = []string{"llama3_1", "qwen3", "llama2", "gemma3"}

func TestEncodeReference(t *testing.T) {
	for _, name := range sharedVocabs {
		t.Run(name, func(t *testing.T) {
			_, enc, _ := sharedHF(t, name)
			n := 0
			readJSONL(t, sharedPathFor(t, name), 0, func(i int, c refCase) {
				n++
				if got := enc.Encode(c.Text); !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
					t.Errorf("Encode(%s) =\n %v, want\n %v", strconv.Quote(c.Text), got, c.IDs)
				}
			})
			if n == 0 {
				t.Fatal("reference.jsonl has no cases")
			}
		})
	}
}
