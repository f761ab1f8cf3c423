package hub

import (
	"fmt"
	"strings"
)

// ErrorCode classifies an *Error. Callers (cmd/serve) branch on the code,
// never on the message; each code comes with a one-line hint saying what the
// user can do about it.
type ErrorCode uint8

// The error codes of package hub.
const (
	// CodeInternal is a bug in hub; it should never be seen.
	CodeInternal ErrorCode = iota
	// CodeBadRef means a model reference (--hf) is malformed.
	CodeBadRef
	// CodeConfig means an option is unusable (a malformed endpoint URL).
	CodeConfig
	// CodeNetwork means the endpoint could not be reached, or the connection
	// broke during a transfer (the partial file is kept for a resume).
	CodeNetwork
	// CodeOffline means Options.Offline is set and the model is not cached.
	CodeOffline
	// CodeNotFound means the repository or the file does not exist (HTTP 404,
	// or HF's RepoNotFound/EntryNotFound/RevisionNotFound).
	CodeNotFound
	// CodeGated means access was refused (HTTP 401/403): a gated or private
	// repository, or a bad token.
	CodeGated
	// CodeNoGGUF means the repository holds no GGUF model file.
	CodeNoGGUF
	// CodeUnknownQuant means no GGUF file matches the requested quantization.
	CodeUnknownQuant
	// CodeSplit means a split model (-00001-of-0000N) lacks some of its parts.
	CodeSplit
	// CodeChecksum means the downloaded (or cached) bytes do not have the
	// size or SHA-256 the hub announced; the file has been removed.
	CodeChecksum
	// CodeDiskFull means writing failed with ENOSPC; the partial file has
	// been removed.
	CodeDiskFull
	// CodeCacheDir means the cache folder cannot be created or written
	// (read-only, not a directory, no permission).
	CodeCacheDir
	// CodeIO is any other local file-system failure.
	CodeIO
	// CodeCanceled means the context was cancelled or timed out; the partial
	// file is kept so that the next start resumes it.
	CodeCanceled
	// CodeHTTP means the hub answered with an unexpected status (429, 5xx, …).
	CodeHTTP
	// CodeProtocol means the hub's answer is malformed (bad listing JSON, a
	// Content-Range that does not match the request, an unsafe file path).
	CodeProtocol
)

var codeNames = [...]string{
	CodeInternal:     "internal error",
	CodeBadRef:       "bad model reference",
	CodeConfig:       "bad option",
	CodeNetwork:      "network error",
	CodeOffline:      "not cached (offline)",
	CodeNotFound:     "not found",
	CodeGated:        "access denied",
	CodeNoGGUF:       "no GGUF file",
	CodeUnknownQuant: "unknown quantization",
	CodeSplit:        "incomplete split model",
	CodeChecksum:     "checksum mismatch",
	CodeDiskFull:     "disk full",
	CodeCacheDir:     "cache folder not writable",
	CodeIO:           "file error",
	CodeCanceled:     "cancelled",
	CodeHTTP:         "unexpected HTTP status",
	CodeProtocol:     "malformed hub answer",
}

// String returns the code's name, as used in error messages.
func (c ErrorCode) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return fmt.Sprintf("ErrorCode(%d)", int(c))
}

// Error is the one error type of package hub. Place says where the problem
// was found (a reference such as "org/repo/file.gguf", a URL without query,
// or a local path); Hint is one sentence telling the user what to do. The
// token (Options.Token) never appears in an Error.
type Error struct {
	Code   ErrorCode
	Place  string
	Detail string
	Hint   string
	Err    error // the underlying cause, if any
}

// Error formats the error on one line as
// "hub: <place>: <code>: <detail>: <cause> (<hint>)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hub: ")
	if e.Place != "" {
		b.WriteString(e.Place)
		b.WriteString(": ")
	}
	b.WriteString(e.Code.String())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return oneLine(b.String())
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// oneLine replaces line breaks so that every error prints on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// defaultHints is the hint of an error built without a more specific one,
// so that every *Error says what to do.
var defaultHints = [...]string{
	CodeInternal:     "this is a bug in conform: please report it with the command line",
	CodeBadRef:       "write it as org/repo, org/repo:QUANT or org/repo/file.gguf",
	CodeConfig:       "pass something like --hf-endpoint https://huggingface.co",
	CodeNetwork:      "pass a local file with --model PATH, or try --demo",
	CodeOffline:      "start once without --offline to download it, or pass a local file with --model PATH",
	CodeNotFound:     "check the name on the model page",
	CodeGated:        "accept the license on the model page and set HF_TOKEN",
	CodeNoGGUF:       "pick a repository with GGUF files, or pass a local file with --model PATH",
	CodeUnknownQuant: "pick one of the quantizations the model page lists with org/repo:QUANT",
	CodeSplit:        "pick another quantization, or pass a local file with --model PATH",
	CodeChecksum:     "start again to download it afresh",
	CodeDiskFull:     "free some space or choose another folder with --models-dir",
	CodeCacheDir:     "choose a writable folder with --models-dir",
	CodeIO:           "check the cache folder (--models-dir) and its disk",
	CodeCanceled:     "start again to resume",
	CodeHTTP:         "try again later, or pass a local file with --model PATH",
	CodeProtocol:     "check that --hf-endpoint points at a Hugging Face compatible hub",
}

// errorf builds an *Error with a formatted detail and the code's default
// hint (withHint replaces it).
func errorf(code ErrorCode, place string, cause error, format string, args ...any) *Error {
	e := &Error{Code: code, Place: place, Detail: fmt.Sprintf(format, args...), Err: cause}
	if int(code) < len(defaultHints) {
		e.Hint = defaultHints[code]
	}
	return e
}

// withHint sets e.Hint and returns e.
func (e *Error) withHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}
