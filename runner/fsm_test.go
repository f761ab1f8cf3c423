package runner

import (
	"regexp"
	"testing"

	"conform/fsm"
	"conform/sampler"
)

// TestWithFSMMatcher drives the runner with a real *fsm.Matcher over a tiny
// vocabulary: every output must match the pattern, whatever the fake
// model's logits, and the tokens that are the only way forward (here "a"
// after `{"`, with "ab" excluded) go out forced.
func TestWithFSMMatcher(t *testing.T) {
	c, detok, re := tinyJSONConstraint(t)
	r, _ := start(t, Config{Slots: 3, Detokenize: detok, ParallelSampling: true})
	var chans []<-chan Event
	for seed := range 12 {
		chans = append(chans, submit(t, r, Request{
			Prompt: prompt(seed, 4),
			Params: sampler.Params{Seed: uint64(seed), Temperature: sampler.Temp(1.5)},
			Guide:  c.NewMatcher(),
		}))
	}
	for i, ch := range chans {
		res := collect(t, ch)
		if res.final.Err != nil || (res.final.Finish != FinishEOS && res.final.Finish != FinishConstraint) {
			t.Errorf("request %d: %v, want a normal finish", i, res)
			continue
		}
		if !re.MatchString(res.text) {
			t.Errorf("request %d: text %q does not match %s", i, res.text, re)
		}
	}
	if st := r.Stats(); st.Forced == 0 || st.Sampled == 0 {
		t.Errorf("Stats: %d forced, %d sampled, want both > 0", st.Forced, st.Sampled)
	}
}

// tinyJSONConstraint is a JSON-like pattern over a tiny vocabulary with
// multi-byte tokens, the detokenizer and the anchored pattern.
func tinyJSONConstraint(t *testing.T) (*fsm.Constraint, func(TokenID) []byte, *regexp.Regexp) {
	t.Helper()
	words := []string{"{", "}", "\"", ":", ",", "{\"", "\":", "a", "b", "ab", "0", "1", "2", "12", "x", "yz", " ", "\"a\""}
	for len(words) < testVocab-1 {
		words = append(words, "q")
	}
	tokens := make([][]byte, testVocab)
	for i, w := range words {
		tokens[i] = []byte(w)
	}
	// tokens[testEOS] stays empty: EOS has no bytes.
	const pattern = `\{"a":[0-9]{1,3}(,"b":[0-9])?\}`
	node, err := fsm.ParseRegex(pattern)
	if err != nil {
		t.Fatalf("ParseRegex(%q) = %v", pattern, err)
	}
	dfa, err := fsm.Compile(node, fsm.Options{})
	if err != nil {
		t.Fatalf("Compile = %v", err)
	}
	ti, err := fsm.NewTokenIndex(tokens, []fsm.TokenID{testEOS}, testVocab)
	if err != nil {
		t.Fatalf("NewTokenIndex = %v", err)
	}
	c, err := fsm.NewConstraint(dfa, ti, fsm.ConstraintOptions{})
	if err != nil {
		t.Fatalf("NewConstraint = %v", err)
	}
	detok := func(id TokenID) []byte { return tokens[id] }
	return c, detok, regexp.MustCompile(`^` + pattern + `$`)
}
