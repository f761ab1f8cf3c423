package turn

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// allSpecial marks every marker of every format as a special token.
func allSpecial(s string) bool {
	for _, d := range formats {
		for _, m := range d.Markers {
			if m == s {
				return true
			}
		}
	}
	return false
}

// weatherKinds are goldenTools' parameter kinds, as Build records them.
var weatherKinds = paramKinds{"get_weather": {"city": paramRaw, "unit": paramRaw}, "get_time": {}}

// newTestParser is a parser of format f whose parameter kinds are kinds.
func newTestParser(t testing.TB, f Format, isSpecial func(string) bool, kinds paramKinds) *Parser {
	t.Helper()
	p, err := NewParser(f, isSpecial)
	if err != nil {
		t.Fatal(err)
	}
	p.kinds = kinds
	return p
}

// splitParse feeds text cut at cuts and merges the events.
func splitParse(t testing.TB, f Format, isSpecial func(string) bool, kinds paramKinds, text string, cuts []int) (string, []Call) {
	return feedCut(newTestParser(t, f, isSpecial, kinds), text, cuts)
}

func TestFormatParserSteps(t *testing.T) {
	c, start, args, end := evText, evStart, evArgs, evEnd
	tests := []struct {
		name   string
		format Format
		kinds  paramKinds
		steps  []step
		close  []Event
	}{
		{"qwen3_coder streams a raw string", FormatQwen3Coder, weatherKinds, []step{
			{"Sure.\n<tool_call>\n<function=get_weather>\n<param", []Event{c("Sure.\n"), start(0, "get_weather")}},
			{"eter=city>\nNew \"Yo", []Event{args(0, `{"city": "New \"Yo`)}},
			{"rk\"\n</para", []Event{args(0, `rk\"`)}},
			{"meter>\n</function>\n</tool_call>", []Event{args(0, `"}`), end(0)}},
		}, nil},
		{"qwen3_coder a partial close inside a value", FormatQwen3Coder, weatherKinds, []step{
			{"<tool_call>\n<function=get_weather>\n<parameter=city>\na\n</par b\n</parameter>\n</function>\n</tool_call>",
				[]Event{start(0, "get_weather"), args(0, `{"city": "a\n</par b"}`), end(0)}},
		}, nil},
		{"qwen3_coder JSON values without kinds", FormatQwen3Coder, nil, []step{
			{"<tool_call>\n<function=f>\n<parameter=n>\n12\n</parameter>\n<parameter=s>\nx y\n</parameter>\n</function>\n</tool_call>",
				[]Event{start(0, "f"), args(0, `{"n": 12, "s": "x y"}`), end(0)}},
		}, nil},
		{"qwen3_coder no parameters", FormatQwen3Coder, weatherKinds, []step{
			{"<tool_call>\n<function=get_time>\n</function>\n</tool_call>", []Event{start(0, "get_time"), args(0, "{}"), end(0)}},
		}, nil},
		{"glm45 two calls", FormatGLM45, weatherKinds, []step{
			{"<tool_call>get_weather<arg_key>city</arg_key>\n<arg_value>Rome</arg_value></tool_call>\n<tool_call>get_time</tool_call>",
				[]Event{start(0, "get_weather"), args(0, `{"city": "Rome"}`), end(0), start(1, "get_time"), args(1, "{}"), end(1)}},
		}, nil},
		{"minimax_m2", FormatMiniMaxM2, weatherKinds, []step{
			{"<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Oslo</parameter>\n", []Event{start(0, "get_weather"), args(0, `{"city": "Oslo"`)}},
			{"</invoke>\n</minimax:tool_call>", []Event{args(0, "}"), end(0)}},
		}, nil},
		{"kimi_k2 skips the index", FormatKimiK2, nil, []step{
			{"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:1", []Event{start(0, "get_time")}},
			{"2<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>", []Event{args(0, "{}"), end(0)}},
		}, nil},
		{"deepseek_v31", FormatDeepSeekV31, nil, []step{
			{"ok<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
				[]Event{c("ok"), start(0, "f"), args(0, `{"a": 1}`), end(0)}},
		}, nil},
		{"harmony final channel is content", FormatHarmony, nil, []step{
			{"<|channel|>fin", nil},
			{"al<|message|>Hello", []Event{c("Hello")}},
		}, nil},
		{"harmony call", FormatHarmony, nil, []step{
			{"<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"x\": [1]}", []Event{start(0, "f"), args(0, `{"x": [1]}`), end(0)}}, // <|call|> is EOS
		}, nil},
		{"qwen3_coder cut in a value", FormatQwen3Coder, weatherKinds, []step{
			{"<tool_call>\n<function=get_weather>\n<parameter=city>\nPar", []Event{start(0, "get_weather"), args(0, `{"city": "Par`)}},
		}, []Event{end(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feedSteps(t, newTestParser(t, tt.format, nil, tt.kinds), tt.steps, tt.close)
		})
	}
}

// formatSplitCorpus is, for every format, texts in it (with specials or
// not) and texts that leave it.
func formatSplitCorpus() []struct {
	f       Format
	special func(string) bool
	text    string
	valid   bool // in the format: every call parses
} {
	type tc = struct {
		f       Format
		special func(string) bool
		text    string
		valid   bool
	}
	var out []tc
	for _, f := range Formats() {
		d, _ := f.Description()
		for _, sp := range []func(string) bool{nil, allSpecial} {
			sx := d.resolved(sp)
			calls := writeCalls(sx, []int{0, 1, 2})
			if sx.Single {
				calls = writeCalls(sx, []int{2})
			}
			lead := "Let me check.\n"
			if sx.Trigger == "" {
				lead = ""
			}
			out = append(out,
				tc{f, sp, lead + calls, true},
				tc{f, sp, calls[:len(calls)*2/3], false},
				tc{f, sp, "no " + sx.Open + " call " + sx.Trigger + "x" + sx.PClose, false},
				tc{f, sp, sx.Content + "plain answer {\"name\": 1}", false},
				tc{f, sp, strings.Replace(calls, sx.NameEnd, sx.NameEnd+"\xe2\x9c", 1), false})
		}
	}
	return out
}

// TestFormatParserEverySplit: for every format, the same text cut at every
// byte, and into single bytes, gives the same content and calls; every call
// of a text in the format has JSON arguments.
func TestFormatParserEverySplit(t *testing.T) {
	for _, tc := range formatSplitCorpus() {
		for _, kinds := range []paramKinds{nil, weatherKinds} {
			wantC, wantCalls := splitParse(t, tc.f, tc.special, kinds, tc.text, nil)
			for i := 0; i <= len(tc.text); i++ {
				gotC, gotCalls := splitParse(t, tc.f, tc.special, kinds, tc.text, []int{i})
				if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
					t.Fatalf("%s: split at %d of %q: got %q %+v, want %q %+v", tc.f, i, tc.text, gotC, gotCalls, wantC, wantCalls)
				}
			}
			cuts := make([]int, 0, len(tc.text))
			for i := 1; i < len(tc.text); i++ {
				cuts = append(cuts, i)
			}
			gotC, gotCalls := splitParse(t, tc.f, tc.special, kinds, tc.text, cuts)
			if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
				t.Fatalf("%s: byte by byte %q: got %q %+v, want %q %+v", tc.f, tc.text, gotC, gotCalls, wantC, wantCalls)
			}
		}
	}
	// The whole texts in each format hold their calls.
	for _, tc := range formatSplitCorpus() {
		if !tc.valid {
			continue
		}
		_, calls := splitParse(t, tc.f, tc.special, weatherKinds, tc.text, nil)
		if len(calls) == 0 {
			t.Errorf("%s: no call in %q", tc.f, tc.text)
		}
		for _, c := range calls {
			if !json.Valid([]byte(c.Arguments)) {
				t.Errorf("%s: arguments %q of %q are not JSON", tc.f, c.Arguments, tc.text)
			}
		}
	}
}

// FuzzFormatParser: in every format, any text, split at any point, parses to
// the same content and calls, and never panics.
func FuzzFormatParser(f *testing.F) {
	fmts := Formats()
	idx := map[Format]uint8{}
	for i, fm := range fmts {
		idx[fm] = uint8(i)
	}
	for _, tc := range formatSplitCorpus() {
		f.Add(idx[tc.f], tc.special != nil, true, tc.text, uint16(len(tc.text)/2))
	}
	f.Fuzz(func(t *testing.T, fi uint8, special, kinds bool, text string, cut uint16) {
		fm := fmts[int(fi)%len(fmts)]
		var sp func(string) bool
		if special {
			sp = allSpecial
		}
		var k paramKinds
		if kinds {
			k = weatherKinds
		}
		wantC, wantCalls := splitParse(t, fm, sp, k, text, nil)
		i := int(cut) % (len(text) + 1)
		gotC, gotCalls := splitParse(t, fm, sp, k, text, []int{i})
		if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
			t.Fatalf("%s: split at %d of %q: got %q %+v, want %q %+v", fm, i, text, gotC, gotCalls, wantC, wantCalls)
		}
	})
}
