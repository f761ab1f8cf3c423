package turn

import "fmt"

// ErrorCode classifies an Error. cmd/serve maps every code to HTTP 400
// except CodeInternal (500).
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
	// CodeUnsatisfiable: no sequence of the vocabulary's tokens completes
	// an output the constraint accepts (Turn.CheckBudget).
	CodeUnsatisfiable
	// CodeMaxTokensTooSmall: the request's token limit is below the
	// shortest output the constraint accepts; Param names the limit.
	CodeMaxTokensTooSmall
	// CodeContextTooSmall: the prompt leaves less of the context than the
	// shortest output the constraint accepts; Param names the prompt.
	CodeContextTooSmall
	// CodeInvalidConfig: a model or server setting this package cannot
	// work with (a vocabulary the token index refuses, a missing runner).
	CodeInvalidConfig
)

// The names of the budget codes are OpenAI's error codes for the same
// refusals, which cmd/serve passes on as they are.
var codeNames = [...]string{
	CodeInvalidRequest:    "invalid_request",
	CodeSchema:            "invalid_schema",
	CodeTooLarge:          "too_large",
	CodeUnknownFormat:     "unknown_format",
	CodeInternal:          "internal",
	CodeUnsatisfiable:     "unsatisfiable",
	CodeMaxTokensTooSmall: "max_tokens_too_small",
	CodeContextTooSmall:   "context_length_exceeded",
	CodeInvalidConfig:     "invalid_config",
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
