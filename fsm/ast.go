package fsm

import "sync/atomic"

// Node is one node of the project's regex AST: the hand-over type between
// grammar/ (which builds it from JSON Schema and other constraints) and fsm/
// (which compiles it to a byte-level DFA).
//
// The AST is a DAG: the same *Node may appear in several places. The NFA
// builder compiles with continuation passing and memoizes on (node,
// continuation), so sharing a node between places that continue the same way
// (the optional-property suffixes of an object, say) costs nothing. Nodes are
// never mutated after construction; build them with the constructors below,
// which also apply cheap simplifications (flattening, ∅/ε folding).
//
// The alphabet is bytes. OpRunes matches one Unicode scalar value encoded as
// UTF-8 (surrogates and overlong forms can never match); OpBytes matches one
// raw byte, which is how special tokens (0xFF-prefixed, see TokenIndex) and
// partial UTF-8 are named.
type Node struct {
	Op    Op
	Lit   []byte      // OpLiteral: the exact byte string
	Runes []RuneRange // OpRunes: sorted, non-overlapping, non-adjacent ranges
	Bytes []ByteRange // OpBytes: sorted, non-overlapping, non-adjacent ranges
	Subs  []*Node     // OpConcat, OpAlt, OpAnd: operands; OpRepeat, OpNot: Subs[0]
	Min   int         // OpRepeat: minimum count; OpPerm: minimum items (PermCount); OpResidue: the modulus
	Max   int         // OpRepeat, OpPerm: maximum count, or -1 for unbounded
	Req   []bool      // OpPerm: Req[i] reports whether member Subs[2+i] is required; OpResidue: whether remainder i is accepted

	// parents counts, up to 2, the composite nodes the constructors built
	// over this one (atomically: a node can be shared by ASTs built
	// concurrently). The NFA builder memoizes only nodes with two or more
	// parents, the only ones that can be built twice with the same
	// continuation; counting at construction spares it a traversal of the
	// DAG with two hash maps per compile. A node built by hand (a struct
	// literal) counts its parents as 0: it is then built once per use,
	// which is correct, only larger.
	parents uint32
	// pinned: the node lives as long as the process (Pin), so its DFA is
	// kept process-wide.
	pinned bool
}

// Pin marks n, a node that lives as long as the process (a package-level
// variable), so that the DFA compiled for it where an intersection or
// complement needs one is kept and shared by every later compile instead of
// being built again for each constraint (grammar pins its JSON string
// languages, which every object with extra keys subtracts its declared
// names from). Call it before n is used, typically in a package's
// initialization; it returns n.
func Pin(n *Node) *Node {
	n.pinned = true
	return n
}

// markParents records one more parent for each of subs.
func markParents(subs []*Node) {
	for _, s := range subs {
		if atomic.LoadUint32(&s.parents) < 2 {
			atomic.AddUint32(&s.parents, 1)
		}
	}
}

// shared reports whether n has two or more parents.
func (n *Node) shared() bool { return atomic.LoadUint32(&n.parents) >= 2 }

// Op is the kind of a Node.
type Op uint8

// The operators of the regex AST.
const (
	OpNoMatch Op = iota // matches nothing (∅)
	OpEmpty             // matches the empty string (ε)
	OpLiteral           // matches Lit exactly
	OpRunes             // matches one UTF-8 encoded scalar value in Runes
	OpBytes             // matches one byte in Bytes
	OpConcat            // matches Subs in sequence
	OpAlt               // matches any of Subs
	OpRepeat            // matches Subs[0] between Min and Max times
	OpAnd               // matches what every one of Subs matches (intersection)
	OpNot               // matches every byte string that Subs[0] does not (complement)
	OpDefer             // matches Subs[0]; the NFA builder builds it only when the determinizer first reaches it
	OpPerm              // matches members Subs[2:] in any order (see Perm)
	OpResidue           // matches the decimal digit strings whose value mod Min is a remainder Req accepts (see Residues)
)

// MaxModulus bounds the modulus of a Residues node: its DFA has a state
// per remainder.
const MaxModulus = 1 << 16

// MaxPermMembers bounds the members of one Perm node (the builder tracks
// the members written so far in a 64-bit set).
const MaxPermMembers = 64

// RuneRange is an inclusive range of Unicode code points.
type RuneRange struct{ Lo, Hi rune }

// ByteRange is an inclusive range of bytes.
type ByteRange struct{ Lo, Hi byte }
