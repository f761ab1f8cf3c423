//go:build cgo

package llamaengine

import (
	"testing"
	"time"

	"conform/fsm"
	"conform/grammar"
	"conform/internal/llama"
	"conform/runner"
	"conform/tokenizer"
)

// BenchmarkConstraintStep walks one valid instance token by token (mask,
// check, accept), as a decode loop does, with Conform's matcher and with
// llama.cpp's grammar over the same cl100k vocabulary. ns/token excludes
// making the matcher or grammar (llama.cpp's NewGrammar copies the whole
// vocabulary each time); ns/op includes it.
func BenchmarkConstraintStep(b *testing.B) {
	f := getFixture(b)
	const schema = `{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"age":{"type":"integer"}},"required":["name","tags","age"],"additionalProperties":false}`
	const text = `{"name": "Ada Lovelace", "tags": ["math", "engines", "notes"], "age": 36}`
	toks := encodeGreedy(b, f.vocab, text)
	res, err := grammar.CompileSchema([]byte(schema), grammar.Options{Extras: grammar.ExtrasForbidden})
	if err != nil {
		b.Fatal(err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := fsm.NewConstraint(d, f.index, fsm.ConstraintOptions{})
	if err != nil {
		b.Fatal(err)
	}
	gbnf, err := llama.SchemaToGrammar([]byte(schema))
	if err != nil {
		b.Fatal(err)
	}
	eos := make([]runner.TokenID, len(f.vocab.EOS))
	for i, id := range f.vocab.EOS {
		eos[i] = runner.TokenID(id)
	}
	gv := NewGrammarVocab(f.vocab, eos)
	mask := make([]uint64, (f.vocab.Width+63)/64)
	walk := func(b *testing.B, k runner.Guide) time.Duration {
		t0 := time.Now()
		for _, t := range toks {
			clear(mask)
			if err := k.FillMask(mask); err != nil {
				b.Fatal(err)
			}
			if mask[t>>6]&(1<<(uint(t)&63)) == 0 {
				b.Fatalf("token %d (%q) not allowed", t, f.vocab.Tokens[t])
			}
			if err := k.Accept(t); err != nil {
				b.Fatal(err)
			}
		}
		if !k.IsAccepting() {
			b.Fatal("instance not accepted")
		}
		return time.Since(t0)
	}
	b.Run("conform", func(b *testing.B) {
		var steps time.Duration
		n := 0
		for b.Loop() {
			steps += walk(b, c.NewMatcher())
			n += len(toks)
		}
		b.ReportMetric(float64(steps.Nanoseconds())/float64(n), "ns/token")
	})
	b.Run("llamacpp", func(b *testing.B) {
		var steps time.Duration
		n := 0
		for b.Loop() {
			gc, err := NewGrammarConstraint(string(gbnf), gv)
			if err != nil {
				b.Fatal(err)
			}
			steps += walk(b, gc)
			gc.Close()
			n += len(toks)
		}
		b.ReportMetric(float64(steps.Nanoseconds())/float64(n), "ns/token")
	})
}

// encodeGreedy tokenizes text with vocabulary v by longest match: not the BPE encoding, but a valid token sequence for the text,
// which is all a constraint walk needs.
func encodeGreedy(b *testing.B, v *tokenizer.Vocabulary, text string) []runner.TokenID {
	b.Helper()
	byText := map[string]runner.TokenID{}
	for id, t := range v.Tokens {
		if t != nil && !v.Special[id] {
			byText[string(t)] = runner.TokenID(id)
		}
	}
	var out []runner.TokenID
	for i := 0; i < len(text); {
		n := min(len(text)-i, 16)
		for ; n > 0; n-- {
			if id, ok := byText[text[i:i+n]]; ok {
				out = append(out, id)
				break
			}
		}
		if n == 0 {
			b.Fatalf("no token for %q", text[i:])
		}
		i += n
	}
	return out
}
