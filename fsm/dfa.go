package fsm

// StateID names a DFA state. DeadState is always 0.
type StateID uint32

// DeadState is the state from which no accepting state can be reached. Every
// DFA built by this package is trimmed: all other states can reach acceptance.
const DeadState StateID = 0

// DFA is a trimmed, minimized, byte-level deterministic automaton with
// alphabet compression. It is immutable once built and safe for concurrent use.
//
// Invariants: state 0 is the dead state (not accepting, every transition back
// to 0); every other state can reach an accepting state; Trans has
// NumStates()*NumClasses entries.
type DFA struct {
	Classes    [256]uint8 // byte → equivalence class
	NumClasses int        // number of classes (stride of Trans)
	Trans      []StateID  // Trans[int(s)*NumClasses+int(Classes[b])] is the successor of s on b
	Accept     []bool     // Accept[s] reports whether s is accepting
	Start      StateID    // the initial state (DeadState if the language is empty)

	// loose: trimmed (every state can reach acceptance) but possibly not
	// minimal, with classes that could be merged and not numbered
	// canonically (subtractStrings, and complements of loose DFAs).
	// Splicing and products do not mind; Compile finishes such a DFA before
	// returning it.
	loose bool
}

// NumStates returns the number of states, the dead state included.
func (d *DFA) NumStates() int { return len(d.Accept) }

// Next returns the successor of s on byte b.
func (d *DFA) Next(s StateID, b byte) StateID {
	return d.Trans[int(s)*d.NumClasses+int(d.Classes[b])]
}

// Run returns the state reached from s over bs, stopping early at DeadState.
func (d *DFA) Run(s StateID, bs []byte) StateID {
	for _, b := range bs {
		if s == DeadState {
			return s
		}
		s = d.Next(s, b)
	}
	return s
}
