# Conform — build, test and benchmark.
#
#   make run         build and serve the default model (downloaded on first use; ARGS=... for flags)
#   make demo        serve a synthetic model made on the fly (no download)
#   make build       compile everything, and the server into build/conform-serve
#                    (CPU_TARGET=x86-64-v3 etc. for a portable binary; default native)
#   make build-cuda  make build, and llama.cpp's CUDA backend into build/lib (needs the
#                    NVIDIA toolkit and cmake; CUDA_ARCHITECTURES=90 etc., default native);
#                    then build/conform-serve --n-gpu-layers -1 ... runs on the GPU
#   make gpu-bundle  build/gpu: what bench/gpu.sh needs on a GPU host without Go
#   make env         print the exports that let plain go commands build the cgo packages:
#                    eval "$(make -s env)"
#   make test        everything (pure-Go packages, then the llama.cpp binding)
#   make test-cgo    the packages that need cgo (llama.cpp), after llama-deps and browser-deps
#   make llama-deps  headers the llama.cpp cgo build needs (apt + miniaudio.h)
#   make browser-deps  Chromium for the playground's browser test (apt), when absent
#   make test-short  pure-Go packages only, CGO_ENABLED=0, for a quick loop
#   make fuzz        a short run of each fuzz target
#   make bench       Go benchmarks beside the code
#   make maskbench   the MaskBench protocol over ../shared/maskbench/dev.jsonl (ARGS=... for flags)
#   make e2e         bench/e2e on the synthetic qwen2.5-0.5b model (ARGS=... for flags)
#   make llamaref    llama.cpp's CPU path built by its own CMake (needs cmake): the speed reference
#   make llamaref-bench  that reference on the e2e model (ARGS=... for flags)
#   make soak        streaming clients against a fresh --demo server (ARGS="-clients 64 -duration 10m")
#   make plots       bench/plots/*.svg from the benchmarks' JSON (MASKBENCH_JSON=... E2E_JSON=...)
#   make golden      rewrite golden files (-update)
#   make lint        go vet, gofmt, the import-direction check and the READMEs' commands check

SHELL      := /bin/bash
GO         ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
SHARED     ?= $(abspath ../shared)
FUZZTIME   ?= 15s
PURE_PKGS   = $(shell CGO_ENABLED=0 $(GO) list ./... )

# llama.cpp (vendored by github.com/ollama/ollama/llama) is compiled by cgo.
# The module proxy strips its vendor/ headers: nlohmann/json and stb come
# from Debian, miniaudio.h from the Go module gen2brain/malgo, placed under
# build/include (found through CGO_CPPFLAGS). The first cgo build compiles
# llama.cpp (several minutes on 2 cores); the Go build cache keeps it.
LLAMA_INCLUDE := $(CURDIR)/build/include
MALGO         := github.com/gen2brain/malgo@v0.11.24
OLLAMA        := github.com/ollama/ollama
# moddir is a shell expression for module $(1)'s folder in the module cache
# (downloaded when absent), for recipes that read files shipped in it.
moddir = $$($(GO) mod download -json $(1) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')
# Added once: the flags are part of the Go build cache key, and a different
# string (even a duplicated -I) recompiles llama.cpp.
ifeq ($(findstring -I$(LLAMA_INCLUDE),$(CGO_CPPFLAGS)),)
export CGO_CPPFLAGS := $(strip $(CGO_CPPFLAGS) -I$(LLAMA_INCLUDE))
else
export CGO_CPPFLAGS
endif
# CPU_TARGET: the ISA llama.cpp's kernels are compiled for, a GCC/Clang
# -march value. ggml picks its CPU kernels at compile time from the
# compiler's predefined macros (__AVX2__, __FMA__, __F16C__, __AVX512F__,
# __ARM_NEON, __ARM_FEATURE_DOTPROD, ...: ggml-cpu/arch/x86/quants.c,
# simd-mappings.h); the cgo directives of the ollama module set -O3 and no
# target, so without -march the build is baseline x86-64 (SSE2), ~10x slower
# to decode. native (the default) is this machine's CPU; a portable binary
# for images and releases names a level, e.g. CPU_TARGET=x86-64-v3 (AVX2,
# FMA, F16C), x86-64-v2 (SSE4.2), armv8.2-a+dotprod+fp16. LLAMA_CFLAGS is
# the one string handed to cgo as CGO_CFLAGS and CGO_CXXFLAGS: it is part of
# the Go build cache key, so it is spelled once here (another string, even
# reordered, recompiles llama.cpp: ~10 minutes on 2 cores). The
# environment's CGO_CFLAGS/CGO_CXXFLAGS are not used; pass
# LLAMA_CFLAGS="..." to replace the string. `make env` prints the exports
# for running go commands by hand.
CPU_TARGET   ?= native
LLAMA_CFLAGS ?= -O3 -march=$(CPU_TARGET)
export CGO_CFLAGS   := $(LLAMA_CFLAGS)
export CGO_CXXFLAGS := $(LLAMA_CFLAGS)
# For internal/llama's TestCPUBuild: a native build must use all the CPU has.
export CONFORM_CPU_TARGET := $(CPU_TARGET)
# CGO_PKGS: internal/llama and every package that imports it (or whose
# tests do); their tests run with cgo in test-cgo.
CGO_PKGS    = $(shell $(GO) list -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/conform\/internal\/llama( |$$)/ {print $$1}')

.PHONY: run demo all build build-cuda backend-blas backend-deps env test test-short test-cgo llama-deps browser-deps fuzz bench maskbench e2e soak golden lint deps

all: build

ARGS ?=
run: llama-deps
	$(GO) run ./cmd/serve $(ARGS)

demo: llama-deps
	$(GO) run ./cmd/serve --demo $(ARGS)

# BACKEND_DIR: where make build-cuda writes the backend libraries, the
# folder build/conform-serve loads them from by default (lib/ beside the
# executable); `make run` and `make demo` (go run: the executable is
# elsewhere) name it through CONFORM_BACKEND_DIR when it exists.
BACKEND_DIR := $(CURDIR)/build/lib
ifneq ($(wildcard $(BACKEND_DIR)/libggml-*.so),)
export CONFORM_BACKEND_DIR ?= $(BACKEND_DIR)
endif

build: llama-deps
	$(GO) build ./...
	$(GO) build -o build/conform-serve ./cmd/serve

# env prints the exports the Makefile gives cgo, for go commands typed by
# hand (eval "$$(make -s env)"); the same strings, so the build cache is shared.
env: llama-deps
	@echo "export CGO_CPPFLAGS='$(CGO_CPPFLAGS)' CGO_CFLAGS='$(CGO_CFLAGS)' CGO_CXXFLAGS='$(CGO_CXXFLAGS)' CONFORM_CPU_TARGET='$(CPU_TARGET)'"

test: lint test-short test-cgo

test-cgo: llama-deps browser-deps backend-blas
	env $$(test -f build/backend-blas/lib/libggml-blas.so && echo CONFORM_TEST_BACKEND_DIR=$(CURDIR)/build/backend-blas/lib) CGO_ENABLED=1 $(GO) test -count=1 $(CGO_PKGS)

# build-cuda builds llama.cpp's CUDA backend (ggml-cuda, from the ollama
# module's ml/backend/ggml/ggml, by internal/llama/backends/CMakeLists.txt)
# into BACKEND_DIR: libggml-cuda.so and the libggml-base.so it links
# against, found through $$ORIGIN; the Go binary is unchanged and loads it
# at startup (internal/llama.InitBackends). It needs nvcc (the NVIDIA CUDA
# toolkit) and cmake; ninja is used when present. CUDA_ARCHITECTURES is
# CMake's CMAKE_CUDA_ARCHITECTURES: native (the build machine's GPUs) by
# default, e.g. 90 for an H100/H200 built on a machine without one.
CUDA_ARCHITECTURES ?= native
CUDA_BUILD_DIR     ?= build/backend-cuda
build-cuda: build
	@command -v cmake >/dev/null || { echo "build-cuda: cmake not found (apt-get install -y cmake)" >&2; exit 1; }
	@command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "build-cuda: nvcc not found: install the NVIDIA CUDA toolkit (or put its bin/ on PATH)" >&2; exit 1; }
	@dir=$(call moddir,$(OLLAMA)); \
	  test -f "$$dir/ml/backend/ggml/ggml/src/ggml-cuda/CMakeLists.txt" || { echo "build-cuda: ggml-cuda not found in $(OLLAMA) ($$dir)" >&2; exit 1; }; \
	  gen=; command -v ninja >/dev/null && gen="-G Ninja"; \
	  PATH="$$PATH:/usr/local/cuda/bin" cmake -S internal/llama/backends -B $(CUDA_BUILD_DIR) $$gen -DOLLAMA_DIR="$$dir" -DCONFORM_BACKEND=cuda \
	    -DCONFORM_LIB_DIR=$(BACKEND_DIR) -DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHITECTURES)" >/dev/null && \
	  PATH="$$PATH:/usr/local/cuda/bin" cmake --build $(CUDA_BUILD_DIR) --target ggml-cuda -j $$(nproc)
	@echo "build-cuda: $(BACKEND_DIR)/libggml-cuda.so; run build/conform-serve --n-gpu-layers -1 ..."

# gpu-bundle prepares GPU_BUNDLE for bench/gpu.sh on a GPU host that has
# nvcc, cmake and ninja but no Go toolchain (DEVELOPERS.md's device
# machine): bin/e2e.gz and bin/conform-serve.gz (cgo, CPU_TARGET=x86-64-v3 so
# that they run on any recent x86-64 CPU: one more llama.cpp compile, about
# 10 minutes on 2 cores, then cached), bin/mkmodel.gz (gzipped to fit),
# the ollama module's
# ggml sources (ollama/ml/backend/ggml/ggml, from which gpu.sh builds the
# CUDA backend with internal/llama/backends/CMakeLists.txt), GPU_SCHEMAS
# MaskBench schemas taken evenly spaced from ../shared (the benchmark's
# inputs; build/ is never committed) and COMMIT. It fits the device
# tool's 64 MiB: `run` with carry ["build/gpu"] and command
# `bash bench/gpu.sh`.
GPU_BUNDLE  ?= build/gpu
GPU_SCHEMAS ?= 128
.PHONY: gpu-bundle gpu-bundle-bins
gpu-bundle: llama-deps
	@test -f $(SHARED)/maskbench/dev.jsonl || { echo "gpu-bundle: $(SHARED)/maskbench/dev.jsonl not found (SHARED=...)" >&2; exit 1; }
	rm -rf $(GPU_BUNDLE) && mkdir -p $(GPU_BUNDLE)/bin $(GPU_BUNDLE)/ollama/ml/backend/ggml
	$(MAKE) --no-print-directory CPU_TARGET=x86-64-v3 gpu-bundle-bins
	CGO_ENABLED=0 $(GO) build -o $(GPU_BUNDLE)/bin/mkmodel ./cmd/mkmodel
	@dir=$(call moddir,$(OLLAMA)); cp -r "$$dir/ml/backend/ggml/ggml" $(GPU_BUNDLE)/ollama/ml/backend/ggml/ && chmod -R u+w $(GPU_BUNDLE)/ollama && \
	  find $(GPU_BUNDLE)/ollama -name '*.go' -delete # CMake needs none, and go list ./... would take them for this module's packages
	awk -v n=$$(wc -l < $(SHARED)/maskbench/dev.jsonl) -v k=$(GPU_SCHEMAS) 'int((NR-1)*k/n) != int(NR*k/n)' $(SHARED)/maskbench/dev.jsonl > $(GPU_BUNDLE)/schemas.jsonl
	git rev-parse --short HEAD > $(GPU_BUNDLE)/COMMIT; git diff --quiet HEAD || echo "+uncommitted" >> $(GPU_BUNDLE)/COMMIT
	gzip -9 $(GPU_BUNDLE)/bin/*
	@du -sh $(GPU_BUNDLE)

gpu-bundle-bins:
	$(GO) build -o $(GPU_BUNDLE)/bin/e2e ./bench/e2e
	$(GO) build -o $(GPU_BUNDLE)/bin/conform-serve ./cmd/serve

# backend-blas builds ggml's BLAS backend the same way into
# build/backend-blas/lib, for internal/llama's TestBackendLibrary: a real
# backend library loaded at runtime, the path the CUDA one takes, checked
# on a machine without a GPU. backend-deps installs cmake, pkg-config and
# OpenBLAS when absent; in CI (CI=true) a failed install is an error, as
# CI must run that test; elsewhere a warning, and the test skips.
backend-blas: backend-deps
	@if command -v cmake >/dev/null && pkg-config --exists blas 2>/dev/null; then \
	  dir=$(call moddir,$(OLLAMA)); \
	  cmake -S internal/llama/backends -B build/backend-blas -DOLLAMA_DIR="$$dir" -DCONFORM_BACKEND=blas -DCONFORM_LIB_DIR=$(CURDIR)/build/backend-blas/lib >/dev/null && \
	  cmake --build build/backend-blas --target ggml-blas -j $$(nproc) >/dev/null; \
	fi

backend-deps:
	@if ! command -v cmake >/dev/null || ! command -v pkg-config >/dev/null || ! pkg-config --exists blas 2>/dev/null; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	  echo "backend-deps: installing cmake pkg-config libopenblas-dev" >&2; \
	  if ! { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake pkg-config libopenblas-dev; } >&2; then \
	    if [ "$$CI" = true ]; then echo "backend-deps: installing them failed, and CI=true must run TestBackendLibrary" >&2; exit 1; fi; \
	    echo "backend-deps: warning: not installed; TestBackendLibrary will skip (apt-get install cmake pkg-config libopenblas-dev)" >&2; \
	  fi; \
	fi

# browser-deps installs Debian's chromium for cmd/serve's browser test
# (TestBrowserPlayground) when neither chromium nor chromium-browser is on
# PATH and $CHROMIUM is unset. In CI (CI=true) a failed install is an error,
# as CI must run that test; elsewhere a warning, and the test skips.
browser-deps:
	@if [ -z "$$CHROMIUM" ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	  echo "browser-deps: installing chromium" >&2; \
	  if ! { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2; then \
	    if [ "$$CI" = true ]; then echo "browser-deps: installing chromium failed, and CI=true must run the browser test" >&2; exit 1; fi; \
	    echo "browser-deps: warning: chromium not installed; TestBrowserPlayground will skip (apt-get install chromium)" >&2; \
	  fi; \
	fi

llama-deps: $(LLAMA_INCLUDE)/miniaudio/miniaudio.h $(LLAMA_INCLUDE)/ollama/llama.h
	@if [ ! -f /usr/include/nlohmann/json.hpp ] || [ ! -f /usr/include/stb/stb_image.h ]; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "llama-deps: installing nlohmann-json3-dev libstb-dev" >&2; \
	  { $$sudo apt-get update -qq && $$sudo apt-get install -y -qq nlohmann-json3-dev libstb-dev; } >&2; \
	fi

$(LLAMA_INCLUDE)/miniaudio/miniaudio.h:
	@mkdir -p $(@D)
	@dir=$(call moddir,$(MALGO)); \
	  test -f "$$dir/miniaudio.h" || { echo "llama-deps: miniaudio.h not found in $(MALGO)" >&2; exit 1; }; \
	  cp "$$dir/miniaudio.h" $@ && chmod u+w $@

# internal/llama reads llama_context_params through llama.h (to set fields
# ollama's NewContextParams does not): the pinned module's llama.h and the
# ggml headers it includes, linked into their own folder so that nothing
# else resolves through them.
$(LLAMA_INCLUDE)/ollama/llama.h:
	@mkdir -p $(@D)
	@dir=$(call moddir,$(OLLAMA)); \
	  test -f "$$dir/llama/llama.cpp/include/llama.h" || { echo "llama-deps: llama.h not found in $(OLLAMA) ($$dir)" >&2; exit 1; }; \
	  ln -sf "$$dir"/ml/backend/ggml/ggml/include/*.h $(@D)/ && ln -sf "$$dir/llama/llama.cpp/include/llama.h" $@

test-short:
	CGO_ENABLED=0 $(GO) test -count=1 $(PURE_PKGS)

fuzz:
	@set -e; for pkg in $$(CGO_ENABLED=0 $(GO) list ./...); do \
	  for f in $$(CGO_ENABLED=0 $(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

bench:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem $(PURE_PKGS)

maskbench: llama-deps
	$(GO) run ./bench/maskbench -data $(SHARED)/maskbench/dev.jsonl -tokenizer $(SHARED)/vocab/llama3_1/tokenizer.json -json build/maskbench.json $(ARGS)

# e2e runs bench/e2e on E2E_MODEL, made by cmd/mkmodel when absent (the
# qwen2.5-0.5b shapes with the Llama-3.1 vocabulary, seed 1).
E2E_MODEL ?= build/qwen2.5-0.5b-llama3_1.gguf
e2e: llama-deps $(E2E_MODEL)
	$(GO) run ./bench/e2e -model $(E2E_MODEL) -maskbench $(SHARED)/maskbench/dev.jsonl $(ARGS)

$(E2E_MODEL):
	CGO_ENABLED=0 $(GO) run ./cmd/mkmodel -preset qwen2.5-0.5b -tokenizer $(SHARED)/vocab/llama3_1/tokenizer.json -seed 1 -out $@

# soak builds the server and lets bench/soak start it (the demo model, 4
# slots; -server-args changes that) so that its RSS is read from /proc.
soak: llama-deps
	$(GO) build -o build/conform-serve ./cmd/serve
	$(GO) run ./bench/soak/cmd/soak -server build/conform-serve $(ARGS)

# plots draws bench/plots/*.svg with bench/plot (pure Go) from the JSON the
# benchmarks write (-json): MaskBench's conform and llamacpp engines over the
# same schemas, and bench/e2e's runs, one file per -parallel value. An empty
# variable leaves its figures out (the two MaskBench ones go together).
MASKBENCH_JSON          ?= build/maskbench.json
MASKBENCH_LLAMACPP_JSON ?= build/maskbench-llamacpp.json
E2E_JSON                ?= build/e2e-p1.json build/e2e-p4.json
PLOTS_DIR               ?= bench/plots
.PHONY: plots
plots:
	CGO_ENABLED=0 $(GO) run ./bench/plot -maskbench="$(MASKBENCH_JSON)" -maskbench-llamacpp="$(MASKBENCH_LLAMACPP_JSON)" -e2e="$(E2E_JSON)" -out="$(PLOTS_DIR)"

golden:
	CGO_ENABLED=0 $(GO) test ./grammar/... ./templates/... -run Golden -update

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet $(PURE_PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 -run 'TestImportDirection|TestDocCommands' ./internal/archtest

# llamaref builds bench/llamaref into build/llamaref: llama.cpp's own CPU
# path compiled by its CMake (GGML_NATIVE=ON) from the same pinned sources
# cgo links (the ollama module's llama/llama.cpp and ml/backend/ggml/ggml),
# the speed reference of issue 17. It needs cmake and installs nothing
# (apt-get install -y cmake). LLAMAREF_CMAKE passes -D options (e.g.
# -DLLAMAREF_OPENMP=OFF) and LLAMAREF_DIR another build folder for them.
# llamaref-bench runs it on E2E_MODEL (ARGS=... for its flags, see
# bench/llamaref/main.cpp; -json FILE writes the results).
LLAMAREF_DIR   ?= build/llamaref
LLAMAREF_CMAKE ?=
.PHONY: llamaref llamaref-bench
llamaref:
	@command -v cmake >/dev/null || { echo "llamaref: cmake not found; install it first (apt-get install -y cmake)" >&2; exit 1; }
	@dir=$(call moddir,$(OLLAMA)); \
	  test -f "$$dir/llama/llama.cpp/include/llama.h" || { echo "llamaref: the ollama module's llama.cpp not found ($$dir)" >&2; exit 1; }; \
	  cmake -S bench/llamaref -B $(LLAMAREF_DIR) -DOLLAMA_DIR="$$dir" $(LLAMAREF_CMAKE) >/dev/null && \
	  cmake --build $(LLAMAREF_DIR) -j $$(nproc)

llamaref-bench: llamaref $(E2E_MODEL)
	$(LLAMAREF_DIR)/llamaref -m $(E2E_MODEL) $(ARGS)
