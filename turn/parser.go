package turn

import (
	"bytes"
	"encoding/json"
	"strings"
)

// pstate is the parser's state.
type pstate uint8

const (
	stStart     pstate = iota // start-only formats: deciding whether the turn is calls
	stText                    // content, watching for the trigger
	stContent                 // content to the end (no call can follow)
	stLiteral                 // matching p.expect, then going to p.next
	stName                    // reading the function name's JSON string body
	stArgs                    // streaming the arguments value
	stAfterCall               // between a call and the next separator or the end
	stDone                    // after the calls
)

// Parser turns generated text into content and tool-call events for one
// format, incrementally: Feed releases only events that are certain, holding
// back the longest suffix that could still start a marker. Splitting the same
// text at any points gives the same events once merged (see Merge).
//
// It follows the wrapper strings the constraint enforces; text that departs
// from them (possible only without a constraint) is released as content.
// A Parser is not safe for concurrent use.
type Parser struct {
	sx     syntax
	state  pstate
	next   pstate // after stLiteral
	expect string
	buf    []byte
	index  int // calls started
	name   []byte
	scan   jsonScan
	inCall bool
	// pending holds the markup consumed since the last certain point, so
	// that text leaving the format is released whole, whatever the splits.
	pending []byte
	// clean drops the format's special-token markers and stray bytes that
	// are not UTF-8 from content (see cleanEvents); a Turn's parsers do.
	clean bool
	// think, when set, reads the turn's reasoning block before the format
	// sees any text (reasoning.go).
	think *thinkReader
}

// NewParser returns a parser for format f with the vocabulary's special
// markers (see Options.IsSpecial). It releases content as generated; the
// parsers of a Turn also clean it (Turn.NewParser).
func NewParser(f Format, isSpecial func(string) bool) (*Parser, error) {
	sx, ok := formats[f]
	if !ok {
		return nil, &Error{Code: CodeUnknownFormat, Msg: "unknown tool-call format " + string(f)}
	}
	return newParser(sx.resolved(isSpecial), true, false), nil
}

// newParser returns a parser over the resolved syntax sx. Without calls
// every byte is content (a turn whose constraint allows no call, or that
// offers no tools): the parser then only cleans it, when clean is set.
func newParser(sx syntax, calls, clean bool) *Parser {
	p := &Parser{sx: sx, state: stText, clean: clean}
	switch {
	case !calls:
		p.state = stContent
	case p.sx.Trigger == "":
		p.state = stStart
	}
	return p
}

// Feed adds generated text and returns the events it makes certain.
func (p *Parser) Feed(s string) []Event {
	ev, s := p.think.feed(s, false)
	p.buf = append(p.buf, s...)
	return append(ev, p.cleaned(p.run(nil, false))...)
}

// Close ends the text: held-back content is released, a call cut short (the
// output hit its token limit) is ended with the arguments it has, and partial
// markup is dropped.
func (p *Parser) Close() []Event {
	ev, s := p.think.feed("", true)
	p.buf = append(p.buf, s...)
	return append(ev, p.cleaned(p.run(nil, true))...)
}

func (p *Parser) cleaned(evs []Event) []Event {
	if !p.clean {
		return evs
	}
	return cleanEvents(evs, p.sx.markerBytes)
}

// Calls returns the number of calls started so far.
func (p *Parser) Calls() int { return p.index }

func (p *Parser) emit(ev []Event, e Event) []Event {
	if e.Text == "" && (e.Kind == EventContent || e.Kind == EventCallArgs) {
		return ev
	}
	if n := len(ev); n > 0 && ev[n-1].Kind == e.Kind && (e.Kind == EventContent || e.Kind == EventCallArgs) && ev[n-1].Index == e.Index {
		ev[n-1].Text += e.Text
		return ev
	}
	return append(ev, e)
}

// fallback handles text that left the format (never the case under the
// format's constraint): the markup consumed since the last certain point is
// given back and scanned again as text, its first byte released as content
// (so the scan makes progress). Formats whose calls only open the turn release
// everything as content. The result does not depend on how the text was split.
func (p *Parser) fallback(ev []Event) []Event {
	if p.inCall {
		ev = p.emit(ev, Event{Kind: EventCallEnd, Index: p.index - 1})
		p.inCall = false
	}
	rest := append(append([]byte(nil), p.pending...), p.buf...)
	p.pending = p.pending[:0]
	if p.sx.Trigger == "" || len(rest) == 0 {
		p.buf = rest
		p.state = stContent
		return ev
	}
	ev = p.emit(ev, Event{Kind: EventContent, Text: string(rest[:1])})
	p.buf = rest[1:]
	p.state = stText
	return ev
}

// firstCall is what follows the trigger up to the name: the rest of
// Begin+CallOpen and the call prefix.
func (p *Parser) firstCall() string { return p.sx.Begin + p.sx.CallOpen + callPrefix }

func (p *Parser) run(ev []Event, eof bool) []Event {
	for {
		switch p.state {
		case stStart:
			b := string(p.buf)
			begin := p.sx.Begin + p.sx.CallOpen + callPrefix
			plain := p.sx.CallOpen + callPrefix
			switch {
			case strings.HasPrefix(b, begin):
				p.pending = append(p.pending[:0], begin...)
				p.buf = p.buf[len(begin):]
				p.state = stName
				continue
			case strings.HasPrefix(b, plain):
				p.pending = append(p.pending[:0], plain...)
				p.buf = p.buf[len(plain):]
				p.state = stName
				continue
			case !eof && (strings.HasPrefix(begin, b) || strings.HasPrefix(plain, b)):
				return ev
			}
			p.state = stContent
		case stContent:
			ev = p.emit(ev, Event{Kind: EventContent, Text: string(p.buf)})
			p.buf = p.buf[:0]
			return ev
		case stText:
			trig := p.sx.Trigger
			if i := bytes.Index(p.buf, []byte(trig)); i >= 0 {
				ev = p.emit(ev, Event{Kind: EventContent, Text: string(p.buf[:i])})
				p.pending = append(p.pending[:0], trig...)
				p.buf = p.buf[i+len(trig):]
				p.state, p.expect, p.next = stLiteral, strings.TrimPrefix(p.firstCall(), trig), stName
				continue
			}
			keep := 0
			if !eof {
				keep = overlap(p.buf, trig)
			}
			ev = p.emit(ev, Event{Kind: EventContent, Text: string(p.buf[:len(p.buf)-keep])})
			p.buf = append(p.buf[:0], p.buf[len(p.buf)-keep:]...)
			return ev
		case stLiteral:
			n := min(len(p.expect), len(p.buf))
			if string(p.buf[:n]) != p.expect[:n] {
				ev = p.fallback(ev)
				continue
			}
			p.pending = append(p.pending, p.buf[:n]...)
			p.buf = p.buf[n:]
			p.expect = p.expect[n:]
			if p.expect != "" {
				if eof {
					return p.cut(ev)
				}
				return ev
			}
			p.state = p.next
		case stName:
			end := -1
			esc := false
			for i, c := range p.buf {
				if esc {
					esc = false
				} else if c == '\\' {
					esc = true
				} else if c == '"' {
					end = i
					break
				}
			}
			if end < 0 {
				if eof {
					return p.cut(ev)
				}
				return ev
			}
			var name string
			if err := json.Unmarshal(append(append([]byte{'"'}, p.buf[:end]...), '"'), &name); err != nil {
				ev = p.fallback(ev)
				continue
			}
			p.buf = p.buf[end+1:]
			p.pending = p.pending[:0]
			ev = p.emit(ev, Event{Kind: EventCallStart, Index: p.index, Name: name})
			p.index++
			p.inCall = true
			p.scan = jsonScan{}
			p.state, p.expect, p.next = stLiteral, `, "`+p.sx.ArgsKey+`": `, stArgs
		case stArgs:
			n, done := p.scan.feed(p.buf)
			ev = p.emit(ev, Event{Kind: EventCallArgs, Index: p.index - 1, Text: string(p.buf[:n])})
			p.buf = p.buf[n:]
			if !done {
				if eof {
					return p.cut(ev)
				}
				return ev
			}
			ev = p.emit(ev, Event{Kind: EventCallEnd, Index: p.index - 1})
			p.inCall = false
			p.pending = p.pending[:0]
			p.state, p.expect, p.next = stLiteral, "}"+p.sx.CallClose, stAfterCall
		case stAfterCall:
			more := p.sx.Sep + p.sx.CallOpen + callPrefix
			b := string(p.buf)
			switch {
			case strings.HasPrefix(b, more):
				p.pending = append(p.pending[:0], more...)
				p.buf = p.buf[len(more):]
				p.state = stName
				continue
			case p.sx.End != "" && strings.HasPrefix(b, p.sx.End):
				p.pending = p.pending[:0]
				p.buf = p.buf[len(p.sx.End):]
				p.state = stDone
				continue
			case len(b) == 0 || !eof && (strings.HasPrefix(more, b) || strings.HasPrefix(p.sx.End, b)):
				p.pending = p.pending[:0]
				return ev
			}
			p.pending = p.pending[:0]
			ev = p.fallback(ev)
		case stDone:
			// Nothing follows the calls under the constraint; anything
			// else is released rather than lost.
			ev = p.emit(ev, Event{Kind: EventContent, Text: string(p.buf)})
			p.buf = p.buf[:0]
			return ev
		}
	}
}

// cut ends the turn in the middle of markup (the token limit was hit): a call
// whose arguments started is ended, partial markup is dropped.
func (p *Parser) cut(ev []Event) []Event {
	if p.state == stArgs && len(p.buf) > 0 {
		ev = p.emit(ev, Event{Kind: EventCallArgs, Index: p.index - 1, Text: string(p.buf)})
	}
	if p.inCall {
		ev = p.emit(ev, Event{Kind: EventCallEnd, Index: p.index - 1})
		p.inCall = false
	}
	p.buf = p.buf[:0]
	p.pending = p.pending[:0]
	p.state = stDone
	return ev
}

// overlap returns the length of the longest proper suffix of b that is a
// prefix of tag: the bytes to hold back because they may start tag.
func overlap(b []byte, tag string) int {
	for k := min(len(b), len(tag)-1); k > 0; k-- {
		if string(b[len(b)-k:]) == tag[:k] {
			return k
		}
	}
	return 0
}

// jsonScan finds the end of one JSON value in a stream: it tracks nesting,
// strings and escapes; a top-level scalar other than a string ends at the
// first byte that cannot continue it.
type jsonScan struct {
	depth   int
	inStr   bool
	esc     bool
	started bool
	scalar  bool
}

// feed consumes bytes of the value from b and reports how many, and whether
// the value is complete (the bytes after it are not consumed).
func (s *jsonScan) feed(b []byte) (int, bool) {
	for i, c := range b {
		if s.scalar {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '+' || c == '-' {
				continue
			}
			return i, true
		}
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.depth == 0 {
					return i + 1, true
				}
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			s.started = true
		case '{', '[':
			s.depth++
			s.started = true
		case '}', ']':
			s.depth--
			if s.depth <= 0 {
				return i + 1, true
			}
		case ' ', '\t', '\n', '\r', ',', ':':
		default:
			if !s.started {
				s.scalar = true
				s.started = true
			}
		}
	}
	return len(b), false
}

// Parse runs a Parser of format f over a whole text.
func Parse(f Format, isSpecial func(string) bool, text string) (content string, calls []Call, err error) {
	p, err := NewParser(f, isSpecial)
	if err != nil {
		return "", nil, err
	}
	ev := p.Feed(text)
	ev = append(ev, p.Close()...)
	content, calls = Merge(ev)
	return content, calls, nil
}

// cleanEvents drops the special-token markers (markers, as written in
// generated text) and stray bytes that are not UTF-8 from content, and the
// content events this leaves empty. Either can appear only in output no
// constraint shaped: the detokenizer keeps a format's special markers as
// 0xFF-prefixed bytes so that the parser sees them, and a text marker is
// never 0xFF-prefixed. Cleaning works on each batch of events, as the
// runner releases whole tokens: a marker token's bytes come in one piece.
func cleanEvents(evs []Event, markers []string) []Event {
	out := evs[:0]
	for _, e := range evs {
		if e.Kind == EventContent && strings.IndexByte(e.Text, 0xFF) >= 0 {
			for _, mk := range markers {
				if mk != "" && mk[0] == 0xFF {
					e.Text = strings.ReplaceAll(e.Text, mk, "")
				}
			}
			e.Text = strings.ToValidUTF8(e.Text, "")
			if e.Text == "" {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}
