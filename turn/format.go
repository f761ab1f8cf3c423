package turn

import (
	"sort"
	"strings"
)

// Format names a tool-call format: how a model writes its calls.
type Format string

// The registered formats (vLLM's --tool-call-parser names where vLLM has
// one).
const (
	FormatHermes     Format = "hermes"
	FormatQwen       Format = "qwen"
	FormatLlama3JSON Format = "llama3_json"
	FormatMistral    Format = "mistral"
	// FormatDeepSeekV3 is DeepSeek-V3 and R1(-0528, and the R1 distills):
	// function<｜tool▁sep｜>NAME then the arguments in a ```json fence.
	FormatDeepSeekV3 Format = "deepseek_v3"
	// FormatDeepSeekV31 is DeepSeek-V3.1 and later: NAME<｜tool▁sep｜>ARGS.
	FormatDeepSeekV31 Format = "deepseek_v31"
	FormatKimiK2      Format = "kimi_k2"
	FormatHarmony     Format = "harmony"
	FormatQwen3Coder  Format = "qwen3_coder"
	FormatMiniMaxM2   Format = "minimax_m2"
	FormatGLM45       Format = "glm45"
)

// NameStyle says how a call writes the function's name.
type NameStyle uint8

// The name styles.
const (
	// NameText: the name as plain text between CallOpen and NameClose
	// (<function=NAME>, functions.NAME:0, NAME<｜tool▁sep｜>).
	NameText NameStyle = iota
	// NameInObject: one JSON object {"name": "NAME", "<ArgsKey>": ARGS}
	// holds the name and the arguments, in that order.
	NameInObject
)

// ArgsStyle says how a call writes its arguments.
type ArgsStyle uint8

// The argument styles.
const (
	// ArgsJSON: one JSON object (under ArgsKey with NameInObject, else
	// bare after NameClose).
	ArgsJSON ArgsStyle = iota
	// ArgsParams: each parameter on its own, Param.Open KEY Param.KeyClose
	// VALUE Param.Close, then ArgsClose. A string parameter's VALUE is its
	// raw text; any other value is JSON.
	ArgsParams
)

// ParamSyntax is the text around one parameter of an ArgsParams call:
// Open KEY KeyClose VALUE Close. A key or a value ends at the first
// KeyClose or Close, so neither can contain it (the constraint sees to
// that, and refuses a property name that would).
type ParamSyntax struct {
	Open     string
	KeyClose string
	Close    string
}

// Description is a tool-call format as data: both the constraint (Build)
// and the streaming parser (Parser) are derived from it, so that they
// follow the same strings. The calls of a turn are
//
//	Begin CALL (Sep CALL)* End
//
// and one call, with NameText and ArgsJSON, is
//
//	CallOpen NAME NameClose [INDEX IndexClose] ARGS CallClose
//
// With NameInObject, NAME and ARGS sit in {"name": "NAME", "<ArgsKey>":
// ARGS} between CallOpen and CallClose (NameClose unused). With ArgsParams,
// ARGS is zero or more parameters (ParamSyntax) followed by ArgsClose.
//
// Markers are the strings that may be special tokens; the ones the
// vocabulary has as specials are written as their 0xFF-prefixed bytes
// wherever they occur in the other fields. A name is 1 to 64 of a-z, A-Z,
// 0-9, '_', '-', '.', so the text after it must start with another byte
// (checked for the registered formats by TestDescriptions).
type Description struct {
	Name Format
	// Begin is written once before the first call; OptBegin says it may be
	// left out (llama3's <|python_tag|>).
	Begin    string
	OptBegin bool
	CallOpen string
	NameIs   NameStyle
	// ArgsKey is the arguments' key with NameInObject ("arguments",
	// "parameters").
	ArgsKey   string
	NameClose string
	// Index adds the call's 0-based index in the turn, in decimal, after
	// NameClose and before IndexClose (Kimi's functions.NAME:IDX). The
	// constraint allows any decimal number; the parser skips it.
	Index      bool
	IndexClose string
	ArgsAre    ArgsStyle
	Param      ParamSyntax
	ArgsClose  string
	CallClose  string
	Sep        string
	End        string
	// Trigger is the text whose first occurrence starts the calls in auto
	// mode; "" means calls may only open the turn (llama3_json: a turn
	// that starts with "{" or Begin is calls).
	Trigger string
	// ContentOpen, when set, opens a turn that is text rather than calls
	// (harmony's final channel): the parser drops it, the constraint of a
	// turn that may be text writes it first.
	ContentOpen string
	// Single says a turn holds at most one call (harmony: <|call|> ends
	// the message).
	Single  bool
	Markers []string
}

// callPrefix is what starts a NameInObject call object up to the name; the
// llama3_json parser decides on it.
const callPrefix = `{"name": "`

// formats is the registry of tool-call formats: the one place a name maps to
// its description (STYLE rule 14). The marker strings are those the
// models' chat templates render for an assistant tool call (the golden
// renderings under ../shared/templates/golden).
var formats = map[Format]Description{
	FormatHermes: {
		CallOpen: "<tool_call>\n", NameIs: NameInObject, ArgsKey: "arguments", CallClose: "\n</tool_call>", Sep: "\n",
		Trigger: "<tool_call>", Markers: []string{"<tool_call>", "</tool_call>"},
	},
	FormatLlama3JSON: {
		Begin: "<|python_tag|>", OptBegin: true, NameIs: NameInObject, ArgsKey: "parameters", Sep: "; ",
		Markers: []string{"<|python_tag|>"},
	},
	FormatMistral: {
		Begin: "[TOOL_CALLS][", NameIs: NameInObject, ArgsKey: "arguments", Sep: ", ", End: "]",
		Trigger: "[TOOL_CALLS]", Markers: []string{"[TOOL_CALLS]"},
	},
	FormatDeepSeekV3: {
		Begin: "<｜tool▁calls▁begin｜>", CallOpen: "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", NameClose: "\n```json\n",
		CallClose: "\n```<｜tool▁call▁end｜>", Sep: "\n", End: "<｜tool▁calls▁end｜>",
		Trigger: "<｜tool▁calls▁begin｜>", Markers: deepseekMarkers,
	},
	FormatDeepSeekV31: {
		Begin: "<｜tool▁calls▁begin｜>", CallOpen: "<｜tool▁call▁begin｜>", NameClose: "<｜tool▁sep｜>",
		CallClose: "<｜tool▁call▁end｜>", End: "<｜tool▁calls▁end｜>",
		Trigger: "<｜tool▁calls▁begin｜>", Markers: deepseekMarkers,
	},
	FormatKimiK2: {
		Begin: "<|tool_calls_section_begin|>", CallOpen: "<|tool_call_begin|>functions.", NameClose: ":",
		Index: true, IndexClose: "<|tool_call_argument_begin|>", CallClose: "<|tool_call_end|>",
		End: "<|tool_calls_section_end|>", Trigger: "<|tool_calls_section_begin|>",
		Markers: []string{"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"},
	},
	// harmony's call ends with <|call|>, an end-of-generation token (as
	// <|return|> ends a final answer): the turn's EOS, not part of it nor
	// a marker.
	FormatHarmony: {
		CallOpen: "<|channel|>commentary to=functions.", NameClose: " <|constrain|>json<|message|>",
		Single: true, ContentOpen: "<|channel|>final<|message|>",
		Markers: []string{"<|channel|>", "<|constrain|>", "<|message|>"},
	},
	FormatQwen3Coder: {
		CallOpen: "<tool_call>\n<function=", NameClose: ">\n", ArgsAre: ArgsParams,
		Param:     ParamSyntax{Open: "<parameter=", KeyClose: ">\n", Close: "\n</parameter>\n"},
		ArgsClose: "</function>\n", CallClose: "</tool_call>", Sep: "\n",
		Trigger: "<tool_call>", Markers: []string{"<tool_call>", "</tool_call>"},
	},
	FormatMiniMaxM2: {
		Begin: "<minimax:tool_call>\n", CallOpen: `<invoke name="`, NameClose: "\">\n", ArgsAre: ArgsParams,
		Param:     ParamSyntax{Open: `<parameter name="`, KeyClose: `">`, Close: "</parameter>\n"},
		CallClose: "</invoke>\n", End: "</minimax:tool_call>",
		Trigger: "<minimax:tool_call>", Markers: []string{"<minimax:tool_call>", "</minimax:tool_call>"},
	},
	FormatGLM45: {
		CallOpen: "<tool_call>", ArgsAre: ArgsParams,
		Param:     ParamSyntax{Open: "<arg_key>", KeyClose: "</arg_key>\n<arg_value>", Close: "</arg_value>"},
		CallClose: "</tool_call>", Sep: "\n",
		Trigger: "<tool_call>", Markers: []string{"<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"},
	},
}

var deepseekMarkers = []string{"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"}

func init() {
	formats[FormatQwen] = formats[FormatHermes]
	for f, d := range formats {
		d.Name = f
		formats[f] = d
	}
}

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

// Description returns the registered description of f.
func (f Format) Description() (Description, bool) {
	d, ok := formats[f]
	return d, ok
}

// Markers returns the marker texts of format f (the strings a detokenizer must
// keep, as 0xFF-prefixed bytes, when they are special tokens).
func (f Format) Markers() []string {
	return append([]string(nil), formats[f].Markers...)
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

// syntax is a Description flattened to the literal pieces the builder and
// the parser follow, with every marker replaced by its bytes. A call is
//
//	Open NAME NameEnd [INDEX IndexEnd] ARGS Close
//
// where ARGS is a JSON value (Params false) or parameters
// POpen KEY PKeyEnd VALUE PClose, each, and Close then includes ArgsClose.
type syntax struct {
	Begin    string
	OptBegin bool
	Open     string
	NameEnd  string
	Index    bool
	IndexEnd string
	Params   bool
	POpen    string
	PKeyEnd  string
	PClose   string
	Close    string
	Sep      string
	End      string
	Trigger  string
	Content  string
	Single   bool
	// InObject is the NameInObject style (the llama3_json text rules
	// depend on it).
	InObject bool
	// markerBytes are Markers as written in generated text.
	markerBytes []string
}

// resolved flattens d against the vocabulary's specials.
func (d Description) resolved(isSpecial func(string) bool) syntax {
	rep := func(s string) string {
		for _, m := range d.Markers {
			if strings.Contains(s, m) {
				s = strings.ReplaceAll(s, m, markerBytes(m, isSpecial))
			}
		}
		return s
	}
	sx := syntax{
		Begin: rep(d.Begin), OptBegin: d.OptBegin, Open: rep(d.CallOpen), NameEnd: rep(d.NameClose),
		Index: d.Index, IndexEnd: rep(d.IndexClose), Params: d.ArgsAre == ArgsParams,
		POpen: rep(d.Param.Open), PKeyEnd: rep(d.Param.KeyClose), PClose: rep(d.Param.Close),
		Close: rep(d.CallClose), Sep: rep(d.Sep), End: rep(d.End), Trigger: rep(d.Trigger),
		Content: rep(d.ContentOpen), Single: d.Single, InObject: d.NameIs == NameInObject,
	}
	if sx.Params {
		sx.Close = rep(d.ArgsClose) + sx.Close
	}
	if sx.InObject {
		sx.Open += callPrefix
		sx.NameEnd = `", "` + d.ArgsKey + `": `
		sx.Close = "}" + sx.Close
	}
	for _, m := range d.Markers {
		sx.markerBytes = append(sx.markerBytes, markerBytes(m, isSpecial))
	}
	return sx
}

// key lists every field of sx, for the cache key.
func (sx syntax) key() []string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	return []string{sx.Begin, b(sx.OptBegin), sx.Open, sx.NameEnd, b(sx.Index), sx.IndexEnd, b(sx.Params),
		sx.POpen, sx.PKeyEnd, sx.PClose, sx.Close, sx.Sep, sx.End, sx.Trigger, sx.Content, b(sx.Single), b(sx.InObject)}
}
