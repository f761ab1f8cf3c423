package main

import (
	"errors"
	"testing"

	"conform/grammar"
)

// TestCompileAnnotated checks -unknown-formats annotate: a schema refused
// only for an unknown format compiles, as a plain string; one that also
// needs another relaxation keeps its strict error.
func TestCompileAnnotated(t *testing.T) {
	e := &conformEngine{gopts: grammar.Options{}, annotateFormats: true}
	tests := []struct {
		name   string
		schema string
		ok     bool
	}{
		{"unknown-format", `{"type":"string","format":"path"}`, true},
		{"unknown-format-nested", `{"type":"object","properties":{"p":{"type":"string","format":"semver"}}}`, true},
		// Refused first for the format; lenient mode also treats the
		// oneOf as an anyOf, so the strict error stands.
		{"unknown-format-and-overlap", `{"type":"object","properties":{"a":{"type":"string","format":"path"},"b":{"oneOf":[{"type":"string","format":"uri-reference"},{"type":"string","pattern":"^2"}]}}}`, false},
		{"overlap-only", `{"oneOf":[{"type":"string","format":"uri-reference"},{"type":"string","pattern":"^2"}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, strictErr := grammar.CompileSchema([]byte(tt.schema), e.gopts)
			var ge *grammar.Error
			if !errors.As(strictErr, &ge) {
				t.Fatalf("strict compile: %v; the test needs a refused schema", strictErr)
			}
			if want := tt.name != "overlap-only"; want != (ge.Code == grammar.CodeUnknownFormat) {
				t.Fatalf("strict error %v: the case needs another first error", strictErr)
			}
			res, err := e.compileAnnotated([]byte(tt.schema), strictErr)
			if tt.ok != (err == nil) {
				t.Fatalf("compileAnnotated: err = %v, want ok = %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, strictErr) {
				t.Errorf("error %v, want the strict error %v", err, strictErr)
			}
			if err == nil && len(res.Warnings) == 0 {
				t.Errorf("no warning for the unknown format")
			}
		})
	}
}
