package llama

import (
	"fmt"
	"strings"
)

// ErrorCode classifies an [Error].
type ErrorCode int

// The error codes; callers test them with errors.Is against the sentinels.
const (
	// CodeUnavailable: built without cgo, so llama.cpp is not linked in.
	CodeUnavailable ErrorCode = iota + 1
	// CodeModelFile: the model file is missing, unreadable or not a valid
	// GGUF file (the gguf error is wrapped).
	CodeModelFile
	// CodeArchitecture: the file's general.architecture is absent or not
	// one the vendored llama.cpp can run.
	CodeArchitecture
	// CodeParams: invalid Params.
	CodeParams
	// CodeLoad: llama.cpp refused the model or could not make a context.
	CodeLoad
	// CodeBatch: a batch llama.cpp would reject (empty, too large, ids out
	// of range, a logits index that was not requested).
	CodeBatch
	// CodeKVCacheFull: llama_decode found no KV-cache slot for the batch.
	CodeKVCacheFull
	// CodeDecode: llama_decode failed for another reason.
	CodeDecode
	// CodeKVCache: a KV-cache edit llama.cpp could not do.
	CodeKVCache
	// CodeTokenize: llama_tokenize failed or a token id is out of range.
	CodeTokenize
	// CodeGrammar: a schema or grammar llama.cpp's grammar code refused.
	CodeGrammar
	// CodeClosed: the Model was used after Close.
	CodeClosed
)

var codeNames = map[ErrorCode]string{
	CodeUnavailable:  "llama.cpp unavailable (built without cgo)",
	CodeModelFile:    "bad model file",
	CodeArchitecture: "unsupported architecture",
	CodeParams:       "bad parameters",
	CodeLoad:         "load failed",
	CodeBatch:        "bad batch",
	CodeKVCacheFull:  "KV cache full",
	CodeDecode:       "decode failed",
	CodeKVCache:      "KV cache operation failed",
	CodeTokenize:     "tokenize failed",
	CodeGrammar:      "grammar failed",
	CodeClosed:       "model closed",
}

// String returns the code's name as used in error messages.
func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of this package. Op is the operation ("load",
// "decode", ...), Path the model file when known.
type Error struct {
	Code ErrorCode
	Op   string
	Path string
	Msg  string
	Err  error
}

// Sentinels for errors.Is: an *Error matches the sentinel with its code.
var (
	ErrUnavailable  = &Error{Code: CodeUnavailable}
	ErrModelFile    = &Error{Code: CodeModelFile}
	ErrArchitecture = &Error{Code: CodeArchitecture}
	ErrKVCacheFull  = &Error{Code: CodeKVCacheFull}
	ErrClosed       = &Error{Code: CodeClosed}
	ErrBatch        = &Error{Code: CodeBatch}
)

// Error formats the error as "llama: OP PATH: CODE: MSG: ERR".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("llama: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.Path != "" {
			b.WriteString(" ")
			b.WriteString(e.Path)
		}
		b.WriteString(": ")
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

// Unwrap returns the wrapped error (a *gguf.Error for CodeModelFile).
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func errorf(code ErrorCode, op, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Msg: fmt.Sprintf(format, args...)}
}
