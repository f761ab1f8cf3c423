package mkmodel

import "fmt"

// ErrorCode classifies an [Error].
type ErrorCode int

// The error codes.
const (
	// CodeVocab: the vocabulary could not be read or converted.
	CodeVocab ErrorCode = iota + 1
	// CodeOptions: bad Options (unknown preset, inconsistent shape).
	CodeOptions
	// CodeWrite: writing the file failed.
	CodeWrite
)

// String names the code.
func (c ErrorCode) String() string {
	switch c {
	case CodeVocab:
		return "vocabulary"
	case CodeOptions:
		return "options"
	case CodeWrite:
		return "write"
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package; Source is the vocabulary,
// preset or output file concerned.
type Error struct {
	Code   ErrorCode
	Source string
	Msg    string
	Err    error
}

// Error formats the error as "mkmodel: SOURCE: CODE: MSG: ERR".
func (e *Error) Error() string {
	s := "mkmodel: "
	if e.Source != "" {
		s += e.Source + ": "
	}
	s += e.Code.String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
