package grammar

import (
	"strconv"
	"strings"
)

// KeywordRef is one keyword of a schema document and where it is: what an
// explanation of a schema lists, each with how it is enforced.
type KeywordRef struct {
	// Pointer is the RFC 6901 JSON Pointer of the schema object holding
	// the keyword ("" is the root), as in Error and Warning.
	Pointer string
	Keyword string
	// Annotation reports a keyword that never constrains a value: an
	// annotation (title, description, default, …), an identifier or
	// container ($id, $defs), or a keyword this package does not know,
	// which JSON Schema ignores (so does this package).
	Annotation bool
}

// asserting are the keywords this package reads as assertions (enforced,
// approximated or refused, never silently ignored); with annotations and
// unsupported they are every keyword it knows.
var asserting = map[string]bool{
	"type": true, "enum": true, "const": true, "nullable": true, "$ref": true,
	"properties": true, "patternProperties": true, "additionalProperties": true, "required": true,
	"propertyNames": true, "minProperties": true, "maxProperties": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"items": true, "prefixItems": true, "additionalItems": true, "minItems": true, "maxItems": true,
	"contains": true, "minContains": true, "maxContains": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "then": true, "else": true,
}

// ignoredKeyword reports whether k asserts nothing: an annotation, or a
// keyword this package does not know (JSON Schema ignores those). The
// package's private keywords ($conform:…) assert.
func ignoredKeyword(k string) bool {
	return annotations[k] || !asserting[k] && unsupported[k] == "" && !strings.HasPrefix(k, "$conform:")
}

// Keywords lists every keyword of every schema object of a schema
// document, in document order, parents before their subschemas. It
// decodes under the limits of opts (MaxSchemaBytes, MaxSchemaDepth) and
// fails as CompileSchema does on a document that is not JSON or is over
// them; it checks nothing else, so it lists the keywords of a schema that
// CompileSchema refuses, too. Subschemas are found under the keywords
// that hold them (properties, items, allOf, $defs, …); keywords inside
// values that are not schemas (enum, const, default, examples) are not
// keywords and are not listed.
func Keywords(schema []byte, opts Options) ([]KeywordRef, error) {
	opts = opts.withDefaults()
	root, err := decodeSchema(schema, opts)
	if err != nil {
		return nil, err
	}
	var out []KeywordRef
	listKeywords(root, "", &out)
	return out, nil
}

// listKeywords appends the keywords of the schema v at ptr and of its
// subschemas. The recursion is bounded by the decoder's depth limit.
func listKeywords(v *value, ptr string, out *[]KeywordRef) {
	if v == nil || v.k != kObject {
		return // a boolean schema has no keywords
	}
	for _, k := range v.keys {
		*out = append(*out, KeywordRef{Pointer: ptr, Keyword: k, Annotation: annotations[k] || !asserting[k] && unsupported[k] == "" && k != "if"})
	}
	for i, k := range v.keys {
		x, p := v.vals[i], ptr+"/"+escapePointer(k)
		switch k {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
			if x.k == kObject {
				for j, name := range x.keys {
					listKeywords(x.vals[j], p+"/"+escapePointer(name), out)
				}
			}
		case "items", "prefixItems", "allOf", "anyOf", "oneOf":
			if x.k == kArray {
				for j, s := range x.arr {
					listKeywords(s, p+"/"+strconv.Itoa(j), out)
				}
			} else {
				listKeywords(x, p, out)
			}
		case "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			listKeywords(x, p, out)
		}
	}
}
