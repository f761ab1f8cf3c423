//go:build cgo

package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"conform/internal/llama"
	"conform/internal/llamaengine"
	"conform/runner"
	"conform/tokenizer"
)

// withCgo reports a build with cgo (TestConformanceRatchet runs in the
// build without it, so that make test pays for it once).
const withCgo = true

// modelFlag names the GGUF file whose vocabulary llama.cpp's grammar runs
// over (-engine llamacpp); a synthetic model made with the same
// tokenizer.json works, its weights are never read.
var modelFlag = flag.String("model", "", "GGUF model whose vocabulary -engine llamacpp uses (same tokenizer as -tokenizer)")

// llamaEngine is llama.cpp's grammar sampler, through the binding: the
// schema becomes GBNF with llama.cpp's json-schema-to-grammar, and the mask
// at each step is the set of tokens llama.cpp's grammar does not reject.
type llamaEngine struct {
	enc  *tokenizer.Encoder
	gv   *llamaengine.GrammarVocab
	toks [][]byte // the tokenizer's token bytes, for diagnostics
}

func newLlamaEngine(cfg config) (engine, error) {
	if *modelFlag == "" {
		return nil, errors.New("-engine llamacpp needs -model FILE.gguf (for its vocabulary)")
	}
	v, err := tokenizer.LoadGGUF(*modelFlag)
	if err != nil {
		return nil, err
	}
	hf, err := tokenizer.LoadHF(cfg.tokenizer)
	if err != nil {
		return nil, err
	}
	if hf.Width != v.Width {
		return nil, fmt.Errorf("-model has %d tokens, -tokenizer %d: they must be the same vocabulary", v.Width, hf.Width)
	}
	enc, err := tokenizer.NewEncoder(cfg.tokenizer)
	if err != nil {
		return nil, err
	}
	eos := make([]runner.TokenID, len(v.EOS))
	for i, id := range v.EOS {
		eos[i] = runner.TokenID(id)
	}
	return &llamaEngine{enc: enc, gv: llamaengine.NewGrammarVocab(v, eos), toks: hf.Tokens}, nil
}

func (e *llamaEngine) tokenText(tok int32) string {
	if tok < 0 || int(tok) >= len(e.toks) {
		return ""
	}
	return string(e.toks[tok])
}

func (e *llamaEngine) encode(text string) []int32 {
	ids := e.enc.Encode(text)
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// compile converts the schema and parses the grammar once (a grammar
// llama.cpp cannot parse is a compile error). The deadline is not
// enforced: llama.cpp's converter cannot be interrupted.
func (e *llamaEngine) compile(schema []byte, _ time.Time) (compiled, error) {
	g, err := llama.SchemaToGrammar(schema)
	if err != nil {
		return nil, err
	}
	gc, err := llamaengine.NewGrammarConstraint(string(g), e.gv)
	if err != nil {
		return nil, err
	}
	return &llamaCompiled{gbnf: string(g), gv: e.gv, first: gc}, nil
}

func (e *llamaEngine) cause(err error) string {
	var le *llama.Error
	if errors.As(err, &le) {
		return "llama.cpp: " + le.Msg
	}
	return "other: " + err.Error()
}

type llamaCompiled struct {
	gbnf  string
	gv    *llamaengine.GrammarVocab
	first *llamaengine.GrammarConstraint // made by compile, used by the first reset
}

func (c *llamaCompiled) newSeq() seq { return &llamaSeq{c: c} }
func (c *llamaCompiled) width() int  { return c.gv.Width() }
func (c *llamaCompiled) take() *llamaengine.GrammarConstraint {
	gc := c.first
	c.first = nil
	return gc
}

// llamaSeq is one test's walk. llama.cpp's grammar cannot be reset or
// cloned through the binding, so reset parses the grammar again (outside
// the timed mask+accept steps).
type llamaSeq struct {
	c   *llamaCompiled
	gc  *llamaengine.GrammarConstraint
	err error
}

func (s *llamaSeq) reset() {
	if s.gc != nil {
		s.gc.Close()
	}
	s.gc, s.err = s.c.take(), nil
	if s.gc == nil {
		s.gc, s.err = llamaengine.NewGrammarConstraint(s.c.gbnf, s.c.gv)
	}
}

func (s *llamaSeq) fillMask(dst []uint64) error {
	if s.err != nil {
		return s.err
	}
	clear(dst)
	return s.gc.FillMask(dst)
}

func (s *llamaSeq) accept(tok int32) error {
	if s.err != nil {
		return s.err
	}
	return s.gc.Accept(runner.TokenID(tok))
}

func (s *llamaSeq) isAccepting() bool { return s.err == nil && s.gc.IsAccepting() }
