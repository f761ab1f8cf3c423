package turn

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"time"

	"conform/templates"
)

// This file works out a template's tool-call format by rendering it, not
// by its name or by grepping its source. The template renders one
// conversation four times, ending with an assistant message that says
// "XYZZY", that calls get_weather({"city": "Paris", "unit": "celsius"}),
// that makes two such calls, and that calls get_weather({}). Where the
// renderings part (their common prefix and suffix, cut at marker
// boundaries) lies the text of the calls; around the name and the
// arguments in it lie the format's pieces:
//
//	C1 = Begin Open NAME NameEnd ARGS K End      one call
//	C2 = Begin Open NAME … K Sep Open NAME … K End   two calls
//
// Open is the common suffix of what precedes the first and the second
// name, K the common prefix of what follows the first call in C2 and in C1.
// The arguments are found as a JSON object equal to the call's (written
// bare, or holding "name" too), or as the texts city, Paris, unit, celsius
// with the parameter markers between them. The pieces are then matched to
// a registered description (exactly, then ignoring whitespace); a shape
// that matches none is returned as a description of its own.

// detectMessages are the conversations rendered, as JSON (the shape of the
// golden renderings' tool-call cases).
const (
	detectUser   = `{"role": "user", "content": "What is the weather in Paris?"}`
	detectText   = `{"role": "assistant", "content": "XYZZY"}`
	detectCall   = `{"id": "call_W7x2Qp9LmZ", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}`
	detectCall2  = `{"id": "call_K3v8Rt6YbN", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}}`
	detectCall0  = `{"id": "call_P5n1Hs4JdC", "type": "function", "function": {"name": "get_weather", "arguments": {}}}`
	detectTools  = `[{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}]`
	detectName   = "get_weather"
	detectMarker = "XYZZY"
)

var detectArgs = map[string]any{"city": "Paris", "unit": "celsius"}

// render renders tmpl over the user message and the assistant message
// asst (a JSON object); "" when the template fails on it.
func render(tmpl *templates.Template, asst string) string {
	msgs, err := templates.DecodeJSON([]byte("[" + detectUser + ", " + asst + "]"))
	if err != nil {
		return ""
	}
	tools, _ := templates.DecodeJSON([]byte(detectTools))
	fixed := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
	out, err := tmpl.Render(templates.Vars{Messages: msgs, Tools: tools, Now: func() time.Time { return fixed }})
	if err != nil {
		return ""
	}
	return out
}

func callsMessage(calls ...string) string {
	return `{"role": "assistant", "content": "", "tool_calls": [` + strings.Join(calls, ", ") + `]}`
}

// boundary reports whether s may be cut before index i: at its ends, before
// a tag's "<" or "[", or after its ">" or "]", or next to whitespace.
func boundary(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	switch s[i] {
	case '<', '[', ' ', '\n', '\t':
		return true
	}
	switch s[i-1] {
	case '>', ']', ' ', '\n', '\t':
		return true
	}
	return false
}

// commonPrefix is the length of the longest common prefix of a and b that
// ends at a boundary of both.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && !(boundary(a, n) && boundary(b, n)) {
		n--
	}
	return n
}

// commonSuffix is the length of the longest common suffix of a and b that
// starts at a boundary of both.
func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	for n > 0 && !(boundary(a, len(a)-n) && boundary(b, len(b)-n)) {
		n--
	}
	return n
}

// between is the text where rendering r departs from the text-answer
// rendering r0: r without their common prefix and suffix.
func between(r0, r string) (string, int) {
	p := commonPrefix(r0, r)
	s := commonSuffix(r0[p:], r[p:])
	return r[p : len(r)-s], p
}

// findObject finds, from index from, the first JSON object in s for which
// ok holds, and returns its span.
func findObject(s string, from int, ok func(map[string]any) bool) (int, int, bool) {
	for i := strings.IndexByte(s[from:], '{'); i >= 0; {
		at := from + i
		dec := json.NewDecoder(strings.NewReader(s[at:]))
		var v map[string]any
		if dec.Decode(&v) == nil && ok(v) {
			return at, at + int(dec.InputOffset()), true
		}
		next := strings.IndexByte(s[at+1:], '{')
		if next < 0 {
			break
		}
		i = at + 1 + next - from
	}
	return 0, 0, false
}

// leadingSpace is the length of s's leading whitespace.
func leadingSpace(s string) int { return len(s) - len(strings.TrimLeft(s, " \t\n")) }

// trailingSpace is the length of s's trailing whitespace.
func trailingSpace(s string) int { return len(s) - len(strings.TrimRight(s, " \t\n")) }

// shape is what the renderings show of one call and of the calls' frame.
type shape struct {
	pre, post string // before the first name; after the first call's arguments (C1)
	mid       string // between the first call's arguments and the second name (C2); "" with single
	single    bool
	d         Description
}

// DetectDescription works out the tool-call format that template writes,
// by rendering it (see this file's comment), and returns the registered
// description it matches, or one built from the rendering when it matches
// none (Name is then ""). It returns false when the template renders no
// call it can read.
func DetectDescription(template string) (Description, bool) {
	tmpl, err := templates.Parse(template)
	if err != nil {
		return Description{}, false
	}
	r0 := render(tmpl, detectText)
	r1 := render(tmpl, callsMessage(detectCall))
	if r0 == "" || r1 == "" {
		return Description{}, false
	}
	c1, p1 := between(r0, r1)
	lead := leadingSpace(c1)
	c1 = c1[lead:]
	i := strings.Index(c1, detectName)
	if i < 0 {
		return Description{}, false
	}
	var content string
	if k := strings.Index(r0[p1:], detectMarker); k > 0 {
		content = strings.TrimSpace(r0[p1 : p1+k])
	}
	if strings.Contains(c1[:i], "to=functions.") {
		// gpt-oss renders the recipient in the header of a message on
		// the commentary channel; it writes the form harmony registers.
		return formats[FormatHarmony], true
	}
	sh, ok := callShape(c1, i)
	if !ok {
		return Description{}, false
	}
	if sh.d.ArgsAre == ArgsParams {
		// A call without parameters is its name, the name's close and the
		// call's close: the pieces must say so.
		if r3 := render(tmpl, callsMessage(detectCall0)); r3 != "" {
			c3, _ := between(r0, r3)
			if j := strings.Index(c3, detectName); j < 0 || c3[j+len(detectName):] != sh.d.NameClose+sh.post[len(sh.d.Param.Close):] {
				return Description{}, false
			}
		}
	}
	// The second call shows the separator, the index and whether a turn
	// holds more than one call.
	r2 := render(tmpl, callsMessage(detectCall, detectCall2))
	c2, _ := between(r0, r2)
	c2 = c2[min(leadingSpace(c2), len(c2)):]
	first := strings.Index(c2, detectName)
	second := -1
	if first >= 0 {
		if j := strings.Index(c2[first+len(detectName):], detectName); j >= 0 {
			second = first + len(detectName) + j
		}
	}
	if second < 0 {
		sh.single = true
	} else {
		if !sh.d.indexFrom(c2, first, second) {
			sh.d.Index = false
		}
		// mid runs from the end of the first call (the text of C1's call)
		// to the start of the second (the name as far into it as in C1).
		nameOff := i - len(sh.pre)
		call := c1[len(sh.pre) : len(c1)-len(sh.post)]
		firstStart, secondStart := first-nameOff, second-nameOff
		firstEnd := firstStart + len(call)
		if firstStart < 0 || firstEnd > secondStart || c2[firstStart:firstEnd] != call {
			return Description{}, false
		}
		sh.mid = c2[firstEnd:secondStart]
	}
	// Open is common to what precedes the first and the second name.
	open := sh.pre
	if !sh.single {
		open = sh.pre[len(sh.pre)-commonSuffix(sh.pre, sh.mid):]
	}
	// A call opens at its tag: whitespace before it ends what precedes.
	ws := leadingSpace(open)
	sh.d.Begin = sh.pre[:len(sh.pre)-len(open)+ws]
	k := sh.post
	if !sh.single {
		rest := sh.mid[:len(sh.mid)-len(open)+ws]
		k = sh.post[:commonPrefix(rest, sh.post)]
		// Whitespace after the call's close belongs to what follows it.
		k = k[:len(k)-trailingSpace(k)]
		sh.d.Sep = rest[len(k):]
	}
	// End is at most one closing marker: a template may render more of
	// the turn after the calls (R1's distills add an end of sentence and
	// a new assistant header), and whitespace alone ends nothing.
	sh.d.End = sh.post[len(k):]
	if loc := markerRe.FindStringIndex(sh.d.End); loc != nil {
		sh.d.End = sh.d.End[:loc[1]]
	}
	if strings.TrimSpace(sh.d.End) == "" {
		sh.d.End = ""
	}
	sh.d.Single = sh.single
	open = open[ws:]
	if sh.d.NameIs == NameInObject {
		sh.d.CallOpen, sh.d.CallClose = open, k
	} else {
		sh.d.CallOpen = open
		if sh.d.ArgsAre == ArgsParams {
			if !strings.HasPrefix(k, sh.d.Param.Close) {
				return Description{}, false
			}
			k = k[len(sh.d.Param.Close):]
		}
		sh.d.CallClose = k
	}
	sh.d.ContentOpen = content
	if m, ok := matchRegistered(sh.d); ok {
		return m, true
	}
	sh.d.Markers = markersOf(sh.d)
	sh.d.Trigger = triggerOf(sh.d)
	if sh.d.Trigger == "" && sh.d.NameIs != NameInObject && sh.d.ContentOpen == "" {
		return Description{}, false // no text could be told from its calls
	}
	return sh.d, true
}

// callShape reads one call's name and arguments from c (the calls of C1,
// the name at i).
func callShape(c string, i int) (shape, bool) {
	nameEnd := i + len(detectName)
	// The name inside a JSON object with the arguments.
	for o := strings.LastIndexByte(c[:i], '{'); o >= 0; o = strings.LastIndexByte(c[:o], '{') {
		s, e, ok := findObject(c, o, func(v map[string]any) bool { return v["name"] == detectName })
		if !ok || s != o || e < nameEnd {
			continue
		}
		var obj map[string]any
		_ = json.Unmarshal([]byte(c[s:e]), &obj)
		for k, v := range obj {
			if k != "name" && reflect.DeepEqual(v, detectArgs) {
				return shape{pre: c[:s], post: c[e:], d: Description{NameIs: NameInObject, ArgsKey: k}}, true
			}
		}
	}
	// The arguments as one JSON object after the name.
	if s, e, ok := findObject(c, nameEnd, func(v map[string]any) bool { return reflect.DeepEqual(v, detectArgs) }); ok {
		return shape{pre: c[:i], post: c[e:], d: Description{NameClose: c[nameEnd:s]}}, true
	}
	// The arguments one parameter at a time.
	at := nameEnd
	var pos [4][2]int
	for j, w := range []string{"city", "Paris", "unit", "celsius"} {
		k := strings.Index(c[at:], w)
		if k < 0 {
			return shape{}, false
		}
		pos[j] = [2]int{at + k, at + k + len(w)}
		at = pos[j][1]
	}
	x := c[nameEnd:pos[0][0]]
	y := c[pos[0][1]:pos[1][0]]
	z := c[pos[1][1]:pos[2][0]]
	if c[pos[2][1]:pos[3][0]] != y {
		return shape{}, false
	}
	po := x[len(x)-commonSuffix(x, z):]
	ws := leadingSpace(po) // whitespace after a name or a value belongs to it
	nc, pc, po := x[:len(x)-len(po)]+po[:ws], z[:len(z)-len(po)]+po[:ws], po[ws:]
	if po == "" || y == "" {
		return shape{}, false
	}
	d := Description{NameClose: nc, ArgsAre: ArgsParams, Param: ParamSyntax{Open: po, KeyClose: y, Close: pc}}
	post := c[pos[3][1]:]
	if !strings.HasPrefix(post, pc) {
		return shape{}, false
	}
	return shape{pre: c[:i], post: post, d: d}, true
}

// indexFrom finds the call index in the text between the name and the
// arguments: a "0" after the first name where the second call has "1".
func (d *Description) indexFrom(c2 string, first, second int) bool {
	nc := d.NameClose
	a := c2[first+len(detectName):]
	b := c2[second+len(detectName):]
	if !strings.HasPrefix(a, nc) {
		return false
	}
	for j := 0; j < len(nc); j++ {
		if nc[j] == '0' && j < len(b) && b[j] == '1' && nc[:j] == b[:j] && strings.HasPrefix(b[j+1:], nc[j+1:]) {
			d.Index, d.NameClose, d.IndexClose = true, nc[:j], nc[j+1:]
			return true
		}
	}
	return false
}

// matchRegistered returns the registered description whose pieces are
// d's: exactly, else ignoring whitespace (a template that pads its markers
// with spaces teaches the same format). A registered Begin that may be left
// out matches a rendering without it.
func matchRegistered(d Description) (Description, bool) {
	for _, loose := range []bool{false, true} {
		for _, f := range Formats() {
			if f == FormatQwen {
				continue
			}
			r := formats[f]
			if samePieces(r, d, loose) {
				return r, true
			}
			if r.OptBegin {
				r.Begin = ""
				if samePieces(r, d, loose) {
					return formats[f], true
				}
			}
		}
	}
	return Description{}, false
}

func samePieces(r, d Description, loose bool) bool {
	norm := func(s string) string {
		if loose {
			return strings.Join(strings.Fields(s), "")
		}
		return s
	}
	a, b := r.resolved(nil), d.resolved(nil)
	ka, kb := a.key(), b.key()
	if d.Single {
		// One call a turn shows no separator nor whether the format
		// allows more.
		ka[11], kb[11], ka[15], kb[15] = "", "", "", ""
	}
	ka[1], kb[1] = "", ""   // Begin is compared as text (matchRegistered)
	ka[13], kb[13] = "", "" // the trigger is not rendered
	ka[14], kb[14] = norm(a.Content), norm(b.Content)
	for i := range ka {
		if norm(ka[i]) != norm(kb[i]) {
			return false
		}
	}
	return true
}

// markerRe finds tags in a built description's pieces.
var markerRe = regexp.MustCompile(`<[^<>\s="]+>|\[[A-Z_]+\]`)

// markersOf lists the tags of d's pieces, each once.
func markersOf(d Description) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range []string{d.Begin, d.CallOpen, d.NameClose, d.IndexClose, d.Param.Open, d.Param.KeyClose, d.Param.Close, d.ArgsClose, d.CallClose, d.Sep, d.End, d.ContentOpen} {
		for _, m := range markerRe.FindAllString(s, -1) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// triggerOf is the first tag of a built description's calls, when they
// open with one: text may not contain it, and its first occurrence starts
// the calls.
func triggerOf(d Description) string {
	open := d.Begin + d.CallOpen
	if loc := markerRe.FindStringIndex(open); loc != nil && loc[0] == 0 {
		return open[:loc[1]]
	}
	return ""
}

// DetectFormat works out the tool-call format a chat template teaches, by
// rendering it (DetectDescription) and, when the rendering shows no call
// of a registered format, from the markers its text writes: "[TOOL_CALLS]"
// is mistral, "<tool_call>" hermes, "<|python_tag|>" or the Llama-3.1
// "parameters" wording llama3_json. It returns false when neither shows a
// registered format (the server then defaults to hermes).
func DetectFormat(template string) (Format, bool) {
	if d, ok := DetectDescription(template); ok && d.Name != "" {
		return d.Name, true
	}
	switch {
	case strings.Contains(template, "[TOOL_CALLS]"):
		return FormatMistral, true
	case strings.Contains(template, "<tool_call>"):
		return FormatHermes, true
	case strings.Contains(template, "<|python_tag|>"),
		strings.Contains(template, "<|start_header_id|>") && strings.Contains(template, `"parameters"`):
		return FormatLlama3JSON, true
	}
	return FormatHermes, false
}

// NewParserOf returns a parser for description d (one DetectDescription
// built, or a registered one) with the vocabulary's special markers, as
// NewParser does for a format name.
func NewParserOf(d Description, isSpecial func(string) bool) *Parser {
	return newParser(d.resolved(isSpecial), true, false)
}

// DetokenizerOf is DetokenizerWith for description d: it keeps the
// special tokens among d's markers and reasoning format r's.
func (v *Vocab) DetokenizerOf(d Description, r ReasoningFormat) func(TokenID) []byte {
	return v.detokenizer(append(append([]string(nil), d.Markers...), r.Markers()...))
}
