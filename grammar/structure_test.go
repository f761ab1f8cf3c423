package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"

	"conform/fsm"
)

func TestLiteralPrefix(t *testing.T) {
	tests := []struct {
		pattern, want string
	}{
		{`^title_[a-z]{2}$`, "title_"},
		{`^description_(?:[A-Za-z]{2,3}|x-[a-z]+)$`, "description_"},
		{`^(?:title|tiger)_x$`, "ti"},
		{`^(?:ab)+c$`, "ab"},
		{`^(?:ab)*c$`, ""},
		{`title_`, ""}, // unanchored: anything may come first
		{`^$`, ""},
		{`^a?b$`, ""},
	}
	for _, tt := range tests {
		n, err := parsePattern(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		got := literalPrefix(n)
		if got != tt.want {
			t.Errorf("literalPrefix(%s) = %q, want %q", tt.pattern, got, tt.want)
		}
		// The prefix must be a prefix of every string of the language.
		d, err := fsm.Compile(n, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			s := fsm.RandomWalk(d, rng, 40)
			if s != nil && !strings.HasPrefix(string(s), got) {
				t.Errorf("%s: %q does not start with %q", tt.pattern, s, got)
			}
		}
	}
	if !disjointPrefixes("title_", "description_") || disjointPrefixes("title_", "tit") || disjointPrefixes("", "a") {
		t.Error("disjointPrefixes")
	}
}
