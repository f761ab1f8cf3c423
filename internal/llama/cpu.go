package llama

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
)

// CPU kernels. ggml chooses its CPU kernels when it is compiled, not when it
// runs: arch/x86/quants.c, simd-mappings.h, vec.h and llamafile's sgemm
// test the compiler's predefined macros (__AVX2__, __FMA__, __F16C__,
// __AVX512F__, __ARM_NEON, __ARM_FEATURE_DOTPROD, ...), and the cgo
// directives of the ollama module give the compiler no target ISA. So the
// instruction set the kernels use is whatever CGO_CFLAGS/CGO_CXXFLAGS say
// (the Makefile's CPU_TARGET): without -march a build for x86-64 is baseline
// SSE2 and decodes about ten times slower than -march=native on an AVX2 or
// AVX-512 machine. ggml's runtime scoring of CPU variants
// (ggml_backend_cpu_x86_score) only serves dynamically loaded backends,
// which this build does not have. CPU reports both sides so that the
// server can say what it runs and warn when the build leaves speed on the
// table.

// cpuFeature is one instruction-set extension ggml reports through a
// ggml_cpu_has_* function. host reads whether the running CPU (and OS)
// supports it; nil where golang.org/x/sys/cpu does not detect it (F16C),
// and such a feature is reported for the build only.
type cpuFeature struct {
	name string
	host func() bool
}

// cpuFeatures lists, per GOARCH and in ggml's order, the extensions that
// select kernels. Built[i] and Host for a name come from the same entry.
var cpuFeatures = map[string][]cpuFeature{
	"amd64": {
		{"SSE3", func() bool { return cpu.X86.HasSSE3 }},
		{"SSSE3", func() bool { return cpu.X86.HasSSSE3 }},
		{"AVX", func() bool { return cpu.X86.HasAVX }},
		{"F16C", nil},
		{"FMA", func() bool { return cpu.X86.HasFMA }},
		{"BMI2", func() bool { return cpu.X86.HasBMI2 }},
		{"AVX2", func() bool { return cpu.X86.HasAVX2 }},
		{"AVX_VNNI", func() bool { return cpu.X86.HasAVXVNNI }},
		{"AVX512", func() bool { return cpu.X86.HasAVX512F }},
		{"AVX512_VBMI", func() bool { return cpu.X86.HasAVX512VBMI }},
		{"AVX512_VNNI", func() bool { return cpu.X86.HasAVX512VNNI }},
		{"AVX512_BF16", func() bool { return cpu.X86.HasAVX512BF16 }},
		{"AMX_INT8", func() bool { return cpu.X86.HasAMXInt8 }},
	},
	"arm64": {
		{"NEON", func() bool { return cpu.ARM64.HasASIMD }},
		{"ARM_FMA", func() bool { return cpu.ARM64.HasFP }},
		{"FP16_VA", func() bool { return cpu.ARM64.HasASIMDHP }},
		{"DOTPROD", func() bool { return cpu.ARM64.HasASIMDDP }},
		{"MATMUL_INT8", func() bool { return cpu.ARM64.HasI8MM }},
		{"SVE", func() bool { return cpu.ARM64.HasSVE }},
		{"SME", nil},
	},
}

// CPUInfo compares the instruction-set extensions llama.cpp's CPU kernels
// were compiled with to those of the CPU running them.
type CPUInfo struct {
	// Arch is runtime.GOARCH.
	Arch string
	// Cgo is false in a build without cgo: no kernels, Built is empty.
	Cgo bool
	// BuildLevel is the x86-64 psABI level (x86-64, x86-64-v2, -v3, -v4)
	// whose every extension the compiler targeted for this build, from
	// its predefined macros; "" on other architectures or without cgo.
	BuildLevel string
	// Built are the extensions ggml's CPU backend was compiled with
	// (ggml_cpu_has_*, which test the same macros in ggml-cpu.c).
	Built []string
	// Host are the extensions of the same list that this CPU and OS
	// support, as far as golang.org/x/sys/cpu detects them.
	Host []string
	// Known are the extensions whose host support is detected at all
	// (all of the list but F16C on amd64 and SME on arm64).
	Known []string
}

// CPU reports this binary's CPU kernels and the CPU it runs on.
func CPU() CPUInfo {
	c := CPUInfo{Arch: runtime.GOARCH}
	c.Cgo, c.BuildLevel, c.Built = buildCPU()
	for _, f := range cpuFeatures[c.Arch] {
		if f.host == nil {
			continue
		}
		c.Known = append(c.Known, f.name)
		if f.host() {
			c.Host = append(c.Host, f.name)
		}
	}
	return c
}

// Missing are the extensions the CPU has and the build lacks: kernels
// that would run faster here. Empty when the build is native.
func (c CPUInfo) Missing() []string {
	if !c.Cgo {
		return nil
	}
	var out []string
	for _, h := range c.Host {
		if !slices.Contains(c.Built, h) {
			out = append(out, h)
		}
	}
	return out
}

// Unsupported are the extensions the build uses and the CPU lacks: its
// kernels would stop the process with an illegal instruction, so Check
// refuses to load a model. Extensions whose host support is not detected
// are not counted.
func (c CPUInfo) Unsupported() []string {
	var out []string
	for _, b := range c.Built {
		if slices.Contains(c.Known, b) && !slices.Contains(c.Host, b) {
			out = append(out, b)
		}
	}
	return out
}

// String is the one-phrase description for a startup summary, e.g.
// "CPU kernels x86-64-v3 (SSE3 SSSE3 AVX F16C FMA BMI2 AVX2); this CPU also
// has AVX512 AVX512_VNNI".
func (c CPUInfo) String() string {
	if !c.Cgo {
		return "CPU kernels: none (built without cgo)"
	}
	built := "baseline"
	if len(c.Built) > 0 {
		built = strings.Join(c.Built, " ")
	}
	s := "CPU kernels "
	if c.BuildLevel != "" {
		s += c.BuildLevel + " "
	}
	s += "(" + built + ")"
	switch miss, unsup := c.Missing(), c.Unsupported(); {
	case len(unsup) > 0:
		s += "; this CPU lacks " + strings.Join(unsup, " ")
	case len(miss) > 0:
		s += "; this CPU also has " + strings.Join(miss, " ")
	default:
		s += ", all this CPU has"
	}
	return s
}

// Warning is a sentence for the log when the build leaves speed on the
// table (Missing is not empty), else "".
func (c CPUInfo) Warning() string {
	miss := c.Missing()
	if len(miss) == 0 {
		return ""
	}
	return fmt.Sprintf("llama.cpp's CPU kernels were compiled without %s, which this CPU has: decoding is slower than it could be "+
		"(rebuild with `make build`, whose default CPU_TARGET=native compiles for this CPU)", strings.Join(miss, ", "))
}

// Check returns an *Error (CodeLoad) when the kernels use extensions this
// CPU lacks: a portable binary built for too high a CPU_TARGET, which would
// otherwise die of SIGILL in its first decode.
func (c CPUInfo) Check() error {
	unsup := c.Unsupported()
	if len(unsup) == 0 {
		return nil
	}
	return &Error{Code: CodeLoad, Op: "cpu check", Msg: fmt.Sprintf(
		"llama.cpp was compiled for %s, which this CPU lacks; rebuild for it (make build CPU_TARGET=native, or a lower level such as x86-64-v2)",
		strings.Join(unsup, ", "))}
}
