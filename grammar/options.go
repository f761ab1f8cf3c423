package grammar

// WhitespaceMode selects what the grammar allows between JSON tokens.
type WhitespaceMode uint8

// The whitespace modes. The zero value is Flexible.
const (
	// Flexible allows up to Options.MaxWhitespace JSON whitespace characters
	// wherever JSON allows whitespace, except before or after the top-level
	// value. It accepts both compact output and the ", " / ": " separators
	// of Python's json.dumps, and lets a model pretty-print, but never lets it
	// loop on whitespace.
	Flexible WhitespaceMode = iota
	// Compact allows no whitespace at all: the fewest DFA states and the
	// most forced bytes.
	Compact
)

// Strictness says what happens to a keyword this package cannot enforce.
type Strictness uint8

// The strictness levels. The zero value is Strict.
const (
	// Strict refuses the schema with an *Error.
	Strict Strictness = iota
	// Lenient ignores the keyword and reports a Warning. Output may then
	// violate that keyword (never the others).
	Lenient
)

// ExtrasMode says what an object schema without additionalProperties
// (or unevaluatedProperties) allows besides its declared properties.
type ExtrasMode uint8

// The extras modes. The zero value is ExtrasAllowed, JSON Schema's default.
const (
	// ExtrasAllowed admits extra properties (after the declared ones, or
	// anywhere with OrderAny) with any value up to Options.AnyValueDepth,
	// as JSON Schema says. The free-form value is deferred, so it costs
	// nothing until a generation writes an extra property.
	ExtrasAllowed ExtrasMode = iota
	// ExtrasForbidden treats a missing additionalProperties as false (what
	// OpenAI's strict mode requires and what most engines do by default):
	// far smaller automata, and still sound, but valid documents with
	// extra keys are refused.
	ExtrasForbidden
)

// PropertyOrder says in which order an object's properties may appear.
type PropertyOrder uint8

// The property orders. The zero value is OrderSchema.
const (
	// OrderSchema writes declared properties in the order of "properties"
	// (then names found only in "required"), extra properties after them:
	// the order OpenAI's structured outputs promise, and the one a model
	// prompted with the schema expects.
	OrderSchema PropertyOrder = iota
	// OrderAny accepts the properties of an object in any order, each at
	// most once, extra properties anywhere among them, as JSON Schema
	// allows: what a validator accepts. The automaton tracks the set of
	// properties written (fsm.Perm), built lazily, so only the orders a
	// text actually takes cost anything; the whole eager DFA of a wide
	// object is exponential. Objects with minProperties/maxProperties, or
	// more than fsm.MaxPermMembers properties, keep the schema order.
	OrderAny
)

// Options configure the compilation. The zero value means the defaults below.
type Options struct {
	Whitespace WhitespaceMode
	// MaxWhitespace bounds a run of whitespace in Flexible mode. Default 4:
	// the ", " and ": " separators, or a newline plus an indent of up to
	// three. Every whitespace gap costs about one DFA state per allowed
	// character, and the gaps multiply with everything around them: on a
	// 300-schema MaskBench sample the default of 20 that this package first
	// had made time-to-first-mask p50 3x slower (29 ms against 9 ms on a
	// loaded 2-core machine) and passed fewer schemas (83.3% against 83.7%,
	// as more hit the automaton budgets). Callers that want deep
	// pretty-printing raise it, at that cost.
	MaxWhitespace int
	// Extras: ExtrasAllowed (default) or ExtrasForbidden.
	Extras ExtrasMode
	// PropertyOrder: OrderSchema (default) or OrderAny.
	PropertyOrder PropertyOrder
	// Escapes: which JSON encodings strings admit; EscapesNeeded (default)
	// or EscapesAll.
	Escapes Escapes
	// Strictness: Strict (default) or Lenient.
	Strictness Strictness
	// MaxDepth bounds recursion: how many $ref expansions that re-enter a
	// target already being expanded may be nested. Default 5. A recursive
	// schema (a tree, a linked list) is compiled at BaseDepth (3) first;
	// when that compile was small, it is compiled again at MaxDepth, or
	// else at BaseDepth+1, whichever first compiles within a small work
	// budget (Result.Depth says which); deeper ones cost tens of
	// milliseconds more on some schemas. Deeper alternatives are
	// dropped, and a schema with no finite alternative is unsatisfiable.
	// The bound is global rather than per target so that k mutually
	// recursive definitions cost 3 levels, not 3k. On MaskBench, depth 3
	// rejected valid instances of 4 schemas (expression trees 5 deep).
	MaxDepth int
	// AnyValueDepth bounds the nesting of free-form values ({} or true).
	// Default 16. Each nested level is deferred (fsm.Defer): a constraint
	// builds it only when a generation reaches it, so the bound costs
	// nothing until used (the whole eager DFA, which Compile builds, still
	// roughly doubles with each level). On MaskBench, depth 2 rejected
	// valid instances of about 1% of the schemas, and depth 8 one
	// (Kubernetes kb_645: a whole Pod, managedFields 11 levels deep, under
	// an ObjectMeta root's free-form extra property); 16 cost nothing
	// measurable there.
	AnyValueDepth int
	// MaxStringLength lowers explicit maxLength values above it to it on
	// strings with a pattern, format or not. Default 256. A bounded
	// string costs NFA states per character, and its intersection with a
	// pattern a product per character, so maxLength 32767 cannot be built
	// that way; accepting only the shorter strings is sound (every output
	// still validates). A plain string (no pattern, format or not) is
	// counted exactly up to 65,536 characters (lowered past that): its
	// optional characters come in deferred chunks (64 first, each later
	// one twice as long, up to MaxStringLength), built when a generation
	// reaches them.
	MaxStringLength int
	// MaxArrayItems lowers explicit maxItems values above it to it.
	// Default 64. Each allowed item is a copy of the item's automaton (the
	// count is a bounded repeat), so maxItems 1000 over objects cannot be
	// built; accepting only the shorter arrays is sound.
	MaxArrayItems int
	// MaxSchemaBytes bounds the schema text. Default 4 MiB (llguidance
	// handles schemas of that size).
	MaxSchemaBytes int
	// MaxSchemaDepth bounds the JSON nesting of the schema text. Default 256.
	MaxSchemaDepth int
	// MaxNodes bounds the schema records collected and emitted for one
	// schema (a guard against exponential $ref/anyOf expansion; realistic
	// schemas need hundreds). Default 50,000, about 0.1 s of work.
	MaxNodes int
	// MaxAnyOfProduct bounds the branches made when several anyOf/oneOf
	// groups apply to one schema node (their cross product). Default 64.
	MaxAnyOfProduct int
}

func (o Options) withDefaults() Options {
	if o.MaxWhitespace <= 0 {
		o.MaxWhitespace = 4
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 5
	}
	if o.AnyValueDepth <= 0 {
		o.AnyValueDepth = 16
	}
	if o.MaxArrayItems <= 0 {
		o.MaxArrayItems = 64
	}
	if o.MaxStringLength <= 0 {
		o.MaxStringLength = 256
	}
	if o.MaxSchemaBytes <= 0 {
		o.MaxSchemaBytes = 4 << 20
	}
	if o.MaxSchemaDepth <= 0 {
		o.MaxSchemaDepth = 256
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 50_000
	}
	if o.MaxAnyOfProduct <= 0 {
		o.MaxAnyOfProduct = 64
	}
	return o
}
