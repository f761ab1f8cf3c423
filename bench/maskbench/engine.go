package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"conform/fsm"
	"conform/grammar"
	"conform/tokenizer"
)

// errTimeout marks a compile that ran out of its time budget.
var errTimeout = errors.New("time budget exceeded")

// engine is a constraint engine under test: Conform's own, or (later)
// llama.cpp's grammar sampler through the binding.
type engine interface {
	compile(schema []byte, deadline time.Time) (compiled, error)
	encode(text string) []int32
	tokenText(tok int32) string // the token's bytes, for diagnostics
	cause(err error) string
}

type compiled interface {
	newSeq() seq
	width() int
}

type seq interface {
	reset()
	fillMask(dst []uint64) error
	accept(tok int32) error
	isAccepting() bool
}

func newEngine(cfg config) (engine, error) {
	switch cfg.engine {
	case "conform":
		e, err := newConformEngine(cfg.tokenizer, grammar.Options{MaxWhitespace: cfg.maxWS, AnyValueDepth: cfg.anyDepth, MaxDepth: cfg.maxDepth, MaxStringLength: cfg.maxString, PropertyOrder: cfg.order})
		if err == nil {
			if cfg.phases {
				e.ph = &phases{}
			}
			e.eager, e.noPrebuild, e.annotateFormats = cfg.eager, cfg.noPrebuild, cfg.annotateFormats
		}
		return e, err
	case "llamacpp":
		return newLlamaEngine(cfg)
	default:
		return nil, fmt.Errorf("unknown engine %q (want conform or llamacpp)", cfg.engine)
	}
}

// conformEngine runs grammar → fsm → token masks.
type conformEngine struct {
	enc   *tokenizer.Encoder
	idx   *fsm.TokenIndex
	w     int
	gopts grammar.Options
	ph    *phases // nil unless -phases
	eager bool    // -eager: whole minimized DFA before the first mask
	// -unknown-formats annotate: unknown formats read as annotations
	annotateFormats bool
	// -no-prebuild: every deferred operand built when first reached
	noPrebuild bool
}

func newConformEngine(path string, gopts grammar.Options) (*conformEngine, error) {
	v, err := tokenizer.LoadHF(path)
	if err != nil {
		return nil, err
	}
	enc, err := tokenizer.NewEncoder(path)
	if err != nil {
		return nil, err
	}
	eos := make([]fsm.TokenID, len(v.EOS))
	for i, id := range v.EOS {
		eos[i] = fsm.TokenID(id)
	}
	idx, err := fsm.NewTokenIndex(v.Tokens, eos, v.Width)
	if err != nil {
		return nil, err
	}
	return &conformEngine{enc: enc, idx: idx, w: v.Width, gopts: gopts}, nil
}

func (e *conformEngine) tokenText(tok int32) string {
	if tok < 0 || int(tok) >= e.idx.NumTokens() {
		return ""
	}
	return string(e.idx.TokenBytes(fsm.TokenID(tok)))
}

func (e *conformEngine) encode(text string) []int32 {
	ids := e.enc.Encode(text)
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

func (e *conformEngine) compile(schema []byte, deadline time.Time) (compiled, error) {
	t0 := time.Now()
	res, err := grammar.CompileSchema(schema, e.gopts)
	if err != nil && e.annotateFormats {
		res, err = e.compileAnnotated(schema, err)
	}
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	var st fsm.Stats
	opts := fsm.Options{Timeout: time.Until(deadline), Stats: &st, NoPrebuild: e.noPrebuild}
	var c *fsm.Constraint
	if e.eager {
		d, err := fsm.Compile(res.Node, opts)
		if err != nil {
			return nil, err
		}
		c, err = fsm.NewConstraint(d, e.idx, fsm.ConstraintOptions{TrustTrimmed: true})
		if err != nil {
			return nil, err
		}
	} else {
		c, err = fsm.CompileConstraint(context.Background(), res.Node, e.idx, opts, fsm.ConstraintOptions{})
		if err != nil {
			return nil, err
		}
	}
	if e.ph != nil {
		total := time.Since(t1)
		e.ph.add(phaseRecord{
			grammar: t1.Sub(t0), nfa: st.NFATime, det: st.DetTime, min: st.MinTime,
			constraint: total - st.NFATime - st.DetTime - st.MinTime,
			nfaStates:  st.NFAStates, dfaStates: c.Stats().States,
		})
	}
	return &conformCompiled{c: c, w: e.w}, nil
}

// compileAnnotated is -unknown-formats annotate: a schema refused (strictErr)
// for an unknown format is compiled in lenient mode, which reads unknown
// formats as annotations (plain strings), and kept only when that is the
// only thing lenient mode relaxed; otherwise the strict error stands.
func (e *conformEngine) compileAnnotated(schema []byte, strictErr error) (*grammar.Result, error) {
	var ge *grammar.Error
	if !errors.As(strictErr, &ge) || ge.Code != grammar.CodeUnknownFormat {
		return nil, strictErr
	}
	opts := e.gopts
	opts.Strictness = grammar.Lenient
	res, err := grammar.CompileSchema(schema, opts)
	if err != nil {
		return nil, strictErr
	}
	for _, w := range res.Warnings {
		if w.Keyword != "format" || !strings.HasPrefix(w.Message, "unknown format") {
			return nil, strictErr
		}
	}
	return res, nil
}

// cause names the keyword or limit behind a compile error, for the
// breakdown table.
func (e *conformEngine) cause(err error) string {
	var ge *grammar.Error
	if errors.As(err, &ge) {
		if ge.Keyword != "" {
			return fmt.Sprintf("grammar: %s %s", ge.Code, ge.Keyword)
		}
		return fmt.Sprintf("grammar: %s", ge.Code)
	}
	var fe *fsm.Error
	if errors.As(err, &fe) {
		return fmt.Sprintf("fsm: %v", fe.Code)
	}
	return "other: " + err.Error()
}

type conformCompiled struct {
	c *fsm.Constraint
	w int
}

func (c *conformCompiled) newSeq() seq { return &conformSeq{m: c.c.NewMatcher()} }
func (c *conformCompiled) width() int  { return c.w }

type conformSeq struct{ m *fsm.Matcher }

func (s *conformSeq) reset()                      { s.m.Reset() }
func (s *conformSeq) fillMask(dst []uint64) error { return s.m.FillMask(dst) }
func (s *conformSeq) accept(tok int32) error      { return s.m.Accept(fsm.TokenID(tok)) }
func (s *conformSeq) isAccepting() bool           { return s.m.IsAccepting() }
