package grammar

import (
	"testing"
)

var benchSchema = []byte(`{"type":"object","properties":{
 "id":{"type":"integer","minimum":1},
 "name":{"type":"string","maxLength":40},
 "email":{"type":"string","format":"email"},
 "tags":{"type":"array","items":{"type":"string"},"maxItems":5},
 "status":{"enum":["active","inactive","banned"]},
 "score":{"type":"number","minimum":0,"maximum":100},
 "address":{"$ref":"#/$defs/address"}},
 "required":["id","name"],
 "$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string","pattern_note":"x"}},"additionalProperties":false}}}`)

// BenchmarkCompileSchema measures schema → AST (not the DFA).
func BenchmarkCompileSchema(b *testing.B) {
	for b.Loop() {
		if _, err := CompileSchema(benchSchema, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
