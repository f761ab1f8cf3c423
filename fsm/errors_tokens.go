package fsm

import "fmt"

// Error codes of the token side (TokenIndex, Constraint, Matcher, Cache).
// They start at 100, clear of the automaton codes in errors.go, so both
// lists can grow independently.
const (
	// ErrBadVocabulary: NewTokenIndex was given an unusable vocabulary
	// (empty, too large, width smaller than the token count, EOS out of range).
	ErrBadVocabulary ErrorCode = 100 + iota
	// ErrBadDFA: NewConstraint was given a DFA that breaks the DFA invariants.
	ErrBadDFA
	// ErrEmptyLanguage: the constraint's DFA accepts nothing, so no token
	// could ever be allowed.
	ErrEmptyLanguage
	// ErrMaskBudget: the constraint's mask store would exceed
	// ConstraintOptions.MaxMaskBytes (the error carries limit and size).
	ErrMaskBudget
	// ErrTokenRejected: Matcher.Accept was given a token the mask forbids.
	ErrTokenRejected
	// ErrUnknownToken: a token id outside the vocabulary or an unused id.
	ErrUnknownToken
	// ErrFinished: a non-EOS token after the matcher accepted EOS.
	ErrFinished
	// ErrRollback: Matcher.Rollback was asked to undo more tokens than were
	// accepted, or a negative number.
	ErrRollback
	// ErrMaskSize: FillMask was given a destination shorter than MaskWords.
	ErrMaskSize
	// ErrCloseBudget: a closing-distance computation (close.go) explored
	// more states than ConstraintOptions.MaxCloseStates (the error carries
	// the limit and the size reached).
	ErrCloseBudget
	// ErrNoRoom: the output cannot be completed within the token budget
	// FillMaskWithin was given (the detail says the minimum).
	ErrNoRoom
	// ErrUnclosable: no sequence of the vocabulary's tokens leads from the
	// current state to a complete output.
	ErrUnclosable
)

// tokError returns an *Error with the given code; the message goes in Expr
// (the error's detail field).
func tokError(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Expr: fmt.Sprintf(format, args...), Pos: -1}
}

// tokLimitError returns an *Error for a limit: what reached size, over limit.
func tokLimitError(code ErrorCode, what string, limit, size int64) *Error {
	return &Error{Code: code, Expr: fmt.Sprintf("%s: %d exceeds the limit of %d", what, size, limit), Pos: -1, Limit: limit, Size: size}
}

// tokenCodeNames describes the token-side codes. errors.go's
// ErrorCode.String knows only the automaton codes; it can defer to
// tokenCodeName for these.
var tokenCodeNames = map[ErrorCode]string{
	ErrBadVocabulary: "unusable vocabulary",
	ErrBadDFA:        "malformed DFA",
	ErrEmptyLanguage: "constraint accepts nothing",
	ErrMaskBudget:    "mask memory budget exceeded",
	ErrTokenRejected: "token not allowed",
	ErrUnknownToken:  "unknown token",
	ErrFinished:      "token after end of sequence",
	ErrRollback:      "invalid rollback",
	ErrMaskSize:      "mask buffer too small",
	ErrCloseBudget:   "closing-distance budget exceeded",
	ErrNoRoom:        "no room to complete the output",
	ErrUnclosable:    "no token sequence completes the output",
}

// tokenCodeName returns the description of a token-side code.
func tokenCodeName(c ErrorCode) (string, bool) {
	s, ok := tokenCodeNames[c]
	return s, ok
}

// tokenCodeIsLimit reports whether a token-side code is a budget error
// (ErrMaskBudget and ErrCloseBudget; ErrNoRoom is the request's budget, not
// the constraint's, and ErrBadVocabulary/ErrBadDFA when they carry a limit are
// still input errors, not budgets).
func tokenCodeIsLimit(c ErrorCode) bool { return c == ErrMaskBudget || c == ErrCloseBudget }
