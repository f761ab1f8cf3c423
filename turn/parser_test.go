package turn

import (
	"fmt"
	"reflect"
	"testing"
)

// step is one Feed of a parser table and the events it must give.
type step struct {
	in   string
	want []Event
}

// The events of the parser tables.
func evText(s string) Event         { return Event{Kind: EventContent, Text: s} }
func evStart(i int, n string) Event { return Event{Kind: EventCallStart, Index: i, Name: n} }
func evArgs(i int, s string) Event  { return Event{Kind: EventCallArgs, Index: i, Text: s} }
func evEnd(i int) Event             { return Event{Kind: EventCallEnd, Index: i} }
func evReasoning(s string) Event    { return Event{Kind: EventReasoning, Text: s} }

// feedSteps feeds p the steps and checks the events of every Feed and of
// the Close.
func feedSteps(t *testing.T, p *Parser, steps []step, close []Event) {
	t.Helper()
	for i, s := range steps {
		if got := p.Feed(s.in); !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d: Feed(%q) = %+v, want %+v", i, s.in, got, s.want)
		}
	}
	if got := p.Close(); !reflect.DeepEqual(got, close) {
		t.Errorf("Close() = %+v, want %+v", got, close)
	}
}

func TestParserSteps(t *testing.T) {
	c, start, args, end := evText, evStart, evArgs, evEnd
	tests := []struct {
		name   string
		format Format
		steps  []step
		close  []Event
	}{
		{"hermes text then call", FormatHermes, []step{
			{"Let me look <", []Event{c("Let me look ")}},
			{"tool", nil},
			{"_call>\n{\"name\": \"get_", nil},
			{"time\", \"arguments\": {\"tz\"", []Event{start(0, "get_time"), args(0, "{\"tz\"")}},
			{": \"UTC\"}}\n</tool_", []Event{args(0, ": \"UTC\"}"), end(0)}},
			{"call>", nil},
		}, nil},
		{"hermes not a tag", FormatHermes, []step{
			{"a <tool", []Event{c("a ")}},
			{"box>", []Event{c("<toolbox>")}},
		}, nil},
		{"hermes held text released at close", FormatHermes, []step{
			{"x <tool_ca", []Event{c("x ")}},
		}, []Event{c("<tool_ca")}},
		{"hermes two calls", FormatHermes, []step{
			{hCallW + "\n", []Event{start(0, "get_weather"), args(0, `{"city": "Paris"}`), end(0)}},
			{hCallT, []Event{start(1, "get_time"), args(1, `{"tz": "UTC"}`), end(1)}},
		}, nil},
		{"hermes braces in strings", FormatHermes, []step{
			{"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"s\": \"}\\\"{\"}}\n</tool_call>", []Event{start(0, "f"), args(0, `{"s": "}\"{"}`), end(0)}},
		}, nil},
		{"hermes cut in arguments", FormatHermes, []step{
			{"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, ", []Event{start(0, "f"), args(0, `{"a": [1, `)}},
		}, []Event{end(0)}},
		{"hermes cut in the wrapper drops markup", FormatHermes, []step{
			{"hi <tool_call>\n{\"na", []Event{c("hi ")}},
		}, nil},
		{"llama3 call", FormatLlama3JSON, []step{
			{"{\"na", nil},
			{"me\": \"f\", \"parameters\": {}}", []Event{start(0, "f"), args(0, "{}"), end(0)}},
			{"; {\"name\": \"g\", \"parameters\": {\"x\": 1}}", []Event{start(1, "g"), args(1, `{"x": 1}`), end(1)}},
		}, nil},
		{"llama3 python_tag", FormatLlama3JSON, []step{
			{"\xff<|python_tag|>{\"name\": \"f\", \"parameters\": {}}", []Event{start(0, "f"), args(0, "{}"), end(0)}},
		}, nil},
		{"llama3 text", FormatLlama3JSON, []step{
			{"{", nil},
			{"x} and more", []Event{c("{x} and more")}},
			{" {\"name\": \"f\"", []Event{c(" {\"name\": \"f\"")}},
		}, nil},
		{"mistral", FormatMistral, []step{
			{"Sure\xff[TOOL_CALLS]", []Event{c("Sure")}},
			{"[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": {\"k\": true}}]", []Event{start(0, "f"), args(0, "{}"), end(0), start(1, "g"), args(1, `{"k": true}`), end(1)}},
		}, nil},
		{"scalar arguments", FormatMistral, []step{
			{"\xff[TOOL_CALLS][{\"name\": \"f\", \"arguments\": 12", []Event{start(0, "f"), args(0, "12")}},
			{"}]", []Event{end(0)}},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(tt.format, specials)
			if err != nil {
				t.Fatal(err)
			}
			feedSteps(t, p, tt.steps, tt.close)
		})
	}
}

// parseSplit feeds text cut at the given points and merges the events.
func parseSplit(f Format, text string, cuts []int) (string, []Call) {
	p, _ := NewParser(f, specials)
	return feedCut(p, text, cuts)
}

// feedCut feeds p text cut at cuts, closes it and merges the events.
func feedCut(p *Parser, text string, cuts []int) (string, []Call) {
	var ev []Event
	prev := 0
	for _, c := range cuts {
		ev = append(ev, p.Feed(text[prev:c])...)
		prev = c
	}
	ev = append(ev, p.Feed(text[prev:])...)
	ev = append(ev, p.Close()...)
	return Merge(ev)
}

var splitCorpus = []struct {
	f    Format
	text string
}{
	{FormatHermes, "Checking.\n\n" + hCallW + "\n" + hCallT},
	{FormatHermes, "no calls <tool at all <tool_call"},
	{FormatHermes, hCallT},
	{FormatLlama3JSON, lCallW + "; " + lCallT},
	{FormatLlama3JSON, "\xff<|python_tag|>" + lCallT},
	{FormatLlama3JSON, "plain {text}"},
	{FormatMistral, "ok\xff[TOOL_CALLS][" + mCallW + ", " + mCallT + "]"},
	{FormatMistral, "[TOOL_CALLS] as text"},
}

// TestParserEverySplit: the same text cut at every byte, and into two pieces
// at every pair of positions, gives the same content and calls.
func TestParserEverySplit(t *testing.T) {
	for _, tc := range splitCorpus {
		wantC, wantCalls := parseSplit(tc.f, tc.text, nil)
		for i := 0; i <= len(tc.text); i++ {
			gotC, gotCalls := parseSplit(tc.f, tc.text, []int{i})
			if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
				t.Fatalf("%s: split at %d of %q: got %q %+v, want %q %+v", tc.f, i, tc.text, gotC, gotCalls, wantC, wantCalls)
			}
		}
		cuts := make([]int, 0, len(tc.text))
		for i := 1; i < len(tc.text); i++ {
			cuts = append(cuts, i)
		}
		gotC, gotCalls := parseSplit(tc.f, tc.text, cuts)
		if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
			t.Fatalf("%s: byte by byte %q: got %q %+v, want %q %+v", tc.f, tc.text, gotC, gotCalls, wantC, wantCalls)
		}
	}
}

func TestParseWhole(t *testing.T) {
	content, calls, err := Parse(FormatHermes, nil, "Sure.\n"+hCallW+"\n"+hCallT)
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{{"get_weather", `{"city": "Paris"}`}, {"get_time", `{"tz": "UTC"}`}}
	if content != "Sure.\n" || !reflect.DeepEqual(calls, want) {
		t.Errorf("Parse = %q, %+v; want %q, %+v", content, calls, "Sure.\n", want)
	}
	if _, _, err := Parse("nope", nil, ""); err == nil {
		t.Errorf("Parse with an unknown format: no error")
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		tmpl string
		want Format
		ok   bool
	}{
		{"{{ '<tool_call>\\n' }}", FormatHermes, true},
		{"[TOOL_CALLS] {{ x }}", FormatMistral, true},
		{"<|python_tag|>", FormatLlama3JSON, true},
		{"<|start_header_id|> {\"name\": ..., \"parameters\": ...}", FormatLlama3JSON, true},
		{"{{ messages }}", FormatHermes, false},
	}
	for _, tt := range tests {
		if got, ok := DetectFormat(tt.tmpl); got != tt.want || ok != tt.ok {
			t.Errorf("DetectFormat(%q) = %q, %v; want %q, %v", tt.tmpl, got, ok, tt.want, tt.ok)
		}
	}
	if _, err := ParseFormat("qwen"); err != nil {
		t.Errorf("ParseFormat(qwen) error: %v", err)
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Errorf("ParseFormat(xml): no error")
	}
	if got := fmt.Sprint(Formats()); got != "[deepseek_v3 deepseek_v31 glm45 harmony hermes kimi_k2 llama3_json minimax_m2 mistral qwen qwen3_coder]" {
		t.Errorf("Formats() = %s", got)
	}
}

// FuzzToolParser: any text, split at any point, parses to the same content
// and calls, and never panics.
func FuzzToolParser(f *testing.F) {
	for _, tc := range splitCorpus {
		f.Add(uint8(0), tc.text, uint16(3))
	}
	f.Add(uint8(1), lCallW, uint16(7))
	f.Add(uint8(2), "\xff[TOOL_CALLS][{\"name\": \"f\", \"arguments\": 1x", uint16(30))
	fmts := []Format{FormatHermes, FormatLlama3JSON, FormatMistral}
	f.Fuzz(func(t *testing.T, fi uint8, text string, cut uint16) {
		fm := fmts[int(fi)%len(fmts)]
		wantC, wantCalls := parseSplit(fm, text, nil)
		i := int(cut) % (len(text) + 1)
		gotC, gotCalls := parseSplit(fm, text, []int{i})
		if gotC != wantC || !reflect.DeepEqual(gotCalls, wantCalls) {
			t.Fatalf("split at %d of %q: got %q %+v, want %q %+v", i, text, gotC, gotCalls, wantC, wantCalls)
		}
	})
}
