package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"conform/runner"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 99, 7},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{1, 2, 3, 4}, 50, 2},
		{[]float64{1, 2, 3, 4}, 99, 4},
		{[]float64{5, 4, 3, 2, 1, 10, 9, 8, 7, 6}, 90, 9},
	}
	for _, tt := range tests {
		if got := percentile(tt.xs, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestCompactGBNF(t *testing.T) {
	in := "root ::= \"{\" space a-kv \"}\" space\nspace ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\nchar ::= [^\"]\n"
	want := "root ::= \"{\" space a-kv \"}\" space\nspace ::= \"\"\nchar ::= [^\"]\n"
	if got := compactGBNF(in); got != want {
		t.Errorf("compactGBNF(%q) = %q, want %q", in, got, want)
	}
	if got := compactGBNF("root ::= x\n"); got != "root ::= x\n" {
		t.Errorf("compactGBNF without a space rule = %q, want it unchanged", got)
	}
}

func TestReadEntriesSpread(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		split := "A"
		if i%2 == 1 {
			split = "B"
		}
		b.WriteString(`{"id":"s` + string(rune('0'+i)) + `","split":"` + split + `","schema":{}}` + "\n")
	}
	p := filepath.Join(t.TempDir(), "mb.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		limit int
		split string
		want  string
		total int
	}{
		{0, "", "s0 s1 s2 s3 s4 s5 s6 s7 s8 s9", 10},
		{5, "", "s0 s2 s4 s6 s8", 10},
		{3, "", "s0 s3 s6", 10},
		{2, "B", "s1 s5", 5},
		{20, "A", "s0 s2 s4 s6 s8", 5},
	}
	for _, tt := range tests {
		es, total, err := readEntries(config{maskbench: p, limit: tt.limit, split: tt.split})
		if err != nil {
			t.Fatalf("readEntries(limit %d, split %q): %v", tt.limit, tt.split, err)
		}
		var ids []string
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		if got := strings.Join(ids, " "); got != tt.want || total != tt.total {
			t.Errorf("readEntries(limit %d, split %q) = %q of %d, want %q of %d", tt.limit, tt.split, got, total, tt.want, tt.total)
		}
	}
	if _, _, err := readEntries(config{maskbench: filepath.Join(t.TempDir(), "absent.jsonl")}); err == nil {
		t.Error("readEntries(absent file) = nil error")
	}
}

func TestReportRates(t *testing.T) {
	var st [numModes]modeStats
	for range 4 { // unconstrained: 4 requests cut at 10 tokens, 1 s
		st[modeUnconstrained].add(outcome{tokens: 10, finish: runner.FinishLength})
	}
	st[modeUnconstrained].wall = time.Second
	// Conform: 2 complete and valid, 1 cut that happens to validate, 1
	// unchecked; 40 tokens in 2 s. TTFT 5, 7 and (queued) 50 ms; decode 9
	// tokens in 450 ms per request.
	st[modeConform].add(outcome{tokens: 10, forced: 5, finish: runner.FinishConstraint, valid: true, constraint: time.Millisecond, ttft: 5, decode: 450})
	st[modeConform].add(outcome{tokens: 10, finish: runner.FinishEOS, valid: true, ttft: 7, decode: 450})
	st[modeConform].add(outcome{tokens: 10, finish: runner.FinishLength, valid: true, ttft: 50, queued: true, decode: 450})
	st[modeConform].add(outcome{tokens: 10, finish: runner.FinishEOS, unchecked: true, ttft: 6, decode: 450})
	st[modeConform].wall, st[modeConform].step = 2*time.Second, 2*time.Second
	st[modeConform].ttftCold = []float64{15, 17, 16} // compile + TTFT of the three that did not queue
	st[modeConform].steps, st[modeConform].decodeTime, st[modeConform].logitsTime = 100, time.Second, 10*time.Millisecond
	// llama.cpp: one complete but invalid, one refused.
	st[modeLlama].add(outcome{tokens: 8, finish: runner.FinishEOS})
	st[modeLlama].requests++
	st[modeLlama].refused++
	st[modeLlama].wall = time.Second
	var r report
	r.fill(st)
	c := r.Conform
	if c.TokS != 20 || c.ForcedSharePct != 12.5 || c.ConstraintUsPerToken != 25 || c.Unchecked != 1 {
		t.Errorf("conform tok/s, forced %%, µs/token, unchecked = %v, %v, %v, %d; want 20, 12.5, 25, 1", c.TokS, c.ForcedSharePct, c.ConstraintUsPerToken, c.Unchecked)
	}
	if c.CompleteRate != 2.0/3 || c.ValidRate == nil || *c.ValidRate != 1 || *c.ValidOfAll != 2.0/3 {
		t.Errorf("conform complete, valid, valid of all = %v, %v, %v; want 2/3, 1, 2/3", c.CompleteRate, c.ValidRate, c.ValidOfAll)
	}
	if c.TTFTP50ms != 6 || c.DecodeTokS != 20 {
		t.Errorf("conform TTFT p50, decode tok/s = %v, %v; want 6 (the queued request left out), 20", c.TTFTP50ms, c.DecodeTokS)
	}
	if c.TTFTColdP50ms == nil || *c.TTFTColdP50ms != 16 || r.Unconstrained.TTFTColdP50ms != nil {
		t.Errorf("conform cold TTFT p50 = %v (unconstrained %v), want 16 (and none)", c.TTFTColdP50ms, r.Unconstrained.TTFTColdP50ms)
	}
	if c.StepUs != 20000 || c.DecodeUsPerStep != 10000 || c.LogitsUsPerStep != 100 {
		t.Errorf("conform step, decode, logits µs/step = %v, %v, %v; want 20000, 10000, 100", c.StepUs, c.DecodeUsPerStep, c.LogitsUsPerStep)
	}
	if r.ConformWarm != nil {
		t.Errorf("ConformWarm = %+v without conform_warm in the modes", r.ConformWarm)
	}
	if c.OverheadPct == nil || *c.OverheadPct != 100 {
		t.Errorf("conform overhead = %v, want +100%% (40 tok/s unconstrained, 20 conform)", c.OverheadPct)
	}
	l := r.LlamacppGrammar
	if l.ValidRate == nil || *l.ValidRate != 0 || l.CompleteRate != 0.5 || l.Refused != 1 {
		t.Errorf("llama.cpp valid, complete, refused = %v, %v, %d; want 0, 0.5, 1", l.ValidRate, l.CompleteRate, l.Refused)
	}
	if r.Unconstrained.ValidRate != nil || r.Unconstrained.OverheadPct != nil {
		t.Errorf("unconstrained has a valid rate or overhead: %+v", r.Unconstrained)
	}
	r.Config.Modes = modeNames[:]
	var out strings.Builder
	r.print(&out)
	for _, want := range []string{"unconstrained", "conform", "llamacpp_grammar", "1 complete outputs left unchecked", "cold TTFT p50 ms", "logits µs/step"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("print output lacks %q:\n%s", want, out.String())
		}
	}
	// Modes not run get no row.
	r.Config.Modes = []string{"conform"}
	out.Reset()
	r.print(&out)
	if strings.Contains(out.String(), "llamacpp_grammar ") || !strings.Contains(out.String(), "  conform ") {
		t.Errorf("with -modes conform, print shows other rows or not conform's:\n%s", out.String())
	}
}

func TestValidateSurvivesPanic(t *testing.T) {
	v, err := compileValidator([]byte(`{"type":"number","multipleOf":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text  string
		valid bool
	}{
		{"1.5", true},
		{"1.25", false},
		{"[", false},
	}
	for _, tt := range tests {
		err := validate(v, tt.text)
		if (err == nil) != tt.valid {
			t.Errorf("validate(%q) = %v, want valid %v", tt.text, err, tt.valid)
		}
	}
	// v6.0.3 dereferences a nil big.Rat for a number big.Rat cannot parse
	// (a huge exponent) under "minimum"; validate turns the panic into
	// errUnchecked (a later version that copes may return nil).
	vm, err := compileValidator([]byte(`{"type":"number","minimum":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(vm, "1e99999999999999999999"); err != nil && !errors.Is(err, errUnchecked) {
		t.Errorf("validate(huge exponent) = %v, want nil or errUnchecked", err)
	} else {
		t.Logf("validate(huge exponent) = %v", err)
	}
}

// TestValidOnlyWhenComplete: an output cut by the budget never counts as
// valid, so valid_rate cannot exceed 100% (it did: 133% with cut outputs
// that validated counted over the complete ones).
func TestValidOnlyWhenComplete(t *testing.T) {
	var st [numModes]modeStats
	st[modeConform].add(outcome{tokens: 3, finish: runner.FinishConstraint, valid: true})
	for range 3 {
		st[modeConform].add(outcome{tokens: 8, finish: runner.FinishLength, valid: true})
	}
	st[modeConform].add(outcome{tokens: 2, finish: runner.FinishError, err: errors.New("boom")})
	var r report
	r.fill(st)
	c := r.Conform
	if c.ValidRate == nil || *c.ValidRate != 1 || *c.ValidOfAll != 0.2 || c.CompleteRate != 0.2 || c.Errors != 1 {
		t.Errorf("valid, valid of all, complete, errors = %v, %v, %v, %d; want 1, 0.2, 0.2, 1", c.ValidRate, c.ValidOfAll, c.CompleteRate, c.Errors)
	}
}

// TestSchemaLine: one line per schema carries every mode's request.
func TestSchemaLine(t *testing.T) {
	l := schemaLine{ID: "s1", Split: "Github_easy"}
	l.set(modeConform, outcome{tokens: 12, forced: 3, finish: runner.FinishConstraint, valid: true, ttft: 4.5, decode: 100, constraint: 1500 * time.Microsecond}, 64)
	l.set(modeUnconstrained, outcome{tokens: 12, finish: runner.FinishLength, ttft: 4, decode: 90}, 12)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s1","split":"Github_easy",` +
		`"unconstrained":{"max_tokens":12,"tokens":12,"forced":0,"finish":"length","complete":false,"ttft_ms":4,"queued":false,"decode_ms":90,"constraint_us":0},` +
		`"conform":{"max_tokens":64,"tokens":12,"forced":3,"finish":"constraint","complete":true,"valid":true,"ttft_ms":4.5,"queued":false,"decode_ms":100,"constraint_us":1500}}`
	if string(b) != want {
		t.Errorf("schema line\n got %s\nwant %s", b, want)
	}
}

func TestParseModes(t *testing.T) {
	for _, tt := range []struct {
		list, length string
		want         []string // nil: an error
	}{
		{"all", "conform", []string{"unconstrained", "conform", "llamacpp_grammar"}},
		{"unconstrained", "max", []string{"unconstrained"}},
		{"conform, unconstrained", "conform", []string{"unconstrained", "conform"}},
		{"llamacpp_grammar", "conform", []string{"llamacpp_grammar"}},
		{"conform,conform_warm", "conform", []string{"conform", "conform_warm"}},
		{"conform_warm", "max", nil},      // it reuses what conform warmed
		{"unconstrained", "conform", nil}, // its lengths come from conform
		{"free", "max", nil},
		{"", "max", nil},
	} {
		on, err := parseModes(tt.list, tt.length)
		if tt.want == nil {
			if err == nil {
				t.Errorf("parseModes(%q, %q) = %v, want an error", tt.list, tt.length, on)
			}
			continue
		}
		cfg := config{modes: on}
		if got := cfg.modeList(); err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseModes(%q, %q) = %v, %v; want %v", tt.list, tt.length, got, err, tt.want)
		}
	}
}
