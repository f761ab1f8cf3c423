package fsm

// A MaskBench-shaped harness on the real Llama-3.1 vocabulary (128,256
// logits), read from ../shared when present (skipped otherwise).
//
// fsm cannot compile JSON Schema (that is grammar/'s job, and fsm must not
// import it), so each valid MaskBench instance gets a stand-in constraint
// inferred from the instance itself: its keys as literals in their order,
// its strings as free JSON strings, its numbers as JSON numbers, arrays as
// repetitions of the union of their element shapes, with the separators
// json.dumps writes (", " and ": "). The result has the shape of a schema
// DFA (sparse key states, dense string bodies, number loops) and is
// compiled fresh per instance, as MaskBench compiles per schema, so the
// token-by-token timing covers cold masks the way the real benchmark does.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"conform/internal/sharedtest"
)

var (
	tokLlamaOnce  sync.Once
	tokLlamaIndex *TokenIndex
	tokLlamaErr   error
)

// tokLlama31 loads the Llama-3.1 vocabulary: GPT-2 byte map undone for the
// BPE vocabulary, added tokens as plain text, special ones 0xFF-prefixed;
// EOS = <|end_of_text|>, <|eom_id|>, <|eot_id|>.
func tokLlama31(tb testing.TB) *TokenIndex {
	tb.Helper()
	path := sharedtest.Path(tb, "vocab", "llama3_1", "tokenizer.json")
	tokLlamaOnce.Do(func() {
		raw, err := os.ReadFile(path)
		if err != nil {
			tokLlamaErr = err
			return
		}
		var tj struct {
			Model struct {
				Vocab map[string]int `json:"vocab"`
			} `json:"model"`
			Added []struct {
				ID      int    `json:"id"`
				Content string `json:"content"`
				Special bool   `json:"special"`
			} `json:"added_tokens"`
		}
		if err := json.Unmarshal(raw, &tj); err != nil {
			tokLlamaErr = err
			return
		}
		// GPT-2 byte map: printable bytes map to themselves, the other 68
		// bytes to U+0100 upward in byte order.
		var unmap [512]int
		for i := range unmap {
			unmap[i] = -1
		}
		n := 0
		for b := 0; b < 256; b++ {
			if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
				unmap[b] = b
			} else {
				unmap[256+n] = b
				n++
			}
		}
		toks := make([][]byte, 128256)
		for s, id := range tj.Model.Vocab {
			var bs []byte
			for _, r := range s {
				if r >= 512 || unmap[r] < 0 {
					tokLlamaErr = fmt.Errorf("token %d %q: rune %U outside the byte map", id, s, r)
					return
				}
				bs = append(bs, byte(unmap[r]))
			}
			toks[id] = bs
		}
		var eos []TokenID
		for _, a := range tj.Added {
			if a.Special {
				toks[a.ID] = append([]byte{SpecialPrefix}, a.Content...)
			} else {
				toks[a.ID] = []byte(a.Content)
			}
			switch a.Content {
			case "<|end_of_text|>", "<|eom_id|>", "<|eot_id|>":
				eos = append(eos, TokenID(a.ID))
			}
		}
		tokLlamaIndex, tokLlamaErr = NewTokenIndex(toks, eos, 128256)
	})
	if tokLlamaErr != nil {
		tb.Fatalf("loading Llama-3.1 vocabulary: %v", tokLlamaErr)
	}
	return tokLlamaIndex
}

// tokMBInstance is one valid MaskBench instance with its Llama-3.1 tokens.
type tokMBInstance struct {
	id     string
	data   json.RawMessage
	text   string
	tokens []TokenID
}

// tokMaskBenchDev reads up to limit valid instances (0 = all).
func tokMaskBenchDev(tb testing.TB, limit int) []tokMBInstance {
	tb.Helper()
	dataPath := sharedtest.Path(tb, "maskbench", "dev.jsonl")
	tokPath := sharedtest.Path(tb, "maskbench", "dev.tokens.llama3_1.jsonl")
	toks := map[string][][]TokenID{}
	f, err := os.Open(tokPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			ID     string      `json:"id"`
			Tokens [][]TokenID `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		toks[rec.ID] = rec.Tokens
	}
	g, err := os.Open(dataPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer g.Close()
	sc = bufio.NewScanner(g)
	sc.Buffer(nil, 64<<20)
	var out []tokMBInstance
	for sc.Scan() {
		var rec struct {
			ID    string `json:"id"`
			Tests []struct {
				Valid bool            `json:"valid"`
				Data  json.RawMessage `json:"data"`
				Text  string          `json:"text"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		tt := toks[rec.ID]
		for i, t := range rec.Tests {
			if !t.Valid || i >= len(tt) {
				continue
			}
			out = append(out, tokMBInstance{id: fmt.Sprintf("%s#%d", rec.ID, i), data: t.Data, text: t.Text, tokens: tt[i]})
			if limit > 0 && len(out) >= limit {
				return out
			}
		}
	}
	return out
}

// The atoms of the inferred constraints.
var tokMBAtoms = sync.OnceValues(func() (map[string]*Node, error) {
	atoms := map[string]string{
		"string": `"(?:[^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`,
		"number": `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`,
		"bool":   `true|false`,
		"null":   `null`,
	}
	out := map[string]*Node{}
	for k, re := range atoms {
		n, err := Parse(re)
		if err != nil {
			return nil, fmt.Errorf("Parse(%q): %v", re, err)
		}
		out[k] = n
	}
	return out, nil
})

// tokInferNode returns the stand-in constraint of one JSON value (read from
// dec, keeping key order).
func tokInferNode(dec *json.Decoder, atoms map[string]*Node) (*Node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case nil:
		return atoms["null"], nil
	case bool:
		return atoms["bool"], nil
	case json.Number, float64:
		return atoms["number"], nil
	case string:
		return atoms["string"], nil
	case json.Delim:
		switch v {
		case '{':
			parts := []*Node{Lit("{")}
			for i := 0; dec.More(); i++ {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := json.Marshal(kt.(string))
				key = bytes.ReplaceAll(key, []byte(`\u003c`), []byte("<")) // json.dumps does not escape <>&
				key = bytes.ReplaceAll(key, []byte(`\u003e`), []byte(">"))
				key = bytes.ReplaceAll(key, []byte(`\u0026`), []byte("&"))
				sep := ""
				if i > 0 {
					sep = ", "
				}
				val, err := tokInferNode(dec, atoms)
				if err != nil {
					return nil, err
				}
				parts = append(parts, Lit(sep+string(key)+": "), val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return Cat(append(parts, Lit("}"))...), nil
		case '[':
			var elems []*Node
			for dec.More() {
				e, err := tokInferNode(dec, atoms)
				if err != nil {
					return nil, err
				}
				if !slices.Contains(elems, e) {
					elems = append(elems, e)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if len(elems) == 0 {
				return Lit("[]"), nil
			}
			e := Alt(elems...)
			return Cat(Lit("["), e, Star(Cat(Lit(", "), e)), Lit("]")), nil
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", t)
}

// tokMBCompile compiles the stand-in constraint of an instance.
func tokMBCompile(inst tokMBInstance) (*DFA, error) {
	atoms, err := tokMBAtoms()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(inst.data))
	dec.UseNumber()
	n, err := tokInferNode(dec, atoms)
	if err != nil {
		return nil, err
	}
	return Compile(n, Options{})
}

// TestMaskBenchDevTokens feeds the Llama-3.1 tokens of valid MaskBench
// instances through their stand-in constraints: every token must be in the
// mask, EOS must be allowed at the end, and sampled masks must equal the
// brute-force mask.
func TestMaskBenchDevTokens(t *testing.T) {
	ti := tokLlama31(t)
	limit := 80
	if testing.Short() {
		limit = 20
	}
	if s := os.Getenv("MASKBENCH_LIMIT"); s != "" { // 0 = all
		fmt.Sscan(s, &limit)
	}
	insts := tokMaskBenchDev(t, limit)
	w := make([]uint64, ti.MaskWords())
	checked, steps, skipped := 0, 0, 0
	for k, inst := range insts {
		d, err := tokMBCompile(inst)
		if err != nil {
			skipped++ // a budget or a shape the stand-in cannot express
			continue
		}
		if !Matches(d, []byte(inst.text)) {
			skipped++ // text not in json.dumps form (the stand-in is exact about spacing)
			continue
		}
		c := tokMustConstraint(t, d, ti, ConstraintOptions{})
		m := c.NewMatcher()
		for i, tok := range inst.tokens {
			if err := m.FillMask(w); err != nil {
				t.Fatalf("%s step %d: FillMask = %v", inst.id, i, err)
			}
			if w[tok>>6]&(1<<(uint(tok)&63)) == 0 {
				t.Fatalf("%s step %d: token %d %q of a valid instance is not in the mask", inst.id, i, tok, ti.TokenBytes(tok))
			}
			if (i+k)%40 == 0 {
				want := tokBruteMask(d, ti, m.State())
				if !slices.Equal(w, want) {
					t.Fatalf("%s step %d: mask differs from brute force: %s", inst.id, i, tokDiffMasks(ti, w, want))
				}
				checked++
			}
			if err := m.Accept(tok); err != nil {
				t.Fatalf("%s step %d: Accept(%d) = %v", inst.id, i, tok, err)
			}
			steps++
		}
		if err := m.Accept(ti.EOS()[0]); err != nil {
			t.Fatalf("%s: Accept(EOS) at the end = %v", inst.id, err)
		}
	}
	if steps == 0 || checked == 0 {
		t.Fatalf("no instance was checked (%d skipped of %d)", skipped, len(insts))
	}
	t.Logf("%d instances (%d skipped), %d tokens, %d masks compared with brute force", len(insts)-skipped, skipped, steps, checked)
}

// BenchmarkMaskBenchDev replays MaskBench dev instances on Llama-3.1 with a
// fresh constraint per instance (compile + start mask = TTFM; then
// FillMask+Accept per token = TBM), reporting percentiles. Brief targets:
// TBM p50 ≤ 10 µs, p99 ≤ 250 µs, max ≤ 50 ms; TTFM p50 ≤ 1 ms.
// MASKBENCH_LIMIT=n bounds the instances (default all).
func BenchmarkMaskBenchDev(b *testing.B) {
	ti := tokLlama31(b)
	limit := 0
	if s := os.Getenv("MASKBENCH_LIMIT"); s != "" {
		fmt.Sscan(s, &limit)
	}
	insts := tokMaskBenchDev(b, limit)
	w := make([]uint64, ti.MaskWords())
	var tbm, ttfm, compile []time.Duration
	var sliced, masks int64
	var slow []tokSlowStep
	for b.Loop() {
		tbm, ttfm, compile, slow = tbm[:0], ttfm[:0], compile[:0], slow[:0]
		sliced, masks = 0, 0
		for _, inst := range insts {
			t0 := time.Now()
			d, err := tokMBCompile(inst)
			if err != nil || !Matches(d, []byte(inst.text)) {
				continue
			}
			t1 := time.Now()
			c, err := NewConstraint(d, ti, ConstraintOptions{})
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			compile = append(compile, t1.Sub(t0))
			ttfm = append(ttfm, t2.Sub(t0))
			m := c.NewMatcher()
			for i, tok := range inst.tokens {
				s := time.Now()
				q := m.State()
				if err := m.FillMask(w); err != nil {
					b.Fatal(err)
				}
				if err := m.Accept(tok); err != nil {
					b.Fatal(err)
				}
				dt := time.Since(s)
				tbm = append(tbm, dt)
				if len(slow) < 8 || dt > slow[len(slow)-1].dt {
					n, _ := c.AllowedCount(q)
					slow = append(slow, tokSlowStep{dt, inst.id, i, q, n, d.NumStates()})
					sort.Slice(slow, func(i, j int) bool { return slow[i].dt > slow[j].dt })
					slow = slow[:min(len(slow), 8)]
				}
			}
			st := c.Stats()
			sliced += st.SlicedMasks
			masks += st.MasksComputed
		}
	}
	pct := func(v []time.Duration, p float64) float64 {
		if len(v) == 0 {
			return 0
		}
		s := slices.Clone(v)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Nanoseconds()) / 1e3
	}
	for _, st := range slow {
		b.Logf("slow step %v: %s token %d, state %d of %d, %d allowed", st.dt, st.id, st.step, st.state, st.states, st.allowed)
	}
	b.ReportMetric(float64(len(ttfm)), "instances")
	b.ReportMetric(float64(len(tbm)), "tokens")
	b.ReportMetric(pct(tbm, 0.5), "tbm-p50-µs")
	b.ReportMetric(pct(tbm, 0.99), "tbm-p99-µs")
	b.ReportMetric(pct(tbm, 1), "tbm-max-µs")
	b.ReportMetric(pct(ttfm, 0.5), "ttfm-p50-µs")
	b.ReportMetric(pct(ttfm, 0.99), "ttfm-p99-µs")
	b.ReportMetric(pct(compile, 0.5), "compile-p50-µs")
	b.ReportMetric(float64(sliced)/float64(max(masks, 1)), "sliced-frac")
}

// tokSlowStep records one of the slowest FillMask+Accept steps.
type tokSlowStep struct {
	dt      time.Duration
	id      string
	step    int
	state   StateID
	allowed int
	states  int
}
