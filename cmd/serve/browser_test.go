//go:build cgo

package main

// The playground (ui/) in a real browser: headless Chromium, driven through
// the DevTools protocol by chromedp, against the real server (run) on the
// --demo model through llama.cpp. The page is used as a person would: pick
// an example, send, wait for the streamed answer; the test then reads what
// the page shows and checks it with the same validator as the e2e tests.
//
// Chromium is $CHROMIUM, or chromium / chromium-browser on PATH (make
// browser-deps installs Debian's package); without one the test skips, and
// fails in CI (CI=true), which must run it. On failure a screenshot goes to
// $CONFORM_BROWSER_ARTIFACTS (default the system temp folder) as
// conform-browser-<test>.png, and its path is logged.
// CONFORM_BROWSER_SCREENSHOT=FILE saves a full-page screenshot of the
// playground after the JSON-schema answer, for the docs.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Bounds of the browser's steps: the start of Chromium, one DOM step, and
// an answer streamed by the demo model (128 tokens at most, on one thread
// of a busy 2-core machine).
const (
	browserStart  = 90 * time.Second
	browserStep   = 30 * time.Second
	browserAnswer = 3 * time.Minute
)

// chromiumPath finds Chromium or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium (neither chromium nor chromium-browser on PATH, $CHROMIUM unset): install it with `apt-get install chromium` (or `make browser-deps`) to run the playground's browser test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true, where the browser test must run")
	}
	t.Skip(msg)
	return ""
}

// page is a Chromium tab on the playground.
type page struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// openPage starts Chromium and loads url in it. The browser ends with the
// test; if the test failed, a screenshot is taken first.
func openPage(t *testing.T, chromium, url string) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		// Chromium's sandbox cannot start as root (CI containers, this
		// machine) nor without user namespaces; the page is this
		// server's own, on loopback.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	p := &page{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	t.Cleanup(p.screenshotOnFailure) // runs first
	// The first run starts the browser and lives as long as ctx, so it
	// takes no timeout of its own: a timer cancels it instead.
	timer := time.AfterFunc(browserStart, cancelAlloc)
	err := chromedp.Do(ctx)
	if !timer.Stop() {
		t.Fatalf("Chromium (%s) did not start in %v", chromium, browserStart)
	}
	if err != nil {
		t.Fatalf("starting Chromium (%s): %v", chromium, err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	p.do("load "+url, browserStep, chromedp.Navigate(url))
	p.wait("the page to be ready", `document.body.dataset.ready === 'true'`, browserStep)
	return p
}

// do runs actions within d.
func (p *page) do(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the value of a JavaScript expression in the page.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserStep)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// wait waits up to d for a JavaScript expression to be true.
func (p *page) wait(what, expr string, d time.Duration) {
	p.t.Helper()
	p.do("waiting for "+what+" ("+expr+")", d+5*time.Second, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// text is the text of the element with this id.
func (p *page) text(id string) string {
	p.t.Helper()
	return eval[string](p, `(document.getElementById(`+jsString(id)+`) || {textContent: ''}).textContent`)
}

// choose sets a select or input as a person would, with the events the page
// listens to.
func (p *page) choose(id, value string) {
	p.t.Helper()
	eval[chromedp.Void](p, `(() => { const e = document.getElementById(`+jsString(id)+`); e.value = `+jsString(value)+`;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()`)
}

// pick chooses a schema example and waits for its explain panel.
func (p *page) pick(example string) {
	p.t.Helper()
	p.choose("example", example)
	p.wait("the explain panel of "+example, `document.getElementById('explain').dataset.state === 'done' && document.querySelectorAll('#explain-keywords tr').length > 0`, browserStep)
}

// send clicks Send and waits for the streamed answer to end, which must end
// well.
func (p *page) send() {
	p.t.Helper()
	p.do("click Send", browserStep, chromedp.WaitEnabled(chromedp.ID("send")), chromedp.Click(chromedp.ID("send")))
	p.wait("the answer", `document.body.dataset.state !== 'streaming'`, browserAnswer)
	if st := eval[string](p, `document.body.dataset.state`); st != "done" {
		p.t.Fatalf("the answer ended in state %q: %s", st, p.text("chat-error"))
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// screenshotOnFailure saves the page when the test failed and logs where,
// with what the page and its console said.
func (p *page) screenshotOnFailure() {
	if !p.t.Failed() {
		return
	}
	dir := os.Getenv("CONFORM_BROWSER_ARTIFACTS")
	if dir == "" {
		dir = os.TempDir()
	}
	file := filepath.Join(dir, "conform-browser-"+regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(p.t.Name(), "_")+".png")
	ctx, cancel := context.WithTimeout(p.ctx, browserStep)
	defer cancel()
	if buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		p.t.Logf("no screenshot: %v", err)
	} else if err := os.WriteFile(file, buf, 0o644); err != nil {
		p.t.Logf("no screenshot: %v", err)
	} else {
		p.t.Logf("screenshot of the failed page: %s", file)
	}
	if s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`)); err == nil {
		p.t.Logf("the page's text:\n%s", s)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.console {
		p.t.Logf("console: %s", m)
	}
}

// checkConsole fails the test on an exception the page did not catch.
func (p *page) checkConsole() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.console {
		if m.IsException() {
			p.t.Errorf("the page threw: %s", m)
		}
	}
}

// browserCall is a tool call as the page shows it.
type browserCall struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

func TestBrowserPlayground(t *testing.T) {
	chromium := chromiumPath(t)
	exs := playgroundExamples(t)
	for _, tc := range []struct{ name, key string }{{"open", ""}, {"api-key", "sk-playground-test"}} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			if tc.key != "" {
				args = []string{"--api-key", tc.key}
			}
			s := startE2E(t, args...)
			p := openPage(t, chromium, s.url+"/")

			if tc.key != "" {
				// Without the key the page says so; with it, it works.
				p.wait("the models call to be refused", `document.getElementById('server-status').textContent.includes('API key')`, browserStep)
				p.do("type the key and Enter", browserStep, chromedp.SendKeys(chromedp.ID("api-key"), tc.key+kb.Enter))
				if curl := p.text("curl"); !strings.Contains(curl, "-H 'Authorization: Bearer "+tc.key+"'") {
					t.Errorf("with a key, the curl command is %q, want its Authorization header", curl)
				}
				if got := eval[string](p, `localStorage.getItem('conform.apiKey')`); got != tc.key {
					t.Errorf("localStorage key %q, want %q", got, tc.key)
				}
			}
			p.wait("the model list", `[...document.getElementById('model').options].some(o => o.value === 'demo')`, browserStep)

			// Invalid JSON in the editor is shown and not sent.
			p.choose("mode", "schema")
			p.choose("schema", `{"type": `)
			if msg := p.text("schema-error"); !strings.Contains(msg, "invalid JSON") || !eval[bool](p, `document.getElementById('send').disabled`) {
				t.Errorf("invalid schema: error %q, Send disabled %v; want an error and Send off", msg, eval[bool](p, `document.getElementById('send').disabled`))
			}
			if curl := p.text("curl"); !strings.HasPrefix(curl, "# fix the schema") {
				t.Errorf("invalid schema: curl %q, want the fix note", curl)
			}

			// A refused schema: the explain panel shows the error it carries.
			p.choose("schema", `{"type": "array", "items": {"type": "integer"}, "uniqueItems": true}`)
			p.wait("the refusal", `document.getElementById('explain').dataset.state === 'refused'`, browserStep)
			if msg := p.text("explain-error"); !strings.Contains(msg, "uniqueItems") || !strings.Contains(msg, "invalid_schema") {
				t.Errorf("refused schema: explain error %q, want the uniqueItems refusal", msg)
			}
			if n := eval[int](p, `document.querySelectorAll('#explain-keywords tr.status-refused').length`); n != 1 {
				t.Errorf("refused schema: %d refused rows, want 1", n)
			}

			// A JSON-schema answer, streamed.
			p.pick("nested")
			sch := compileSchema(t, string(exs["nested"].Schema))
			rows := eval[[][]string](p, `[...document.querySelectorAll('#explain-keywords tr')].map(tr => [...tr.cells].map(c => c.textContent))`)
			found := false
			for _, r := range rows {
				if len(r) == 4 && r[0] == "/properties/address/properties/zip" && r[1] == "pattern" && r[2] == "exact" {
					found = true
				}
			}
			if !found || len(rows) < 10 || len(rows[0]) != 1 || rows[0][0] != "response_format.json_schema.schema (strict)" {
				t.Errorf("explain keyword rows %q, want the schema's name, then the zip pattern exact among 10 or more", rows)
			}
			for _, id := range []string{"explain-sizes", "explain-compile", "explain-start", "explain-min-tokens"} {
				if p.text(id) == "" {
					t.Errorf("#%s is empty", id)
				}
			}
			validate(t, sch, p.text("explain-shortest"))
			if n := eval[int](p, `document.querySelectorAll('#explain-samples li').length`); n != 3 {
				t.Errorf("%d samples shown, want 3", n)
			}
			if curl := p.text("curl"); !strings.Contains(curl, `"response_format":{"type":"json_schema"`) || !strings.Contains(curl, `"stream":true`) {
				t.Errorf("curl %q, want the json_schema request", curl)
			}
			p.send()
			validate(t, sch, p.text("output"))
			if got := p.text("json-check"); got != "valid JSON ✓" {
				t.Errorf("json check %q, want valid JSON ✓", got)
			}
			if got := p.text("finish"); !regexp.MustCompile(`^finish_reason: (stop|length)$`).MatchString(got) {
				t.Errorf("finish %q", got)
			}
			if got := p.text("usage"); !regexp.MustCompile(`^usage: \d+ prompt \+ [1-9]\d* completion = \d+ tokens`).MatchString(got) {
				t.Errorf("usage %q", got)
			}
			if file := os.Getenv("CONFORM_BROWSER_SCREENSHOT"); file != "" && tc.key == "" {
				ctx, cancel := context.WithTimeout(p.ctx, browserStep)
				buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				cancel()
				if err == nil {
					err = os.WriteFile(file, buf, 0o644)
				}
				if err != nil {
					t.Errorf("CONFORM_BROWSER_SCREENSHOT: %v", err)
				}
				t.Logf("screenshot of the playground: %s", file)
			}

			// A tool call.
			p.pick("weather")
			if mode := eval[string](p, `document.getElementById('mode').value`); mode != "tool" {
				t.Fatalf("the weather example left mode %q, want tool", mode)
			}
			p.send()
			calls := eval[[]browserCall](p, `[...document.querySelectorAll('#tool-calls .tool-call')].map(e => ({name: e.querySelector('.tool-name').textContent, args: e.querySelector('.tool-args').textContent}))`)
			if len(calls) != 1 {
				t.Errorf("%d tool calls shown (finish %q), want one (parallel_tool_calls false)", len(calls), p.text("finish"))
			}
			weather := compileSchema(t, string(exs["weather"].Schema))
			for _, c := range calls {
				if c.Name != "get_weather" {
					t.Errorf("call to %q, want get_weather", c.Name)
				}
				validate(t, weather, c.Args)
				if !strings.Contains(c.Args, "\n  ") {
					t.Errorf("arguments %q are not pretty-printed", c.Args)
				}
			}
			if got := p.text("json-check"); got != "valid JSON ✓" {
				t.Errorf("json check %q, want valid JSON ✓", got)
			}
			if got := p.text("finish"); got != "finish_reason: tool_calls" {
				t.Errorf("finish %q, want tool_calls", got)
			}
			p.checkConsole()
		})
	}
}

// TestBrowserReasoning: a thinking model's reasoning is shown apart from
// the answer, in its collapsible block. The demo model does not think, so
// this page talks to the fake engine under a Qwen3-style template (the
// chat-level checks of the same are in reasoning_test.go).
func TestBrowserReasoning(t *testing.T) {
	chromium := chromiumPath(t)
	ts := newTestServer(t, Config{ReasoningBudget: 8}, thinkTemplate)
	p := openPage(t, chromium, ts.http.URL+"/")
	p.wait("the model list", `[...document.getElementById('model').options].some(o => o.value === 'fake')`, browserStep)
	p.pick("enum")
	p.send()
	sch := compileSchema(t, string(playgroundExamples(t)["enum"].Schema))
	validate(t, sch, p.text("output"))
	if hidden := eval[bool](p, `document.getElementById('reasoning').hidden`); hidden || p.text("reasoning-text") == "" {
		t.Errorf("reasoning block hidden %v with text %q, want it shown with the reasoning", hidden, p.text("reasoning-text"))
	}
	if strings.Contains(p.text("output"), "think>") || strings.Contains(p.text("reasoning-text"), "think>") {
		t.Errorf("markup shown: output %q, reasoning %q", p.text("output"), p.text("reasoning-text"))
	}
	if got := p.text("usage"); !regexp.MustCompile(`\([1-9]\d* reasoning\)$`).MatchString(got) {
		t.Errorf("usage %q, want the reasoning tokens", got)
	}
	p.checkConsole()
}
