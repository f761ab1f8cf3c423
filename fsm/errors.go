package fsm

import (
	"fmt"
	"strconv"
	"time"
)

// Error is the one error type of package fsm. Parse errors carry the offset
// of the offending construct in the input; limit errors carry the limit and
// the size that was reached when the build stopped. Callers branch on Code
// (errors.As) and turn it into a user-visible status once, at the edge.
type Error struct {
	Code  ErrorCode // what went wrong
	Expr  string    // the offending construct (parse errors), or a short detail
	Pos   int       // byte offset into the parsed text; -1 when not a parse error
	Limit int64     // limit errors: the configured limit (ErrTimeout: nanoseconds)
	Size  int64     // limit errors: the size reached (> Limit)
}

// ErrorCode classifies an *Error.
type ErrorCode uint8

// The error codes. Codes below ErrTooManyNFAStates are parse (syntax or
// unsupported-construct) errors; ErrTooManyNFAStates through ErrTooManyDFABytes
// are budget errors raised while compiling (see IsLimit). Token-side codes
// (errors_tokens.go) start at 100.
const (
	ErrInternal         ErrorCode = iota // a bug in fsm; should never be seen
	ErrInvalidNode                       // a malformed *Node (nil, missing operands)
	ErrMissingParen                      // a group is not closed
	ErrUnexpectedParen                   // a ')' without a matching '('
	ErrMissingBracket                    // a character class is not closed
	ErrInvalidEscape                     // an unknown or malformed escape sequence
	ErrInvalidRange                      // a class range whose ends are reversed or are class escapes
	ErrMissingRepeatArg                  // a quantifier with nothing (or another quantifier) before it
	ErrInvalidRepeat                     // a malformed or reversed {m,n}, or a count above the parse limit
	ErrInvalidUTF8                       // the pattern text is not valid UTF-8
	ErrNestingDepth                      // groups nested deeper than the parse limit
	ErrUnsupported                       // a construct no regular engine can honour (lookaround, backreference, \b, inner anchors, flags)
	ErrTooManyNFAStates                  // the NFA grew past Options.MaxNFAStates (a lazy constraint's, past lazyNFAGrowth times it)
	ErrTooManyDFAStates                  // determinization or a product grew past Options.MaxDFAStates
	ErrTooMuchWork                       // determinization processed more NFA-set elements than Options.MaxWork
	ErrRepeatTooLarge                    // a repeat count exceeds Options.MaxRepeat
	ErrTooDeep                           // the AST is nested deeper than Options.MaxDepth
	ErrTimeout                           // the build ran past Options.Timeout or its context was done
	ErrTooManyDFABytes                   // a DFA's transition table grew past Options.MaxDFABytes
)

var codeNames = [...]string{
	ErrInternal:         "internal error",
	ErrInvalidNode:      "invalid node",
	ErrMissingParen:     "missing closing )",
	ErrUnexpectedParen:  "unexpected )",
	ErrMissingBracket:   "missing closing ]",
	ErrInvalidEscape:    "invalid escape",
	ErrInvalidRange:     "invalid character class range",
	ErrMissingRepeatArg: "missing argument to repetition operator",
	ErrInvalidRepeat:    "invalid repeat count",
	ErrInvalidUTF8:      "invalid UTF-8",
	ErrNestingDepth:     "expression nests too deeply",
	ErrUnsupported:      "unsupported construct",
	ErrTooManyNFAStates: "too many NFA states",
	ErrTooManyDFAStates: "too many DFA states",
	ErrTooMuchWork:      "determinization work budget exceeded",
	ErrRepeatTooLarge:   "repeat count too large",
	ErrTooDeep:          "expression nests too deeply for compilation",
	ErrTimeout:          "time budget exceeded",
	ErrTooManyDFABytes:  "DFA transition table too large",
}

// String returns a short English description of the code (automaton codes
// here, token-side codes from errors_tokens.go).
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	if s, ok := tokenCodeName(c); ok {
		return s
	}
	return "ErrorCode(" + strconv.Itoa(int(c)) + ")"
}

// IsLimit reports whether the code is a budget error (the input was valid
// but too large or too slow under the configured options).
func (c ErrorCode) IsLimit() bool {
	return c >= ErrTooManyNFAStates && c <= ErrTooManyDFABytes || tokenCodeIsLimit(c)
}

// Error formats the error as "fsm: <code>[: detail][ at offset N][ (size S > limit L)]".
func (e *Error) Error() string {
	s := "fsm: " + e.Code.String()
	if e.Expr != "" {
		s += ": " + strconv.Quote(e.Expr)
	}
	if e.Pos >= 0 {
		s += " at offset " + strconv.Itoa(e.Pos)
	}
	switch {
	case e.Code == ErrTimeout && e.Limit > 0:
		s += fmt.Sprintf(" (ran %v, limit %v)", time.Duration(e.Size), time.Duration(e.Limit))
	case e.Code.IsLimit() && e.Code != ErrTimeout:
		s += fmt.Sprintf(" (reached %d, limit %d)", e.Size, e.Limit)
	}
	return s
}

func limitErr(code ErrorCode, limit, size int64) *Error {
	return &Error{Code: code, Pos: -1, Limit: limit, Size: size}
}

func parseErr(code ErrorCode, expr string, pos int) *Error {
	return &Error{Code: code, Expr: expr, Pos: pos}
}
