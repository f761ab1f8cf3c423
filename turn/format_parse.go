package turn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is the call-reading part of the Parser: a state machine over
// the flattened format (syntax), the same pieces the constraint is built
// from. Each state consumes what is certain and holds back the longest
// tail that could still start the marker it waits for, so the events do
// not depend on how the text was split.

// pstate is the parser's state.
type pstate uint8

const (
	stStart     pstate = iota // start-only formats: deciding whether the turn is calls
	stText                    // content, watching for the trigger
	stContent                 // content to the end (no call can follow)
	stLiteral                 // matching p.expect, then going to p.next
	stName                    // reading the function name
	stIndex                   // reading the call index (Description.Index)
	stArgs                    // streaming a JSON arguments value
	stParams                  // ArgsParams: before a parameter or the end of the call
	stKey                     // ArgsParams: reading a parameter's key
	stValue                   // ArgsParams: streaming a parameter's value
	stAfterCall               // between a call and the next separator or the end
	stDone                    // after the calls
)

// maxKeyBytes bounds a parameter key the parser holds while waiting for
// its closing marker: longer property names are refused by Build, so
// text that runs on is not a key.
const maxKeyBytes = 1024

// maxNameBytes is the longest function name (validName).
const maxNameBytes = 64

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
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

// literal makes the parser match s next, then go to next.
func (p *Parser) literal(s string, next pstate) {
	p.state, p.expect, p.next = stLiteral, s, next
}

// argsState is the state that reads a call's arguments.
func (p *Parser) argsState() pstate {
	if p.sx.Params {
		p.nparams = 0
		return stParams
	}
	p.scan = jsonScan{}
	return stArgs
}

// afterName is what follows the name: the index or the arguments.
func (p *Parser) afterName() pstate {
	if p.sx.Index {
		return stIndex
	}
	return p.argsState()
}

// hold reports whether b could still become one of the strings.
func hold(b string, ss ...string) bool {
	for _, s := range ss {
		if s != "" && strings.HasPrefix(s, b) {
			return true
		}
	}
	return false
}

func (p *Parser) run(ev []Event, eof bool) []Event {
	for {
		switch p.state {
		case stStart:
			b := string(p.buf)
			begin := p.sx.Begin + p.sx.Open
			plain := ""
			if p.sx.OptBegin {
				plain = p.sx.Open
			}
			switch {
			case p.sx.Content != "" && strings.HasPrefix(b, p.sx.Content):
				p.buf = p.buf[len(p.sx.Content):]
				p.state = stContent
				continue
			case p.noCalls:
				if !eof && strings.HasPrefix(p.sx.Content, b) && len(b) < len(p.sx.Content) {
					return ev // may still be the content opening
				}
			case strings.HasPrefix(b, begin):
				p.pending = append(p.pending[:0], begin...)
				p.buf = p.buf[len(begin):]
				p.state = stName
				continue
			case plain != "" && strings.HasPrefix(b, plain):
				p.pending = append(p.pending[:0], plain...)
				p.buf = p.buf[len(plain):]
				p.state = stName
				continue
			case !eof && hold(b, begin, plain, p.sx.Content):
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
				p.literal(strings.TrimPrefix(p.sx.Begin+p.sx.Open, trig), stName)
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
			i := 0
			for i < len(p.buf) && i <= maxNameBytes && isNameByte(p.buf[i]) {
				i++
			}
			if i == len(p.buf) && i <= maxNameBytes {
				if eof {
					return p.cut(ev)
				}
				return ev
			}
			if i == 0 || i > maxNameBytes {
				ev = p.fallback(ev)
				continue
			}
			p.tool = string(p.buf[:i])
			p.buf = p.buf[i:]
			p.pending = p.pending[:0]
			ev = p.emit(ev, Event{Kind: EventCallStart, Index: p.index, Name: p.tool})
			p.index++
			p.inCall = true
			p.literal(p.sx.NameEnd, p.afterName())
		case stIndex:
			i := 0
			for i < len(p.buf) && p.buf[i] >= '0' && p.buf[i] <= '9' {
				i++
			}
			if i == len(p.buf) {
				if eof {
					return p.cut(ev)
				}
				return ev
			}
			if i == 0 {
				ev = p.fallback(ev)
				continue
			}
			p.pending = append(p.pending, p.buf[:i]...)
			p.buf = p.buf[i:]
			p.literal(p.sx.IndexEnd, p.argsState())
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
			ev = p.endCall(ev)
			p.literal(p.sx.Close, stAfterCall)
		case stParams:
			b := string(p.buf)
			switch {
			case strings.HasPrefix(b, p.sx.POpen):
				p.pending = append(p.pending[:0], p.sx.POpen...)
				p.buf = p.buf[len(p.sx.POpen):]
				p.state = stKey
				continue
			case strings.HasPrefix(b, p.sx.Close):
				p.buf = p.buf[len(p.sx.Close):]
				if p.nparams == 0 {
					ev = p.args(ev, "{}")
				} else {
					ev = p.args(ev, "}")
				}
				ev = p.endCall(ev)
				p.state = stAfterCall
				continue
			case !eof && hold(b, p.sx.POpen, p.sx.Close):
				return ev
			case eof:
				return p.cut(ev)
			}
			ev = p.fallback(ev)
		case stKey:
			i := bytes.Index(p.buf, []byte(p.sx.PKeyEnd))
			if i < 0 {
				if len(p.buf) <= maxKeyBytes+len(p.sx.PKeyEnd) {
					if eof {
						return p.cut(ev)
					}
					return ev
				}
				ev = p.fallback(ev)
				continue
			}
			key := p.buf[:i]
			if i == 0 || i > maxKeyBytes || !utf8.Valid(key) {
				ev = p.fallback(ev)
				continue
			}
			sep := ", "
			if p.nparams == 0 {
				sep = "{"
			}
			p.nparams++
			p.kind = p.kinds[p.tool][string(key)]
			ev = p.args(ev, sep+quoteJSON(key)+": ")
			if p.kind == paramRaw {
				ev = p.args(ev, `"`)
			}
			p.val = p.val[:0]
			p.buf = p.buf[i+len(p.sx.PKeyEnd):]
			p.pending = p.pending[:0]
			p.state = stValue
		case stValue:
			if i := bytes.Index(p.buf, []byte(p.sx.PClose)); i >= 0 {
				ev = p.value(ev, p.buf[:i], true)
				p.buf = p.buf[i+len(p.sx.PClose):]
				p.state = stParams
				continue
			}
			if eof {
				ev = p.value(ev, p.buf, false)
				p.buf = p.buf[:0]
				return p.cut(ev)
			}
			n := len(p.buf) - overlap(p.buf, p.sx.PClose)
			if p.kind == paramRaw {
				n -= incompleteTail(p.buf[:n])
			}
			ev = p.value(ev, p.buf[:n], false)
			p.buf = append(p.buf[:0], p.buf[n:]...)
			return ev
		case stAfterCall:
			if p.sx.Single {
				p.state = stDone
				continue
			}
			more := p.sx.Sep + p.sx.Open
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
			case len(b) == 0 || !eof && hold(b, more, p.sx.End):
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

// args emits a fragment of the current call's arguments.
func (p *Parser) args(ev []Event, s string) []Event {
	return p.emit(ev, Event{Kind: EventCallArgs, Index: p.index - 1, Text: s})
}

// endCall ends the current call.
func (p *Parser) endCall(ev []Event) []Event {
	ev = p.emit(ev, Event{Kind: EventCallEnd, Index: p.index - 1})
	p.inCall = false
	p.pending = p.pending[:0]
	return ev
}

// value emits the next bytes b of a parameter's value, and its end when
// last: a raw value JSON-quoted, a JSON value as it is, a value of unknown
// kind (a parser without the tools' schemas) held to its end and written as
// it is when it is JSON, else quoted.
func (p *Parser) value(ev []Event, b []byte, last bool) []Event {
	switch p.kind {
	case paramRaw:
		ev = p.args(ev, escapeRaw(b))
		if last {
			ev = p.args(ev, `"`)
		}
	case paramJSON:
		ev = p.args(ev, string(b))
	default:
		p.val = append(p.val, b...)
		if last {
			if len(bytes.TrimSpace(p.val)) > 0 && json.Valid(p.val) {
				ev = p.args(ev, string(p.val))
			} else {
				ev = p.args(ev, quoteJSON(p.val))
			}
			p.val = p.val[:0]
		}
	}
	return ev
}

// cut ends the turn in the middle of markup (the token limit was hit): a call
// whose arguments started is ended, partial markup is dropped.
func (p *Parser) cut(ev []Event) []Event {
	if p.state == stArgs && len(p.buf) > 0 {
		ev = p.args(ev, string(p.buf))
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

// incompleteTail is the length of the start of a UTF-8 sequence that ends
// b, which the next bytes may complete (0 when b ends on a whole rune or an
// invalid byte).
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		if c := b[len(b)-k]; c >= 0xC0 {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// escapeRaw writes raw text as the body of a JSON string: the short
// escapes, \u00XX for other control characters, U+FFFD for each byte that
// is not UTF-8 (one per byte, so the result does not depend on splits at
// rune boundaries).
func escapeRaw(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			s.WriteString(`\ufffd`)
		case r == '"':
			s.WriteString(`\"`)
		case r == '\\':
			s.WriteString(`\\`)
		case r == '\n':
			s.WriteString(`\n`)
		case r == '\r':
			s.WriteString(`\r`)
		case r == '\t':
			s.WriteString(`\t`)
		case r == '\b':
			s.WriteString(`\b`)
		case r == '\f':
			s.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&s, `\u%04x`, r)
		default:
			s.Write(b[:n])
		}
		b = b[n:]
	}
	return s.String()
}

// quoteJSON is b as a JSON string.
func quoteJSON(b []byte) string { return `"` + escapeRaw(b) + `"` }

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
