package llamaengine

import (
	"errors"
	"fmt"
	"slices"

	"conform/internal/llama"
	"conform/runner"
	"conform/tokenizer"
)

// Engine is a loaded llama.cpp model seen as a runner.Engine, with its
// vocabulary. The runner.Engine methods (NumVocab, Decode, Logits,
// RemoveKV) are meant for the runner's loop goroutine only; the other
// methods are safe for concurrent use.
type Engine struct {
	m     *llama.Model
	vocab *tokenizer.Vocabulary
	eos   []runner.TokenID
	path  string
	batch llama.Batch // reused by Decode
	// rows are the logits rows handed out since the last Decode, reused
	// by the next one's (runner.Engine: valid until the next Decode).
	rows [][]float32
	used int
}

var _ runner.Engine = (*Engine)(nil)

// Load loads the GGUF model at path into llama.cpp with p, reads its
// vocabulary with conform/tokenizer, and checks that both agree. Bad files
// (missing, truncated, not GGUF, unsupported architecture) fail with
// CodeLoad wrapping the binding's error, before any weights are read.
func Load(path string, p llama.Params) (*Engine, error) {
	m, err := llama.Load(path, p)
	if err != nil {
		return nil, &Error{Code: CodeLoad, Op: "load", Path: path, Err: err}
	}
	v, err := tokenizer.LoadGGUF(path)
	if err != nil {
		m.Close()
		return nil, &Error{Code: CodeVocabulary, Op: "load", Path: path, Err: err}
	}
	e, err := New(m, v)
	if err != nil {
		m.Close()
		err.(*Error).Path = path
		return nil, err
	}
	e.path = path
	return e, nil
}

// New wraps an already loaded model and its vocabulary. The vocabulary
// must have as many tokens as llama.cpp has (its Width is then the logit
// width). The Engine owns m from now on: Close closes it.
func New(m *llama.Model, v *tokenizer.Vocabulary) (*Engine, error) {
	if m == nil || v == nil {
		return nil, &Error{Code: CodeVocabulary, Op: "new", Msg: "nil model or vocabulary"}
	}
	if v.Len() != m.NumVocab() || v.Width != m.NumVocab() {
		return nil, &Error{Code: CodeVocabulary, Op: "new",
			Msg: fmt.Sprintf("tokenizer has %d tokens (width %d), llama.cpp %d", v.Len(), v.Width, m.NumVocab())}
	}
	e := &Engine{m: m, vocab: v}
	// The vocabulary's EOS list, plus every special token llama.cpp also
	// treats as end of generation (EOT, EOM, ...).
	for _, id := range v.EOS {
		e.eos = append(e.eos, runner.TokenID(id))
	}
	for id, sp := range v.Special {
		if sp && m.IsEOG(llama.TokenID(id)) && !slices.Contains(e.eos, runner.TokenID(id)) {
			e.eos = append(e.eos, runner.TokenID(id))
		}
	}
	slices.Sort(e.eos)
	return e, nil
}

// Model returns the underlying binding, for what the adapter does not
// cover (Tokenize options, CopySeq, the grammar baseline).
func (e *Engine) Model() *llama.Model { return e.m }

// Vocabulary returns the vocabulary read from the model file, the one to
// build fsm token indexes from.
func (e *Engine) Vocabulary() *tokenizer.Vocabulary { return e.vocab }

// EOS returns the end-of-generation ids: the vocabulary's, plus special
// tokens llama.cpp marks as end of generation. Sorted; do not modify.
func (e *Engine) EOS() []runner.TokenID { return e.eos }

// Detokenize returns the text bytes of id: its raw bytes for a text token,
// nil for a special token (its text is markup, not output) or an id
// outside the vocabulary. It is safe for concurrent use.
func (e *Engine) Detokenize(id runner.TokenID) []byte {
	if id < 0 || int(id) >= e.vocab.Len() || e.vocab.Special[id] {
		return nil
	}
	return e.vocab.Tokens[id]
}

// Tokenize runs llama.cpp's tokenizer on text. addSpecial adds BOS (and
// EOS) as the vocabulary asks; parseSpecial turns special-token text such
// as "<|im_start|>" into the special token.
func (e *Engine) Tokenize(text string, addSpecial, parseSpecial bool) ([]runner.TokenID, error) {
	ids, err := e.m.Tokenize(text, addSpecial, parseSpecial)
	if err != nil {
		return nil, &Error{Code: CodeEngine, Op: "tokenize", Err: err}
	}
	out := make([]runner.TokenID, len(ids))
	for i, id := range ids {
		out[i] = runner.TokenID(id)
	}
	return out, nil
}

// RunnerConfig returns a runner.Config that fits the loaded context: one
// slot per llama.cpp sequence, each sequence's share of the KV cache as
// ContextSize, a batch no larger than the model's batch capacity, the EOS
// ids and the detokenizer. Callers may adjust the other fields.
//
// Masks overlap the decode (runner.Config.OverlapMasks: Decode is a
// blocking cgo call, and another goroutine fills the masks meanwhile).
// On CPU too, with every core in the forward pass: measured at parallel 4
// on 2 cores, Conform ÷ unconstrained tok/s was 0.96–1.04 with the
// overlap and 0.88–0.94 without at 2 threads, 1.07–1.15 against 0.88–0.90
// at 1 thread (bench/README.md, issue 17).
func (e *Engine) RunnerConfig() runner.Config {
	p := e.m.Params()
	return runner.Config{
		Slots:        p.Parallel,
		ContextSize:  e.m.SeqContextSize(),
		BatchSize:    min(runner.DefaultBatchSize, e.m.BatchCapacity()),
		EOS:          slices.Clone(e.eos),
		Detokenize:   e.Detokenize,
		OverlapMasks: true,
	}
}

// Close frees the model; it is idempotent.
func (e *Engine) Close() error { return e.m.Close() }

// NumVocab returns the width of a logits row.
func (e *Engine) NumVocab() int { return e.m.NumVocab() }

// Decode converts b into the binding's batch (one slice, reused) and runs
// it. A full KV cache is an error that wraps llama.ErrKVCacheFull.
func (e *Engine) Decode(b runner.Batch) error {
	n := len(b.Tokens)
	if len(b.Pos) != n || len(b.Seq) != n || len(b.Logits) != n {
		return &Error{Code: CodeBatch, Op: "decode",
			Msg: fmt.Sprintf("slice lengths differ: %d tokens, %d positions, %d sequences, %d logits flags", n, len(b.Pos), len(b.Seq), len(b.Logits))}
	}
	e.batch = e.batch[:0]
	e.used = 0
	for i, t := range b.Tokens {
		e.batch = append(e.batch, llama.BatchToken{Token: llama.TokenID(t), Pos: b.Pos[i], Seq: llama.SeqID(b.Seq[i]), Logits: b.Logits[i]})
	}
	if err := e.m.Decode(e.batch); err != nil {
		return wrap("decode", err)
	}
	return nil
}

// Logits returns the logits after entry i of the last decoded batch, in Go
// memory (the binding copies them out of llama.cpp) that is reused after
// the next Decode, as runner.Engine allows: a step allocates nothing.
func (e *Engine) Logits(i int) ([]float32, error) {
	if e.used == len(e.rows) {
		e.rows = append(e.rows, nil)
	}
	l, err := e.m.LogitsInto(i, e.rows[e.used])
	if err != nil {
		return nil, wrap("logits", err)
	}
	e.rows[e.used] = l
	e.used++
	return l, nil
}

// RemoveKV removes positions [from, to) of sequence seq from the KV cache;
// to < 0 means to the end.
func (e *Engine) RemoveKV(seq int, from, to int) error {
	if err := e.m.RemoveSeq(llama.SeqID(seq), from, to); err != nil {
		return wrap("remove", err)
	}
	return nil
}

// wrap turns a binding error into CodeBatch (the caller's mistake) or
// CodeEngine (llama.cpp's failure), keeping the cause.
func wrap(op string, err error) error {
	code := CodeEngine
	if errors.Is(err, llama.ErrBatch) {
		code = CodeBatch
	}
	return &Error{Code: code, Op: op, Err: err}
}
