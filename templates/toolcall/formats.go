package toolcall

import "strings"

// machine holds what every format's parser shares: the held-back text, the
// current call object, the call count, the stream offset and the sticky
// error.
type machine struct {
	buf      string // text held back (a possible tag prefix)
	obj      *callObject
	calls    int
	consumed int // bytes of the stream before the current text
	err      *Error
	argsKeys []string
}

func (m *machine) fail(code ErrorCode, msg string, at int) error {
	m.err = &Error{Code: code, Msg: msg, Offset: m.consumed + at}
	return m.err
}

func (m *machine) startCall() {
	m.obj = newCallObject(m.calls, m.argsKeys...)
	m.calls++
}

// feedObject feeds text[i] to the current call object.
func (m *machine) feedObject(text string, i int, evs *[]Event) error {
	if ok, msg := m.obj.feed(text[i], evs); !ok {
		return m.fail(CodeMalformed, msg, i)
	}
	return nil
}

func (m *machine) flushObject(evs *[]Event) {
	if m.obj != nil {
		m.obj.flush(evs)
	}
}

// ---- hermes and qwen_coder: <tag>{…}</tag> ----

type taggedState uint8

const (
	taggedContent   taggedState = iota // plain text, watching for the open tag
	taggedCall                         // inside the call object
	taggedAfterCall                    // after the object: whitespace, then the close tag
)

type tagged struct {
	machine
	open, close string
	state       taggedState
}

func newTagged(open, close string) *tagged {
	return &tagged{open: open, close: close, machine: machine{argsKeys: []string{"arguments", "parameters"}}}
}

func (p *tagged) Feed(chunk string) ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	text := p.buf + chunk
	p.consumed -= len(p.buf)
	p.buf = ""
	var evs []Event
	err := p.run(text, &evs)
	p.flushObject(&evs)
	p.consumed += len(text)
	return evs, err
}

func (p *tagged) run(text string, evs *[]Event) error {
	for i := 0; i < len(text); {
		switch p.state {
		case taggedContent:
			rest := text[i:]
			if j := strings.Index(rest, p.open); j >= 0 {
				*evs = appendEvent(*evs, Event{Kind: EventContent, Text: rest[:j]})
				i += j + len(p.open)
				p.startCall()
				p.state = taggedCall
				continue
			}
			k := overlap(rest, p.open)
			*evs = appendEvent(*evs, Event{Kind: EventContent, Text: rest[:len(rest)-k]})
			p.buf = rest[len(rest)-k:]
			return nil
		case taggedCall:
			if err := p.feedObject(text, i, evs); err != nil {
				return err
			}
			i++
			if p.obj.done() {
				p.state = taggedAfterCall
			}
		case taggedAfterCall:
			if isSpace(text[i]) {
				i++
				continue
			}
			rest := text[i:]
			switch {
			case strings.HasPrefix(rest, p.close):
				i += len(p.close)
				p.state = taggedContent
			case strings.HasPrefix(p.close, rest):
				p.buf = rest
				return nil
			default:
				return p.fail(CodeMalformed, "expected "+p.close+" after the tool call", i)
			}
		}
	}
	return nil
}

func (p *tagged) Close() ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	var evs []Event
	switch p.state {
	case taggedContent:
		evs = appendEvent(evs, Event{Kind: EventContent, Text: p.buf})
	case taggedCall:
		return nil, p.fail(CodeTruncated, "the stream ended inside a tool call", 0)
	case taggedAfterCall:
		// A missing close tag at the end of the stream is tolerated.
	}
	p.buf = ""
	return evs, nil
}

// ---- llama3_json: [<|python_tag|>]{…}[; {…}] ----

type llamaState uint8

const (
	llamaStart   llamaState = iota // undecided: leading whitespace held back
	llamaContent                   // the output is plain text
	llamaCall                      // inside a call object
	llamaBetween                   // after a call: whitespace or ';', then another '{'
)

const pythonTag = "<|python_tag|>"

type llama3 struct {
	machine
	state llamaState
}

func newLlama3() *llama3 {
	return &llama3{machine: machine{argsKeys: []string{"parameters", "arguments"}}}
}

func (p *llama3) Feed(chunk string) ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	text := p.buf + chunk
	p.consumed -= len(p.buf)
	p.buf = ""
	var evs []Event
	err := p.run(text, &evs)
	p.flushObject(&evs)
	p.consumed += len(text)
	return evs, err
}

func (p *llama3) run(text string, evs *[]Event) error {
	for i := 0; i < len(text); {
		switch p.state {
		case llamaStart:
			j := i
			for j < len(text) && isSpace(text[j]) {
				j++
			}
			rest := text[j:]
			switch {
			case rest == "":
				p.buf = text[i:]
				return nil
			case strings.HasPrefix(rest, pythonTag):
				i = j + len(pythonTag)
				p.state = llamaBetween
			case strings.HasPrefix(pythonTag, rest):
				p.buf = text[i:]
				return nil
			case rest[0] == '{':
				i = j
				p.state = llamaBetween
			default:
				p.state = llamaContent
			}
		case llamaContent:
			*evs = appendEvent(*evs, Event{Kind: EventContent, Text: text[i:]})
			return nil
		case llamaBetween:
			c := text[i]
			switch {
			case isSpace(c) || c == ';':
				i++
			case c == '{':
				p.startCall()
				p.state = llamaCall
			default:
				return p.fail(CodeMalformed, "expected '{' to start a tool call", i)
			}
		case llamaCall:
			if err := p.feedObject(text, i, evs); err != nil {
				return err
			}
			i++
			if p.obj.done() {
				p.state = llamaBetween
			}
		}
	}
	return nil
}

func (p *llama3) Close() ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	var evs []Event
	switch p.state {
	case llamaStart:
		evs = appendEvent(evs, Event{Kind: EventContent, Text: p.buf})
	case llamaCall:
		return nil, p.fail(CodeTruncated, "the stream ended inside a tool call", 0)
	}
	p.buf = ""
	return evs, nil
}

// ---- mistral: [TOOL_CALLS][{…}, …] ----

type mistralState uint8

const (
	mistralContent   mistralState = iota // plain text, watching for [TOOL_CALLS]
	mistralOpen                          // after the tag: whitespace, then '['
	mistralItem                          // expecting '{' (or ']' for an empty list)
	mistralCall                          // inside a call object
	mistralAfterItem                     // ',' or ']'
)

const toolCallsTag = "[TOOL_CALLS]"

type mistral struct {
	machine
	state mistralState
}

func newMistral() *mistral {
	return &mistral{machine: machine{argsKeys: []string{"arguments", "parameters"}}}
}

func (p *mistral) Feed(chunk string) ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	text := p.buf + chunk
	p.consumed -= len(p.buf)
	p.buf = ""
	var evs []Event
	err := p.run(text, &evs)
	p.flushObject(&evs)
	p.consumed += len(text)
	return evs, err
}

func (p *mistral) run(text string, evs *[]Event) error {
	for i := 0; i < len(text); {
		c := text[i]
		switch p.state {
		case mistralContent:
			rest := text[i:]
			if j := strings.Index(rest, toolCallsTag); j >= 0 {
				*evs = appendEvent(*evs, Event{Kind: EventContent, Text: rest[:j]})
				i += j + len(toolCallsTag)
				p.state = mistralOpen
				continue
			}
			k := overlap(rest, toolCallsTag)
			*evs = appendEvent(*evs, Event{Kind: EventContent, Text: rest[:len(rest)-k]})
			p.buf = rest[len(rest)-k:]
			return nil
		case mistralOpen:
			switch {
			case isSpace(c):
				i++
			case c == '[':
				i++
				p.state = mistralItem
			default:
				return p.fail(CodeMalformed, "expected '[' after [TOOL_CALLS]", i)
			}
		case mistralItem:
			switch {
			case isSpace(c):
				i++
			case c == '{':
				p.startCall()
				p.state = mistralCall
			case c == ']':
				i++
				p.state = mistralContent
			default:
				return p.fail(CodeMalformed, "expected a tool call object", i)
			}
		case mistralCall:
			if err := p.feedObject(text, i, evs); err != nil {
				return err
			}
			i++
			if p.obj.done() {
				p.state = mistralAfterItem
			}
		case mistralAfterItem:
			switch {
			case isSpace(c):
				i++
			case c == ',':
				i++
				p.state = mistralItem
			case c == ']':
				i++
				p.state = mistralContent
			default:
				return p.fail(CodeMalformed, "expected ',' or ']' after a tool call", i)
			}
		}
	}
	return nil
}

func (p *mistral) Close() ([]Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	var evs []Event
	switch p.state {
	case mistralContent:
		evs = appendEvent(evs, Event{Kind: EventContent, Text: p.buf})
	case mistralCall:
		return nil, p.fail(CodeTruncated, "the stream ended inside a tool call", 0)
	}
	p.buf = ""
	return evs, nil
}
