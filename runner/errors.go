package runner

import "fmt"

// ErrorCode classifies an [Error].
type ErrorCode int

const (
	// CodeInvalidRequest is a request the runner cannot accept (empty
	// prompt, bad parameter, stop sequences without a detokenizer, ...).
	CodeInvalidRequest ErrorCode = iota + 1
	// CodePromptTooLong is a prompt that leaves no room in the context for
	// a single generated token.
	CodePromptTooLong
	// CodeEngine is a failure of the engine (decode, KV removal).
	CodeEngine
	// CodeConstraint is a failure of the request's constraint (FillMask,
	// Accept, or an empty mask). The request ends; nothing unconstrained is
	// ever sampled.
	CodeConstraint
	// CodeSampler is a failure of the sampler.
	CodeSampler
	// CodeClosed means the runner stopped (Run returned) before the request
	// finished, or refused it because it had stopped.
	CodeClosed
	// CodeInvalidConfig is a bad Config given to New.
	CodeInvalidConfig
	// CodePanic is a panic recovered while working on the request (a bug):
	// the request ends, its slot and KV cells are freed, and the runner
	// goes on. Error.Stack holds the goroutine's stack.
	CodePanic
)

var codeNames = map[ErrorCode]string{
	CodeInvalidRequest: "invalid request",
	CodePromptTooLong:  "prompt too long",
	CodeEngine:         "engine",
	CodeConstraint:     "constraint",
	CodeSampler:        "sampler",
	CodeClosed:         "closed",
	CodeInvalidConfig:  "invalid config",
	CodePanic:          "panic",
}

// String returns the code's name.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package. Place says where it
// happened (a field name, or "slot 3"); Err is the underlying cause, if any;
// Stack is the stack of a recovered panic (CodePanic), for the log.
type Error struct {
	Code  ErrorCode
	Place string
	Msg   string
	Err   error
	Stack string
}

// Error formats the error as "runner: <code>: <place>: <msg>: <cause>".
func (e *Error) Error() string {
	s := "runner: " + e.Code.String()
	if e.Place != "" {
		s += ": " + e.Place
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &Error{Code: CodePromptTooLong}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func errorf(code ErrorCode, place string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Place: place, Msg: fmt.Sprintf(format, args...), Err: cause}
}
