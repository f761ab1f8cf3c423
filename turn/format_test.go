package turn

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"conform/fsm"
	"conform/grammar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/formats")

// sharedDir is ../shared (templates, vocabularies), absent on a laptop.
func sharedDir(t testing.TB, sub string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s is absent (%v): the shared fixtures are needed", dir, err)
	}
	return dir
}

// TestDescriptions checks what the parser and the builder assume of every
// registered format: the text after a name cannot continue it, the trigger
// opens the calls, the pieces that tell a parameter from the call's end
// differ, and every marker occurs in the format.
func TestDescriptions(t *testing.T) {
	for _, f := range Formats() {
		d, _ := f.Description()
		if d.Name != f {
			t.Errorf("%s: Description().Name = %q", f, d.Name)
		}
		sx := d.resolved(nil)
		var after []string
		if sx.NameEnd != "" {
			after = []string{sx.NameEnd}
		} else if sx.Params {
			after = []string{sx.POpen, sx.Close}
		} else {
			t.Errorf("%s: nothing ends the name", f)
		}
		for _, a := range after {
			if a == "" || isNameByte(a[0]) {
				t.Errorf("%s: %q follows a name and could continue it", f, a)
			}
		}
		if sx.Trigger != "" && !strings.HasPrefix(sx.Begin+sx.Open, sx.Trigger) {
			t.Errorf("%s: trigger %q does not open the calls %q", f, sx.Trigger, sx.Begin+sx.Open)
		}
		if sx.Trigger == "" && sx.Content == "" && !sx.InObject {
			t.Errorf("%s: calls that only open the turn need a ContentOpen or the JSON-object style", f)
		}
		if sx.Params && (sx.POpen == "" || sx.PKeyEnd == "" || sx.PClose == "" || strings.HasPrefix(sx.Close, sx.POpen) || strings.HasPrefix(sx.POpen, sx.Close)) {
			t.Errorf("%s: parameter pieces %q %q %q cannot be told from the call's end %q", f, sx.POpen, sx.PKeyEnd, sx.PClose, sx.Close)
		}
		if more := sx.Sep + sx.Open; sx.End != "" && (strings.HasPrefix(more, sx.End) || strings.HasPrefix(sx.End, more)) {
			t.Errorf("%s: the next call %q cannot be told from the end %q", f, more, sx.End)
		}
		all := strings.Join(append(sx.key(), d.Trigger, d.ContentOpen), "\x00")
		for _, m := range d.Markers {
			if !strings.Contains(all, m) {
				t.Errorf("%s: marker %q occurs nowhere in the format", f, m)
			}
		}
	}
}

// weatherTool is the tool of the templates' golden tool-call cases.
var weatherTool = Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`)}

// goldenCalls are the calls each format's golden file writes.
var goldenCalls = []struct {
	name string
	args map[string]any
}{
	{"get_weather", map[string]any{"city": "Paris", "unit": "celsius"}},
	{"get_time", map[string]any{}},
	{"get_weather", map[string]any{"city": "a \"quoted\"\nline </x> ✓"}},
}

var goldenTools = []Tool{
	weatherTool,
	{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
}

// writeCall writes one call in format sx, the inverse of the parser (a
// test's own writer: string parameters raw, others JSON, in the schema's
// order, which is weatherTool's key order here).
func writeCall(sx syntax, i int, name string, args map[string]any, order []string) string {
	var b strings.Builder
	b.WriteString(sx.Open + name + sx.NameEnd)
	if sx.Index {
		b.WriteString(strconv.Itoa(i) + sx.IndexEnd)
	}
	if !sx.Params {
		b.WriteString(canonJSON(args, order))
	} else {
		for _, k := range order {
			v, ok := args[k]
			if !ok {
				continue
			}
			b.WriteString(sx.POpen + k + sx.PKeyEnd)
			if s, ok := v.(string); ok {
				b.WriteString(s)
			} else {
				j, _ := json.Marshal(v)
				b.Write(j)
			}
			b.WriteString(sx.PClose)
		}
	}
	b.WriteString(sx.Close)
	return b.String()
}

// canonJSON writes args with ", " and ": " separators in key order.
func canonJSON(args map[string]any, order []string) string {
	var parts []string
	for _, k := range order {
		if v, ok := args[k]; ok {
			kb, _ := json.Marshal(k)
			var vb strings.Builder
			enc := json.NewEncoder(&vb)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(v)
			parts = append(parts, string(kb)+": "+strings.TrimSuffix(vb.String(), "\n"))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// writeCalls writes the calls of a turn in format sx.
func writeCalls(sx syntax, calls []int) string {
	var b strings.Builder
	b.WriteString(sx.Begin)
	for i, c := range calls {
		if i > 0 {
			b.WriteString(sx.Sep)
		}
		g := goldenCalls[c]
		b.WriteString(writeCall(sx, i, g.name, g.args, []string{"city", "unit"}))
	}
	b.WriteString(sx.End)
	return b.String()
}

// TestFormatGolden: for every format, the text of a fixed turn of calls
// (testdata/formats/<format>.txt, rewritten with -update) is accepted by the
// constraint of required calls and parses back to the same calls, whose
// arguments are JSON equal to what was written.
func TestFormatGolden(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			d, _ := f.Description()
			sx := d.resolved(nil)
			turnCalls := []int{0, 1, 2}
			if sx.Single {
				turnCalls = []int{0}
			}
			text := writeCalls(sx, turnCalls)
			path := filepath.Join("testdata", "formats", string(f)+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if string(want) != text {
				t.Errorf("format %s writes\n%q\nwant (golden)\n%q", f, text, want)
			}
			// Free-form extra values one level deep keep the DFA small.
			_, dfa := compile(t, specOpts{spec: Spec{Tools: goldenTools, ToolMode: ToolRequired, Parallel: true}, opts: Options{Format: f, Grammar: grammar.Options{AnyValueDepth: 1}}})
			if !fsm.Matches(dfa, want) {
				t.Errorf("the constraint of %s refuses its golden text %q", f, want)
			}
			checkParsed(t, f, string(want), turnCalls)
		})
	}
}

// checkParsed parses text in format f and compares the calls with
// goldenCalls[want...].
func checkParsed(t *testing.T, f Format, text string, want []int) {
	t.Helper()
	content, calls, err := Parse(f, nil, text)
	if err != nil {
		t.Fatal(err)
	}
	if content != "" || len(calls) != len(want) {
		t.Fatalf("Parse(%s, %q) = content %q, %d calls; want none, %d", f, text, content, len(calls), len(want))
	}
	for i, c := range calls {
		g := goldenCalls[want[i]]
		var got map[string]any
		if err := json.Unmarshal([]byte(c.Arguments), &got); err != nil {
			t.Errorf("call %d arguments %q: %v", i, c.Arguments, err)
			continue
		}
		if c.Name != g.name || !reflect.DeepEqual(got, g.args) {
			t.Errorf("call %d = %s %s, want %s %v", i, c.Name, c.Arguments, g.name, g.args)
		}
	}
}

// templateGolden pairs a template's golden renderings with its format.
var templateGolden = []struct {
	file   string
	format Format
}{
	{"Qwen3.5-4B.json", FormatQwen3Coder},
	{"deepseek-ai-DeepSeek-V3.1.json", FormatDeepSeekV31},
	{"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.json", FormatDeepSeekV3},
	{"moonshotai-Kimi-K2.json", FormatKimiK2},
	{"glm_4_5.json", FormatGLM45},
	{"MiniMax-M2.json", FormatMiniMaxM2},
	{"qwen3.json", FormatHermes},
	{"tool_chat_template_llama3.2_json.json", FormatLlama3JSON},
}

type goldenFixture struct {
	Cases []struct {
		Name     string            `json:"name"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Expected string `json:"expected"`
	} `json:"cases"`
}

// TestTemplateRenderingsParse: the calls the real templates render (the
// golden renderings of ../shared/templates) are accepted by the format's
// constraint over the case's tools, and parse to the rendered arguments.
func TestTemplateRenderingsParse(t *testing.T) {
	dir := sharedDir(t, "templates/golden")
	for _, tg := range templateGolden {
		data, err := os.ReadFile(filepath.Join(dir, tg.file))
		if err != nil {
			t.Fatal(err)
		}
		var fx goldenFixture
		if err := json.Unmarshal(data, &fx); err != nil {
			t.Fatal(err)
		}
		d, _ := tg.format.Description()
		sx := d.resolved(nil)
		seen := 0
		for _, c := range fx.Cases {
			// These cases call get_weather only: their constraint is small
			// (search_events' alone is a DFA of some 95,000 states).
			if c.Name != "tool_call_object_args" && c.Name != "parallel_tool_calls_two" || c.Expected == "" {
				continue
			}
			var last struct {
				ToolCalls []struct {
					Function struct {
						Name      string         `json:"name"`
						Arguments map[string]any `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			if err := json.Unmarshal(c.Messages[len(c.Messages)-1], &last); err != nil || len(last.ToolCalls) == 0 {
				continue
			}
			var tools []Tool
			for _, tl := range c.Tools {
				tools = append(tools, Tool{Name: tl.Function.Name, Parameters: tl.Function.Parameters})
			}
			// The calls start at the format's opening after the last user
			// message and end at its closing.
			var user struct {
				Content string `json:"content"`
			}
			_ = json.Unmarshal(c.Messages[len(c.Messages)-2], &user)
			from := strings.LastIndex(c.Expected, user.Content) + len(user.Content)
			start := strings.Index(c.Expected[from:], sx.Begin+sx.Open)
			if start < 0 && sx.OptBegin {
				start = strings.Index(c.Expected[from:], sx.Open)
			}
			end := strings.LastIndex(c.Expected, sx.Close+sx.End)
			if start < 0 || end < from+start {
				t.Errorf("%s %s: no %s calls in %q", tg.file, c.Name, tg.format, c.Expected[from:])
				continue
			}
			text := c.Expected[from+start : end+len(sx.Close+sx.End)]
			if sx.Single && len(last.ToolCalls) > 1 {
				last.ToolCalls = last.ToolCalls[:1]
			}
			res, err := Build(Spec{Tools: tools, ToolMode: ToolRequired, Parallel: true}, Options{Format: tg.format, Grammar: grammar.Options{AnyValueDepth: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if !nodeMatches(t, res.Node, text) {
				t.Errorf("%s %s: the %s constraint refuses the rendered calls %q", tg.file, c.Name, tg.format, text)
			}
			content, calls, _ := Parse(tg.format, nil, text)
			if content != "" || len(calls) != len(last.ToolCalls) {
				t.Errorf("%s %s: Parse(%q) = content %q, %d calls; want %d", tg.file, c.Name, text, content, len(calls), len(last.ToolCalls))
				continue
			}
			for i, call := range calls {
				var got map[string]any
				if err := json.Unmarshal([]byte(call.Arguments), &got); err != nil {
					t.Errorf("%s %s: call %d arguments %q: %v", tg.file, c.Name, i, call.Arguments, err)
					continue
				}
				w := last.ToolCalls[i].Function
				if call.Name != w.Name || !reflect.DeepEqual(got, w.Arguments) {
					t.Errorf("%s %s: call %d = %s %s, want %s %v", tg.file, c.Name, i, call.Name, call.Arguments, w.Name, w.Arguments)
				}
			}
			seen++
		}
		if seen == 0 {
			t.Errorf("%s: no tool-call case checked", tg.file)
		}
	}
}

// nodeMatches reports whether n accepts s, without building n's whole DFA
// (only the states s reaches: n ∧ s is empty or not).
func nodeMatches(t *testing.T, n *fsm.Node, s string) bool {
	t.Helper()
	empty, err := fsm.IsEmpty(fsm.And(n, fsm.Lit(s)), fsm.Options{})
	if err != nil {
		t.Fatalf("fsm.IsEmpty error: %v", err)
	}
	return !empty
}

// TestParamArgsErrors: what a per-parameter format cannot carry is refused
// under strict and reported otherwise.
func TestParamArgsErrors(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		strict  bool
		code    ErrorCode
		pointer string
		keyword string
		unenf   string // lenient: the Unenforced entry
	}{
		{"top-level array", `{"type":"array"}`, false, CodeSchema, "/type", "type", ""},
		{"not an object", `[1]`, false, CodeSchema, "", "", ""},
		{"mixed type strict", `{"type":"object","properties":{"a":{"type":["string","integer"]}}}`, true, CodeSchema, "/properties/a", "type", ""},
		{"mixed type lenient", `{"type":"object","properties":{"a":{"type":["string","integer"]}}}`, false, 0, "", "", "tools[0].function.parameters#/properties/a type"},
		{"untyped lenient", `{"type":"object","properties":{"a":{}}}`, false, 0, "", "", "tools[0].function.parameters#/properties/a type"},
		{"minProperties strict", `{"type":"object","minProperties":1,"properties":{"a":{"type":"string"}}}`, true, CodeSchema, "/minProperties", "minProperties", ""},
		{"minProperties lenient", `{"type":"object","minProperties":1,"properties":{"a":{"type":"string"}}}`, false, 0, "", "", "tools[0].function.parameters#/minProperties minProperties"},
		{"anyOf strict", `{"type":"object","anyOf":[{"required":["a"]}],"properties":{"a":{"type":"string"}}}`, true, CodeSchema, "/anyOf", "anyOf", ""},
		{"undeclared required", `{"type":"object","properties":{},"required":["a"]}`, false, CodeSchema, "/required", "required", ""},
		{"key with the key close", `{"type":"object","properties":{"a>\nb":{"type":"string"}}}`, false, CodeSchema, "/properties/a>\nb", "", ""},
		{"bad pattern in a string param", `{"type":"object","properties":{"a":{"type":"string","pattern":"(x"}}}`, true, CodeSchema, "/properties/a/pattern", "pattern", ""},
		{"unsupported keyword in a JSON param", `{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`, true, CodeSchema, "/properties/a/uniqueItems", "uniqueItems", ""},
		{"lenient keyword in a JSON param", `{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`, false, 0, "", "", "tools[0].function.parameters#/properties/a/uniqueItems uniqueItems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Tools: []Tool{{Name: "f", Parameters: json.RawMessage(tt.schema), Strict: tt.strict}}, ToolMode: ToolRequired}
			res, err := Build(spec, Options{Format: FormatQwen3Coder})
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("Build error: %v, want none", err)
				}
				var got []string
				for _, u := range res.Unenforced {
					got = append(got, u.String())
				}
				if !reflect.DeepEqual(got, []string{tt.unenf}) {
					t.Errorf("Unenforced = %q, want [%q]", got, tt.unenf)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Build error = %v, want *Error", err)
			}
			if e.Code != tt.code || e.Pointer != tt.pointer || e.Keyword != tt.keyword || e.Param != "tools[0].function.parameters" {
				t.Errorf("Build error = {%v %q %q %q}, want {%v %q %q tools[0].function.parameters}", e.Code, e.Pointer, e.Keyword, e.Param, tt.code, tt.pointer, tt.keyword)
			}
		})
	}
}

// TestParamOrder: per-parameter calls take the parameters in the schema's
// order, or in any order under grammar.OrderAny; either way each at most
// once and the required ones present.
func TestParamOrder(t *testing.T) {
	tool := Tool{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","maxLength":3},"b":{"type":"integer"},"c":{"type":"boolean"}},"required":["a","b"],"additionalProperties":false}`)}
	p := func(k, v string) string { return "<parameter=" + k + ">\n" + v + "\n</parameter>\n" }
	call := func(ps ...string) string {
		return "<tool_call>\n<function=f>\n" + strings.Join(ps, "") + "</function>\n</tool_call>"
	}
	tests := []struct {
		text        string
		schema, any bool
	}{
		{call(p("a", "x"), p("b", "1")), true, true},
		{call(p("a", "x"), p("b", "1"), p("c", "true")), true, true},
		{call(p("b", "1"), p("a", "x")), false, true},
		{call(p("c", "false"), p("b", "2"), p("a", "")), false, true},
		{call(p("a", "x")), false, false},                           // b is required
		{call(p("a", "x"), p("b", "1"), p("a", "y")), false, false}, // a twice
		{call(p("a", "x"), p("b", "1"), p("d", "1")), false, false}, // not declared
		{call(p("a", "abcd"), p("b", "1")), false, false},           // maxLength
		{call(p("a", "x"), p("b", "1.5")), false, false},            // integer
	}
	for _, order := range []grammar.PropertyOrder{grammar.OrderSchema, grammar.OrderAny} {
		_, dfa := compile(t, specOpts{spec: Spec{Tools: []Tool{tool}, ToolMode: ToolRequired}, opts: Options{Format: FormatQwen3Coder, Grammar: grammar.Options{PropertyOrder: order}}})
		for _, tt := range tests {
			want := tt.schema
			if order == grammar.OrderAny {
				want = tt.any
			}
			if got := fsm.Matches(dfa, []byte(tt.text)); got != want {
				t.Errorf("order %v: Matches(%q) = %v, want %v", order, tt.text, got, want)
			}
		}
	}
}

// FuzzParamArgs: any parameters schema, strict or not, builds a
// per-parameter call or fails with an *Error; never a panic.
func FuzzParamArgs(f *testing.F) {
	for _, tl := range goldenTools {
		f.Add(string(tl.Parameters), false)
	}
	f.Add(`{"type":"object","properties":{"a":{"type":["string","integer"]}}}`, true)
	f.Add(`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}},"required":["a"]}`, true)
	f.Add(`{"type":"object","properties":{"a>\nb":{}}}`, false)
	f.Fuzz(func(t *testing.T, schema string, strict bool) {
		for _, fm := range []Format{FormatQwen3Coder, FormatGLM45, FormatMiniMaxM2} {
			_, err := Build(Spec{Tools: []Tool{{Name: "f", Parameters: json.RawMessage(schema), Strict: strict}}, ToolMode: ToolRequired},
				Options{Format: fm, Grammar: grammar.Options{MaxSchemaBytes: 1 << 12, MaxNodes: 20_000}})
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("Build(%s, %q) error %T %v, want *Error", fm, schema, err, err)
			}
		}
	})
}
