package grammar

import (
	"strings"
	"testing"

	"conform/fsm"
)

// TestMemoAcrossRecursion: a definition that cannot reach the $ref
// expansions in progress is compiled once, however deep in a recursion it
// is used, so a recursive document whose every level uses a wide shared
// definition stays within a small work budget.
func TestMemoAcrossRecursion(t *testing.T) {
	var alts []string
	for i := 0; i < 12; i++ {
		alts = append(alts, `{"type":"object","properties":{"k`+string(rune('a'+i))+`":{"type":"integer"}},"required":["k`+string(rune('a'+i))+`"],"additionalProperties":false}`)
	}
	var props []string
	for i := 0; i < 6; i++ {
		props = append(props, `"p`+string(rune('a'+i))+`":{"$ref":"#/$defs/leaf"}`)
	}
	schema := `{"$defs":{"leaf":{"anyOf":[` + strings.Join(alts, ",") + `]},` +
		`"node":{"type":"object","properties":{` + strings.Join(props, ",") + `,"kids":{"type":"array","items":{"$ref":"#/$defs/node"}},"other":{"$ref":"#/$defs/other"}},"additionalProperties":false},` +
		`"other":{"type":"object","properties":{"back":{"$ref":"#/$defs/node"},"leaf":{"$ref":"#/$defs/leaf"}},"additionalProperties":false}},` +
		`"$ref":"#/$defs/node"}`
	checkLangTests(t, []langTest{{"recursive-with-shared-leaf", schema,
		[]string{`{}`, `{"pa":{"ka":1},"kids":[{"pb":{"kl":2},"kids":[{"other":{"leaf":{"kc":3}}}]}]}`},
		[]string{`{"pa":{"ka":"x"}}`, `{"kids":[{"pa":{}}]}`, `{"other":{"back":{"pz":1}}}`}}})
	// The old key (every active target) expanded the leaf once per
	// context: well over this budget.
	if _, err := CompileSchema([]byte(schema), Options{MaxNodes: 400}); err != nil {
		t.Errorf("CompileSchema with MaxNodes 400: %v", err)
	}
}

// TestOneOfPatternComplementsShared: an overlapping oneOf of string
// patterns excludes each pattern from every other branch. Each pattern's
// JSON-string language is one node, used positively in its own branch and
// complemented in the others through one complement node, so a constraint
// determinizes each language once (MaskBench dein.json's URL pattern was
// built three times, 130–180 ms at its first mask, before).
func TestOneOfPatternComplementsShared(t *testing.T) {
	schema := `{"oneOf": [{"type": "string", "pattern": "^a+$"}, {"type": "string", "pattern": "^[ab]+$"}, {"type": "string", "pattern": "b$"}]}`
	checkLangTests(t, []langTest{{"three-patterns", schema,
		[]string{`"cb"`, `"ba"`, `"xb"`, `"bba"`},
		[]string{`"a"`, `"aa"`, `"b"`, `"ab"`, `"c"`, `""`, `"abc"`}}})
	res, err := CompileSchema([]byte(schema), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every complemented language is also a pattern's own branch: the
	// same node, reached outside a complement.
	negated := map[*fsm.Node]bool{}  // the nodes complements take
	positive := map[*fsm.Node]bool{} // the nodes reached outside any complement
	seen := map[*fsm.Node]bool{}
	var walk func(n *fsm.Node, underNot bool)
	walk = func(n *fsm.Node, underNot bool) {
		if !underNot {
			positive[n] = true
		}
		if seen[n] && !underNot {
			return
		}
		seen[n] = true
		if n.Op == fsm.OpNot {
			negated[n.Subs[0]] = true
			walk(n.Subs[0], true)
			return
		}
		for _, s := range n.Subs {
			walk(s, underNot)
		}
	}
	walk(res.Node, false)
	// Three patterns, each excluded from two branches: three complemented
	// languages, each a pattern's own (not a union of the excluded
	// patterns, nor a pattern encoded anew for each exclusion).
	shared := 0
	for n := range negated {
		if positive[n] {
			shared++
		}
	}
	if len(negated) != 3 || shared != 3 {
		t.Errorf("%d complemented languages, %d of them shared with a branch, want 3 and 3:\n%v", len(negated), shared, res.Node)
	}
}
