package main

import "fmt"

// Code says what went wrong with an input or an output.
type Code int

// The codes of Error.
const (
	CodeRead     Code = iota + 1 // the file cannot be read
	CodeJSON                     // the file is not JSON of the expected shape
	CodeContent                  // the JSON lacks what a plot needs
	CodeMismatch                 // two inputs that must match do not
	CodeWrite                    // an SVG cannot be drawn or written
)

func (c Code) String() string {
	switch c {
	case CodeRead:
		return "cannot read"
	case CodeJSON:
		return "bad JSON"
	case CodeContent:
		return "missing data"
	case CodeMismatch:
		return "inputs do not match"
	case CodeWrite:
		return "cannot write"
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error is the command's one error type: what went wrong, the file it
// happened in, and the cause.
type Error struct {
	Code Code
	Path string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Path, e.Code, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
