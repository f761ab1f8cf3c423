package fsm

// Matcher follows one sequence through a Constraint: the current DFA state,
// a history of states for Rollback, and a sticky error. It is small, cheap
// to create (Constraint.NewMatcher), and not safe for concurrent use; all
// shared state (the masks) lives in the Constraint.
//
// EOS semantics: EOS ids are allowed exactly in accepting states. Accepting
// an EOS token moves the matcher to the finished state, where the mask holds
// only the EOS ids (so a batch slot that keeps stepping gets a usable mask),
// further EOS tokens are accepted (and recorded, so Rollback counts them),
// and any other token is the sticky error ErrFinished. Rollback works across
// EOS: undoing it returns to the accepting state before it.
//
// Errors are sticky (STYLE rule 7): after the first failed Accept or
// FillMask, every later call returns the same error, so a decode loop needs
// only one check. Rollback does not clear it; Reset does.
type Matcher struct {
	c        *Constraint
	state    StateID
	finished bool
	hist     []histEntry // the state before each accepted token
	err      error
}

// histEntry is one history slot: the state and finished flag before a token.
type histEntry struct {
	state    StateID
	finished bool
}

// Constraint returns the constraint the matcher follows.
func (m *Matcher) Constraint() *Constraint { return m.c }

// State returns the current DFA state (unchanged by accepting EOS).
func (m *Matcher) State() StateID { return m.state }

// Err returns the sticky error, or nil.
func (m *Matcher) Err() error { return m.err }

// IsAccepting reports whether the text so far is a complete match (EOS is
// allowed now), or EOS was already accepted. It is false after an error.
func (m *Matcher) IsAccepting() bool {
	return m.err == nil && (m.finished || m.c.accepting(m.state))
}

// IsTerminated reports whether nothing but EOS can follow: EOS was accepted,
// or the state is accepting and no byte leads to a live state. It is false
// after an error (check Err).
func (m *Matcher) IsTerminated() bool {
	if m.err != nil {
		return false
	}
	if m.finished {
		return true
	}
	if !m.c.accepting(m.state) {
		return false
	}
	f, err := m.c.infoOf(m.state)
	if err != nil {
		m.err = err
		return false
	}
	return f&stateLive == 0
}

// IsFinished reports whether an EOS token has been accepted.
func (m *Matcher) IsFinished() bool { return m.finished }

// Len returns the number of tokens accepted since the start or Reset (the
// most Rollback can undo).
func (m *Matcher) Len() int { return len(m.hist) }

// FillMask writes the mask of the current state into dst: bit t is set iff
// token t may be accepted next (EOS ids iff the state is accepting). dst
// must have at least TokenIndex().MaskWords() words; every word is
// overwritten and bits at or above the vocabulary size are zero. On a cached
// state this is one copy; a cold state is computed once per Constraint.
func (m *Matcher) FillMask(dst []uint64) error {
	if m.err != nil {
		return m.err
	}
	ti := m.c.ti
	if len(dst) < ti.MaskWords() {
		// A caller bug, not a sequence failure: not sticky.
		return tokError(ErrMaskSize, "mask has %d words, want at least %d", len(dst), ti.MaskWords())
	}
	e := m.c.eosOnly
	if !m.finished {
		var err error
		if e, err = m.c.maskFor(m.state); err != nil {
			m.err = err
			return err
		}
	}
	e.fill(dst, ti.numTokens)
	return nil
}

// AllowedCount returns how many tokens the current mask allows (EOS
// included): 1 means the next token is forced; a small count suits a
// sampler's sparse path.
func (m *Matcher) AllowedCount() (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.finished {
		return m.c.eosOnly.pop, nil
	}
	e, err := m.c.maskFor(m.state)
	if err != nil {
		m.err = err
		return 0, err
	}
	return e.pop, nil
}

// Accept advances the matcher over token t. It fails (stickily) when t is
// outside the vocabulary, unused, or not allowed in the current state.
func (m *Matcher) Accept(t TokenID) error {
	if m.err != nil {
		return m.err
	}
	ti := m.c.ti
	if t < 0 || int(t) >= ti.numTokens || len(ti.raw[t]) == 0 && !ti.isEOS[t] {
		m.err = tokError(ErrUnknownToken, "token %d is not in the vocabulary (%d tokens)", t, ti.numTokens)
		return m.err
	}
	if ti.isEOS[t] {
		if !m.finished && !m.c.accepting(m.state) {
			m.err = tokError(ErrTokenRejected, "EOS token %d is not allowed: the output is incomplete (state %d)", t, m.state)
			return m.err
		}
		m.hist = append(m.hist, histEntry{m.state, m.finished})
		m.finished = true
		return nil
	}
	if m.finished {
		m.err = tokError(ErrFinished, "token %d after EOS", t)
		return m.err
	}
	next, err := m.c.run(m.state, ti.tokens[t])
	if err != nil {
		m.err = err
		return err
	}
	if next == DeadState {
		m.err = tokError(ErrTokenRejected, "token %d (%q) is not allowed in state %d", t, ti.tokens[t], m.state)
		return m.err
	}
	m.hist = append(m.hist, histEntry{m.state, false})
	m.state = next
	return nil
}

// Rollback undoes the last n accepted tokens (EOS included). It fails when n
// is negative or more than Len(), and returns the sticky error if there is
// one (Reset clears it).
func (m *Matcher) Rollback(n int) error {
	if m.err != nil {
		return m.err
	}
	if n < 0 || n > len(m.hist) {
		return tokError(ErrRollback, "cannot roll back %d tokens: %d accepted", n, len(m.hist))
	}
	if n == 0 {
		return nil
	}
	h := m.hist[len(m.hist)-n]
	m.state, m.finished = h.state, h.finished
	m.hist = m.hist[:len(m.hist)-n]
	return nil
}

// Reset returns the matcher to the start state, clearing the history and
// the sticky error.
func (m *Matcher) Reset() {
	m.state = m.c.start
	m.finished = false
	m.hist = m.hist[:0]
	m.err = nil
}

// Forced returns up to max tokens that are the only way forward from the
// current state, in order, without accepting them (the weak form of
// fast-forward: successive states whose mask allows exactly one token that
// is not EOS). A vocabulary with duplicate byte strings never forces them.
// Forced tokens are the mask's own choice, not necessarily the canonical
// tokenization of ForcedBytes.
func (m *Matcher) Forced(max int) []TokenID {
	if m.err != nil || m.finished {
		return nil
	}
	var out []TokenID
	s := m.state
	for len(out) < max {
		e, err := m.c.maskFor(s)
		if err != nil || e.pop != 1 {
			break
		}
		id, ok := e.first(m.c.ti.numTokens)
		if !ok || m.c.ti.isEOS[id] {
			break
		}
		out = append(out, TokenID(id))
		if s, err = m.c.run(s, m.c.ti.tokens[id]); err != nil {
			break
		}
	}
	return out
}

// ForcedBytes returns the bytes the DFA forces from the current state: while
// the state is not accepting and exactly one byte leads to a live state,
// that byte. (Nothing is forced in an accepting state, where EOS is an
// alternative.) The chain cannot cycle in a trimmed DFA, and is bounded by
// the number of states regardless.
func (m *Matcher) ForcedBytes() []byte {
	if m.err != nil || m.finished {
		return nil
	}
	var out []byte
	s := m.state
	for steps := 0; steps <= m.c.numStates(); steps++ {
		f, err := m.c.infoOf(s)
		if err != nil || f&stateForced == 0 {
			break
		}
		b := byte(f)
		out = append(out, b)
		if s, err = m.c.run(s, []byte{b}); err != nil {
			break
		}
	}
	return out
}

// AcceptBytes advances the matcher over raw bytes (a fast-forwarded string
// that will be tokenized by the caller): it fails, stickily, when the bytes
// lead to the dead state. It records one history entry, so Rollback(1)
// undoes the whole byte string.
func (m *Matcher) AcceptBytes(bs []byte) error {
	if m.err != nil {
		return m.err
	}
	if m.finished {
		m.err = tokError(ErrFinished, "bytes after EOS")
		return m.err
	}
	next, err := m.c.run(m.state, bs)
	if err != nil {
		m.err = err
		return err
	}
	if next == DeadState {
		m.err = tokError(ErrTokenRejected, "bytes %q are not allowed in state %d", bs, m.state)
		return m.err
	}
	m.hist = append(m.hist, histEntry{m.state, false})
	m.state = next
	return nil
}
