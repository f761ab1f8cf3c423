//go:build !cgo

package llama

// SchemaToGrammar returns ErrUnavailable in a build without cgo.
func SchemaToGrammar([]byte) ([]byte, error) { return nil, unavailable("schema to grammar") }

// Grammar is llama.cpp's grammar sampler; without cgo it cannot be made.
type Grammar struct{}

// NewGrammar returns ErrUnavailable in a build without cgo.
func NewGrammar(string, []string, []TokenID) (*Grammar, error) {
	return nil, unavailable("new grammar")
}

// Apply returns ErrUnavailable.
func (g *Grammar) Apply([]float32) error { return unavailable("grammar apply") }

// Accept returns ErrUnavailable.
func (g *Grammar) Accept(TokenID) error { return unavailable("grammar accept") }

// Close does nothing.
func (g *Grammar) Close() error { return nil }
