// Package fsm turns regular expressions into byte-level deterministic
// automata, the form the token-mask machinery walks.
//
// # Pipeline
//
// A constraint arrives as a regex AST (*Node), built either by package
// grammar (JSON Schema → AST, with the constructors in build.go) or by one of
// the parsers here (Parse for the project dialect, ParseRegex for a user's
// plain regex, ParsePattern for a JSON Schema "pattern"). Compile then
//
//  1. builds a Thompson NFA over bytes by continuation passing, memoized on
//     (node, continuation), so a sub-node shared in the DAG with the same
//     continuation is built once; runes become UTF-8 byte sequences, and a
//     byte class of several ranges one state over a byte set;
//     intersections and complements are built as DFAs and spliced back in as
//     NFA fragments;
//  2. determinizes it by subset construction over byte equivalence classes;
//  3. trims it (states that cannot reach acceptance become the dead state 0);
//  4. minimizes it (Hopcroft/Valmari partition refinement) and renumbers it
//     canonically, dead state first, into a *DFA.
//
// Two AST nodes make the NFA itself lazy (lazy_nfa.go): Defer(x) is built
// as a placeholder that the determinizer expands the first time a DFA state
// reaches it, and Perm (members in any order, each at most once) creates
// the state for "these members written" the same way, so its 2^n subsets
// cost only those a text visits. Both have the same language as their
// plain expansion (tests compare minimized DFAs). A lazy constraint's
// compile still builds the first instance of the shallowest deferred
// operands, within a budget that grows with the schema (prebuild, unless
// Options.NoPrebuild), so a mask that first reaches a property's value
// stamps a copy instead of building it.
//
// CompileConstraint, what the server and the benchmarks use, stops after
// step 1 for the outer NFA: the constraint determinizes it lazily, creating
// a DFA state when a mask, Accept or Forced call first reaches it (lazy.go),
// so the time to the first mask no longer grows with the whole DFA; it is
// the same language, unminimized (equal masks are interned anyway). Compile
// (the whole minimized DFA) stays for products, complements, golden dumps
// and fsmdump. A lazy constraint also knows each state's NFA set, and marks
// the states whose set proves that no string-safe text can kill them
// (string bodies, extra keys, pattern bodies: safe.go), or no string-safe
// token (bounded string bodies with at least a token's length left), so
// the slicer ORs in every slice there without exploring. Its transition table, its NFA
// and the determinizer's per-NFA-state arrays move once into reserved
// address space when they get large (reserve.go), so growing them never
// stalls a mask on a copy; released reservations are pooled with their
// pages committed, and a new constraint starts in pooled ones when it can.
//
// A difference with a few strings (an extra key: any string but the
// declared names) is built by walking a trie of the strings beside the
// DFA, not by a product (product.go), and nodes that live as long as the
// process (Pin) keep their DFA across compiles.
//
// A constraint also knows, per state, the fewest tokens that complete the
// output (close.go): Matcher.MinTokens, which a server checks against
// max_tokens before generating, and Matcher.FillMaskWithin, the mask
// restricted to tokens after which the output can still be completed in
// the budget left, so that output cut by max_tokens is complete. The
// distances are found by a breadth-first search over token successors
// with a certificate of exactness, cached per state, and skipped when a
// cheaper bound (shortest NFA paths or byte distances over one-byte
// tokens) shows that the budget cannot bind; a budget that cannot bind
// costs what FillMask costs. When the searches run out of states, those
// bounds still close the output in time (close_upper.go).
//
// Every step runs under the budgets in Options (NFA states, DFA states and
// table bytes, determinization work, repeat counts, nesting depth, a time
// budget, and CompileConstraint's context) and fails with an *Error whose
// Code says which limit was hit and which carries the limit and the size
// reached, never with a hang or a panic. Options.Stats reports sizes and
// phase times.
//
// # Budgets
//
// A compiled constraint is a finished value: it is cached and shared by
// every request with the same schema, long after the request that compiled
// it. So the budgets come in two kinds.
//
//   - The call's: CompileConstraint's ctx and Options.Timeout bound the call
//     that compiles (the NFA, the prebuilt operands, the start state's row
//     and mask) and nothing after it. The constraint keeps neither, nor the
//     caller's Stats (compiler.endCall).
//   - The constraint's: NFA states, DFA states and table bytes (over what
//     has been built so far), determinization work of each sub-DFA, nesting
//     depth, and MaxExpansionWork for each expansion (one state's row,
//     with the deferred operands and sub-DFAs it builds). They depend on
//     nothing but the constraint and the states already built, so a failure
//     is the constraint's own: it is sticky on the constraint (every later
//     request that reaches the state gets the same error) as well as on the
//     matcher.
//
// A later expansion has no wall clock and does not look at the context of
// the request that triggers it, for two reasons. It cannot stop half way
// without spoiling the shared constraint: the NFA builder would be left in
// the middle of a fragment (memo entries pointing at states without their
// targets), and undoing that would cost a copy of the builder's state per
// expansion. And it needs none: MaxExpansionWork bounds the subset
// construction and product work it does, and MaxDFAStates and MaxDFABytes
// the size of each DFA it builds, so one expansion of an adversarial schema
// costs on the order of a second at worst, and one of a real schema a
// fraction of a millisecond. A request cancelled during an expansion lets
// it finish (every later request reuses the result) and sees its
// cancellation at its next step in the decode loop; a failure that depends
// on the clock or on one request, and so could differ from one request to
// the next, never reaches the constraint.
//
// The algorithms are explained where they live: nfa.go (continuation
// passing), utf8.go (UTF-8 range splitting), determinize.go (subset
// construction, closures, interning), minimize.go (trimming, Valmari's
// Hopcroft variant, canonical numbering), product.go (intersection,
// difference, complement), mask_slicer.go and safe.go.
//
// Helpers built on a *DFA: Matches, ShortestMatch, RandomWalk (random
// accepted strings for property tests) and IsEmpty (language emptiness, as
// grammar/ uses for oneOf disjointness via IsEmpty(And(a, b))). (*DFA).String
// and DumpNFA give deterministic dumps for table tests; cmd/fsmdump prints
// them for a pattern.
//
// # The project regex dialect
//
// String prints, and Parse reads, this dialect. It is a superset of the
// Python/RE2 core, matched against the whole input (full-match semantics):
//
//	x y           concatenation
//	x|y           alternation (loosest)
//	x&y           intersection: strings both match (binds tighter than |,
//	              looser than concatenation: ab&cd|e is ((ab)&(cd))|e)
//	~(x)          complement: every byte string x does not match
//	(?perm(S)(E)(M1)!(M2)…)  the members M1, M2, … in any order, each at
//	              most once (! marks a required one), separated by S, with
//	              any number of E items among them (fsm.Perm)
//	(?mod{M:R})   the decimal digit strings ([0-9]+) whose value modulo M
//	              is a remainder listed in R, numbers and ranges such as
//	              0,3-5 (fsm.Residues; fsm.Multiple(K) is (?mod{K:0}))
//	x* x+ x?      repetition; x{m} x{m,} x{m,n} x{,n}; a trailing ? (lazy)
//	              is accepted and ignored (same language)
//	(x) (?:x)     grouping; (?P<name>x) and (?<name>x) too (no captures)
//	(?:)          the empty string
//	[a-z\n] [^…]  a class of Unicode scalar values (negation is relative to
//	              all scalar values; surrogates never match). A ']' right
//	              after '[' or '[^' is literal. [^\x{0}-\x{10FFFF}] is the
//	              empty language.
//	.             any scalar value except \n ((?s:.) or (?s) include \n)
//	\y{80-BF,C0}  a raw byte class: one byte in the listed hex ranges. This
//	              is how bytes that are not valid UTF-8 (special-token
//	              markers, partial characters) are written.
//	\x{HHHH} \xHH \uHHHH \U00HHHHHH   a code point, matched as its UTF-8 bytes
//	\n \t \r \f \v \a \0              the usual controls
//	\d \w \s      ASCII classes [0-9], [0-9A-Za-z_], [\t\n\v\f\r ]
//	\D \W \S      their complements; \p{Greek} \pL \P{Lu}: Unicode
//	              categories and scripts from Go's tables
//	\. \* \& \~   any escaped ASCII punctuation is that character
//	^ $           accepted only at the start / end of a top-level
//	              alternative, where they are no-ops
//
// Lookarounds, backreferences, \b, \B, inner anchors, possessive
// quantifiers and inline flags other than s are rejected with ErrUnsupported
// and the offset of the construct.
//
// ParseRegex reads the same dialect without the three extensions (&, ~ and
// \y are literal characters or errors, as in Python), for user-supplied
// regexes. ParsePattern reads ECMA-262 patterns as JSON Schema uses them;
// see its documentation.
//
// # Conventions
//
// n is a *Node, d a *DFA, s a StateID; "dead" is DeadState (0). Limit
// errors carry the limit and the size reached.
package fsm
