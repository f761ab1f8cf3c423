package turn

import (
	"sort"
	"strings"
)

// Format names a tool-call format: how a model writes its calls.
type Format string

// The registered formats (vLLM's --tool-call-parser names).
const (
	FormatHermes     Format = "hermes"
	FormatQwen       Format = "qwen"
	FormatLlama3JSON Format = "llama3_json"
	FormatMistral    Format = "mistral"
)

// syntax is the text of a format around each call's JSON object
// {"name": <n>, "<ArgsKey>": <args>}. The calls of a turn are
//
//	Begin CallOpen obj CallClose (Sep CallOpen obj CallClose)* End
//
// Markers are written as text; the ones listed in specials are turned into
// 0xFF-prefixed bytes when the vocabulary has them as special tokens.
type syntax struct {
	Begin     string // once before the first call
	OptBegin  bool   // Begin may be left out (llama3's <|python_tag|>)
	CallOpen  string // before each call object
	CallClose string // after each call object
	Sep       string // between calls
	End       string // once after the last call
	ArgsKey   string // "arguments" or "parameters"
	// Trigger is the text whose first occurrence starts the calls in auto
	// mode; "" means calls may only open the turn (llama3_json: a turn that
	// starts with "{" or Begin is calls).
	Trigger string
	// Markers are the strings that may be special tokens.
	Markers []string
	// markerBytes are Markers as written in generated text (set by resolved).
	markerBytes []string
}

// formats is the registry of tool-call formats: the one place a name maps to
// its syntax (STYLE rule 14).
var formats = map[Format]syntax{
	FormatHermes: {
		CallOpen: "<tool_call>\n", CallClose: "\n</tool_call>", Sep: "\n",
		ArgsKey: "arguments", Trigger: "<tool_call>",
		Markers: []string{"<tool_call>", "</tool_call>"},
	},
	FormatLlama3JSON: {
		Begin: "<|python_tag|>", OptBegin: true, Sep: "; ",
		ArgsKey: "parameters", Markers: []string{"<|python_tag|>"},
	},
	FormatMistral: {
		Begin: "[TOOL_CALLS][", Sep: ", ", End: "]",
		ArgsKey: "arguments", Trigger: "[TOOL_CALLS]",
		Markers: []string{"[TOOL_CALLS]"},
	},
}

func init() { formats[FormatQwen] = formats[FormatHermes] }

// Formats returns the registered format names, sorted.
func Formats() []Format {
	out := make([]Format, 0, len(formats))
	for f := range formats {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseFormat checks a format name ("auto" is not a format: use DetectFormat).
func ParseFormat(name string) (Format, error) {
	f := Format(name)
	if _, ok := formats[f]; !ok {
		return "", &Error{Code: CodeUnknownFormat, Param: "tool-call-parser", Msg: "unknown tool-call format " + strings.TrimSpace(name)}
	}
	return f, nil
}

// DetectFormat guesses the tool-call format a chat template teaches, from the
// markers it writes: "[TOOL_CALLS]" is mistral, "<tool_call>" hermes (Qwen2.5,
// Qwen3 and Hermes-3 templates all use it), "<|python_tag|>" or the Llama-3.1
// "parameters" wording llama3_json. It returns false when the template shows
// no tool-call format (the server then defaults to hermes).
func DetectFormat(template string) (Format, bool) {
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

// markerBytes returns how marker s is written in generated text: its
// 0xFF-prefixed bytes when isSpecial says the vocabulary has it as a special
// token, else its text.
func markerBytes(s string, isSpecial func(string) bool) string {
	if s != "" && isSpecial != nil && isSpecial(s) {
		return "\xff" + s
	}
	return s
}

// resolved is a syntax with every marker replaced by its bytes.
func (sx syntax) resolved(isSpecial func(string) bool) syntax {
	r := sx
	rep := func(s string) string {
		for _, m := range sx.Markers {
			if strings.Contains(s, m) {
				s = strings.ReplaceAll(s, m, markerBytes(m, isSpecial))
			}
		}
		return s
	}
	r.markerBytes = nil
	for _, m := range sx.Markers {
		r.markerBytes = append(r.markerBytes, markerBytes(m, isSpecial))
	}
	r.Begin, r.CallOpen, r.CallClose, r.Sep, r.End, r.Trigger = rep(r.Begin), rep(r.CallOpen), rep(r.CallClose), rep(r.Sep), rep(r.End), rep(r.Trigger)
	return r
}

// Markers returns the marker texts of format f (the strings a detokenizer must
// keep, as 0xFF-prefixed bytes, when they are special tokens).
func (f Format) Markers() []string {
	return append([]string(nil), formats[f].Markers...)
}
