package llama

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DeviceType is the kind of a ggml device (enum ggml_backend_dev_type).
type DeviceType int

// The device types, in ggml's order.
const (
	DeviceCPU DeviceType = iota
	DeviceGPU
	DeviceIGPU  // a GPU that shares host memory
	DeviceAccel // an accelerator used beside the CPU (BLAS, AMX)
)

// String returns "CPU", "GPU", "iGPU" or "accelerator".
func (t DeviceType) String() string {
	switch t {
	case DeviceCPU:
		return "CPU"
	case DeviceGPU:
		return "GPU"
	case DeviceIGPU:
		return "iGPU"
	case DeviceAccel:
		return "accelerator"
	}
	return fmt.Sprintf("DeviceType(%d)", int(t))
}

// Device is one device of ggml's backend registry.
type Device struct {
	Backend     string // the backend's name, e.g. "CUDA", "CPU"
	Name        string // the device's name, e.g. "CUDA0"
	Description string // e.g. "NVIDIA H200", or the CPU's model
	Type        DeviceType
	MemoryFree  uint64 // bytes, as the backend reports them (0: unknown)
	MemoryTotal uint64
}

// String returns "CUDA0 (NVIDIA H200, 139.8 GiB)".
func (d Device) String() string {
	s := d.Name
	var in []string
	if d.Description != "" && d.Description != d.Name {
		in = append(in, d.Description)
	}
	if d.MemoryTotal > 0 && d.Type != DeviceCPU {
		in = append(in, fmt.Sprintf("%.1f GiB", float64(d.MemoryTotal)/(1<<30)))
	}
	if len(in) > 0 {
		s += " (" + strings.Join(in, ", ") + ")"
	}
	return s
}

// BackendFailure is a backend library that could not be loaded.
type BackendFailure struct {
	Path string
	Err  string // dlopen's message, or what ggml refused
}

// Backends is what this process's ggml backend registry holds: the CPU
// backend compiled into the binary, and the libraries [InitBackends]
// loaded from its folder.
type Backends struct {
	// Dir is the folder searched for backend libraries ("" when none was
	// given or it does not exist).
	Dir string
	// Loaded are the libraries that registered a backend.
	Loaded []string
	// Failed are the libraries found in Dir that did not.
	Failed []BackendFailure
	// Devices are every registered device, in the registry's order.
	Devices []Device
}

// GPUs returns the devices llama.cpp offloads layers to (GPU and iGPU).
func (b Backends) GPUs() []Device {
	var out []Device
	for _, d := range b.Devices {
		if d.Type == DeviceGPU || d.Type == DeviceIGPU {
			out = append(out, d)
		}
	}
	return out
}

// Summary names the backend and devices that run the model's layers:
// "CUDA: CUDA0 (NVIDIA H200, 139.8 GiB)", or "CPU" without a GPU.
func (b Backends) Summary() string {
	gpus := b.GPUs()
	if len(gpus) == 0 {
		return "CPU"
	}
	var parts []string
	for _, d := range gpus {
		parts = append(parts, d.Backend+": "+d.String())
	}
	return strings.Join(parts, ", ")
}

// NoGPU explains why no GPU device is registered, for a warning: the
// folder searched and what was or was not in it.
func (b Backends) NoGPU() string {
	switch {
	case b.Dir == "":
		return "no backend folder was given, so only the CPU backend compiled into this binary is registered"
	case len(b.Failed) > 0:
		var fs []string
		for _, f := range b.Failed {
			fs = append(fs, filepath.Base(f.Path)+": "+f.Err)
		}
		return fmt.Sprintf("backend libraries in %s failed to load: %s", b.Dir, strings.Join(fs, "; "))
	case len(b.Loaded) == 0:
		return fmt.Sprintf("%s holds no backend library (libggml-cuda.so and the like)", b.Dir)
	}
	return fmt.Sprintf("the backends loaded from %s (%s) found no GPU device", b.Dir, strings.Join(baseNames(b.Loaded), ", "))
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// Placement says where a loaded model runs.
type Placement struct {
	Backends Backends
	// GPULayers is what llama.cpp was given: Params.GPULayers resolved
	// (999 for all), or 0 when no GPU device is registered.
	GPULayers int
	// Warning is set when layers were asked to be offloaded but there is
	// no GPU device, so the model runs on the CPU.
	Warning string
}

// backendLibraries lists the backend libraries in dir that InitBackends
// loads: libggml-NAME.so and libggml-NAME-VARIANT.so, sorted, except
// libggml-base (the library the backends link against, not a backend) and
// libggml-cpu* (the CPU backend is compiled into the binary; a second one
// would register a second CPU device). A dir that does not exist has none.
func backendLibraries(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, "libggml-") || !strings.HasSuffix(n, ".so") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(n, "libggml-"), ".so")
		if name == "" || name == "base" || name == "cpu" || strings.HasPrefix(name, "cpu-") || strings.HasPrefix(name, "base-") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	sort.Strings(out)
	return out, nil
}

// offload resolves p.GPULayers against the registered devices: with no
// GPU device a request to offload becomes 0 layers and a warning.
func offload(b Backends, layers int) Placement {
	pl := Placement{Backends: b, GPULayers: layers}
	if layers != 0 && len(b.GPUs()) == 0 {
		pl.GPULayers = 0
		pl.Warning = fmt.Sprintf("%d GPU layers asked for, but there is no GPU device: %s; running on the CPU", layers, b.NoGPU())
		if layers >= 999 {
			pl.Warning = "all layers asked to run on a GPU, but there is no GPU device: " + b.NoGPU() + "; running on the CPU"
		}
	}
	return pl
}
