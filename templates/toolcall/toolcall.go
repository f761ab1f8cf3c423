package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Format names a tool-call text format.
type Format string

// The supported formats.
const (
	FormatHermes     Format = "hermes"
	FormatQwenCoder  Format = "qwen_coder"
	FormatLlama3JSON Format = "llama3_json"
	FormatMistral    Format = "mistral"
)

// Formats lists the supported formats (the registry lives in New).
var Formats = []Format{FormatHermes, FormatQwenCoder, FormatLlama3JSON, FormatMistral}

// Detect guesses the format a chat template teaches from its text. ok is
// false when none of the known markers occurs.
func Detect(template string) (f Format, ok bool) {
	switch {
	case strings.Contains(template, "<tool_call>"):
		return FormatHermes, true
	case strings.Contains(template, "[TOOL_CALLS]"):
		return FormatMistral, true
	case strings.Contains(template, "<|python_tag|>"),
		strings.Contains(template, "<|start_header_id|>") && strings.Contains(template, `"parameters"`):
		return FormatLlama3JSON, true
	case strings.Contains(template, "<tools>\\n") || strings.Contains(template, "<tools>\n{"):
		return FormatQwenCoder, true
	}
	return "", false
}

// EventKind is the kind of an Event.
type EventKind uint8

// The event kinds.
const (
	EventContent  EventKind = iota + 1 // Text is a content delta
	EventToolName                      // a new tool call Index starts; Text is its complete name
	EventToolArgs                      // Text is the next fragment of call Index's arguments JSON
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventContent:
		return "content"
	case EventToolName:
		return "tool_name"
	case EventToolArgs:
		return "tool_args"
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one certain piece of the parsed output.
type Event struct {
	Kind  EventKind
	Index int // the tool call's 0-based index (tool events only)
	Text  string
}

// ErrorCode classifies an Error.
type ErrorCode uint8

// The error codes.
const (
	CodeMalformed ErrorCode = iota + 1 // the text inside a tool call does not have the format's shape
	CodeTruncated                      // the stream ended inside a tool call
	CodeUnknown                        // New was given an unknown format
)

// Error is the one error type of this package; Offset is the byte offset in
// the whole stream where it was found.
type Error struct {
	Code   ErrorCode
	Msg    string
	Offset int
}

// Error formats the error with its offset.
func (e *Error) Error() string {
	return fmt.Sprintf("toolcall: %s at byte %d", e.Msg, e.Offset)
}

// Parser consumes a model's output chunk by chunk.
type Parser interface {
	// Feed consumes the next chunk and returns the events now certain.
	Feed(chunk string) ([]Event, error)
	// Close ends the stream, flushing held-back text.
	Close() ([]Event, error)
}

// New returns a fresh Parser for f.
func New(f Format) (Parser, error) {
	switch f {
	case FormatHermes:
		return newTagged("<tool_call>", "</tool_call>"), nil
	case FormatQwenCoder:
		return newTagged("<tools>", "</tools>"), nil
	case FormatLlama3JSON:
		return newLlama3(), nil
	case FormatMistral:
		return newMistral(), nil
	}
	return nil, &Error{Code: CodeUnknown, Msg: fmt.Sprintf("unknown tool-call format %q", f)}
}

// Call is one complete tool call, as Collect assembles it.
type Call struct {
	Name      string
	Arguments string // raw JSON text
}

// Collect feeds all chunks to p and closes it, returning the concatenated
// content and the complete calls: the non-streaming view of a response.
func Collect(p Parser, chunks ...string) (content string, calls []Call, err error) {
	var b strings.Builder
	apply := func(evs []Event) {
		for _, e := range evs {
			switch e.Kind {
			case EventContent:
				b.WriteString(e.Text)
			case EventToolName:
				calls = append(calls, Call{Name: e.Text})
			case EventToolArgs:
				if e.Index < len(calls) {
					calls[e.Index].Arguments += e.Text
				}
			}
		}
	}
	for _, c := range chunks {
		evs, err := p.Feed(c)
		apply(evs)
		if err != nil {
			return b.String(), calls, err
		}
	}
	evs, err := p.Close()
	apply(evs)
	return b.String(), calls, err
}

// overlap returns the length of the longest suffix of s that is a proper
// prefix of tag: the text to hold back because the next chunk may complete
// the tag.
func overlap(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// decodeName decodes the raw JSON string (with quotes) of a call's name.
func decodeName(raw string) (string, bool) {
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return "", false
	}
	return s, true
}
