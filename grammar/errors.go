package grammar

import "fmt"

// ErrorCode classifies an Error. Codes are stable; cmd/serve maps them to HTTP
// statuses.
type ErrorCode uint8

// The error codes of this package.
const (
	CodeInvalidJSON   ErrorCode = iota + 1 // the schema is not JSON
	CodeInvalidSchema                      // a keyword has the wrong JSON type or value
	CodeUnsupported                        // a keyword or feature this package cannot enforce (strict mode)
	CodeBadRef                             // a $ref that is not a resolvable local JSON Pointer, or a $ref cycle
	CodeBadPattern                         // a pattern or regex the regex parser rejects
	CodeUnknownFormat                      // a format this package does not know (strict mode)
	CodeUnsatisfiable                      // no JSON value satisfies the schema (within our restrictions)
	CodeTooLarge                           // the schema is over a size or nesting budget
	CodeOneOfOverlap                       // oneOf branches could not be proven disjoint (strict mode)
	CodeNotString                          // CompileRawString: the schema admits values other than strings
)

var codeNames = [...]string{
	CodeInvalidJSON:   "invalid-json",
	CodeInvalidSchema: "invalid-schema",
	CodeUnsupported:   "unsupported",
	CodeBadRef:        "bad-ref",
	CodeBadPattern:    "bad-pattern",
	CodeUnknownFormat: "unknown-format",
	CodeUnsatisfiable: "unsatisfiable",
	CodeTooLarge:      "too-large",
	CodeOneOfOverlap:  "oneof-overlap",
	CodeNotString:     "not-string",
}

// String returns the code's stable name, such as "unsupported".
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", uint8(c))
}

// Error is the one error type of this package. Pointer is the RFC 6901 JSON
// Pointer of the offending schema node ("" is the root), and Keyword the
// keyword at fault when there is one.
type Error struct {
	Code    ErrorCode
	Pointer string
	Keyword string
	Message string
}

// Error formats the error as "grammar: CODE at POINTER: MESSAGE".
func (e *Error) Error() string {
	p := e.Pointer
	if p == "" {
		p = "#"
	} else {
		p = "#" + p
	}
	return fmt.Sprintf("grammar: %s at %s: %s", e.Code, p, e.Message)
}

// Warning reports a keyword that lenient mode did not enforce.
type Warning struct {
	Keyword string
	Pointer string
	Message string
}

// String formats the warning for logs.
func (w Warning) String() string {
	return fmt.Sprintf("%s at #%s: %s", w.Keyword, w.Pointer, w.Message)
}

func errorf(code ErrorCode, ptr, kw, format string, args ...any) *Error {
	return &Error{Code: code, Pointer: ptr, Keyword: kw, Message: fmt.Sprintf(format, args...)}
}
