package llama

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCPUInfoCompare(t *testing.T) {
	x86 := []string{"SSE3", "SSSE3", "AVX", "FMA", "BMI2", "AVX2", "AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8"}
	v3 := []string{"SSE3", "SSSE3", "AVX", "F16C", "FMA", "BMI2", "AVX2"}
	for _, tc := range []struct {
		name              string
		c                 CPUInfo
		missing, unsup    []string
		str, warn, errSub string
	}{{
		name:    "baseline build on an AVX2 CPU",
		c:       CPUInfo{Arch: "amd64", Cgo: true, BuildLevel: "x86-64", Known: x86, Host: []string{"SSE3", "SSSE3", "AVX", "FMA", "BMI2", "AVX2"}},
		missing: []string{"SSE3", "SSSE3", "AVX", "FMA", "BMI2", "AVX2"},
		str:     "CPU kernels x86-64 (baseline); this CPU also has SSE3 SSSE3 AVX FMA BMI2 AVX2",
		warn:    "compiled without SSE3, SSSE3, AVX, FMA, BMI2, AVX2, which this CPU has",
	}, {
		name:    "v3 build on an AVX-512 CPU",
		c:       CPUInfo{Arch: "amd64", Cgo: true, BuildLevel: "x86-64-v3", Built: v3, Known: x86, Host: []string{"SSE3", "SSSE3", "AVX", "FMA", "BMI2", "AVX2", "AVX512", "AVX512_VNNI"}},
		missing: []string{"AVX512", "AVX512_VNNI"},
		str:     "CPU kernels x86-64-v3 (SSE3 SSSE3 AVX F16C FMA BMI2 AVX2); this CPU also has AVX512 AVX512_VNNI",
		warn:    "compiled without AVX512, AVX512_VNNI",
	}, {
		name: "native build: F16C is not detected on the host and not held against it",
		c:    CPUInfo{Arch: "amd64", Cgo: true, BuildLevel: "x86-64-v3", Built: v3, Known: x86, Host: []string{"SSE3", "SSSE3", "AVX", "FMA", "BMI2", "AVX2"}},
		str:  "CPU kernels x86-64-v3 (SSE3 SSSE3 AVX F16C FMA BMI2 AVX2), all this CPU has",
	}, {
		name:   "v3 build on a v2 CPU",
		c:      CPUInfo{Arch: "amd64", Cgo: true, BuildLevel: "x86-64-v3", Built: v3, Known: x86, Host: []string{"SSE3", "SSSE3"}},
		unsup:  []string{"AVX", "FMA", "BMI2", "AVX2"},
		str:    "CPU kernels x86-64-v3 (SSE3 SSSE3 AVX F16C FMA BMI2 AVX2); this CPU lacks AVX FMA BMI2 AVX2",
		errSub: "compiled for AVX, FMA, BMI2, AVX2, which this CPU lacks",
	}, {
		name:    "arm64 without dotprod",
		c:       CPUInfo{Arch: "arm64", Cgo: true, Built: []string{"NEON", "ARM_FMA"}, Known: []string{"NEON", "ARM_FMA", "FP16_VA", "DOTPROD", "MATMUL_INT8", "SVE"}, Host: []string{"NEON", "ARM_FMA", "FP16_VA", "DOTPROD"}},
		missing: []string{"FP16_VA", "DOTPROD"},
		str:     "CPU kernels (NEON ARM_FMA); this CPU also has FP16_VA DOTPROD",
		warn:    "compiled without FP16_VA, DOTPROD",
	}, {
		name: "no cgo",
		c:    CPUInfo{Arch: "amd64", Known: x86, Host: []string{"AVX2"}},
		str:  "CPU kernels: none (built without cgo)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Missing(); !slices.Equal(got, tc.missing) {
				t.Errorf("Missing() = %v, want %v", got, tc.missing)
			}
			if got := tc.c.Unsupported(); !slices.Equal(got, tc.unsup) {
				t.Errorf("Unsupported() = %v, want %v", got, tc.unsup)
			}
			if got := tc.c.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			w := tc.c.Warning()
			if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("Warning() = %q, want one containing %q", w, tc.warn)
			}
			err := tc.c.Check()
			if tc.errSub == "" {
				if err != nil {
					t.Errorf("Check() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, &Error{Code: CodeLoad}) || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("Check() = %v, want a CodeLoad error containing %q", err, tc.errSub)
			}
		})
	}
}

// TestCPUHost: the host side is the feature list filtered, in its order,
// and this build can run on this machine.
func TestCPUHost(t *testing.T) {
	c := CPU()
	var names []string
	for _, f := range cpuFeatures[c.Arch] {
		names = append(names, f.name)
	}
	for _, list := range [][]string{c.Built, c.Host, c.Known} {
		if !isSubsequence(list, names) {
			t.Errorf("%v is not a subsequence of the feature list %v", list, names)
		}
	}
	if !isSubsequence(c.Host, c.Known) {
		t.Errorf("Host %v not within Known %v", c.Host, c.Known)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check on the build machine: %v", err)
	}
	t.Logf("%s; host %v", c, c.Host)
}

func isSubsequence(sub, list []string) bool {
	i := 0
	for _, s := range list {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}
