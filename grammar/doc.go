// Package grammar turns the constraints a request can carry (a JSON Schema,
// a plain regex, a list of choices) into the project's regex AST, fsm.Node,
// which fsm compiles to a byte-level DFA. It knows nothing about tokens.
//
// The pipeline for a schema, in words:
//
//	schema bytes
//	  → ordered JSON value (object key order kept: it fixes property order)
//	  → $refs by anchor ("#name": $anchor, or a draft-04..07 id "#name")
//	    or through the root's $id rewritten as JSON Pointers (refs.go)
//	  → per schema node, a merged constraint record (the "IR"): $ref and
//	    allOf are merged into it, anyOf/oneOf become alternative records
//	    (in a document declaring drafts 3 to 7, an object with $ref is the
//	    reference alone: its siblings are ignored, as those drafts say)
//	  → an fsm.Node built with the fsm constructors: objects with linear
//	    optional-property continuations, arrays, JSON strings (every legal
//	    encoding of every accepted character), exact numeric ranges
//	  → fsm.CompileConstraint or fsm.Compile (in the caller).
//
// Soundness comes first: every byte string the returned node matches is a
// JSON text that validates against the schema. What cannot be enforced is
// refused in strict mode (the default) with an *Error that carries an
// ErrorCode and the RFC 6901 JSON Pointer of the offending schema node; in
// lenient mode it is ignored and reported as a Warning.
//
// Restrictions (sound under-approximations, documented here once):
//   - With Options.PropertyOrder = OrderSchema (the default) properties
//     appear in a fixed order: the order of "properties", then names that
//     appear only in "required". Extra properties allowed by
//     "additionalProperties" (true by default) appear after the declared
//     ones. OrderAny accepts declared and extra properties in any order,
//     each declared one at most once (fsm.Perm: the automaton tracks the
//     set written, built lazily); objects with minProperties/maxProperties
//     or more than 64 properties keep the schema order.
//   - Free-form values ({} or true) and recursive $ref are unrolled to a
//     bounded depth (Options.AnyValueDepth, default 16, and Options.MaxDepth);
//     deeper alternatives are dropped. Property values, array items and
//     nested free-form levels are wrapped in fsm.Defer: a lazy constraint
//     builds them when a generation first reaches them, so neither the
//     depth nor the size of a schema is paid for before the first mask.
//   - Numbers with bounds, multipleOf or a not of those are written without an exponent;
//     integers are written without a fraction or exponent and never as -0.
//   - Whitespace between tokens is bounded (Options.MaxWhitespace).
//   - maxLength above Options.MaxStringLength (256) on a string with a
//     pattern, format or not, maxLength above 65,536 on a plain string, and
//     maxItems above Options.MaxArrayItems (64) are lowered to them: every
//     bounded position is a copy of its automaton (a plain string's
//     optional positions are deferred chunks of 64, 128, then
//     MaxStringLength, so its bound is exact).
//   - Strings accept raw UTF-8, the short escapes and \uXXXX for control
//     characters (Options.Escapes = EscapesNeeded, the default), or every
//     JSON encoding (EscapesAll). Formats accept a documented subset of
//     their RFC syntax.
//   - oneOf is compiled as anyOf when its branches are proven disjoint
//     (types, also through nested anyOf/oneOf; finite values; numeric
//     intervals; string-language emptiness (an enum by its strings); a required discriminator
//     property; closed objects that cannot share a required name or key).
//     Otherwise it is rewritten exactly where possible (oneof.go): branches
//     that differ only by presence tests become a bounded DNF of "k present"
//     / "k absent" (properties: {k: false}); finite branches are decided
//     value by value and removed from the others; in general branch i ∧ ¬
//     every other branch, when each negation is exact. One fallback is an
//     under-approximation: a property whose schema cannot be negated is
//     taken as absent only (used only when every other branch requires a
//     name of its own). What remains is refused in strict mode.
//   - if/then/else becomes anyOf[if ∧ then, ¬if ∧ else], and a structured
//     not N becomes the negation of N (oneof_ifthen.go), when the negation
//     is exact: type, const/enum, pattern, length and size bounds, numeric
//     bounds, required, properties (recursively), items (an array with
//     an item failing it: contains, or in draft 4 a private contains that
//     is compiled but never written into the document), allOf, anyOf, not,
//     patternProperties and additionalProperties (witnesses, witness.go:
//     some key matching the pattern, or neither declared nor matching a
//     pattern, with a failing value) and local $ref, to a bounded depth.
//     not on leaf schemas keeps its direct
//     construction (complemented string languages, excluded values,
//     numeric intervals subtracted from the number's interval, and the
//     multiples a not's multipleOf names: on integers in canonical
//     decimal, elsewhere in every exponent-free spelling, the record
//     then written without exponent).
//   - An enum/const next to a keyword the ordinary path refuses is decided
//     value by value (finite.go): each value is checked with
//     santhosh-tekuri/jsonschema against the schema locations it came from,
//     and the survivors are the language (exact; offline; bounded work).
//   - dependencies / dependentRequired / dependentSchemas become
//     anyOf[p absent, p present and the dependency].
//   - patternProperties: declared names take the schemas of the patterns
//     they match; other keys matching exactly one pattern take its schema;
//     keys matching several patterns take all their schemas (each set of
//     up to 6 overlapping patterns is its own key language; with more
//     patterns such keys are not produced).
//   - propertyNames: any string schema; every key language is intersected
//     with it.
//   - contains / minContains / maxContains (contains.go): each element is
//     counted (element schema ∧ contains schema) or not, and the array
//     carries the count, capped; with maxContains an uncounted element is
//     element ∧ ¬contains, so maxContains needs an exact negation (else it
//     is refused). Drafts 6 and 7 read contains alone, draft 4 not at all.
//   - Patterns with ^ and $ anywhere, with lookaheads in the top-level
//     sequence or in ((?!X).)*, and with word boundaries \b and \B in the
//     top-level sequence are exact (fsm.ParsePattern); a boundary keeps
//     non-ASCII characters away from itself, since validators disagree on
//     whether they are word characters.
//   - uniqueItems over a finite item domain (an items enum/const, each
//     value checked against the items schema by the reference validator;
//     no prefixItems or contains): the distinct values in any order,
//     between minItems and maxItems of them (fsm.PermCount).
//
// Refused in strict mode (warning and ignored in lenient mode) unless an
// enum/const at the same place makes the language finite: uniqueItems
// (unless maxItems ≤ 1 or the items are finite, as above), several contains on one array beyond at least one match each (at most 4: a subset of them matched so far), maxContains whose
// contains schema has no exact negation, unknown formats, unevaluatedItems,
// $dynamicRef/$recursiveRef, multipleOf p/q (lowest terms) with p over
// 65,536 or q over 1,000 (a multiple of p/q is I + j/q with the integer
// part I ≡ -j·q⁻¹ mod p: a remainder automaton on I's digits,
// fsm.Residues; on integers p/q is multipleOf p; divisors of 1000 are a
// suffix test, several divisors one automaton modulo their lcm),
// if/then/else and not whose negation is not exact (format, tuple
// items), oneOf that can be neither proven disjoint nor rewritten.
//
// Invalid in every mode, lenient included (CodeBadPattern, CodeInvalidSchema):
// a pattern that is not an ECMA-262 regex at all (such as "("; a valid one
// that fsm cannot enforce, such as a lookbehind, is what lenient mode drops),
// and a number anywhere in the schema that a 64-bit float cannot hold (such
// as "minimum": 1e400, which the client's JSON parser reads as infinity).
//
// Known limitation: extra properties (and patternProperties keys) are
// produced from a key language that excludes the declared names but not
// each other, so a text may repeat an extra key; validators keep the last
// value, and minProperties/maxProperties counts can then differ.
package grammar
