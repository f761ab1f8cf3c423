package toolcall

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"conform/internal/sharedtest"
)

// stepTests feed chunks one at a time and list the events each Feed (and
// the final Close) must return.
var stepTests = []struct {
	name   string
	format Format
	chunks []string
	steps  [][]Event // one per chunk, then one for Close
}{
	{
		name: "hermes content then call", format: FormatHermes,
		chunks: []string{"Let me check.", "<tool_", "call>\n{\"name\": \"get_", "weather\", \"arguments\": {\"city\": ", "\"Oslo\"}}\n</tool_call>"},
		steps: [][]Event{
			{{Kind: EventContent, Text: "Let me check."}},
			nil, // "<tool_" is held back: it may start a tag
			nil, // the name is not complete yet
			{{Kind: EventToolName, Index: 0, Text: "get_weather"}, {Kind: EventToolArgs, Index: 0, Text: `{"city": `}},
			{{Kind: EventToolArgs, Index: 0, Text: `"Oslo"}`}},
			nil,
		},
	},
	{
		name: "hermes held-back text that is not a tag", format: FormatHermes,
		chunks: []string{"a <to", "y> b"},
		steps: [][]Event{
			{{Kind: EventContent, Text: "a "}},
			{{Kind: EventContent, Text: "<toy> b"}},
			nil,
		},
	},
	{
		name: "hermes arguments before name", format: FormatHermes,
		chunks: []string{`<tool_call>{"arguments": {"q": 1}, "name": "s\u00e9"}</tool_call>`},
		steps: [][]Event{
			{{Kind: EventToolName, Index: 0, Text: "sé"}, {Kind: EventToolArgs, Index: 0, Text: `{"q": 1}`}},
			nil,
		},
	},
	{
		name: "hermes two calls, braces inside strings", format: FormatHermes,
		chunks: []string{`<tool_call>{"name": "a", "arguments": {"s": "}{\"]"}}</tool_call>`, "\n", `<tool_call>{"name": "b"}</tool_call>`},
		steps: [][]Event{
			{{Kind: EventToolName, Index: 0, Text: "a"}, {Kind: EventToolArgs, Index: 0, Text: `{"s": "}{\"]"}`}},
			{{Kind: EventContent, Text: "\n"}},
			{{Kind: EventToolName, Index: 1, Text: "b"}, {Kind: EventToolArgs, Index: 1, Text: "{}"}},
			nil,
		},
	},
	{
		name: "hermes trailing partial tag flushed as content", format: FormatHermes,
		chunks: []string{"done <tool"},
		steps: [][]Event{
			{{Kind: EventContent, Text: "done "}},
			{{Kind: EventContent, Text: "<tool"}},
		},
	},
	{
		name: "qwen coder tags", format: FormatQwenCoder,
		chunks: []string{"<tools>\n{\"name\": \"f\", \"arguments\": [1, 2]}\n</tools>\n"},
		steps: [][]Event{
			{{Kind: EventToolName, Index: 0, Text: "f"}, {Kind: EventToolArgs, Index: 0, Text: "[1, 2]"}, {Kind: EventContent, Text: "\n"}},
			nil,
		},
	},
	{
		name: "llama3 python tag", format: FormatLlama3JSON,
		chunks: []string{"<|python", "_tag|>{\"name\": \"f\", \"parameters\": {\"n\": 12", "}}"},
		steps: [][]Event{
			nil,
			{{Kind: EventToolName, Index: 0, Text: "f"}, {Kind: EventToolArgs, Index: 0, Text: `{"n": 12`}},
			{{Kind: EventToolArgs, Index: 0, Text: "}"}},
			nil,
		},
	},
	{
		name: "llama3 bare scalar argument ends at the brace", format: FormatLlama3JSON,
		chunks: []string{` {"parameters": 12, "name": "f"}; {"name": "g", "parameters": true}`},
		steps: [][]Event{
			{{Kind: EventToolName, Index: 0, Text: "f"}, {Kind: EventToolArgs, Index: 0, Text: "12"},
				{Kind: EventToolName, Index: 1, Text: "g"}, {Kind: EventToolArgs, Index: 1, Text: "true"}},
			nil,
		},
	},
	{
		name: "llama3 plain content", format: FormatLlama3JSON,
		chunks: []string{"  ", "Hello {x}"},
		steps: [][]Event{
			nil,
			{{Kind: EventContent, Text: "  Hello {x}"}},
			nil,
		},
	},
	{
		name: "mistral list", format: FormatMistral,
		chunks: []string{"ok[TOOL_", "CALLS] [{\"name\": \"a\", \"arguments\": {}, \"id\": \"abcdefghi\"}, {\"name\": \"b\", \"arguments\": {\"x\": [1]}}]"},
		steps: [][]Event{
			{{Kind: EventContent, Text: "ok"}},
			{{Kind: EventToolName, Index: 0, Text: "a"}, {Kind: EventToolArgs, Index: 0, Text: "{}"},
				{Kind: EventToolName, Index: 1, Text: "b"}, {Kind: EventToolArgs, Index: 1, Text: `{"x": [1]}`}},
			nil,
		},
	},
}

func TestSteps(t *testing.T) {
	for _, tc := range stepTests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.chunks {
				got, err := p.Feed(c)
				if err != nil {
					t.Fatalf("Feed(%q): %v", c, err)
				}
				if !reflect.DeepEqual(got, tc.steps[i]) {
					t.Errorf("Feed(%q) = %+v, want %+v", c, got, tc.steps[i])
				}
			}
			got, err := p.Close()
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
			if want := tc.steps[len(tc.chunks)]; !reflect.DeepEqual(got, want) {
				t.Errorf("Close() = %+v, want %+v", got, want)
			}
		})
	}
}

var errorTests = []struct {
	name   string
	format Format
	text   string
	code   ErrorCode
}{
	{"hermes not an object", FormatHermes, "<tool_call>[1]</tool_call>", CodeMalformed},
	{"hermes name not a string", FormatHermes, `<tool_call>{"name": 1}</tool_call>`, CodeMalformed},
	{"hermes no name", FormatHermes, `<tool_call>{"arguments": {}}</tool_call>`, CodeMalformed},
	{"hermes junk before close", FormatHermes, `<tool_call>{"name": "a"} x</tool_call>`, CodeMalformed},
	{"hermes truncated", FormatHermes, `<tool_call>{"name": "a", "argu`, CodeTruncated},
	{"llama3 junk after call", FormatLlama3JSON, `{"name": "a"} then`, CodeMalformed},
	{"mistral no list", FormatMistral, `[TOOL_CALLS] {"name": "a"}`, CodeMalformed},
	{"mistral truncated", FormatMistral, `[TOOL_CALLS] [{"name": "a", "arguments": {`, CodeTruncated},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorTests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := New(tc.format)
			_, _, err := Collect(p, tc.text)
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("Collect(%q) error = %v, want code %d", tc.text, err, tc.code)
			}
			// The error is sticky.
			if _, err2 := p.Feed("more"); err2 != e {
				t.Errorf("Feed after error = %v, want the same error %v", err2, e)
			}
		})
	}
	if _, err := New("nope"); err == nil {
		t.Errorf("New(\"nope\") succeeded, want an error")
	}
}

// splitOutputs are whole model outputs for the split property.
var splitOutputs = []struct {
	format Format
	text   string
}{
	{FormatHermes, "Sure <b>.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"q\": \"a\\\"}<tool_call>\"}}\n</tool_call>\n<tool_call>{\"arguments\": 5, \"name\": \"x\"}</tool_call> bye <tool"},
	{FormatQwenCoder, "<tools>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, {\"b\": null}]}}\n</tools>\n<tools>{\"name\": \"g\"}</tools>"},
	{FormatLlama3JSON, " <|python_tag|>{\"name\": \"f\", \"parameters\": {\"n\": -1.5e3, \"s\": \"}\"}}; {\"name\": \"g\", \"parameters\": null}"},
	{FormatLlama3JSON, "  Hello, <|python_tag|> is text here."},
	{FormatMistral, "Calling.[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": \"]\"}, \"id\": \"123456789\"}, {\"name\": \"b\", \"arguments\": []}] after [TOOL"},
}

// TestSplitEverywhere checks that splitting an output into two chunks at
// every byte position, and into single bytes, gives the same content and
// calls as feeding it whole.
func TestSplitEverywhere(t *testing.T) {
	for _, tc := range splitOutputs {
		p, _ := New(tc.format)
		wantContent, wantCalls, err := Collect(p, tc.text)
		if err != nil {
			t.Fatalf("Collect(%q): %v", tc.text, err)
		}
		if len(wantCalls) == 0 && tc.format != FormatLlama3JSON {
			t.Fatalf("Collect(%q) found no calls", tc.text)
		}
		for i := 0; i <= len(tc.text); i++ {
			p, _ := New(tc.format)
			content, calls, err := Collect(p, tc.text[:i], tc.text[i:])
			if err != nil || content != wantContent || !reflect.DeepEqual(calls, wantCalls) {
				t.Fatalf("split at %d of %q: content %q calls %+v err %v; want %q %+v", i, tc.text, content, calls, err, wantContent, wantCalls)
			}
		}
		bytes := make([]string, len(tc.text))
		for i := 0; i < len(tc.text); i++ {
			bytes[i] = tc.text[i : i+1]
		}
		p, _ = New(tc.format)
		content, calls, err := Collect(p, bytes...)
		if err != nil || content != wantContent || !reflect.DeepEqual(calls, wantCalls) {
			t.Fatalf("byte by byte %q: content %q calls %+v err %v; want %q %+v", tc.text, content, calls, err, wantContent, wantCalls)
		}
	}
}

func TestCollectValues(t *testing.T) {
	p, _ := New(FormatHermes)
	content, calls, err := Collect(p, "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Call{{Name: "f", Arguments: `{"a": 1}`}}; content != "Hi " || !reflect.DeepEqual(calls, want) {
		t.Errorf("Collect = %q, %+v; want %q, %+v", content, calls, "Hi ", want)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		text string
		want Format
		ok   bool
	}{
		{"... <tool_call>\n{\"name\": ...", FormatHermes, true},
		{"{{ '[TOOL_CALLS] [' }}", FormatMistral, true},
		{"{{- '<|python_tag|>' }}", FormatLlama3JSON, true},
		{`{{ '<|start_header_id|>' }} {"name": function name, "parameters": ...}`, FormatLlama3JSON, true},
		{`{{- "<tools>\n" }}`, FormatQwenCoder, true},
		{"{{ messages }}", "", false},
	}
	for _, tc := range tests {
		if got, ok := Detect(tc.text); got != tc.want || ok != tc.ok {
			t.Errorf("Detect(%q) = %q, %v; want %q, %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDetectShared checks Detect on the shared real templates.
func TestDetectShared(t *testing.T) {
	dir := sharedtest.Path(t, "templates")
	want := map[string]Format{
		"tool_chat_template_hermes.jinja":           FormatHermes,
		"qwen3.jinja":                               FormatHermes,
		"tool_chat_template_qwen2_5_coder.jinja":    FormatQwenCoder,
		"tool_chat_template_llama3.1_json.jinja":    FormatLlama3JSON,
		"tool_chat_template_llama3.2_json.jinja":    FormatLlama3JSON,
		"tool_chat_template_mistral.jinja":          FormatMistral,
		"tool_chat_template_mistral_parallel.jinja": FormatMistral,
		"tool_chat_template_mistral_simple.jinja":   FormatMistral,
	}
	for name, f := range want {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := Detect(string(src)); !ok || got != f {
			t.Errorf("Detect(%s) = %q, %v; want %q", name, got, ok, f)
		}
	}
}

// FuzzToolParser: for any output and split point, splitting gives the same
// result (content, calls, and whether it failed) as feeding it whole, and
// nothing panics.
func FuzzToolParser(f *testing.F) {
	for _, tc := range splitOutputs {
		f.Add(string(tc.format), tc.text, len(tc.text)/2)
	}
	for _, tc := range errorTests {
		f.Add(string(tc.format), tc.text, 3)
	}
	f.Fuzz(func(t *testing.T, format, text string, at int) {
		fm := Formats[len(format)%len(Formats)]
		if at < 0 {
			at = -at
		}
		at %= len(text) + 1
		p1, _ := New(fm)
		c1, calls1, err1 := Collect(p1, text)
		p2, _ := New(fm)
		c2, calls2, err2 := Collect(p2, text[:at], text[at:])
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s %q split at %d: errors %v vs %v", fm, text, at, err1, err2)
		}
		if err1 == nil && (c1 != c2 || !reflect.DeepEqual(calls1, calls2)) {
			t.Fatalf("%s %q split at %d: %q %+v vs %q %+v", fm, text, at, c1, calls1, c2, calls2)
		}
	})
}

// BenchmarkHermes parses a call streamed in 4-byte chunks.
func BenchmarkHermes(b *testing.B) {
	text := splitOutputs[0].text
	var chunks []string
	for i := 0; i < len(text); i += 4 {
		chunks = append(chunks, text[i:min(i+4, len(text))])
	}
	b.ReportAllocs()
	for b.Loop() {
		p, _ := New(FormatHermes)
		if _, _, err := Collect(p, chunks...); err != nil {
			b.Fatal(err)
		}
	}
}
