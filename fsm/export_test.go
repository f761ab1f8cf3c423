package fsm

import "testing"

// Llama31ForTest gives the external tests (package fsm_test) the
// Llama-3.1 vocabulary that the package's own tests load (skipping when
// ../shared is absent).
func Llama31ForTest(tb testing.TB) *TokenIndex { return tokLlama31(tb) }
