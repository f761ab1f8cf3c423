package turn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"conform/fsm"
)

// TestDetectTemplates: every template of ../shared/templates, rendered,
// shows the format the table says (none: it renders no call that can be
// read, and the grep fallback decides DetectFormat).
func TestDetectTemplates(t *testing.T) {
	dir := sharedDir(t, "templates")
	tests := map[string]struct {
		rendered Format // DetectDescription's match; "" none, "built" one of its own
		format   Format // DetectFormat
		ok       bool
	}{
		"MiniMax-M2.jinja": {FormatMiniMaxM2, FormatMiniMaxM2, true},
		"Qwen3.5-4B.jinja": {FormatQwen3Coder, FormatQwen3Coder, true},
		"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": {FormatDeepSeekV3, FormatDeepSeekV3, true},
		"deepseek-ai-DeepSeek-V3.1.jinja":                {FormatDeepSeekV31, FormatDeepSeekV31, true},
		"gemma3.jinja":                                   {"", FormatHermes, false},
		"glm_4_5.jinja":                                  {FormatGLM45, FormatGLM45, true},
		"llama3_1_basic.jinja":                           {"", FormatHermes, false},
		"moonshotai-Kimi-K2.jinja":                       {FormatKimiK2, FormatKimiK2, true},
		"openai-gpt-oss-120b.jinja":                      {FormatHarmony, FormatHarmony, true},
		"qwen3.jinja":                                    {FormatHermes, FormatHermes, true},
		"template_chatml.jinja":                          {"", FormatHermes, false},
		"template_llama3.jinja":                          {"", FormatHermes, false},
		"tool_chat_template_deepseekv3.jinja":            {FormatDeepSeekV3, FormatDeepSeekV3, true}, // its markers padded with spaces
		"tool_chat_template_granite.jinja":               {"", FormatHermes, false},
		"tool_chat_template_hermes.jinja":                {FormatHermes, FormatHermes, true}, // arguments before the name
		"tool_chat_template_llama3.1_json.jinja":         {FormatLlama3JSON, FormatLlama3JSON, true},
		"tool_chat_template_llama3.2_json.jinja":         {FormatLlama3JSON, FormatLlama3JSON, true},
		"tool_chat_template_mistral.jinja":               {FormatMistral, FormatMistral, true},
		"tool_chat_template_mistral_parallel.jinja":      {FormatMistral, FormatMistral, true},
		"tool_chat_template_mistral_simple.jinja":        {"", FormatMistral, true}, // renders no call: the grep fallback
		"tool_chat_template_phi4_mini.jinja":             {"", FormatHermes, false}, // Python-repr arguments
		"tool_chat_template_qwen2_5_coder.jinja":         {"built", FormatHermes, false},
		"tool_chat_template_xlam_qwen.jinja":             {"built", FormatHermes, false},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, path := range files {
		name := filepath.Base(path)
		tt, ok := tests[name]
		if !ok {
			t.Errorf("%s: not in the table; add what it renders", name)
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d, found := DetectDescription(string(src))
		got := d.Name
		if found && got == "" {
			got = "built"
		}
		if got != tt.rendered {
			t.Errorf("DetectDescription(%s) = %q, %v; want %q", name, got, found, tt.rendered)
		}
		if f, ok := DetectFormat(string(src)); f != tt.format || ok != tt.ok {
			t.Errorf("DetectFormat(%s) = %q, %v; want %q, %v", name, f, ok, tt.format, tt.ok)
		}
	}
}

// builtTemplate writes calls in a shape no registered format has:
// per-parameter values inside <calls>, with markers of its own.
const builtTemplate = `{%- for m in messages %}<|im_start|>{{ m.role }}
{% if m.tool_calls %}<calls>
{% for tc in m.tool_calls %}<fn name="{{ tc.function.name }}">{% for k, v in tc.function.arguments.items() %}<arg name="{{ k }}">{{ v }}</arg>{% endfor %}</fn>
{% endfor %}</calls>{% else %}{{ m.content }}{% endif %}<|im_end|>
{% endfor %}`

// TestDetectBuilt: a template of a known kind with new marker strings gets
// a description of its own, which builds a constraint that accepts what
// the template writes and a parser that reads it back.
func TestDetectBuilt(t *testing.T) {
	d, ok := DetectDescription(builtTemplate)
	if !ok || d.Name != "" {
		t.Fatalf("DetectDescription(builtTemplate) = %+v, %v; want a built description", d, ok)
	}
	want := Description{Begin: "<calls>\n", CallOpen: `<fn name="`, NameClose: `">`, ArgsAre: ArgsParams,
		Param: ParamSyntax{Open: `<arg name="`, KeyClose: `">`, Close: "</arg>"}, CallClose: "</fn>", Sep: "\n", End: "\n</calls>",
		Trigger: "<calls>", Markers: []string{"<calls>", "</arg>", "</fn>", "</calls>"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("DetectDescription(builtTemplate) =\n%+v\nwant\n%+v", d, want)
	}
	text := "Checking.<calls>\n" + `<fn name="get_weather"><arg name="city">Par"is</arg><arg name="unit">celsius</arg></fn>` + "\n" + `<fn name="get_time"></fn>` + "\n</calls>"
	res, err := Build(Spec{Tools: goldenTools, ToolMode: ToolAuto, Parallel: true}, Options{Description: &d})
	if err != nil {
		t.Fatal(err)
	}
	dfa, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !fsm.Matches(dfa, []byte(text)) {
		t.Errorf("the built constraint refuses %q", text)
	}
	if fsm.Matches(dfa, []byte("text <calls> more")) {
		t.Errorf("the built constraint lets text hold its trigger")
	}
	p := NewParserOf(d, nil)
	p.kinds = res.params
	content, calls := Merge(append(p.Feed(text), p.Close()...))
	wantCalls := []Call{{"get_weather", `{"city": "Par\"is", "unit": "celsius"}`}, {"get_time", "{}"}}
	if content != "Checking." || !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("parsed %q %+v, want %q %+v", content, calls, "Checking.", wantCalls)
	}
	for _, c := range calls {
		if !json.Valid([]byte(c.Arguments)) {
			t.Errorf("arguments %q are not JSON", c.Arguments)
		}
	}
}

// FuzzDetectDescription: any template text is detected without a panic,
// and a description it returns builds a constraint for a tool.
func FuzzDetectDescription(f *testing.F) {
	f.Add(builtTemplate)
	f.Add("{{ '<tool_call>\\n' }}")
	f.Add(`{% for m in messages %}{% if m.tool_calls %}[{% for tc in m.tool_calls %}{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}{% endfor %}]{% else %}{{ m.content }}{% endif %}{% endfor %}`)
	f.Fuzz(func(t *testing.T, tmpl string) {
		d, ok := DetectDescription(tmpl)
		if !ok {
			return
		}
		if _, err := Build(Spec{Tools: goldenTools[:1], ToolMode: ToolRequired}, Options{Description: &d}); err != nil {
			t.Fatalf("DetectDescription(%q) = %+v, which Build refuses: %v", tmpl, d, err)
		}
	})
}
