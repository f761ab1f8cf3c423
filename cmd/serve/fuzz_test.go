package main

// Fuzz targets of the HTTP edge (issue 13 item 7), no model needed: any
// body goes through the request decoding and validation a handler runs
// before generating (decodeRequest, FromChatRequest or FromCompletionRequest,
// turn.Build, the template inputs and their rendering). The property:
// never a panic, and either an error that renders as a 4xx envelope or a
// job whose parts are well-formed.
//
//	CGO_ENABLED=0 go test -run '^$' -fuzz FuzzChatRequest -fuzztime 60s ./cmd/serve
//	CGO_ENABLED=0 go test -run '^$' -fuzz FuzzCompletionRequest -fuzztime 60s ./cmd/serve

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"conform/templates"
	"conform/turn"
)

// fuzzSeedLimit keeps catalog bodies of more than this many bytes (the
// 100,000-message kind) out of the seed corpus: they are covered by the
// catalog and would slow every fuzz iteration that mutates them.
const fuzzSeedLimit = 16 << 10

// fuzzLimits are small limits, so that mutated inputs reach them.
var fuzzLimits = Limits{MaxMessages: 64, MaxTools: 8, MaxPromptBytes: 64 << 10, MaxSchemaBytes: 8 << 10, MaxSchemaDepth: 24}

func seedFromCatalog(f *testing.F, path string) {
	for _, c := range catalog() {
		p := c.path
		if p == "" {
			p = "/v1/chat/completions"
		}
		if p == path && len(c.body) <= fuzzSeedLimit {
			f.Add([]byte(c.body))
		}
	}
}

// checkRefusal fails unless err is a client error with a complete envelope.
func checkRefusal(t *testing.T, stage string, err error) {
	t.Helper()
	ae := toAPIError(err)
	if ae.Status < 400 || ae.Status >= 500 {
		t.Fatalf("%s: status %d for %v, want a 4xx", stage, ae.Status, err)
	}
	env := envelope(ae)
	if env.Error.Message == "" || env.Error.Type == "" {
		t.Fatalf("%s: incomplete envelope %+v", stage, env)
	}
	if _, err := json.Marshal(env); err != nil {
		t.Fatalf("%s: envelope does not marshal: %v", stage, err)
	}
}

// checkSpec builds the constraint of spec as a hermes model would.
func checkSpec(t *testing.T, spec turn.Spec) {
	t.Helper()
	if _, err := turn.Build(spec, turn.Options{Format: turn.FormatHermes, MaxTools: fuzzLimits.MaxTools}); err != nil {
		checkRefusal(t, "turn.Build", err)
	}
}

func checkGen(t *testing.T, g genParams) {
	t.Helper()
	if g.N < 1 || g.N > maxChoices || g.MaxTokens < 0 || len(g.Stop) > maxStop {
		t.Fatalf("generation parameters out of range: %+v", g)
	}
}

var fuzzTemplate = sync.OnceValue(func() *templates.Template {
	tmpl, err := templates.Parse(DemoTemplate)
	if err != nil {
		panic(err)
	}
	return tmpl
})

func FuzzChatRequest(f *testing.F) {
	seedFromCatalog(f, "/v1/chat/completions")
	f.Fuzz(func(t *testing.T, body []byte) {
		var r ChatRequest
		if _, err := decodeRequest(body, &r); err != nil {
			checkRefusal(t, "decodeRequest", err)
			return
		}
		j, err := FromChatRequest(&r, fuzzLimits)
		if err != nil {
			checkRefusal(t, "FromChatRequest", err)
			return
		}
		checkGen(t, j.Gen)
		if len(j.Spec.Tools) > fuzzLimits.MaxTools {
			t.Fatalf("%d tools passed the limit of %d", len(j.Spec.Tools), fuzzLimits.MaxTools)
		}
		checkSpec(t, j.Spec)
		if msgs, ok := j.Messages.(*templates.List); !ok || len(msgs.Items) != len(r.Messages) {
			t.Fatalf("template messages %#v for %d messages, want a list of as many", j.Messages, len(r.Messages))
		}
		if tools, ok := j.Tools.(*templates.List); len(r.Tools) > 0 && (!ok || len(tools.Items) != len(r.Tools)) {
			t.Fatalf("template tools %#v for %d tools, want a list of as many", j.Tools, len(r.Tools))
		}
		if _, err := fuzzTemplate().Render(templates.Vars{Messages: j.Messages, Tools: j.Tools, AddGenerationPrompt: true,
			Limits: templates.Limits{MaxOutput: fuzzLimits.MaxPromptBytes}}); err != nil {
			checkRefusal(t, "Render", err)
		}
	})
}

func FuzzCompletionRequest(f *testing.F) {
	seedFromCatalog(f, "/v1/completions")
	f.Fuzz(func(t *testing.T, body []byte) {
		var r CompletionRequest
		if _, err := decodeRequest(body, &r); err != nil {
			checkRefusal(t, "decodeRequest", err)
			return
		}
		prompts, out, g, err := FromCompletionRequest(&r, fuzzLimits)
		if err != nil {
			checkRefusal(t, "FromCompletionRequest", err)
			return
		}
		checkGen(t, g)
		if len(prompts) == 0 {
			t.Fatalf("no prompts and no error")
		}
		for i, p := range prompts {
			if (p.Tokens == nil) == (p.Text == "") || len(p.Text) > fuzzLimits.MaxPromptBytes {
				t.Fatalf("prompt %d is neither text nor tokens, or too long: %+v", i, p)
			}
			for _, id := range p.Tokens {
				if id < 0 || id > maxTokenID {
					t.Fatalf("prompt %d: token id %d out of range", i, id)
				}
			}
		}
		checkSpec(t, turn.Spec{Output: out})
	})
}

// TestFuzzSeedsAreRequests: the seeds reach the validation (the catalog's
// paths are the two the targets mean).
func TestFuzzSeedsAreRequests(t *testing.T) {
	n := map[string]int{}
	for _, c := range catalog() {
		if c.method == "" || c.method == http.MethodPost {
			n[c.path]++
		}
	}
	if n[""] < 100 || n["/v1/completions"] < 15 {
		t.Errorf("catalog POST cases by path = %v, want at least 100 chat and 15 completions seeds", n)
	}
}
