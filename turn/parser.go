package turn

import "strings"

// Parser turns generated text into content and tool-call events for one
// format, incrementally: Feed releases only events that are certain, holding
// back the longest suffix that could still start a marker. Splitting the same
// text at any points gives the same events once merged (see Merge).
//
// It follows the wrapper strings the constraint enforces; text that departs
// from them (possible only without a constraint) is released as content.
// A Parser is not safe for concurrent use.
type Parser struct {
	sx    syntax
	state pstate
	// noCalls: the turn holds no calls, only its text, which a format with
	// a content opening (harmony's final channel) still writes after it.
	noCalls bool
	next    pstate // after stLiteral
	expect  string
	buf     []byte
	index   int // calls started
	scan    jsonScan
	inCall  bool
	// pending holds the markup consumed since the last certain point, so
	// that text leaving the format is released whole, whatever the splits.
	pending []byte
	// tool is the function of the call being read; kinds say how its
	// ArgsParams parameters are written (nil: decided on each value);
	// kind is the current parameter's, nparams counts the parameters read
	// and val holds a value of unknown kind until its end.
	tool    string
	kinds   paramKinds
	kind    paramKind
	nparams int
	val     []byte
	// clean drops the format's special-token markers and stray bytes that
	// are not UTF-8 from content (see cleanEvents); a Turn's parsers do.
	clean bool
	// think, when set, reads the turn's reasoning block before the format
	// sees any text (reasoning.go).
	think *thinkReader
}

// NewParser returns a parser for format f with the vocabulary's special
// markers (see Options.IsSpecial). It releases content as generated; the
// parsers of a Turn also clean it (Turn.NewParser). Without the tools'
// schemas it cannot know which per-parameter values are strings: it holds
// each value to its end and writes it as it is when it is JSON, else as a
// JSON string (a Turn's parser knows, and streams every value).
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
	case !calls && sx.Content != "":
		p.state, p.noCalls = stStart, true
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
