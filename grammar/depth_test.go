package grammar

import (
	"fmt"
	"strings"
	"testing"

	"conform/fsm"
)

// meshSchema is k definitions, each an object whose properties p0…p(k-1)
// are the k definitions: recursion whose compile grows like k^depth.
func meshSchema(k int) string {
	var defs []string
	for i := range k {
		var props []string
		for j := range k {
			props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/d%d"}`, j, j))
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{%s},"additionalProperties":false}`, i, strings.Join(props, ",")))
	}
	return fmt.Sprintf(`{"$defs":{%s},"$ref":"#/$defs/d0"}`, strings.Join(defs, ","))
}

// TestRecursionDeepening: a recursive schema whose compile at BaseDepth is
// small is compiled at MaxDepth, or else one level deeper, and otherwise
// stays at BaseDepth; an explicit MaxDepth is never exceeded.
func TestRecursionDeepening(t *testing.T) {
	const list = `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"additionalProperties":false}},"$ref":"#/$defs/n"}`
	tests := []struct {
		name      string
		schema    string
		maxDepth  int
		wantDepth int
	}{
		{"linked list, default", list, 0, 5},
		{"linked list, MaxDepth 3", list, 3, 3},
		{"linked list, MaxDepth 4", list, 4, 4},
		{"linked list, MaxDepth 2", list, 2, 2},
		{"mesh of 2, default", meshSchema(2), 0, 5},
		{"mesh of 4, MaxDepth 8: 8 passes the small budget, 4 does not", meshSchema(4), 8, 4},
		{"mesh of 5: too large at BaseDepth to try deeper", meshSchema(5), 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CompileSchema([]byte(tt.schema), Options{MaxDepth: tt.maxDepth, Whitespace: Compact})
			if err != nil {
				t.Fatal(err)
			}
			if res.Depth != tt.wantDepth || !res.Truncated {
				t.Errorf("Depth, Truncated = %d, %v; want %d, true", res.Depth, res.Truncated, tt.wantDepth)
			}
		})
	}

	// The language follows the depth: n "next" keys nested (the golden
	// recursive-ref is the default's regex) are accepted up to the depth.
	nest := func(n int) string { return strings.Repeat(`{"next":`, n) + `{}` + strings.Repeat(`}`, n) }
	for _, tc := range []struct {
		maxDepth, n int
		want        bool
	}{{0, 5, true}, {0, 6, false}, {3, 3, true}, {3, 4, false}} {
		res, err := CompileSchema([]byte(list), Options{MaxDepth: tc.maxDepth, Whitespace: Compact})
		if err != nil {
			t.Fatal(err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fsm.Matches(d, []byte(nest(tc.n))); got != tc.want {
			t.Errorf("MaxDepth %d: a list %d deep accepted %v, want %v", tc.maxDepth, tc.n, got, tc.want)
		}
	}
}

// TestRecursionDeepeningNoRecursion: a schema without recursion is
// compiled once, at BaseDepth, and not marked truncated.
func TestRecursionDeepeningNoRecursion(t *testing.T) {
	res, err := CompileSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Truncated || res.Depth != BaseDepth {
		t.Errorf("Depth, Truncated = %d, %v; want %d, false", res.Depth, res.Truncated, BaseDepth)
	}
}
