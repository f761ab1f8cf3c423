//go:build cgo

package llama

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "ollama/ggml-backend.h"

// conform_dlopen opens path as ggml's loader will (RTLD_NOW, so a missing
// dependency such as libcudart shows here) and copies dlerror's message
// into msg, as it is per thread and only good until the next dl call. The
// handle is kept: ggml's own dlopen of the same file then only counts up.
static int conform_dlopen(const char *path, char *msg, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h) {
		return 1;
	}
	const char *e = dlerror();
	strncpy(msg, e ? e : "dlopen failed", n - 1);
	msg[n - 1] = 0;
	return 0;
}
*/
import "C"

import (
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/ollama/ollama/llama"
)

var backendState struct {
	sync.Mutex
	done bool
	b    Backends
}

// InitBackends initialises llama.cpp's backends once per process: the CPU
// backend compiled into the binary, and every backend library in dir
// (libggml-cuda.so and the like, built by `make build-cuda`; see
// backendLibraries for which files count), each dlopened first so that a
// missing dependency is reported with dlopen's message. dir "" loads none.
// ollama's own search (OLLAMA_LIBRARY_PATH, or ../lib/ollama beside the
// executable) is switched off, so this folder is the only one.
//
// Later calls return the first call's Backends; one naming another
// non-empty folder is a CodeParams error, as backends cannot be unloaded
// once a model uses them. Load calls it with Params.BackendDir.
func InitBackends(dir string) (Backends, error) {
	s := &backendState
	s.Lock()
	defer s.Unlock()
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return s.b, &Error{Code: CodeParams, Op: "backends", Path: dir, Err: err}
		}
		dir = abs
	}
	if s.done {
		if dir != "" && dir != s.b.Dir {
			return s.b, errorf(CodeParams, "backends", "backends are already loaded from %q; another folder (%q) needs a new process", s.b.Dir, dir)
		}
		return s.b, nil
	}
	var libs []string
	if dir != "" {
		var err error
		if libs, err = backendLibraries(dir); err != nil {
			return Backends{}, &Error{Code: CodeParams, Op: "backends", Path: dir, Msg: "reading the backend folder", Err: err}
		}
	}
	// ollama's loader (ggml.OnceLoad, run by BackendInit) reads this
	// variable; empty, it loads nothing, so no library is loaded twice.
	os.Setenv("OLLAMA_LIBRARY_PATH", "")
	llama.BackendInit()
	b := Backends{Dir: dir}
	msg := make([]byte, 512)
	for _, lib := range libs {
		cpath := C.CString(lib)
		ok := C.conform_dlopen(cpath, (*C.char)(unsafe.Pointer(&msg[0])), C.size_t(len(msg)))
		if ok == 0 {
			C.free(unsafe.Pointer(cpath))
			b.Failed = append(b.Failed, BackendFailure{Path: lib, Err: C.GoString((*C.char)(unsafe.Pointer(&msg[0])))})
			continue
		}
		reg := C.ggml_backend_load(cpath)
		C.free(unsafe.Pointer(cpath))
		if reg == nil {
			b.Failed = append(b.Failed, BackendFailure{Path: lib, Err: "ggml refused it (not supported on this system, no ggml_backend_init, or another ggml version)"})
			continue
		}
		b.Loaded = append(b.Loaded, lib)
	}
	b.Devices = registeredDevices()
	s.b, s.done = b, true
	return b, nil
}

// registeredDevices reads ggml's device registry.
func registeredDevices() []Device {
	n := int(C.ggml_backend_dev_count())
	out := make([]Device, 0, n)
	for i := range n {
		dev := C.ggml_backend_dev_get(C.size_t(i))
		var free, total C.size_t
		C.ggml_backend_dev_memory(dev, &free, &total)
		d := Device{
			Name:        C.GoString(C.ggml_backend_dev_name(dev)),
			Description: C.GoString(C.ggml_backend_dev_description(dev)),
			MemoryFree:  uint64(free),
			MemoryTotal: uint64(total),
		}
		if reg := C.ggml_backend_dev_backend_reg(dev); reg != nil {
			d.Backend = C.GoString(C.ggml_backend_reg_name(reg))
		}
		switch C.ggml_backend_dev_type(dev) {
		case C.GGML_BACKEND_DEVICE_TYPE_GPU:
			d.Type = DeviceGPU
		case C.GGML_BACKEND_DEVICE_TYPE_IGPU:
			d.Type = DeviceIGPU
		case C.GGML_BACKEND_DEVICE_TYPE_ACCEL:
			d.Type = DeviceAccel
		default:
			d.Type = DeviceCPU
		}
		out = append(out, d)
	}
	return out
}
