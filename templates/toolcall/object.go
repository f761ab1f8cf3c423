package toolcall

import "strings"

// objState is the state of callObject, the byte-level machine that reads one
// {"name": …, "arguments": …} object.
type objState uint8

const (
	objStart      objState = iota // before '{' (whitespace skipped)
	objKeyOrEnd                   // after '{': a key or '}'
	objKey                        // inside a key string
	objKeyEscape                  // after '\' inside a key
	objKeyNext                    // after ',': a key
	objColon                      // after a key: ':'
	objValueStart                 // after ':': whitespace, then a value
	objValue                      // inside a value (see valueScanner)
	objCommaOrEnd                 // after a value: ',' or '}'
	objDone                       // the closing '}' was read
)

// field is what the current value means.
type field uint8

const (
	fieldOther field = iota
	fieldName
	fieldArgs
)

// callObject reads one call object byte by byte and emits its events: the
// name once it is complete, then the raw argument text. Arguments written
// before the name are held until the name is known.
type callObject struct {
	state    objState
	index    int
	key      strings.Builder
	field    field
	scan     valueScanner
	nameRaw  strings.Builder
	named    bool
	sawArgs  bool
	pending  strings.Builder // argument text seen before the name
	run      strings.Builder // argument text not yet turned into an event
	argsKeys []string        // keys accepted as the arguments
}

func newCallObject(index int, argsKeys ...string) *callObject {
	return &callObject{index: index, argsKeys: argsKeys}
}

func (o *callObject) done() bool { return o.state == objDone }

// feed consumes one byte, appending events to *evs; ok is false when the
// byte cannot continue a call object.
func (o *callObject) feed(c byte, evs *[]Event) (ok bool, msg string) {
	for {
		switch o.state {
		case objStart:
			if isSpace(c) {
				return true, ""
			}
			if c != '{' {
				return false, "expected '{' to start a tool call"
			}
			o.state = objKeyOrEnd
			return true, ""
		case objKeyOrEnd, objKeyNext:
			if isSpace(c) {
				return true, ""
			}
			if c == '}' && o.state == objKeyOrEnd {
				return o.finish(evs)
			}
			if c != '"' {
				return false, "expected a key in the tool call object"
			}
			o.key.Reset()
			o.state = objKey
			return true, ""
		case objKey:
			switch c {
			case '\\':
				o.state = objKeyEscape
			case '"':
				o.state = objColon
			default:
				o.key.WriteByte(c)
			}
			return true, ""
		case objKeyEscape:
			o.key.WriteByte(c)
			o.state = objKey
			return true, ""
		case objColon:
			if isSpace(c) {
				return true, ""
			}
			if c != ':' {
				return false, "expected ':' after a key"
			}
			o.field = fieldOther
			switch k := o.key.String(); {
			case k == "name":
				o.field = fieldName
			case o.isArgsKey(k):
				o.field = fieldArgs
				o.sawArgs = true
			}
			o.state = objValueStart
			return true, ""
		case objValueStart:
			if isSpace(c) {
				return true, ""
			}
			if o.field == fieldName && c != '"' {
				return false, "the tool name must be a string"
			}
			o.scan = valueScanner{}
			o.state = objValue
			continue // the first byte belongs to the value
		case objValue:
			consumed := o.scan.push(c)
			if consumed {
				o.take(c, evs)
			}
			if o.scan.done {
				if ok, msg := o.endValue(evs); !ok {
					return false, msg
				}
				o.state = objCommaOrEnd
			}
			if consumed {
				return true, ""
			}
			continue // a byte that ended a bare scalar is read again
		case objCommaOrEnd:
			if isSpace(c) {
				return true, ""
			}
			switch c {
			case ',':
				o.state = objKeyNext
				return true, ""
			case '}':
				return o.finish(evs)
			}
			return false, "expected ',' or '}' in the tool call object"
		case objDone:
			return false, "text after the tool call object"
		}
	}
}

func (o *callObject) isArgsKey(k string) bool {
	for _, a := range o.argsKeys {
		if k == a {
			return true
		}
	}
	return false
}

// take routes one byte of a value.
func (o *callObject) take(c byte, evs *[]Event) {
	switch o.field {
	case fieldName:
		o.nameRaw.WriteByte(c)
	case fieldArgs:
		if o.named {
			o.run.WriteByte(c)
		} else {
			o.pending.WriteByte(c)
		}
	}
}

// flush turns the argument text read so far into an event; the machines
// call it at the end of every Feed.
func (o *callObject) flush(evs *[]Event) {
	if o.run.Len() > 0 {
		*evs = appendEvent(*evs, Event{Kind: EventToolArgs, Index: o.index, Text: o.run.String()})
		o.run.Reset()
	}
}

func (o *callObject) endValue(evs *[]Event) (bool, string) {
	o.flush(evs)
	if o.field != fieldName || o.named {
		return true, ""
	}
	name, ok := decodeName(o.nameRaw.String())
	if !ok {
		return false, "the tool name is not a valid JSON string"
	}
	o.named = true
	*evs = appendEvent(*evs, Event{Kind: EventToolName, Index: o.index, Text: name})
	if o.pending.Len() > 0 {
		*evs = appendEvent(*evs, Event{Kind: EventToolArgs, Index: o.index, Text: o.pending.String()})
		o.pending.Reset()
	}
	return true, ""
}

func (o *callObject) finish(evs *[]Event) (bool, string) {
	if !o.named {
		return false, "the tool call has no name"
	}
	if !o.sawArgs {
		*evs = appendEvent(*evs, Event{Kind: EventToolArgs, Index: o.index, Text: "{}"})
	}
	o.state = objDone
	return true, ""
}

// valueScanner follows one JSON value's structure: an object or array to
// its matching bracket, a string to its closing quote, a bare scalar
// (number, true, false, null) to the byte after it.
type valueScanner struct {
	started bool
	kind    byte // '{' (object or array), '"' (string) or 'b' (bare)
	depth   int
	inStr   bool
	esc     bool
	done    bool
}

// push consumes c; it returns false when c ends a bare scalar without
// belonging to it.
func (v *valueScanner) push(c byte) bool {
	if !v.started {
		v.started = true
		switch c {
		case '{', '[':
			v.kind, v.depth = '{', 1
		case '"':
			v.kind, v.inStr = '"', true
		default:
			v.kind = 'b'
		}
		return true
	}
	if v.inStr {
		switch {
		case v.esc:
			v.esc = false
		case c == '\\':
			v.esc = true
		case c == '"':
			v.inStr = false
			if v.kind == '"' {
				v.done = true
			}
		}
		return true
	}
	switch v.kind {
	case 'b':
		if isSpace(c) || c == ',' || c == '}' || c == ']' {
			v.done = true
			return false
		}
		return true
	case '{':
		switch c {
		case '"':
			v.inStr = true
		case '{', '[':
			v.depth++
		case '}', ']':
			v.depth--
			if v.depth == 0 {
				v.done = true
			}
		}
	}
	return true
}

// appendEvent appends e, merging it into the previous event when both are
// content or both are argument text of the same call.
func appendEvent(evs []Event, e Event) []Event {
	if e.Text == "" && e.Kind != EventToolName {
		return evs
	}
	if n := len(evs); n > 0 && e.Kind != EventToolName && evs[n-1].Kind == e.Kind && evs[n-1].Index == e.Index {
		evs[n-1].Text += e.Text
		return evs
	}
	return append(evs, e)
}
