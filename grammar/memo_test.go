package grammar

import (
	"strings"
	"testing"
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
