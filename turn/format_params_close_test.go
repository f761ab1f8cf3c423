package turn

import (
	"encoding/json"
	"testing"

	"conform/fsm"
	"conform/grammar"
)

// TestJSONCannotHold: the close markers of qwen3_coder and minimax_m2 (and
// their borders) cannot occur in a JSON text, glm45's can; checked on the
// markers and by fsm on JSON value languages: the values intersected with
// "contains the word" are empty exactly when jsonCannotHold says so.
func TestJSONCannotHold(t *testing.T) {
	for _, tc := range []struct {
		w    string
		want bool
	}{
		{"\n</parameter>\n", true}, // qwen3_coder's close
		{"\n</parameter>", true},   // its border ban
		{"</parameter>\n", true},   // minimax_m2's close: ">\n"
		{"</arg_value>", false},    // glm45's: fits in a string
		{"\n\n", false},            // whitespace
		{"]\n}", false},            // structure around a newline
		{"e\n", false},             // "true\n"
		{"\"\n", false},            // a string's end, then a newline
		{"x\ty", true},
		{"", false},
	} {
		if got := jsonCannotHold(tc.w); got != tc.want {
			t.Errorf("jsonCannotHold(%q) = %v, want %v", tc.w, got, tc.want)
		}
	}
	g := grammar.Options{AnyValueDepth: 2, Extras: grammar.ExtrasAllowed, Strictness: grammar.Lenient}
	for _, schema := range []string{`{}`, `{"type": "object"}`, `{"type": "array", "items": {"type": "string"}}`, `{"type": "string"}`, `{"enum": ["a\n<b", 1, null]}`} {
		res, err := grammar.CompileSchema(json.RawMessage(schema), g)
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		for _, w := range []string{"\n</parameter>\n", "\n</parameter>", "</parameter>\n", "</arg_value>", "\n\n", "\"\n"} {
			d, err := fsm.Compile(fsm.And(res.Node, fsm.Cat(anyBytes, fsm.Lit(w), anyBytes)), fsm.Options{})
			if err != nil {
				t.Fatalf("%s ∧ contains %q: %v", schema, w, err)
			}
			empty := true
			for _, a := range d.Accept {
				empty = empty && !a
			}
			if jsonCannotHold(w) && !empty {
				t.Errorf("%s: a JSON value contains %q, which jsonCannotHold says none does", schema, w)
			}
			// And where the test says nothing, the ban is needed: a
			// string can hold glm45's close.
			if w == "</arg_value>" && schema == `{"type": "string"}` && empty {
				t.Errorf("%s: no JSON string contains %q", schema, w)
			}
		}
	}
}
