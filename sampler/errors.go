package sampler

import "fmt"

// ErrorCode classifies an [Error].
type ErrorCode int

const (
	// CodeInvalidParam is a sampling parameter out of range; Error.Field names it.
	CodeInvalidParam ErrorCode = iota + 1
	// CodeEmptyMask means the mask allows no token at all. It is never
	// answered with an unconstrained token.
	CodeEmptyMask
	// CodeNoCandidates means every allowed token had a logit of -Inf or NaN.
	CodeNoCandidates
	// CodeBadInput is a logits row or mask of the wrong length.
	CodeBadInput
)

var codeNames = map[ErrorCode]string{
	CodeInvalidParam: "invalid parameter",
	CodeEmptyMask:    "empty mask",
	CodeNoCandidates: "no candidates",
	CodeBadInput:     "bad input",
}

// String returns the code's name.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package. Field is the parameter or
// argument at fault (for example "top_p" or "mask"); Msg says why.
type Error struct {
	Code  ErrorCode
	Field string
	Msg   string
}

// Error formats the error as "sampler: <code>: <field>: <msg>".
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("sampler: %s: %s", e.Code, e.Msg)
	}
	return fmt.Sprintf("sampler: %s: %s: %s", e.Code, e.Field, e.Msg)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &Error{Code: CodeEmptyMask}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func errorf(code ErrorCode, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}
