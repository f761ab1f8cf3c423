// Package grammar turns the constraints a request can carry (a JSON Schema,
// a plain regex, a list of choices) into the project's regex AST, fsm.Node,
// which fsm compiles to a byte-level DFA. It knows nothing about tokens.
//
// The pipeline for a schema, in words:
//
//	schema bytes
//	  → ordered JSON value (object key order kept: it fixes property order)
//	  → per schema node, a merged constraint record (the "IR"): $ref and
//	    allOf are merged into it, anyOf/oneOf become alternative records
//	  → an fsm.Node built with the fsm constructors: objects with linear
//	    optional-property continuations, arrays, JSON strings (every legal
//	    encoding of every accepted character), exact numeric ranges
//	  → fsm.Compile (in the caller).
//
// Soundness comes first: every byte string the returned node matches is a
// JSON text that validates against the schema. What cannot be enforced is
// refused in strict mode (the default) with an *Error that carries an
// ErrorCode and the RFC 6901 JSON Pointer of the offending schema node; in
// lenient mode it is ignored and reported as a Warning.
//
// Restrictions (sound under-approximations, documented here once):
//   - Properties appear in a fixed order: the order of "properties", then
//     names that appear only in "required". Extra properties allowed by
//     "additionalProperties" (true by default) appear after the declared ones.
//   - Free-form values ({} or true) and recursive $ref are unrolled to a
//     bounded depth (Options.AnyValueDepth, Options.MaxDepth); deeper
//     alternatives are dropped.
//   - Numbers with bounds or multipleOf are written without an exponent;
//     integers are written without a fraction or exponent and never as -0.
//   - Whitespace between tokens is bounded (Options.MaxWhitespace).
//   - Strings accept raw UTF-8, the short escapes and \uXXXX for control
//     characters (Options.Escapes = EscapesNeeded, the default), or every
//     JSON encoding (EscapesAll). Formats accept a documented subset of
//     their RFC syntax.
//   - oneOf is compiled as anyOf only when its branches are proven
//     disjoint (types, finite values, numeric intervals, string-language
//     emptiness, a required discriminator property, or a closed object
//     lacking a required property); otherwise strict mode refuses it.
//   - not is supported on leaf schemas and on {"required": [p]}.
//   - dependencies / dependentRequired / dependentSchemas become
//     anyOf[p absent, p present and the dependency].
//   - patternProperties: declared names take the schemas of the patterns
//     they match; other keys matching exactly one pattern take its schema;
//     keys matching several patterns are not produced.
//
// Refused in strict mode (warning and ignored in lenient mode):
// uniqueItems (unless maxItems ≤ 1), contains, if/then/else, unknown
// formats, unevaluatedItems, $dynamicRef/$recursiveRef, multipleOf that is
// neither an integer nor a power of ten, not on structured schemas.
package grammar
