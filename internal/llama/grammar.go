//go:build cgo

package llama

import (
	"math"
	"sync"

	"github.com/ollama/ollama/llama"
)

// SchemaToGrammar converts a JSON Schema to llama.cpp's GBNF grammar with
// llama.cpp's own converter (json-schema-to-grammar), for comparison with
// Conform's compiler.
func SchemaToGrammar(schema []byte) ([]byte, error) {
	g := llama.SchemaToGrammar(schema)
	if g == nil {
		return nil, errorf(CodeGrammar, "schema to grammar", "llama.cpp refused the schema (invalid JSON or unsupported)")
	}
	return g, nil
}

// Grammar is llama.cpp's grammar sampler over a vocabulary, a baseline for
// benchmarks. It is safe for concurrent use but holds one parse state.
type Grammar struct {
	mu      sync.Mutex
	g       *llama.Grammar
	nVocab  int
	scratch []llama.TokenData
}

// NewGrammar parses a GBNF grammar (root rule "root") over a vocabulary:
// pieces[i] is the text of token i (as C strings, so a NUL byte ends a
// piece), eog the tokens that end generation.
func NewGrammar(gbnf string, pieces []string, eog []TokenID) (*Grammar, error) {
	ids := make([]uint32, len(pieces))
	for i := range ids {
		ids[i] = uint32(i)
	}
	e := make([]int32, len(eog))
	for i, id := range eog {
		if id < 0 || int(id) >= len(pieces) {
			return nil, errorf(CodeGrammar, "new grammar", "end-of-generation token %d outside the vocabulary", id)
		}
		e[i] = int32(id)
	}
	g := llama.NewGrammar(gbnf, ids, pieces, e)
	if g == nil {
		return nil, errorf(CodeGrammar, "new grammar", "llama.cpp could not parse the grammar")
	}
	return &Grammar{g: g, nVocab: len(pieces)}, nil
}

// Apply sets to -Inf the logits of every token the grammar does not allow
// next. logits has one entry per vocabulary token.
func (g *Grammar) Apply(logits []float32) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.g == nil {
		return &Error{Code: CodeClosed, Op: "grammar apply"}
	}
	if len(logits) != g.nVocab {
		return errorf(CodeGrammar, "grammar apply", "%d logits for a vocabulary of %d", len(logits), g.nVocab)
	}
	td := g.scratch[:0]
	for i, l := range logits {
		td = append(td, llama.TokenData{ID: int32(i), Logit: l})
	}
	g.scratch = td
	g.g.Apply(td)
	for i := range logits {
		logits[i] = td[i].Logit
	}
	return nil
}

// Accept advances the grammar past id. A token the grammar does not allow
// is an error (llama.cpp itself would abort the process), so it is checked
// first.
func (g *Grammar) Accept(id TokenID) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.g == nil {
		return &Error{Code: CodeClosed, Op: "grammar accept"}
	}
	if id < 0 || int(id) >= g.nVocab {
		return errorf(CodeGrammar, "grammar accept", "token %d outside the vocabulary", id)
	}
	one := []llama.TokenData{{ID: int32(id), Logit: 0}}
	g.g.Apply(one)
	if math.IsInf(float64(one[0].Logit), -1) {
		return errorf(CodeGrammar, "grammar accept", "token %d is not allowed here", id)
	}
	g.g.Accept(int32(id))
	return nil
}

// Close frees the grammar; it is idempotent.
func (g *Grammar) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.g != nil {
		g.g.Free()
		g.g = nil
	}
	return nil
}
