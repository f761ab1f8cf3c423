package turn

import (
	"fmt"
	"strings"

	"conform/runner"
)

// EventKind says what an Event carries.
type EventKind uint8

// The event kinds. A choice's stream is any sequence of content, reasoning
// and call events, then exactly one EventFinish. Call events of one call
// come in order: EventCallStart, EventCallArgs fragments, EventCallEnd.
const (
	EventContent   EventKind = iota + 1 // Text is assistant content
	EventReasoning                      // Text is reasoning (thinking) text, from the turn's reasoning block
	EventCallStart                      // call Index starts; Name is its function
	EventCallArgs                       // Text is the next fragment of call Index's arguments (raw JSON text)
	EventCallEnd                        // call Index is complete
	EventFinish                         // the choice ended; Finish says how
)

var eventKindNames = [...]string{
	EventContent:   "content",
	EventReasoning: "reasoning",
	EventCallStart: "call_start",
	EventCallArgs:  "call_args",
	EventCallEnd:   "call_end",
	EventFinish:    "finish",
}

// String returns the kind's name, such as "call_args".
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Event is one certain piece of a generated turn, in no API's shape: the
// wire adapters of cmd/serve turn events into Chat Completions chunks, and
// the same events serve any API that streams content, reasoning and tool
// calls (Anthropic's content blocks, Responses' output items).
type Event struct {
	Kind   EventKind
	Index  int     // call events: the call, 0-based within the choice
	Name   string  // EventCallStart: the function
	Text   string  // EventContent, EventReasoning, EventCallArgs
	Finish *Finish // EventFinish
}

// FinishReason says why a choice ended normally, in no API's words; each
// adapter maps it to its own (OpenAI's "stop" / "tool_calls" / "length",
// Anthropic's "end_turn" / "tool_use" / "stop_sequence" / "max_tokens").
type FinishReason string

// The finish reasons.
const (
	// FinishEnd: the model ended its turn (EOS), or the constraint
	// completed the output.
	FinishEnd FinishReason = "end"
	// FinishStopSequence: a stop sequence of the request appeared in the
	// text (the runner drops it and what follows).
	FinishStopSequence FinishReason = "stop_sequence"
	// FinishToolCalls: the turn made tool calls and ended normally (by
	// EOS, the constraint, or a stop sequence).
	FinishToolCalls FinishReason = "tool_calls"
	// FinishLength: the request's token limit ended the output (or the
	// limit closed a constrained output early, see runner.FinishLength).
	FinishLength FinishReason = "length"
	// FinishContext: the sequence filled the context.
	FinishContext FinishReason = "context"
)

// ReasonOf is the FinishReason of a runner finish for a turn that made
// calls tool calls; it is "" for an error or a cancellation, which are not
// a normal finish (Finish.Err says what happened).
func ReasonOf(f runner.FinishReason, calls int) FinishReason {
	var r FinishReason
	switch f {
	case runner.FinishEOS, runner.FinishConstraint:
		r = FinishEnd
	case runner.FinishStop:
		r = FinishStopSequence
	case runner.FinishLength:
		return FinishLength
	case runner.FinishContext:
		return FinishContext
	default:
		return ""
	}
	if calls > 0 {
		return FinishToolCalls
	}
	return r
}

// Finish is how one choice ended.
type Finish struct {
	// Reason is why it ended normally; "" when Err is set.
	Reason FinishReason
	// Calls is the number of tool calls the turn started.
	Calls int
	// Usage counts the choice's tokens (zero when it never started).
	Usage runner.Usage
	// StopSequence is the stop sequence that ended the choice (Reason
	// FinishStopSequence), as the request gave it.
	StopSequence string
	// Err is set when the choice failed or was cancelled: a runner error
	// (runner.CodePanic for a recovered panic), or the context's error.
	Err error
}

// Logprob is one output token's log-probability, for APIs that report
// them: its text (a special token by its name), its bytes, and the most
// likely alternatives (Top, nil for an alternative itself and for a token
// the constraint forced).
type Logprob struct {
	Token   string
	Bytes   []byte
	Logprob float64
	Top     []Logprob
}

// Call is one complete tool call, as Message gathers it.
type Call struct {
	Name      string
	Arguments string // the arguments as generated: a JSON text
}

// Message folds one choice's events into what a response that is not
// streamed shows: the content, the reasoning, the calls and the finish.
// The zero value is ready to use.
type Message struct {
	content, reasoning strings.Builder
	// Calls are the choice's tool calls, by index.
	Calls []Call
	// Finish is the choice's finish, once its EventFinish was added.
	Finish *Finish
}

// Add folds events into m, in order.
func (m *Message) Add(events ...Event) {
	for _, e := range events {
		m.add(e)
	}
}

func (m *Message) add(e Event) {
	switch e.Kind {
	case EventContent:
		m.content.WriteString(e.Text)
	case EventReasoning:
		m.reasoning.WriteString(e.Text)
	case EventCallStart:
		for len(m.Calls) <= e.Index {
			m.Calls = append(m.Calls, Call{})
		}
		m.Calls[e.Index].Name = e.Name
	case EventCallArgs:
		if e.Index < len(m.Calls) {
			m.Calls[e.Index].Arguments += e.Text
		}
	case EventFinish:
		m.Finish = e.Finish
	}
}

// Content returns the content so far.
func (m *Message) Content() string { return m.content.String() }

// Reasoning returns the reasoning text so far.
func (m *Message) Reasoning() string { return m.reasoning.String() }

// Merge folds a sequence of events into content and complete calls.
func Merge(events []Event) (content string, calls []Call) {
	var m Message
	m.Add(events...)
	return m.Content(), m.Calls
}
