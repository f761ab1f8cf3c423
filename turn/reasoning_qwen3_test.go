package turn_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"conform/internal/sharedtest"
	"conform/runner"
	"conform/tokenizer"
	"conform/turn"
)

// qwen3Vocab is the Qwen3 vocabulary from ../shared/vocab/qwen3 (the
// test is skipped without it).
func qwen3Vocab(t testing.TB) *turn.Vocab {
	t.Helper()
	hv, err := tokenizer.LoadHF(sharedtest.Path(t, "vocab", "qwen3", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := turn.NewVocab(turn.VocabConfig{Tokens: hv.Tokens, Special: hv.Special, EOS: hv.EOS, Width: hv.Width})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestReasoningQwen3 drives a reasoning turn over the real Qwen3
// vocabulary (../shared/vocab/qwen3; skipped without it), where <think>
// and </think> are plain added tokens: a model that always prefers a
// word token inside the block thinks exactly the budget's tokens, then
// closes the block and writes a JSON answer, within max_tokens, and the
// parser gives the reasoning and the answer apart.
func TestReasoningQwen3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the token index of a 151k vocabulary")
	}
	v := qwen3Vocab(t)
	if v.IsSpecial("</think>") {
		t.Fatalf("</think> is special in this vocabulary; the test expects Qwen3's plain added token")
	}
	c, err := turn.NewCompiler(turn.CompilerConfig{Vocab: v, Format: turn.FormatHermes, Options: turn.Options{Reasoning: turn.ReasoningThink}})
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		budget, maxTokens int
		prompt            turn.PromptState
	}{{16, 400, turn.PromptPlain}, {5, 400, turn.PromptOpened}, {turn.NoBudget, 40, turn.PromptPlain}} {
		tn, err := c.Compile(t.Context(), turn.Spec{Output: turn.Output{Kind: turn.OutputJSONSchema, Schema: json.RawMessage(schema), Strict: true},
			Reasoning: turn.Reasoning{Enabled: true, Budget: tc.budget, Prompt: tc.prompt}})
		if err != nil {
			t.Fatal(err)
		}
		g := tn.NewMatcher().(runner.BudgetGuide)
		p := tn.NewParser()
		var m turn.Message
		mask := make([]uint64, v.Index().MaskWords())
		words := 0 // tokens the thinker chose as words inside the block
		var text strings.Builder
		for n := 0; n < tc.maxTokens; n++ {
			clear(mask)
			if _, err := g.FillMaskWithin(mask, tc.maxTokens-n); err != nil {
				t.Fatal(err)
			}
			var word, any []turn.TokenID
			eos := turn.TokenID(-1)
			for id := 0; id < v.Len(); id++ {
				if mask[id/64]&(1<<(id%64)) == 0 {
					continue
				}
				if v.Index().IsEOS(turn.TokenID(id)) {
					eos = turn.TokenID(id)
					continue
				}
				any = append(any, turn.TokenID(id))
				if txt := v.Text(turn.TokenID(id)); len(txt) > 1 && strings.Trim(txt, " abcdefghijklmnopqrstuvwxyz") == "" && len(word) < 4096 {
					word = append(word, turn.TokenID(id))
				}
			}
			var tok turn.TokenID
			opened := tc.prompt == turn.PromptOpened || strings.Contains(text.String(), "<think>")
			closed := strings.Contains(text.String(), "</think>")
			switch {
			case eos >= 0:
				tok = eos
			case !closed && len(word) > 0:
				tok = word[rng.IntN(len(word))]
				if opened && !endsInClose(text.String()) {
					words++ // a word that goes on writing the close is not thinking
				}
			case len(any) > 0:
				tok = any[rng.IntN(len(any))]
			default:
				t.Fatalf("empty mask after %d tokens", n)
			}
			if tok == eos {
				break
			}
			if err := g.Accept(tok); err != nil {
				t.Fatal(err)
			}
			text.WriteString(v.Text(tok))
			m.Add(p.Feed(v.Text(tok))...)
		}
		m.Add(p.Close()...)
		if !g.IsAccepting() {
			t.Fatalf("budget %d: output not complete: reasoning %q content %q", tc.budget, m.Reasoning(), m.Content())
		}
		var ans struct{ OK *bool }
		if err := json.Unmarshal([]byte(m.Content()), &ans); err != nil || ans.OK == nil {
			t.Errorf("budget %d: content %q is not the answer: %v", tc.budget, m.Content(), err)
		}
		if tc.budget >= 0 && words > tc.budget {
			t.Errorf("budget %d: the thinker wrote %d word tokens in the block", tc.budget, words)
		}
		if tc.budget > 0 && m.Reasoning() == "" {
			t.Errorf("budget %d: no reasoning", tc.budget)
		}
		if strings.Contains(m.Reasoning(), "think>") || strings.Contains(m.Content(), "think>") {
			t.Errorf("markup in reasoning %q or content %q", m.Reasoning(), m.Content())
		}
		t.Logf("budget %d, max %d: reasoning %q, content %q", tc.budget, tc.maxTokens, m.Reasoning(), m.Content())
	}
}

// endsInClose reports whether s ends with a proper prefix of </think>.
func endsInClose(s string) bool {
	const mk = "</think>"
	for k := len(mk) - 1; k > 0; k-- {
		if strings.HasSuffix(s, mk[:k]) {
			return true
		}
	}
	return false
}

// BenchmarkReasoningForcedMask is one mask of a spent budget over the
// Qwen3 vocabulary: the matcher's mask inside the block (nearly every
// token) read token by token for the ones that write the close.
func BenchmarkReasoningForcedMask(b *testing.B) {
	v := qwen3Vocab(b)
	c, err := turn.NewCompiler(turn.CompilerConfig{Vocab: v, Format: turn.FormatHermes, Options: turn.Options{Reasoning: turn.ReasoningThink}})
	if err != nil {
		b.Fatal(err)
	}
	for _, budget := range []int{1, turn.NoBudget} {
		name := "forced"
		if budget < 0 {
			name = "unbounded"
		}
		b.Run(name, func(b *testing.B) {
			tn, err := c.Compile(b.Context(), turn.Spec{Reasoning: turn.Reasoning{Enabled: true, Budget: budget, Prompt: turn.PromptOpened}})
			if err != nil {
				b.Fatal(err)
			}
			g := tn.NewMatcher().(runner.BudgetGuide)
			if err := g.Accept(14990); err != nil { // "hello": the budget's one token
				b.Fatal(err)
			}
			mask := make([]uint64, v.Index().MaskWords())
			for b.Loop() {
				clear(mask)
				if _, err := g.FillMaskWithin(mask, 1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
