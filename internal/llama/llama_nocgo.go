//go:build !cgo

package llama

// Model is a loaded model. Without cgo it cannot be made: Load returns
// ErrUnavailable, and the methods exist only so that callers compile.
type Model struct{}

var _ Engine = (*Model)(nil)

func unavailable(op string) error { return &Error{Code: CodeUnavailable, Op: op} }

// Load returns ErrUnavailable in a build without cgo, after checking p and
// the file so that a bad path is reported the same way in both builds.
func Load(path string, p Params) (*Model, error) {
	if _, err := p.resolve(); err != nil {
		return nil, err
	}
	if _, err := Validate(path); err != nil {
		return nil, err
	}
	return nil, &Error{Code: CodeUnavailable, Op: "load", Path: path}
}

// InitBackends returns ErrUnavailable: there is no llama.cpp to load
// backends into.
func InitBackends(dir string) (Backends, error) { return Backends{Dir: dir}, unavailable("backends") }

// Placement returns the zero Placement.
func (m *Model) Placement() Placement { return Placement{} }

// Close does nothing.
func (m *Model) Close() error { return nil }

// NumVocab returns 0.
func (m *Model) NumVocab() int { return 0 }

// Params returns the zero Params.
func (m *Model) Params() Params { return Params{} }

// SeqContextSize returns 0.
func (m *Model) SeqContextSize() int { return 0 }

// Architecture returns "".
func (m *Model) Architecture() string { return "" }

// BatchCapacity returns 0.
func (m *Model) BatchCapacity() int { return 0 }

// IsEOG returns false.
func (m *Model) IsEOG(TokenID) bool { return false }

// AddBOS returns false.
func (m *Model) AddBOS() bool { return false }

// Tokenize returns ErrUnavailable.
func (m *Model) Tokenize(string, bool, bool) ([]TokenID, error) { return nil, unavailable("tokenize") }

// TokenPiece returns nil.
func (m *Model) TokenPiece(TokenID) []byte { return nil }

// Decode returns ErrUnavailable.
func (m *Model) Decode(Batch) error { return unavailable("decode") }

// Logits returns ErrUnavailable.
func (m *Model) Logits(int) ([]float32, error) { return nil, unavailable("logits") }

// LogitsInto returns ErrUnavailable.
func (m *Model) LogitsInto(int, []float32) ([]float32, error) { return nil, unavailable("logits") }

// RemoveSeq returns ErrUnavailable.
func (m *Model) RemoveSeq(SeqID, int, int) error { return unavailable("remove") }

// ClearSeq returns ErrUnavailable.
func (m *Model) ClearSeq(SeqID) error { return unavailable("clear") }

// CopySeq returns ErrUnavailable.
func (m *Model) CopySeq(SeqID, SeqID, int, int) error { return unavailable("copy") }

// ClearAll returns ErrUnavailable.
func (m *Model) ClearAll() error { return unavailable("clear") }
