package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"conform/runner"
	"conform/turn"
)

var updateReasoning = flag.Bool("update-reasoning", false, "rewrite testdata/reasoning/*.golden")

// reasoningSteps are two choices that thought: choice 0 answers in text,
// choice 1 calls a tool; their usage counts reasoning tokens.
func reasoningSteps() []turn.Step {
	fin := func(r turn.FinishReason, calls, out, reas int) turn.Event {
		return turn.Event{Kind: turn.EventFinish, Finish: &turn.Finish{Reason: r, Calls: calls,
			Usage: runner.Usage{PromptTokens: 5, CompletionTokens: out, ReasoningTokens: reas}}}
	}
	r := func(s string) turn.Event { return turn.Event{Kind: turn.EventReasoning, Text: s} }
	return []turn.Step{
		{Choice: 0, Events: []turn.Event{r("The user wants")}},
		{Choice: 1, Events: []turn.Event{r("A tool")}},
		{Choice: 0, Events: []turn.Event{r(" a city.")}},
		{Choice: 0, Events: []turn.Event{{Kind: turn.EventContent, Text: `{"city": "Paris"}`}, fin(turn.FinishEnd, 0, 14, 8)}},
		{Choice: 1, Events: []turn.Event{{Kind: turn.EventCallStart, Name: "get_time"}, {Kind: turn.EventCallArgs, Text: `{"tz": "UTC"}`}, {Kind: turn.EventCallEnd}, fin(turn.FinishToolCalls, 1, 20, 4)}},
	}
}

// normalize replaces what changes between runs (ids, times, the
// fingerprint) in a response.
var volatile = regexp.MustCompile(`"(id|created|system_fingerprint)":("[^"]*"|[0-9]+)`)

func normalize(s string) string {
	return volatile.ReplaceAllString(s, `"$1":"X"`)
}

// TestChatReasoningGolden writes reasoning steps through both chat sinks
// and compares the output with testdata/reasoning/*.golden (-update-reasoning
// rewrites them): message.reasoning_content beside content and tool_calls,
// delta.reasoning_content chunks before the content, and
// completion_tokens_details.reasoning_tokens summed over the choices.
func TestChatReasoningGolden(t *testing.T) {
	m, tn := freeTurn(t)
	for _, tc := range []struct {
		name string
		gen  genParams
	}{{"chat_body", genParams{N: 2}}, {"chat_stream", genParams{N: 2, Stream: true, IncludeUsage: true}}} {
		c, rec := sinkContext()
		if err := runSink(chatSink(c, m, tn, tc.gen), reasoningSteps()); err != nil {
			t.Fatal(err)
		}
		got := normalize(strings.TrimSpace(rec.Body.String())) + "\n"
		path := filepath.Join("testdata", "reasoning", tc.name+".golden")
		if *updateReasoning {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update-reasoning to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, want)
		}
	}
}
