package grammar

import "testing"

// TestMemoSharesRefTargets: the places that are only a $ref to one
// definition compile it once (memoName), in every draft's $ref semantics,
// and a $ref with siblings that apply (2020-12) does not share.
func TestMemoSharesRefTargets(t *testing.T) {
	for _, tt := range []struct {
		name, schema string
		a, b         string // two places
		shared       bool
	}{
		{"properties", `{"properties": {"a": {"$ref": "#/$defs/d"}, "b": {"$ref": "#/$defs/d"}}, "$defs": {"d": {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]}}}`,
			"/properties/a", "/properties/b", true},
		{"items and a property", `{"properties": {"a": {"$ref": "#/$defs/d"}}, "items": {"$ref": "#/$defs/d"}, "$defs": {"d": {"type": "string", "pattern": "^x+$"}}}`,
			"/properties/a", "/items", true},
		{"draft-07 siblings are ignored", `{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#/definitions/d", "maxLength": 2}, "b": {"$ref": "#/definitions/d"}}, "definitions": {"d": {"type": "string"}}}`,
			"/properties/a", "/properties/b", true},
		{"2020-12 siblings apply", `{"properties": {"a": {"$ref": "#/$defs/d", "maxLength": 2}, "b": {"$ref": "#/$defs/d"}}, "$defs": {"d": {"type": "string"}}}`,
			"/properties/a", "/properties/b", false},
		{"other definitions", `{"properties": {"a": {"$ref": "#/$defs/d"}, "b": {"$ref": "#/$defs/e"}}, "$defs": {"d": {"type": "string"}, "e": {"type": "string"}}}`,
			"/properties/a", "/properties/b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, err := decodeValue([]byte(tt.schema), 64)
			if err != nil {
				t.Fatal(err)
			}
			resolveNamedRefs(root)
			c := newCompiler(Options{}.withDefaults(), root)
			at := func(ptr string) sref {
				v, p, ok := resolvePointer(root, "#"+ptr)
				if !ok {
					t.Fatalf("no %s", ptr)
				}
				return sref{v, p}
			}
			na, err := c.emitList([]sref{at(tt.a)}, "#"+tt.a)
			if err != nil {
				t.Fatal(err)
			}
			nb, err := c.emitList([]sref{at(tt.b)}, "#"+tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if (na == nb) != tt.shared {
				t.Errorf("the nodes of %s and %s are one: %v, want %v (%s, %s)", tt.a, tt.b, na == nb, tt.shared, na, nb)
			}
			if na.String() != nb.String() && tt.shared {
				t.Errorf("different languages: %s, %s", na, nb)
			}
		})
	}
}
