package fsm

import (
	"time"
)

// Options bounds and tunes Compile and CompileConstraint. The zero value
// means "all defaults"; a zero field takes its Default* value and a negative
// field means "no limit" (for tests and offline tools only: a server must
// keep budgets).
//
// Every limit is enforced while building, not estimated beforehand, so an
// oversized or adversarial input stops with an *Error carrying the limit and
// the size reached, instead of hanging or exhausting memory.
//
// Two kinds of budget: Timeout (and CompileConstraint's context) bound the
// one call that compiles, and only it; the others are deterministic, and
// they alone bound what a compiled lazy constraint builds later, when
// generations reach its states (MaxExpansionWork, and MaxNFAStates,
// MaxDFAStates and MaxDFABytes over everything built so far). A compiled
// constraint is shared by requests long after its compile, so what it
// builds must fail, if ever, for a reason that is the same for every
// request (see "Budgets" in doc.go).
type Options struct {
	MaxNFAStates int           // states of one Thompson NFA as compiled, twice that as a lazy constraint grows it (default DefaultMaxNFAStates)
	MaxDFAStates int           // states of one subset-construction or product DFA (default DefaultMaxDFAStates)
	MaxDFABytes  int           // transition-table bytes of one such DFA, states × classes × 4 (default DefaultMaxDFABytes)
	MaxWork      int64         // sum of NFA-set sizes processed by one determinization (default DefaultMaxWork)
	MaxRepeat    int           // largest m or n accepted in x{m,n} (default DefaultMaxRepeat)
	MaxDepth     int           // deepest AST nesting the compiler recurses into (default DefaultMaxDepth)
	Timeout      time.Duration // wall-clock budget of the compile call only, never of later lazy expansions (default DefaultTimeout)

	// MaxExpansionWork bounds one expansion of a lazy constraint (one
	// state's row, created when a mask, Accept or Forced call first needs
	// it): the determinization work of the row and of every intersection
	// or complement the deferred operands it builds need, plus the classes
	// of every product state, in MaxWork's units (default
	// DefaultMaxExpansionWork). It stands in for a wall clock, which an
	// expansion cannot have (doc.go).
	MaxExpansionWork int64

	// Stats, if non-nil, receives counters of the build (for fsmdump,
	// benchmarks and logs); it is written, never read.
	Stats *Stats

	// NoMinimize skips Hopcroft minimization (trimming still happens). Only
	// for debugging and for measuring what minimization buys.
	NoMinimize bool

	// NoPrebuild leaves every deferred operand of a lazy constraint
	// (CompileConstraint) to be built when a generation first reaches it,
	// instead of prebuilding the first ones in the compile (see
	// builder.prebuild): a quicker first mask, slower first visits. For
	// measuring what prebuilding buys, and for tests of both paths.
	NoPrebuild bool

	// productMin overrides lazyProductMin (tests: 1 builds every
	// intersection of two or more operands as a lazy product).
	productMin int
}

// Default budgets. They are sized for JSON-Schema constraints on a small
// server: generous for every realistic schema, small enough that the worst
// input costs well under a second of CPU and a few tens of MB.
const (
	// DefaultMaxNFAStates bounds the Thompson NFA. A JSON object with a few
	// hundred leaf values and bounded strings needs tens of thousands of NFA
	// states; 1M states are about 40 MB and take ~100 ms to build, which is
	// the most one request may spend before determinization even starts.
	// A lazy constraint's NFA may then grow to lazyNFAGrowth times the
	// bound as generations reach new parts.
	DefaultMaxNFAStates = 1_000_000

	// lazyNFAGrowth is how far past MaxNFAStates a lazy constraint's NFA
	// may grow after its compile: the compile refuses what is too large
	// up front (a 1 MB const), while the parts generations reach add up
	// over their length (on MaskBench the valid instances of 4,900 and
	// 5,900 tokens over detekt and Github_ultra o80235 reach just over
	// 1M states). 2M states are about 80 MB.
	lazyNFAGrowth = 2

	// DefaultMaxDFAStates bounds every DFA built (subset construction,
	// products, complements). llguidance caps its lexer at 250k states; at
	// ~50 byte classes × 4 B a 200k-state table is ~40 MB, and each state
	// later needs a token mask, so beyond this the mask store, not the DFA,
	// becomes the problem.
	DefaultMaxDFAStates = 200_000

	// DefaultMaxDFABytes bounds the transition table of one DFA under
	// construction. The state budget alone allows 200k × 256 classes × 4 B
	// = 200 MB; JSON automata have 40–80 classes, so 64 MiB admits every
	// DFA the state budget admits at realistic class counts while capping
	// the pathological many-class case.
	DefaultMaxDFABytes = 64 << 20

	// DefaultMaxWork bounds the sum of NFA-set sizes processed by subset
	// construction (each unit is a few ns of hashing and closure work), so
	// 20M units is roughly 0.1–0.3 s. It catches the case the state budget
	// cannot: few DFA states, each made of huge NFA sets (flat alternations
	// of thousands of strings).
	DefaultMaxWork = 20_000_000

	// DefaultMaxExpansionWork bounds one lazy expansion (a mask that first
	// reaches a state and builds what it needs): a few full-size
	// determinizations, roughly 0.4–1.2 s, the most one mask may stall on
	// building before the schema is judged too large for lazy use. Real
	// schemas need a thousandth of it (a format's or pattern's DFA is some
	// 10^5 units); the bound exists for adversarial ones, which without a
	// deadline could otherwise stall a mask for as long as their operands
	// take.
	DefaultMaxExpansionWork = 4 * DefaultMaxWork

	// DefaultMaxRepeat bounds the counts of x{m,n}. A bounded repeat is
	// unrolled, so maxLength 10,000 over a JSON string character is already
	// ~50k DFA states; larger counts would exceed the DFA budget anyway, and
	// failing here is immediate instead of after building the unrolled NFA.
	DefaultMaxRepeat = 10_000

	// DefaultMaxDepth bounds the recursion of the NFA builder over the AST.
	// JSON schemas nest a few dozen levels; 10,000 keeps the goroutine stack
	// well under its limit for malformed or adversarial trees.
	DefaultMaxDepth = 10_000

	// DefaultTimeout is a backstop for the compile call: the deterministic
	// budgets above are the primary limits (timeouts vary with machine
	// load), and the MaskBench target is p99 ≤ 100 ms, so 5 s means
	// something has gone badly wrong.
	DefaultTimeout = 5 * time.Second
)

// withDefaults returns o with zero fields replaced by defaults and negative
// fields by "unlimited".
func (o Options) withDefaults() Options {
	const unlimited = int(^uint(0) >> 2)
	fix := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = unlimited
		}
	}
	fix(&o.MaxNFAStates, DefaultMaxNFAStates)
	fix(&o.MaxDFAStates, DefaultMaxDFAStates)
	fix(&o.MaxDFABytes, DefaultMaxDFABytes)
	fix(&o.MaxRepeat, DefaultMaxRepeat)
	fix(&o.MaxDepth, DefaultMaxDepth)
	switch {
	case o.MaxWork == 0:
		o.MaxWork = DefaultMaxWork
	case o.MaxWork < 0:
		o.MaxWork = int64(unlimited)
	}
	switch {
	case o.MaxExpansionWork == 0:
		o.MaxExpansionWork = DefaultMaxExpansionWork
	case o.MaxExpansionWork < 0:
		o.MaxExpansionWork = int64(unlimited)
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		o.Timeout = 0 // no deadline
	}
	return o
}

// Stats describes one Compile call. Counts add up over all the automata the
// call builds (intersections and complements build several).
type Stats struct {
	NFAStates    int           // Thompson NFA states built
	RawDFAStates int           // subset-construction and product states, before trimming and minimization
	Work         int64         // determinization work (see Options.MaxWork)
	NFATime      time.Duration // building NFAs
	DetTime      time.Duration // subset construction and products
	MinTime      time.Duration // trimming, minimization and renumbering
}
