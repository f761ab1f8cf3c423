package llamaengine

import (
	"fmt"
	"strings"
)

// ErrorCode classifies an [Error].
type ErrorCode int

// The error codes.
const (
	// CodeLoad: the model file could not be loaded by llama.cpp (the
	// binding's *llama.Error is wrapped: missing, truncated or non-GGUF
	// file, unsupported architecture, bad parameters, or no cgo).
	CodeLoad ErrorCode = iota + 1
	// CodeVocabulary: the vocabulary could not be read from the file, or it
	// disagrees with llama.cpp's (a different number of tokens).
	CodeVocabulary
	// CodeBatch: a runner.Batch with slices of different lengths, or more
	// entries than the model's batch capacity.
	CodeBatch
	// CodeEngine: llama.cpp failed a decode, logits or KV operation (the
	// binding's error is wrapped).
	CodeEngine
	// CodeGrammar: llama.cpp's grammar sampler refused a grammar, or a
	// GrammarConstraint was used wrongly (a token it does not allow, a
	// Rollback, use after Close).
	CodeGrammar
)

var codeNames = map[ErrorCode]string{
	CodeLoad:       "load failed",
	CodeVocabulary: "bad vocabulary",
	CodeBatch:      "bad batch",
	CodeEngine:     "engine failed",
	CodeGrammar:    "grammar failed",
}

// String names the code.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package. Op is the operation
// ("load", "decode", ...), Path the model file when known, Err the cause
// (often a *llama.Error).
type Error struct {
	Code ErrorCode
	Op   string
	Path string
	Msg  string
	Err  error
}

// Error formats the error as "llamaengine: OP PATH: CODE: MSG: ERR".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("llamaengine: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.Path != "" {
			b.WriteString(" " + e.Path)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Code.String())
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, so that errors.Is(err, llama.ErrModelFile) and
// the like see through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}
