//go:build !cgo

package llama

import (
	"errors"
	"testing"
)

// TestUnavailable: without cgo a valid model file is refused with
// ErrUnavailable (bad files get their own errors, see TestValidate).
func TestUnavailable(t *testing.T) {
	m, err := Load(smallModel(t), Params{})
	if !errors.Is(err, ErrUnavailable) || m != nil {
		t.Errorf("Load without cgo: got %v, %v; want ErrUnavailable", m, err)
	}
	if _, err := SchemaToGrammar([]byte(`{}`)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SchemaToGrammar without cgo: got %v, want ErrUnavailable", err)
	}
	if _, err := NewGrammar("root ::= \"a\"", []string{"a"}, nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("NewGrammar without cgo: got %v, want ErrUnavailable", err)
	}
}

// TestCPUNoCgo: without cgo there are no kernels to report or warn about.
func TestCPUNoCgo(t *testing.T) {
	c := CPU()
	if c.Cgo || len(c.Built) > 0 || c.BuildLevel != "" || c.Warning() != "" || c.Check() != nil {
		t.Errorf("CPU() without cgo = %+v (warning %q), want no kernels and no warning", c, c.Warning())
	}
}
