package llama

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBackendLibraries: the files of a backend folder InitBackends loads.
func TestBackendLibraries(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"libggml-cuda.so", "libggml-base.so", "libggml-base.so.0", "libggml-cpu-haswell.so", "libggml-cpu.so",
		"libggml-vulkan.so", "libggml-hip-gfx1100.so", "libggml-.so", "libcudart.so.13", "libggml-cuda.so.0", "README"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "libggml-dir.so"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := backendLibraries(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	want := []string{"libggml-cuda.so", "libggml-hip-gfx1100.so", "libggml-vulkan.so"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("backendLibraries = %v, want %v", names, want)
	}
	if _, err := backendLibraries(filepath.Join(dir, "absent")); err == nil {
		t.Error("backendLibraries(absent folder): no error")
	}
}

// TestOffload: GPU layers asked for without a GPU device become 0 and a
// warning that says why; with a GPU they pass through.
func TestOffload(t *testing.T) {
	cpu := Device{Backend: "CPU", Name: "CPU", Description: "AMD EPYC", Type: DeviceCPU}
	h200 := Device{Backend: "CUDA", Name: "CUDA0", Description: "NVIDIA H200", Type: DeviceGPU, MemoryTotal: 150 << 30}
	for _, tc := range []struct {
		name    string
		b       Backends
		layers  int
		want    int
		warn    []string // substrings of the warning; nil: none
		summary string
	}{
		{"no GPU asked", Backends{Devices: []Device{cpu}}, 0, 0, nil, "CPU"},
		{"GPU", Backends{Dir: "/l", Loaded: []string{"/l/libggml-cuda.so"}, Devices: []Device{h200, cpu}}, 999, 999, nil, "CUDA: CUDA0 (NVIDIA H200, 150.0 GiB)"},
		{"no folder", Backends{Devices: []Device{cpu}}, 10, 0, []string{"10 GPU layers", "no backend folder", "running on the CPU"}, "CPU"},
		{"all, empty folder", Backends{Dir: "/l", Devices: []Device{cpu}}, 999, 0, []string{"all layers", "/l holds no backend library"}, "CPU"},
		{"failed", Backends{Dir: "/l", Failed: []BackendFailure{{"/l/libggml-cuda.so", "libcudart.so.13: cannot open shared object file"}}, Devices: []Device{cpu}}, 5, 0,
			[]string{"libggml-cuda.so: libcudart.so.13: cannot open"}, "CPU"},
		{"loaded, no device", Backends{Dir: "/l", Loaded: []string{"/l/libggml-cuda.so"}, Devices: []Device{cpu}}, 5, 0, []string{"(libggml-cuda.so) found no GPU device"}, "CPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := offload(tc.b, tc.layers)
			if pl.GPULayers != tc.want {
				t.Errorf("GPULayers = %d, want %d", pl.GPULayers, tc.want)
			}
			if (pl.Warning == "") != (tc.warn == nil) {
				t.Errorf("Warning = %q, want one: %v", pl.Warning, tc.warn != nil)
			}
			for _, w := range tc.warn {
				if !strings.Contains(pl.Warning, w) {
					t.Errorf("Warning = %q, want it to contain %q", pl.Warning, w)
				}
			}
			if s := tc.b.Summary(); s != tc.summary {
				t.Errorf("Summary = %q, want %q", s, tc.summary)
			}
		})
	}
}
