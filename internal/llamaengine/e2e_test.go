//go:build cgo

package llamaengine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"conform/fsm"
	"conform/gguf"
	"conform/grammar"
	"conform/internal/llama"
	"conform/internal/mkmodel"
	"conform/runner"
	"conform/sampler"
	"conform/tokenizer"
)

// The end-to-end tests generate a tiny synthetic model (random weights,
// the real cl100k vocabulary, no ../shared needed), load it through the
// binding and drive it with the runner. Random weights at temperature 1
// pick nearly any token the mask allows, which is the hardest test of the
// constraint: every output must still validate.

// fixture is what every test shares: the model file, its vocabulary and
// the fsm token index built from it (the slow parts, made once).
type fixture struct {
	path  string
	vocab *tokenizer.Vocabulary
	index *fsm.TokenIndex
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func getFixture(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() {
		v, err := mkmodel.LoadVocab("cl100k")
		if err != nil {
			fixErr = fmt.Errorf("mkmodel.LoadVocab(cl100k): %w", err)
			return
		}
		p := filepath.Join(testDir, "tiny-cl100k.gguf")
		if err := mkmodel.Write(p, mkmodel.Options{Vocab: v, Seed: 7}); err != nil {
			fixErr = fmt.Errorf("mkmodel.Write: %w", err)
			return
		}
		voc, err := tokenizer.LoadGGUF(p)
		if err != nil {
			fixErr = fmt.Errorf("tokenizer.LoadGGUF: %w", err)
			return
		}
		eos := make([]fsm.TokenID, len(voc.EOS))
		for i, id := range voc.EOS {
			eos[i] = fsm.TokenID(id)
		}
		idx, err := fsm.NewTokenIndex(voc.Tokens, eos, voc.Width)
		if err != nil {
			fixErr = fmt.Errorf("fsm.NewTokenIndex: %w", err)
			return
		}
		fix = &fixture{path: p, vocab: voc, index: idx}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

// harness is a loaded engine with a running runner.
type harness struct {
	eng *Engine
	run *runner.Runner
}

// newHarness loads the fixture model with slots sequences of seqCtx
// tokens each and starts a runner over it; cleanup stops and frees both.
func newHarness(t *testing.T, slots, seqCtx int) *harness {
	t.Helper()
	f := getFixture(t)
	eng, err := Load(f.path, llama.Params{ContextSize: slots * seqCtx, BatchSize: 256, Parallel: slots, Threads: 1})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cfg := eng.RunnerConfig()
	if cfg.Slots != slots || cfg.ContextSize < seqCtx {
		t.Fatalf("RunnerConfig() = %d slots, context %d; want %d, >= %d", cfg.Slots, cfg.ContextSize, slots, seqCtx)
	}
	r, err := runner.New(eng, cfg)
	if err != nil {
		eng.Close()
		t.Fatalf("runner.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		eng.Close()
	})
	return &harness{eng: eng, run: r}
}

// prompt is the ChatML prompt for a user message.
func (h *harness) prompt(t *testing.T, user string) []runner.TokenID {
	t.Helper()
	ids, err := h.eng.Tokenize("<|im_start|>user\n"+user+"<|im_end|>\n<|im_start|>assistant\n", false, true)
	if err != nil {
		t.Fatalf("Tokenize: %v", err)
	}
	return ids
}

// result is one finished request.
type result struct {
	tokens []runner.TokenID
	text   string
	final  runner.Event
}

func (r result) String() string {
	return fmt.Sprintf("finish %s (err %v), %d tokens, text %q", r.final.Finish, r.final.Err, len(r.tokens), r.text)
}

// collect reads events until the final one; it fails the test after a
// minute (a hang is a bug, not a slow machine).
func collect(t *testing.T, ch <-chan runner.Event) result {
	t.Helper()
	var res result
	var text strings.Builder
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				res.text = text.String()
				return res
			}
			text.WriteString(ev.Text)
			if ev.Finish != "" {
				res.final = ev
				res.text = text.String()
				return res
			}
			res.tokens = append(res.tokens, ev.Token)
		case <-timeout:
			t.Fatalf("no final event within a minute (%d tokens so far)", len(res.tokens))
		}
	}
}

func (h *harness) generate(t *testing.T, req runner.Request) result {
	t.Helper()
	ch, err := h.run.Submit(context.Background(), req)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return collect(t, ch)
}

// testSchema is one line of testdata/schemas.jsonl.
type testSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

func loadSchemas(t *testing.T) []testSchema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "schemas.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []testSchema
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var s testSchema
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("schemas.jsonl line %d: %v", len(out)+1, err)
		}
		out = append(out, s)
	}
	return out
}

// compiled is a schema ready to generate against and to validate with.
type compiled struct {
	name      string
	c         *fsm.Constraint
	validator *jsonschema.Schema
	longest   int // bytes of the longest accepted output
}

// maxTokens bounds the compact corpus outputs: every corpus schema accepts
// only outputs of at most maxTokens bytes in compact form (checked by
// compileSchema), so a request can only end by completing its value, as
// one token is at least one byte. With whitespace, requests use the
// schema's own bound (compiled.longest).
const maxTokens = 256

// compact is the grammar of most tests: no whitespace between JSON tokens
// (random weights love whitespace tokens; outputs stay short).
var compact = grammar.Options{Whitespace: grammar.Compact}

func compileSchema(t *testing.T, f *fixture, s testSchema, opts grammar.Options) compiled {
	t.Helper()
	res, err := grammar.CompileSchema(s.Schema, opts)
	if err != nil {
		t.Fatalf("%s: CompileSchema: %v", s.Name, err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatalf("%s: fsm.Compile: %v", s.Name, err)
	}
	longest, ok := longestMatch(d)
	if !ok || longest > maxTokens*4 {
		t.Fatalf("%s: longest accepted output is %d bytes (finite %v); the corpus must stay within %d", s.Name, longest, ok, maxTokens*4)
	}
	c, err := fsm.NewConstraint(d, f.index, fsm.ConstraintOptions{})
	if err != nil {
		t.Fatalf("%s: NewConstraint: %v", s.Name, err)
	}
	jc := jsonschema.NewCompiler()
	jc.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.Schema))
	if err != nil {
		t.Fatalf("%s: schema JSON: %v", s.Name, err)
	}
	if err := jc.AddResource("schema.json", doc); err != nil {
		t.Fatalf("%s: AddResource: %v", s.Name, err)
	}
	v, err := jc.Compile("schema.json")
	if err != nil {
		t.Fatalf("%s: jsonschema Compile: %v", s.Name, err)
	}
	return compiled{name: s.Name, c: c, validator: v, longest: longest}
}

// longestMatch returns the length of the longest string d accepts, and
// false when there is no bound (a cycle among live states).
func longestMatch(d *fsm.DFA) (int, bool) {
	const (
		unseen = iota
		onStack
		done
	)
	n := d.NumStates()
	mark := make([]uint8, n)
	best := make([]int, n) // longest accepted suffix from each state
	var visit func(s fsm.StateID) bool
	visit = func(s fsm.StateID) bool {
		mark[s] = onStack
		b := -1
		if d.Accept[s] {
			b = 0
		}
		for c := range d.NumClasses {
			next := d.Trans[int(s)*d.NumClasses+c]
			if next == 0 {
				continue
			}
			switch mark[next] {
			case onStack:
				return false
			case unseen:
				if !visit(next) {
					return false
				}
			}
			if best[next] >= 0 && best[next]+1 > b {
				b = best[next] + 1
			}
		}
		best[s] = b
		mark[s] = done
		return true
	}
	if d.Start == 0 {
		return 0, true
	}
	if !visit(d.Start) {
		return 0, false
	}
	return best[d.Start], true
}

// checkOutput reports whether r is a complete output that validates.
func checkOutput(c compiled, r result) error {
	if r.final.Err != nil {
		return fmt.Errorf("error: %v", r.final.Err)
	}
	if r.final.Finish != runner.FinishConstraint && r.final.Finish != runner.FinishEOS {
		return fmt.Errorf("finish %s, want constraint or eos", r.final.Finish)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(r.text))
	if err != nil {
		return fmt.Errorf("output %q is not JSON: %v", r.text, err)
	}
	if err := c.validator.Validate(inst); err != nil {
		return fmt.Errorf("output %q does not validate: %v", r.text, err)
	}
	return nil
}

// TestGenerateText loads the model and generates unconstrained text.
func TestGenerateText(t *testing.T) {
	h := newHarness(t, 1, 256)
	r := h.generate(t, runner.Request{Prompt: h.prompt(t, "Say something."), MaxTokens: 12, Params: sampler.Params{Seed: 1}})
	if r.final.Finish != runner.FinishLength && r.final.Finish != runner.FinishEOS {
		t.Fatalf("generate: %v, want finish length or eos", r)
	}
	if r.final.Finish == runner.FinishLength && len(r.tokens) != 12 {
		t.Errorf("generate: %d tokens with finish length, want 12", len(r.tokens))
	}
	for _, id := range r.tokens {
		if id < 0 || int(id) >= h.eng.NumVocab() {
			t.Errorf("token %d outside the vocabulary of %d", id, h.eng.NumVocab())
		}
	}
	if u := r.final.Usage; u == nil || u.CompletionTokens != len(r.tokens) {
		t.Errorf("Usage = %+v, want %d completion tokens", u, len(r.tokens))
	}
	t.Logf("%v", r)
}

// TestConstrainedSchemas generates once per corpus schema, one request at
// a time, at temperature 1: every output must complete and validate.
func TestConstrainedSchemas(t *testing.T) {
	f := getFixture(t)
	schemas := loadSchemas(t)
	if len(schemas) < 50 {
		t.Fatalf("corpus has %d schemas, want at least 50", len(schemas))
	}
	h := newHarness(t, 1, 512)
	p := h.prompt(t, "Answer in JSON.")
	failures, tokens, forced := 0, 0, 0
	for i, s := range schemas {
		t0 := time.Now()
		c := compileSchema(t, f, s, compact)
		if testing.Verbose() {
			t.Logf("%s: compiled in %v", s.Name, time.Since(t0))
		}
		r := h.generate(t, runner.Request{
			Prompt: p, MaxTokens: maxTokens, Guide: c.c.NewMatcher(),
			Params: sampler.Params{Temperature: sampler.Temp(1), Seed: uint64(i)},
		})
		if c.longest > maxTokens {
			t.Fatalf("%s: compact output up to %d bytes, more than maxTokens %d", s.Name, c.longest, maxTokens)
		}
		if err := checkOutput(c, r); err != nil {
			failures++
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		tokens += len(r.tokens)
		forced += r.final.Usage.ForcedTokens
		if testing.Verbose() {
			t.Logf("%-28s %3d tokens (%d forced) in %v, constraint %v: %s", s.Name, len(r.tokens), r.final.Usage.ForcedTokens, r.final.Usage.Elapsed, r.final.Usage.ConstraintTime, r.text)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d schemas failed", failures, len(schemas))
	}
	t.Logf("%d schemas, %d tokens, %d forced", len(schemas), tokens, forced)
}

// TestConstrainedParallel runs the corpus with 8 sequences decoding
// together, each request with its own schema, this time with whitespace
// allowed between JSON tokens (at most 2 per gap: random weights pick
// whitespace tokens often, and every gap costs tokens).
func TestConstrainedParallel(t *testing.T) {
	f := getFixture(t)
	schemas := loadSchemas(t)
	h := newHarness(t, 8, 512)
	p := h.prompt(t, "Answer in JSON.")
	cs := make([]compiled, len(schemas))
	chans := make([]<-chan runner.Event, len(schemas))
	for i, s := range schemas {
		cs[i] = compileSchema(t, f, s, grammar.Options{MaxWhitespace: 2})
	}
	// Submit everything at once: the runner keeps 8 in flight and admits
	// the next as one finishes.
	for i := range schemas {
		ch, err := h.run.Submit(context.Background(), runner.Request{
			Prompt: p, MaxTokens: max(cs[i].longest, 1), Guide: cs[i].c.NewMatcher(),
			Params: sampler.Params{Temperature: sampler.Temp(1), Seed: uint64(1000 + i)},
		})
		if err != nil {
			t.Fatalf("Submit(%s): %v", schemas[i].Name, err)
		}
		chans[i] = ch
	}
	failures := 0
	for i, ch := range chans {
		if err := checkOutput(cs[i], collect(t, ch)); err != nil {
			failures++
			t.Errorf("%s: %v", schemas[i].Name, err)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d schemas failed", failures, len(schemas))
	}
	st := h.run.Stats()
	if st.BatchTokens <= st.Steps {
		t.Errorf("Stats: %d tokens in %d steps; want batches of several sequences", st.BatchTokens, st.Steps)
	}
	t.Logf("%d schemas, %d output tokens (%.0f%% forced), %d decode steps, %d batch tokens", len(schemas), st.Output(), 100*st.ForcedShare(), st.Steps, st.BatchTokens)
}

// TestCancelFreesSlot cancels a running request on a one-slot runner: the
// next request must get the slot and finish.
func TestCancelFreesSlot(t *testing.T) {
	h := newHarness(t, 1, 256)
	p := h.prompt(t, "Talk for a long time.")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.run.Submit(ctx, runner.Request{Prompt: p, Params: sampler.Params{Seed: 3}}) // no MaxTokens: until the context is full
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	for range 3 {
		if ev := <-ch; ev.Finish != "" {
			t.Fatalf("first request finished early: %+v", ev)
		}
	}
	cancel()
	for ev := range ch { // drained until the runner closes it
		if ev.Finish != "" && ev.Finish != runner.FinishCancelled {
			t.Errorf("cancelled request finished with %s (err %v), want cancelled or no final event", ev.Finish, ev.Err)
		}
	}
	r := h.generate(t, runner.Request{Prompt: p, MaxTokens: 4, Params: sampler.Params{Seed: 4}})
	if r.final.Finish != runner.FinishLength || len(r.tokens) != 4 {
		t.Errorf("request after the cancel: %v, want 4 tokens and finish length", r)
	}
}

// TestSeedsDeterministic: the same seed gives the same tokens, with and
// without a constraint; another seed gives another output.
func TestSeedsDeterministic(t *testing.T) {
	f := getFixture(t)
	h := newHarness(t, 2, 256)
	p := h.prompt(t, "Pick something.")
	c := compileSchema(t, f, testSchema{Name: "person", Schema: json.RawMessage(
		`{"type":"object","properties":{"name":{"type":"string","maxLength":10},"n":{"type":"integer","minimum":0,"maximum":999}},"required":["name","n"],"additionalProperties":false}`)}, compact)
	gen := func(seed uint64, constrained bool) result {
		req := runner.Request{Prompt: p, MaxTokens: 16, Params: sampler.Params{Temperature: sampler.Temp(1), Seed: seed}}
		if constrained {
			req.MaxTokens = maxTokens
			req.Guide = c.c.NewMatcher()
		}
		return h.generate(t, req)
	}
	for _, constrained := range []bool{false, true} {
		a, b := gen(42, constrained), gen(42, constrained)
		if !slices.Equal(a.tokens, b.tokens) {
			t.Errorf("constrained=%v, seed 42 twice: %v then %v, want equal", constrained, a.tokens, b.tokens)
		}
		differs := false
		for seed := uint64(43); seed < 46 && !differs; seed++ {
			differs = !slices.Equal(gen(seed, constrained).tokens, a.tokens)
		}
		if !differs {
			t.Errorf("constrained=%v: seeds 43..45 all gave seed 42's tokens %v, want a different output", constrained, a.tokens)
		}
	}
}

// TestStopAndMaxTokens checks the three ends a caller sets: a stop
// sequence, max tokens, and max tokens cutting a constrained output.
func TestStopAndMaxTokens(t *testing.T) {
	f := getFixture(t)
	h := newHarness(t, 1, 256)
	p := h.prompt(t, "Go.")
	regex := func(pattern string) *fsm.Matcher {
		t.Helper()
		res, err := grammar.CompileRegex(pattern, grammar.Options{})
		if err != nil {
			t.Fatalf("CompileRegex(%q): %v", pattern, err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatalf("fsm.Compile(%q): %v", pattern, err)
		}
		c, err := fsm.NewConstraint(d, f.index, fsm.ConstraintOptions{})
		if err != nil {
			t.Fatalf("NewConstraint(%q): %v", pattern, err)
		}
		return c.NewMatcher()
	}
	t.Run("stop", func(t *testing.T) {
		// The model picks the word; ", " then ends it as a stop sequence.
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: 64, Stop: []string{", "},
			Guide: regex(`[a-z]{3,8}, [a-z]{2}`), Params: sampler.Params{Seed: 5}})
		if r.final.Finish != runner.FinishStop {
			t.Fatalf("generate: %v, want finish stop", r)
		}
		if ok, _ := regexp.MatchString(`^[a-z]{3,8}$`, r.text); !ok {
			t.Errorf("text %q, want 3 to 8 letters without the stop sequence", r.text)
		}
	})
	t.Run("stop forced", func(t *testing.T) {
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: 64, Stop: []string{"world"},
			Guide: regex(`hello world and more`), Params: sampler.Params{Seed: 5}})
		if r.final.Finish != runner.FinishStop || r.text != "hello " {
			t.Errorf("generate: %v, want finish stop and text %q", r, "hello ")
		}
	})
	t.Run("max tokens", func(t *testing.T) {
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: 5, Params: sampler.Params{Seed: 6}})
		if r.final.Finish == runner.FinishEOS {
			t.Skipf("the model sampled EOS within 5 tokens: %v", r)
		}
		if r.final.Finish != runner.FinishLength || len(r.tokens) != 5 {
			t.Errorf("generate: %v, want 5 tokens and finish length", r)
		}
	})
	t.Run("max tokens constrained", func(t *testing.T) {
		// The budget keeps room to close the output: at exactly the
		// shortest output's token count the text is complete.
		g := regex(`"[a-z ]{8,40}"`)
		need, err := g.MinTokens()
		if err != nil || need < 2 {
			t.Fatalf("MinTokens = %d, %v", need, err)
		}
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: need, Guide: g, Params: sampler.Params{Seed: 7}})
		if r.final.Finish != runner.FinishLength && r.final.Finish != runner.FinishConstraint && r.final.Finish != runner.FinishEOS || len(r.tokens) > need {
			t.Errorf("generate with MaxTokens %d (the minimum): %v, want a normal finish within %d tokens", need, r, need)
		}
		if ok, _ := regexp.MatchString(`^"[a-z ]{8,40}"$`, r.text); !ok {
			t.Errorf("text %q, want a complete match of the pattern", r.text)
		}
	})
	t.Run("max tokens below the shortest output", func(t *testing.T) {
		g := regex(`"[a-z ]{40}"`)
		need, err := g.MinTokens()
		if err != nil || need < 2 {
			t.Fatalf("MinTokens = %d, %v", need, err)
		}
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: need - 1, Guide: g, Params: sampler.Params{Seed: 7}})
		var e *runner.Error
		if r.final.Finish != runner.FinishError || !errors.As(r.final.Err, &e) || e.Code != runner.CodeConstraint || len(r.tokens) != 0 {
			t.Errorf("generate with MaxTokens %d (one below the minimum): %v, want a constraint error before any token", need-1, r)
		}
	})
}

// TestBadInput: files llama.cpp must not see, a prompt longer than the
// context and a token outside the vocabulary give clear errors, and the
// runner still serves the next request (no slot leaked).
func TestBadInput(t *testing.T) {
	t.Run("unsupported architecture", func(t *testing.T) {
		w := gguf.NewWriter()
		w.AddString("general.architecture", "no-such-arch")
		w.AddString("general.name", "bad")
		p := filepath.Join(t.TempDir(), "arch.gguf")
		if err := w.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		e, err := Load(p, llama.Params{})
		if err == nil {
			e.Close()
			t.Fatal("Load(unknown architecture) = nil error")
		}
		if !errors.Is(err, llama.ErrArchitecture) || !strings.Contains(err.Error(), "no-such-arch") {
			t.Errorf("Load(unknown architecture) = %v, want llama.ErrArchitecture naming it", err)
		}
	})
	h := newHarness(t, 1, 256)
	ok := func(t *testing.T) {
		t.Helper()
		r := h.generate(t, runner.Request{Prompt: h.prompt(t, "Hi."), MaxTokens: 2, Params: sampler.Params{Seed: 8}})
		if r.final.Err != nil || r.final.Finish == runner.FinishError {
			t.Errorf("request after the bad one: %v, want a normal finish", r)
		}
	}
	t.Run("prompt longer than the context", func(t *testing.T) {
		long := make([]runner.TokenID, h.eng.RunnerConfig().ContextSize+10)
		for i := range long {
			long[i] = runner.TokenID(1000 + i%500)
		}
		_, err := h.run.Submit(context.Background(), runner.Request{Prompt: long, MaxTokens: 4})
		if !errors.Is(err, &runner.Error{Code: runner.CodePromptTooLong}) {
			t.Errorf("Submit(%d-token prompt) = %v, want CodePromptTooLong", len(long), err)
		}
		ok(t)
	})
	t.Run("token outside the vocabulary", func(t *testing.T) {
		bad := []runner.TokenID{1, 2, runner.TokenID(h.eng.NumVocab() + 5)}
		ch, err := h.run.Submit(context.Background(), runner.Request{Prompt: bad, MaxTokens: 4})
		if err == nil {
			r := collect(t, ch)
			if r.final.Finish != runner.FinishError || r.final.Err == nil {
				t.Errorf("prompt with token %d: %v, want an error", bad[2], r)
			}
		}
		ok(t)
	})
	t.Run("load after a failed load", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "absent.gguf"), llama.Params{})
		if !errors.Is(err, llama.ErrModelFile) {
			t.Fatalf("Load(absent) = %v, want llama.ErrModelFile", err)
		}
		e, err := Load(getFixture(t).path, llama.Params{ContextSize: 256, Threads: 1})
		if err != nil {
			t.Fatalf("Load(good) after a failure: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := e.Decode(runner.Batch{Tokens: []runner.TokenID{1}, Pos: []int{0}, Seq: []int{0}, Logits: []bool{true}}); !errors.Is(err, llama.ErrClosed) {
			t.Errorf("Decode after Close = %v, want llama.ErrClosed", err)
		}
	})
}

// TestGrammarConstraint drives the runner with llama.cpp's grammar (the
// benchmark baseline, slow: it checks every token of the vocabulary at
// every step): its complete outputs must validate too, and a token it does
// not allow is a sticky error, not an abort.
func TestGrammarConstraint(t *testing.T) {
	f := getFixture(t)
	h := newHarness(t, 2, 512)
	gv := h.eng.GrammarVocab()
	p := h.prompt(t, "Answer in JSON.")
	schemas := loadSchemas(t)
	ran := 0
	for i, s := range schemas {
		switch s.Name {
		case "enum_strings", "int_range", "object_person", "pattern_date", "nullable_field":
		default:
			continue
		}
		c := compileSchema(t, f, s, compact)
		gbnf, err := llama.SchemaToGrammar(s.Schema)
		if err != nil {
			t.Fatalf("%s: SchemaToGrammar: %v", s.Name, err)
		}
		gc, err := NewGrammarConstraint(string(gbnf), gv)
		if err != nil {
			t.Fatalf("%s: NewGrammarConstraint: %v", s.Name, err)
		}
		r := h.generate(t, runner.Request{Prompt: p, MaxTokens: 128, Guide: gc,
			Params: sampler.Params{Temperature: sampler.Temp(1), Seed: uint64(i)}})
		gc.Close()
		ran++
		if r.final.Finish == runner.FinishLength {
			t.Logf("%s: cut at 128 tokens (llama.cpp's grammar allows whitespace runs): %q", s.Name, r.text)
			continue
		}
		if err := checkOutput(c, r); err != nil {
			t.Errorf("%s (llama.cpp grammar): %v", s.Name, err)
		}
	}
	if ran != 5 {
		t.Errorf("ran %d schemas, want 5", ran)
	}
	// Accepting a token the grammar does not allow is an error, not an abort.
	gbnf, err := llama.SchemaToGrammar([]byte(`{"enum":["yes","no"]}`))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := NewGrammarConstraint(string(gbnf), gv)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	mask := make([]uint64, (gv.Width()+63)/64)
	if err := gc.FillMask(mask); err != nil {
		t.Fatalf("FillMask: %v", err)
	}
	brace := h.prompt(t, "")[0] // any token that is not a quote
	if ids, _ := h.eng.Tokenize("{", false, false); len(ids) == 1 {
		brace = ids[0]
	}
	if mask[brace>>6]&(1<<(uint(brace)&63)) != 0 {
		t.Fatalf("grammar for an enum of strings allows %q first", h.eng.Detokenize(brace))
	}
	if err := gc.Accept(brace); !errors.Is(err, &Error{Code: CodeGrammar}) {
		t.Errorf("Accept(disallowed) = %v, want CodeGrammar", err)
	}
	if err := gc.FillMask(mask); err == nil {
		t.Errorf("FillMask after a failed Accept = nil, want the sticky error")
	}
}
