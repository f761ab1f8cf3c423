package main

// Tests of the playground's handler (ui.go) over the fake engine: what each
// route serves with and without --no-ui, and that the page's schema
// examples compile strictly and give valid outputs. The page itself runs in
// a real browser in browser_test.go.

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPlaygroundRoutes(t *testing.T) {
	type want struct {
		status int
		ctype  string // prefix of Content-Type
		body   string // a piece of the body
	}
	page := want{200, "text/html; charset=utf-8", `id="explain-keywords"`}
	notFound := want{404, "application/json", `"code":"not_found"`}
	tests := []struct {
		noUI         bool
		method, path string
		want         want
	}{
		{false, "GET", "/", page},
		{false, "HEAD", "/", want{200, "", ""}},
		{false, "GET", "/ui/app.js", want{200, "text/javascript; charset=utf-8", "sseData"}},
		{false, "GET", "/ui/style.css", want{200, "text/css; charset=utf-8", "#explain-facts"}},
		{false, "GET", "/ui/examples.json", want{200, "application/json", `"weather"`}},
		{false, "GET", "/ui/index.html", page},
		{false, "GET", "/ui/nope.js", notFound},
		{false, "GET", "/ui/", notFound},
		{false, "GET", "/ui/../main.go", notFound},
		{false, "POST", "/", want{405, "application/json", "method_not_allowed"}},
		{true, "GET", "/", notFound},
		{true, "HEAD", "/", want{200, "", ""}},
		{true, "GET", "/ui/app.js", notFound},
	}
	servers := map[bool]*testServer{false: newTestServer(t, Config{}, ""), true: newTestServer(t, Config{NoUI: true}, "")}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, servers[tt.noUI].http.URL+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := want{resp.StatusCode, resp.Header.Get("Content-Type"), string(body)}
		if got.status != tt.want.status || !strings.HasPrefix(got.ctype, tt.want.ctype) || !strings.Contains(got.body, tt.want.body) {
			t.Errorf("%s %s (no-ui %v) = %d %q %.80q, want %d %q and a body with %q", tt.method, tt.path, tt.noUI, got.status, got.ctype, got.body, tt.want.status, tt.want.ctype, tt.want.body)
		}
		if got.status == 200 && tt.method == "GET" {
			if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("%s %s: Cache-Control %q, want no-cache", tt.method, tt.path, cc)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("%s %s: Content-Security-Policy %q", tt.method, tt.path, csp)
			}
		}
	}
}

// TestPlaygroundRevalidate: an asset asked again with its ETag is a 304.
func TestPlaygroundRevalidate(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	resp, err := http.Get(ts.http.URL + "/ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
		t.Fatalf("GET /ui/app.js: ETag %q, want a quoted hash", etag)
	}
	for _, tt := range []struct {
		tag    string
		status int
	}{{etag, 304}, {`"0000000000000000"`, 200}} {
		req, _ := http.NewRequest("GET", ts.http.URL+"/ui/app.js", nil)
		req.Header.Set("If-None-Match", tt.tag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("GET /ui/app.js with If-None-Match %s = %d, want %d", tt.tag, resp.StatusCode, tt.status)
		}
	}
}

func TestPlaygroundFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"--demo"}, nil, false},
		{[]string{"--demo", "--no-ui"}, nil, true},
		{[]string{"--demo"}, map[string]string{"CONFORM_NO_UI": "true"}, true},
		{[]string{"--demo", "--no-ui=false"}, map[string]string{"CONFORM_NO_UI": "true"}, false},
	} {
		c, err := ParseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
		if err != nil || c.NoUI != tt.want {
			t.Errorf("ParseConfig(%q) with %v: NoUI %v, %v; want %v", tt.args, tt.env, c.NoUI, err, tt.want)
		}
	}
}

// TestPlaygroundAssets: the page loads nothing from elsewhere, writes no
// markup from strings, stays small, and has the ids browser_test.go drives.
func TestPlaygroundAssets(t *testing.T) {
	assets, err := uiAssets()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	total := 0
	for name, a := range assets {
		names = append(names, name)
		total += len(a.body)
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`).Find(a.body); m != nil {
			t.Errorf("%s links %q: the page must load nothing from elsewhere", name, m)
		}
		if m := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(`).Find(a.body); m != nil {
			t.Errorf("%s uses %s: text goes into the page through textContent", name, m)
		}
	}
	slices.Sort(names)
	if want := []string{"app.js", "examples.json", "index.html", "style.css"}; !slices.Equal(names, want) {
		t.Errorf("assets %v, want %v", names, want)
	}
	if total > 40<<10 {
		t.Errorf("assets take %d bytes, want at most 40 KiB", total)
	}
	page := string(assets["index.html"].body)
	for _, id := range []string{"model", "api-key", "mode", "example", "schema", "schema-error", "prompt", "max-tokens", "send", "curl", "chat", "explain", "explain-keywords", "explain-sizes", "explain-shortest", "explain-samples"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("index.html has no element id=%q", id)
		}
	}
}

// playgroundExample is an entry of ui/examples.json.
type playgroundExample struct {
	Mode   string          `json:"mode"`
	Tool   string          `json:"tool"`
	Prompt string          `json:"prompt"`
	Schema json.RawMessage `json:"schema"`
}

func playgroundExamples(t *testing.T) map[string]playgroundExample {
	t.Helper()
	b, err := uiFS.ReadFile("ui/examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]playgroundExample
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("ui/examples.json: %v", err)
	}
	return out
}

// playgroundConstraint is the structured-output part app.js's constraint()
// sends for a schema in a mode, strict: one call in tool mode.
func playgroundConstraint(mode, tool string, schema json.RawMessage) map[string]any {
	if mode == "tool" {
		return map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": tool, "parameters": schema, "strict": true}}}, "tool_choice": "required", "parallel_tool_calls": false}
	}
	return map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "playground", "schema": schema, "strict": true}}}
}

// TestPlaygroundExamples: every example of the page, in both modes,
// compiles in strict mode with every keyword exact (the explain panel shows
// no refusal), and a chat answer with it validates.
func TestPlaygroundExamples(t *testing.T) {
	ts := newTestServer(t, Config{}, "")
	exs := playgroundExamples(t)
	for _, name := range []string{"weather", "nested", "enum", "pattern"} {
		ex, ok := exs[name]
		if !ok {
			t.Errorf("ui/examples.json has no %q (the brief's four: a tool, a nested object, an enum, a regex)", name)
			continue
		}
		sch := compileSchema(t, string(ex.Schema))
		for _, mode := range []string{"schema", "tool"} {
			tool := ex.Tool
			if tool == "" {
				tool = "answer"
			}
			c := playgroundConstraint(mode, tool, ex.Schema)
			er, body := postExplain(t, ts, c)
			if er.Error != nil || len(er.Schemas) != 1 || er.Shortest == nil {
				t.Errorf("%s/%s: explain = %s, want a compiled schema", name, mode, body)
				continue
			}
			for _, k := range er.Schemas[0].Keywords {
				if k.Status != "exact" && k.Status != "annotation" {
					t.Errorf("%s/%s: %s %s is %s (%s), want exact", name, mode, k.Pointer, k.Keyword, k.Status, k.Message)
				}
			}
			req := chatBody(c)
			req["messages"] = []any{map[string]any{"role": "user", "content": ex.Prompt}}
			req["max_tokens"] = 128
			resp, body := ts.post(t, "/v1/chat/completions", req)
			r := decodeChat(t, resp.StatusCode, body)
			msg := r.Choices[0].Message
			switch {
			case mode == "schema" && msg.Content != nil:
				validate(t, sch, *msg.Content)
			case mode == "tool" && len(msg.ToolCalls) == 1:
				for _, call := range msg.ToolCalls {
					if call.Function.Name != tool {
						t.Errorf("%s/%s: call to %q, want %q", name, mode, call.Function.Name, tool)
					}
					validate(t, sch, call.Function.Arguments)
				}
			default:
				t.Errorf("%s/%s: message %+v, want %s output", name, mode, msg, mode)
			}
		}
	}
}
