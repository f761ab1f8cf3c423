package turn

import "fmt"

// ErrorCode classifies an Error. cmd/serve maps every code to HTTP 400 except
// CodeTooLarge (also 400, but logged as a budget) and CodeInternal (500).
type ErrorCode uint8

// The error codes.
const (
	// CodeInvalidRequest: a field has a bad value or fields conflict (an
	// unknown tool_choice, a named function that is not among the tools,
	// two structured-output requests at once).
	CodeInvalidRequest ErrorCode = iota + 1
	// CodeSchema: a schema, regex or choice list was refused by package
	// grammar (invalid, unsatisfiable, or, under strict, not enforceable
	// exactly); Pointer and Keyword say where.
	CodeSchema
	// CodeTooLarge: a constraint over a size budget.
	CodeTooLarge
	// CodeUnknownFormat: a tool-call format name that is not registered.
	CodeUnknownFormat
	// CodeInternal: a bug; should never be seen.
	CodeInternal
)

var codeNames = [...]string{
	CodeInvalidRequest: "invalid_request",
	CodeSchema:         "invalid_schema",
	CodeTooLarge:       "too_large",
	CodeUnknownFormat:  "unknown_format",
	CodeInternal:       "internal",
}

// String returns the code's stable name, such as "invalid_schema".
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Error is the one error type of this package. Param is the request
// parameter at fault in OpenAI's dotted form ("tools[1].function.parameters",
// "response_format.json_schema.schema"); Pointer and Keyword locate a schema
// problem inside it; Err is the cause (often a *grammar.Error).
type Error struct {
	Code    ErrorCode
	Param   string
	Pointer string
	Keyword string
	Msg     string
	Err     error
}

// Error formats the error as "turn: CODE: PARAM[ at POINTER][ (keyword K)]: MSG".
func (e *Error) Error() string {
	s := "turn: " + e.Code.String()
	if e.Param != "" {
		s += ": " + e.Param
	}
	if e.Pointer != "" {
		s += " at " + e.Pointer
	}
	if e.Keyword != "" {
		s += " (keyword " + e.Keyword + ")"
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
