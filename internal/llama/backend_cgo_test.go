//go:build cgo

package llama

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The environment of TestBackendLibrary: the folder `make backend-blas`
// built (libggml-blas.so and libggml-base.so.0), and, in the child process
// the test starts, the folder the child loads.
const (
	envBackendDir   = "CONFORM_TEST_BACKEND_DIR"
	envBackendChild = "CONFORM_TEST_BACKEND_CHILD"
)

// backendPrompt is decoded as one batch of over 32 tokens, the size from
// which ggml's BLAS backend takes the matrix products.
const backendPrompt = "<|im_start|>user\nThe quick brown fox jumps over the lazy dog, again and again, while the cat watches from the window and counts: one, two, three, four, five, six.<|im_end|>\n<|im_start|>assistant\n"

// TestBackendLibrary loads a real ggml backend library, built by ggml's
// CMake from the pinned sources (internal/llama/backends, as the CUDA one
// is, but BLAS needs no GPU), through InitBackends in a child process (the
// registry is once per process), beside a file that is not a library. The
// child checks what was registered and refused, that GPU layers asked for
// without a GPU become a warning and 0 layers, and decodes a prompt; its
// logits must match this process's, which has no backend library.
func TestBackendLibrary(t *testing.T) {
	if dir := os.Getenv(envBackendChild); dir != "" {
		backendChild(t, dir)
		return
	}
	built := os.Getenv(envBackendDir)
	if built == "" {
		t.Skipf("%s is not set: `make test-cgo` builds the BLAS backend (make backend-blas) and sets it", envBackendDir)
	}
	dir := t.TempDir()
	for _, f := range []string{"libggml-blas.so", "libggml-base.so.0"} {
		b, err := os.ReadFile(filepath.Join(built, f))
		if err != nil {
			t.Fatalf("%s: %v", envBackendDir, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "libggml-bogus.so"), []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackendLibrary$", "-test.v")
	cmd.Env = append(os.Environ(), envBackendChild+"="+dir)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stdout.String())
	}
	var got []float32
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "LOGITS "); ok {
			if err := json.Unmarshal([]byte(rest), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := backendLogits(t, Params{ContextSize: 256, BatchSize: 128, Threads: 2})
	if len(got) != len(want) {
		t.Fatalf("child printed %d logits, want %d\n%s", len(got), len(want), stdout.String())
	}
	// BLAS multiplies in F32 what ggml's CPU kernels multiply with F16
	// activations: close, not equal.
	var dot, ng, nw float64
	for i := range got {
		dot += float64(got[i]) * float64(want[i])
		ng += float64(got[i]) * float64(got[i])
		nw += float64(want[i]) * float64(want[i])
	}
	cos := dot / math.Sqrt(ng*nw)
	t.Logf("logits with BLAS against without: cosine %.7f", cos)
	if cos < 0.999 {
		t.Errorf("logits with the BLAS backend differ from the CPU's: cosine %.6f", cos)
	}
	same := true
	for i := range got {
		same = same && got[i] == want[i]
	}
	if same {
		t.Errorf("logits with the BLAS backend are the CPU's bit for bit: the loaded backend took no matrix product")
	}
}

// backendChild runs in the child process of TestBackendLibrary.
func backendChild(t *testing.T, dir string) {
	b, err := InitBackends(dir)
	if err != nil {
		t.Fatalf("InitBackends(%s): %v", dir, err)
	}
	if len(b.Loaded) != 1 || filepath.Base(b.Loaded[0]) != "libggml-blas.so" {
		t.Errorf("Loaded = %v, want libggml-blas.so alone (libggml-base is no backend)", b.Loaded)
	}
	if len(b.Failed) != 1 || filepath.Base(b.Failed[0].Path) != "libggml-bogus.so" || b.Failed[0].Err == "" {
		t.Errorf("Failed = %+v, want libggml-bogus.so with dlopen's message", b.Failed)
	}
	var blas, cpu bool
	for _, d := range b.Devices {
		blas = blas || d.Backend == "BLAS" && d.Type == DeviceAccel
		cpu = cpu || d.Type == DeviceCPU
	}
	if !blas || !cpu {
		t.Errorf("Devices = %+v, want a BLAS accelerator and the CPU", b.Devices)
	}
	if len(b.GPUs()) != 0 || b.Summary() != "CPU" {
		t.Errorf("GPUs() = %v, Summary() = %q; want none, CPU", b.GPUs(), b.Summary())
	}
	if _, err := InitBackends(t.TempDir()); !errors.Is(err, &Error{Code: CodeParams}) {
		t.Errorf("InitBackends(another folder) = %v, want CodeParams", err)
	}
	if again, err := InitBackends(""); err != nil || again.Dir != b.Dir {
		t.Errorf("InitBackends(\"\") = %+v, %v; want the first call's", again, err)
	}
	l := backendLogits(t, Params{ContextSize: 256, BatchSize: 128, Threads: 2, GPULayers: -1, BackendDir: dir})
	enc, _ := json.Marshal(l)
	os.Stdout.Write(append(append([]byte("LOGITS "), enc...), '\n'))
}

// backendLogits loads the cl100k model with p, checks its placement and
// returns the logits after backendPrompt.
func backendLogits(t *testing.T, p Params) []float32 {
	t.Helper()
	m := loadTest(t, "cl100k", p)
	pl := m.Placement()
	switch {
	case p.GPULayers == 0 && (pl.Warning != "" || pl.GPULayers != 0):
		t.Errorf("Placement = %+v, want no warning and 0 layers", pl)
	case p.GPULayers != 0 && (pl.GPULayers != 0 || !strings.Contains(pl.Warning, "no GPU device") || !strings.Contains(pl.Warning, "libggml-bogus.so")):
		t.Errorf("Placement = %+v, want 0 layers and a warning naming the library that failed", pl)
	}
	ids, err := m.Tokenize(backendPrompt, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 32 {
		t.Fatalf("prompt of %d tokens; BLAS takes batches of 32 or more", len(ids))
	}
	if err := m.Decode(promptBatch(ids, 0, 0)); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	l, err := m.Logits(len(ids) - 1)
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "backend prompt", l)
	return l
}
