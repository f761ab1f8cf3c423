package gguf

import (
	"fmt"
	"strings"
)

// ErrorCode classifies an [Error].
type ErrorCode int

// The error codes. Callers test them with errors.Is against the sentinels
// below (errors.Is(err, gguf.ErrTruncated)) or by reading Error.Code.
const (
	// CodeOpen: the file could not be opened or stat'ed; Err holds the
	// os error, so errors.Is(err, fs.ErrNotExist) works.
	CodeOpen ErrorCode = iota + 1
	// CodeTruncated: the file ends before a structure it announces.
	CodeTruncated
	// CodeBadMagic: the file does not start with "GGUF".
	CodeBadMagic
	// CodeVersion: a GGUF version this package does not read (only 2 and 3).
	CodeVersion
	// CodeLimit: a count, length or depth beyond what the file could hold or
	// beyond a documented limit of this package.
	CodeLimit
	// CodeInvalid: a structurally wrong file (unknown value type, bad
	// alignment, duplicate key, tensor outside the file, ...).
	CodeInvalid
	// CodeWrite: a Writer was given something it cannot write, or the
	// underlying writer failed.
	CodeWrite
)

var codeNames = map[ErrorCode]string{
	CodeOpen:      "open",
	CodeTruncated: "truncated",
	CodeBadMagic:  "not a GGUF file",
	CodeVersion:   "unsupported version",
	CodeLimit:     "limit exceeded",
	CodeInvalid:   "invalid",
	CodeWrite:     "write",
}

// String returns the code's name as used in error messages.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package. Offset is the byte offset in
// the file where the problem was found (-1 when not applicable), Key the
// metadata key or tensor name being decoded, if any.
type Error struct {
	Code   ErrorCode
	Path   string
	Offset int64
	Key    string
	Msg    string
	Err    error
}

// Sentinels for errors.Is: an *Error matches the sentinel with the same code.
var (
	ErrTruncated = &Error{Code: CodeTruncated, Offset: -1}
	ErrBadMagic  = &Error{Code: CodeBadMagic, Offset: -1}
	ErrVersion   = &Error{Code: CodeVersion, Offset: -1}
	ErrLimit     = &Error{Code: CodeLimit, Offset: -1}
	ErrInvalid   = &Error{Code: CodeInvalid, Offset: -1}
)

// Error formats the error as "gguf: PATH: offset N: key K: CODE: MSG: ERR",
// leaving out the parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("gguf: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, "offset %d: ", e.Offset)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "%q: ", e.Key)
	}
	b.WriteString(e.Code.String())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error (an os error for CodeOpen).
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}
