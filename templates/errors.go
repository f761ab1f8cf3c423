package templates

import "fmt"

// ErrorCode classifies a template Error.
type ErrorCode uint8

// The error codes. A caller (cmd/serve) maps CodeSyntax, CodeUnsupported and
// CodeInput to a client error, CodeRaised to a client error carrying the
// template's own message, and CodeRuntime, CodeBudget and CodeUnknown to the
// request's fault (the template could not render these messages).
const (
	CodeSyntax      ErrorCode = iota + 1 // the template text does not parse
	CodeUnsupported                      // a Jinja feature this renderer does not implement
	CodeRuntime                          // a Python/Jinja runtime error (TypeError, UndefinedError, ...)
	CodeRaised                           // the template called raise_exception(msg)
	CodeBudget                           // a limit from Limits was reached (steps, output, depth)
	CodeInput                            // the rendering inputs are malformed (bad JSON)
	// CodeUnknown: rendering reached a filter or test that does not exist
	// (jinja2's TemplateRuntimeError "No filter named 'x' found."); Name
	// holds it. Outside if statements and conditional expressions an unknown
	// filter or test is a CodeSyntax error of Parse instead, as in jinja2.
	CodeUnknown
)

var codeNames = [...]string{
	CodeSyntax:      "syntax",
	CodeUnsupported: "unsupported",
	CodeRuntime:     "runtime",
	CodeRaised:      "raise_exception",
	CodeBudget:      "budget",
	CodeInput:       "input",
	CodeUnknown:     "unknown_filter_or_test",
}

// String returns the code's short name.
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", c)
}

// Error is the one error type of this package. Msg is the bare message: for
// CodeRaised it is exactly the string the template passed to raise_exception.
// Line is the 1-based template line where it happened (0 when unknown).
type Error struct {
	Code ErrorCode
	Msg  string
	Line int
	// Output marks a CodeBudget error of Limits.MaxOutput (the bytes
	// written, or the size of one value), which a caller can report as
	// the prompt being too large rather than the template misbehaving.
	Output bool
	// Name is the unknown filter or test of a CodeUnknown error.
	Name string
}

// Error formats the error with its code and line.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("templates: %s error at line %d: %s", e.Code, e.Line, e.Msg)
	}
	return fmt.Sprintf("templates: %s error: %s", e.Code, e.Msg)
}

func errorf(code ErrorCode, line int, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Line: line}
}

// outputBudget is a CodeBudget error of Limits.MaxOutput.
func outputBudget(line int, format string, args ...any) *Error {
	e := errorf(CodeBudget, line, format, args...)
	e.Output = true
	return e
}
