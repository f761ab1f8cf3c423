package tokenizer

import "fmt"

// ErrorCode classifies what went wrong while loading a vocabulary or
// building an encoder. Callers branch on the code, never on the message.
type ErrorCode int

// The error codes of this package.
const (
	// CodeIO means a file could not be opened or read.
	CodeIO ErrorCode = iota + 1
	// CodeSyntax means a file was read but is not well-formed (bad JSON,
	// a bad tiktoken line, a GGUF key of the wrong type).
	CodeSyntax
	// CodeUnsupported means the file is well-formed but uses a model type,
	// normalizer, pre-tokenizer or option this package does not implement.
	CodeUnsupported
	// CodeUnknownEncoding means a tiktoken encoding name is not known.
	CodeUnknownEncoding
	// CodeInvalid means the vocabulary is inconsistent: a negative or
	// duplicate id, a token id beyond the table, a missing required entry.
	CodeInvalid
)

// String returns the code's name, as used in error messages.
func (c ErrorCode) String() string {
	switch c {
	case CodeIO:
		return "io"
	case CodeSyntax:
		return "syntax"
	case CodeUnsupported:
		return "unsupported"
	case CodeUnknownEncoding:
		return "unknown encoding"
	case CodeInvalid:
		return "invalid vocabulary"
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of package tokenizer. Place says where the
// problem was found: a file path, optionally followed by a section inside
// the file (for example "tokenizer.json: pre_tokenizer.pretokenizers[0]").
type Error struct {
	Code   ErrorCode
	Place  string
	Detail string
	Err    error // the underlying cause, if any
}

// Error formats the error as "tokenizer: <place>: <code>: <detail>: <cause>".
func (e *Error) Error() string {
	s := "tokenizer: "
	if e.Place != "" {
		s += e.Place + ": "
	}
	s += e.Code.String()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf builds an *Error with a formatted detail.
func errorf(code ErrorCode, place string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Place: place, Detail: fmt.Sprintf(format, args...), Err: cause}
}
