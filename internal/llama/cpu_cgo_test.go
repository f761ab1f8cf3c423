//go:build cgo

package llama

import (
	"os"
	"slices"
	"testing"
)

// TestCPUBuild: ggml's report of its own compile agrees with the macros of
// this package's compile (both get CGO_CFLAGS: the flags reached ggml), and
// a build for CPU_TARGET=native (the Makefile exports CONFORM_CPU_TARGET)
// leaves nothing this CPU has out.
func TestCPUBuild(t *testing.T) {
	c := CPU()
	if !c.Cgo {
		t.Fatal("CPU().Cgo = false in a cgo build")
	}
	avx2, neon := compilerMacros()
	if got := slices.Contains(c.Built, "AVX2"); got != avx2 {
		t.Errorf("ggml reports AVX2 %v, this package's compile has __AVX2__ %v", got, avx2)
	}
	if got := slices.Contains(c.Built, "NEON"); got != neon {
		t.Errorf("ggml reports NEON %v, this package's compile has __ARM_NEON %v", got, neon)
	}
	if c.Arch == "amd64" && c.BuildLevel == "" {
		t.Error("BuildLevel empty on amd64")
	}
	if os.Getenv("CONFORM_CPU_TARGET") == "native" {
		if miss := c.Missing(); len(miss) > 0 {
			t.Errorf("native build lacks %v, which this CPU has (CGO_CFLAGS=%q)", miss, os.Getenv("CGO_CFLAGS"))
		}
	}
	t.Log(c.String())
}
