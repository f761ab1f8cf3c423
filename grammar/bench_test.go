package grammar

import (
	"os"
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

// BenchmarkCompileSchemaFile measures schema → AST for the schema in the
// file CONFORM_BENCH_SCHEMA names (skipped without it), default options:
// for profiling one slow compile, e.g. a MaskBench schema written out.
func BenchmarkCompileSchemaFile(b *testing.B) {
	path := os.Getenv("CONFORM_BENCH_SCHEMA")
	if path == "" {
		b.Skip("CONFORM_BENCH_SCHEMA not set")
	}
	schema, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := CompileSchema(schema, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
