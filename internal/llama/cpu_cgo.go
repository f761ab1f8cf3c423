//go:build cgo

package llama

/*
// ggml's CPU backend reports how ggml-cpu.c was compiled: each of these
// returns 1 when the matching predefined macro (__AVX2__, __ARM_NEON, ...)
// was defined for that compile. They are declared here, not included,
// because ggml-cpu.h is in the ollama module's source tree, outside this
// package's include path; the signatures are ggml-cpu.h's in ollama
// v0.24.0, and github.com/ollama/ollama/llama links the definitions in.
int ggml_cpu_has_sse3(void);
int ggml_cpu_has_ssse3(void);
int ggml_cpu_has_avx(void);
int ggml_cpu_has_f16c(void);
int ggml_cpu_has_fma(void);
int ggml_cpu_has_bmi2(void);
int ggml_cpu_has_avx2(void);
int ggml_cpu_has_avx_vnni(void);
int ggml_cpu_has_avx512(void);
int ggml_cpu_has_avx512_vbmi(void);
int ggml_cpu_has_avx512_vnni(void);
int ggml_cpu_has_avx512_bf16(void);
int ggml_cpu_has_amx_int8(void);
int ggml_cpu_has_neon(void);
int ggml_cpu_has_arm_fma(void);
int ggml_cpu_has_fp16_va(void);
int ggml_cpu_has_dotprod(void);
int ggml_cpu_has_matmul_int8(void);
int ggml_cpu_has_sve(void);
int ggml_cpu_has_sme(void);

// conform_x86_level is the highest x86-64 psABI level whose every
// extension this compile targets (0: not x86-64; 1: baseline). This file
// is compiled with the same CGO_CFLAGS as ggml, so it names the level of
// the kernels' build.
static int conform_x86_level(void) {
#if defined(__x86_64__)
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
    defined(__AVX2__) && defined(__BMI__) && defined(__BMI2__) && defined(__F16C__) && defined(__FMA__) && defined(__LZCNT__) && defined(__MOVBE__) && \
    defined(__SSE4_2__) && defined(__SSSE3__) && defined(__POPCNT__)
	return 4;
#elif defined(__AVX2__) && defined(__BMI__) && defined(__BMI2__) && defined(__F16C__) && defined(__FMA__) && defined(__LZCNT__) && defined(__MOVBE__) && \
    defined(__SSE4_2__) && defined(__SSSE3__) && defined(__POPCNT__)
	return 3;
#elif defined(__SSE4_2__) && defined(__SSE4_1__) && defined(__SSSE3__) && defined(__SSE3__) && defined(__POPCNT__)
	return 2;
#else
	return 1;
#endif
#else
	return 0;
#endif
}

// conform_has_avx2_macro says whether this compile defined __AVX2__ (and
// conform_has_neon_macro __ARM_NEON): the test compares them with ggml's
// report, which shows that the flags reached ggml's compile too.
static int conform_has_avx2_macro(void) {
#if defined(__AVX2__)
	return 1;
#else
	return 0;
#endif
}

static int conform_has_neon_macro(void) {
#if defined(__ARM_NEON)
	return 1;
#else
	return 0;
#endif
}
*/
import "C"

import (
	"fmt"
	"runtime"
)

// ggmlHas maps cpuFeatures' names to ggml's reports.
var ggmlHas = map[string]func() C.int{
	"SSE3":        func() C.int { return C.ggml_cpu_has_sse3() },
	"SSSE3":       func() C.int { return C.ggml_cpu_has_ssse3() },
	"AVX":         func() C.int { return C.ggml_cpu_has_avx() },
	"F16C":        func() C.int { return C.ggml_cpu_has_f16c() },
	"FMA":         func() C.int { return C.ggml_cpu_has_fma() },
	"BMI2":        func() C.int { return C.ggml_cpu_has_bmi2() },
	"AVX2":        func() C.int { return C.ggml_cpu_has_avx2() },
	"AVX_VNNI":    func() C.int { return C.ggml_cpu_has_avx_vnni() },
	"AVX512":      func() C.int { return C.ggml_cpu_has_avx512() },
	"AVX512_VBMI": func() C.int { return C.ggml_cpu_has_avx512_vbmi() },
	"AVX512_VNNI": func() C.int { return C.ggml_cpu_has_avx512_vnni() },
	"AVX512_BF16": func() C.int { return C.ggml_cpu_has_avx512_bf16() },
	"AMX_INT8":    func() C.int { return C.ggml_cpu_has_amx_int8() },
	"NEON":        func() C.int { return C.ggml_cpu_has_neon() },
	"ARM_FMA":     func() C.int { return C.ggml_cpu_has_arm_fma() },
	"FP16_VA":     func() C.int { return C.ggml_cpu_has_fp16_va() },
	"DOTPROD":     func() C.int { return C.ggml_cpu_has_dotprod() },
	"MATMUL_INT8": func() C.int { return C.ggml_cpu_has_matmul_int8() },
	"SVE":         func() C.int { return C.ggml_cpu_has_sve() },
	"SME":         func() C.int { return C.ggml_cpu_has_sme() },
}

// buildCPU reads the kernels' build from ggml (no model or backend
// needed: the functions test compile-time macros only).
func buildCPU() (cgo bool, level string, built []string) {
	switch l := C.conform_x86_level(); l {
	case 0:
	case 1:
		level = "x86-64"
	default:
		level = fmt.Sprintf("x86-64-v%d", int(l))
	}
	for _, f := range cpuFeatures[runtime.GOARCH] {
		if has, ok := ggmlHas[f.name]; ok && has() != 0 {
			built = append(built, f.name)
		}
	}
	return true, level, built
}

// compilerMacros reports __AVX2__ and __ARM_NEON for this package's own
// compile (for the test).
func compilerMacros() (avx2, neon bool) {
	return C.conform_has_avx2_macro() != 0, C.conform_has_neon_macro() != 0
}
