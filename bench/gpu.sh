#!/usr/bin/env bash
# bench/gpu.sh: the GPU measurement of issue 19 in one command, on a GPU
# host with the NVIDIA toolkit (nvcc), cmake and ninja, and no Go: what it
# runs comes from the bundle `make gpu-bundle` makes here (build/gpu: the
# binaries, the ggml sources, the schemas).
#
#   make gpu-bundle                      # here, with Go and ../shared
#   bash bench/gpu.sh [BUNDLE]           # there; BUNDLE defaults to build/gpu
#
# Steps, each timed: (1) llama.cpp's CUDA backend built from the bundle's
# ggml sources by internal/llama/backends/CMakeLists.txt into BUNDLE/lib
# (skipped when already there); (2) a synthetic model of Llama-3.1-8B's
# shape in Q4_0 made by cmd/mkmodel on the host itself (cl100k vocabulary,
# built in; random weights, nothing large travels); (3) conform-serve
# started on it with --n-gpu-layers -1, its startup summary kept (it names
# the backend and device); (4) bench/e2e at each batch size of BATCHES:
# unconstrained, Conform, Conform on warmed constraints (a cache hit) and,
# up to batch GRAMMAR_MAX_P, llama.cpp's grammar, with like-with-like token
# counts (-length conform); (5) the tables, as Markdown, from the JSON.
#
# Results go to RESULTS (default BUNDLE/results); when OUT is set (the
# device tool's folder that comes back, at most 8 files) the tables, the
# summary and a tarball of everything are copied there.
#
# Environment: BATCHES ("1 8 32 64"), GRAMMAR_MAX_P (8: llama.cpp's grammar
# computes its mask on the CPU over the whole vocabulary, tens of ms per
# token and slot, one slot after another), MAX_TOKENS (64), PRESET
# (llama3.1-8b), TYPE (q4_0), CUDA_ARCHITECTURES (native), E2E_TIMEOUT (150
# s per batch size), GPU=none for a dry run on the CPU (the tiny preset,
# no CUDA build, 0 GPU layers) that checks the pipeline anywhere.
set -euo pipefail

B=${1:-build/gpu}
RES=${RESULTS:-$B/results}
BATCHES=${BATCHES:-1 8 32 64}
GRAMMAR_MAX_P=${GRAMMAR_MAX_P:-8}
MAX_TOKENS=${MAX_TOKENS:-64}
PRESET=${PRESET:-llama3.1-8b}
TYPE=${TYPE:-q4_0}
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
LIB=$B/lib
MODEL=${MODEL_PATH:-/tmp/conform-gpu-$PRESET-$TYPE.gguf}

log() { echo "gpu.sh: $*" >&2; }
die() { log "$*"; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for f in bin/e2e.gz bin/mkmodel.gz bin/conform-serve.gz schemas.jsonl COMMIT; do
  [ -e "$B/$f" ] || die "$B/$f missing: run make gpu-bundle first (GPU_BUNDLE=$B)"
done
BIN=/tmp/conform-gpu-bin
mkdir -p "$BIN"
for f in e2e mkmodel conform-serve; do
  gzip -dc "$B/bin/$f.gz" > "$BIN/$f" && chmod +x "$BIN/$f"
done
[ -f internal/llama/backends/CMakeLists.txt ] || die "run from the repository root (internal/llama/backends/CMakeLists.txt not found)"
mkdir -p "$RES"
rm -f "$RES"/*.json "$RES"/*.txt "$RES"/*.md "$RES"/*.log
T0=$(now)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(tr '\n' ' ' < "$B/COMMIT")"
  echo "host: $(uname -srm), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
} > "$RES/device.txt"

if [ "${GPU:-}" = none ]; then
  log "GPU=none: a dry run on the CPU (tiny preset, no CUDA build, 0 GPU layers)"
  NGL=0
  PRESET=tiny
  MODEL=/tmp/conform-gpu-tiny-$TYPE.gguf
  echo "gpu: none (GPU=none dry run)" >> "$RES/device.txt"
else
  export PATH="$PATH:/usr/local/cuda/bin"
  command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver here (GPU=none for a dry run)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)" >> "$RES/device.txt"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)" >> "$RES/device.txt"
  if [ ! -f "$LIB/libggml-cuda.so" ]; then
    command -v cmake >/dev/null || die "cmake not found"
    command -v nvcc >/dev/null || die "nvcc not found (looked on PATH and in /usr/local/cuda/bin)"
    gen=
    command -v ninja >/dev/null && gen="-G Ninja"
    t=$(now)
    log "building the CUDA backend (CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES:-native}; log in $RES/cuda-build.log)"
    # shellcheck disable=SC2086 # $gen is empty or two words
    { cmake -S internal/llama/backends -B /tmp/conform-cuda-build $gen -DOLLAMA_DIR="$(cd "$B/ollama" && pwd)" -DCONFORM_BACKEND=cuda \
        -DCONFORM_LIB_DIR="$(mkdir -p "$LIB" && cd "$LIB" && pwd)" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-native}" &&
      cmake --build /tmp/conform-cuda-build --target ggml-cuda -j "$(nproc)"; } > "$RES/cuda-build.log" 2>&1 ||
      { tail -30 "$RES/cuda-build.log" >&2; die "the CUDA backend did not build"; }
    echo "cuda build: $(secs "$t") s" >> "$RES/device.txt"
  fi
  NGL=-1
  # libcudart and libcublas, should the run path not reach them.
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
fi
BACKEND_DIR=$(mkdir -p "$LIB" && cd "$LIB" && pwd)

if [ ! -f "$MODEL" ]; then
  t=$(now)
  "$BIN/mkmodel" -preset "$PRESET" -type "$TYPE" -tokenizer cl100k -seed 1 -out "$MODEL"
  echo "model: $PRESET $TYPE, made in $(secs "$t") s" >> "$RES/device.txt"
else
  echo "model: $PRESET $TYPE" >> "$RES/device.txt"
fi

# The server's startup summary names the backend and the device.
log "conform-serve --n-gpu-layers $NGL"
"$BIN/conform-serve" --model "$MODEL" --n-gpu-layers "$NGL" --backend-dir "$BACKEND_DIR" --parallel 1 --ctx-size 2048 --port 18180 --no-ui > "$RES/serve.log" 2>&1 &
spid=$!
for _ in $(seq 240); do
  grep -q 'msg="model ' "$RES/serve.log" && break
  kill -0 $spid 2>/dev/null || break
  sleep 0.5
done
kill $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
grep -E 'msg="model |level=WARN|level=ERROR' "$RES/serve.log" > "$RES/serve-summary.txt" || true
grep -q 'msg="model ' "$RES/serve.log" || { tail -20 "$RES/serve.log" >&2; die "conform-serve did not load the model"; }

for P in $BATCHES; do
  modes=unconstrained,conform,conform_warm
  [ "$P" -le "$GRAMMAR_MAX_P" ] && modes=$modes,llamacpp_grammar
  limit=$(( P * 2 > 16 ? P * 2 : 16 ))
  log "e2e -parallel $P -limit $limit -modes $modes"
  t=$(now)
  rc=0
  timeout "$E2E_TIMEOUT" "$BIN/e2e" -model "$MODEL" -maskbench "$B/schemas.jsonl" -limit "$limit" -parallel "$P" -max-tokens "$MAX_TOKENS" \
    -n-gpu-layers "$NGL" -backend-dir "$BACKEND_DIR" -modes "$modes" -json "$RES/e2e-p$P.json" > "$RES/e2e-p$P.txt" 2> "$RES/e2e-p$P.log" || rc=$?
  echo "e2e -parallel $P: rc $rc, $(secs "$t") s" >> "$RES/device.txt"
  [ $rc = 0 ] || { tail -5 "$RES/e2e-p$P.log" >&2; log "e2e at batch $P failed (rc $rc; 124: past E2E_TIMEOUT); going on"; }
done
echo "total: $(secs "$T0") s" >> "$RES/device.txt"

# The tables, from the JSON (python3's standard library; the raw e2e
# tables are in e2e-pP.txt either way).
if command -v python3 >/dev/null; then
  python3 - "$RES" > "$RES/gpu-tables.md" <<'EOF'
import glob, json, os, sys
res = sys.argv[1]
runs = []
for f in glob.glob(os.path.join(res, "e2e-p*.json")):
    with open(f) as fh:
        runs.append(json.load(fh))
runs.sort(key=lambda r: r["config"]["parallel"])
with open(os.path.join(res, "device.txt")) as fh:
    print("".join("    " + l for l in fh))
if not runs:
    print("no e2e run finished")
    sys.exit(0)
c0 = runs[0]["config"]
print("model %s, backend %s, GPU layers %d, max tokens %d, temperature %g, whitespace %s, length %s\n" % (
    os.path.basename(c0["model"]), c0["backend"], c0["gpu_layers"], c0["max_tokens"], c0["temperature"], c0["whitespace"], c0["length"]))
modes = [("unconstrained", "unconstrained"), ("conform", "Conform"), ("conform_warm", "Conform, warm cache"), ("llamacpp_grammar", "llama.cpp grammar")]
print("| batch | mode | requests | tokens | tok/s | ÷ unconstrained | TTFT p50 ms | cold TTFT p50 ms | constraint share | step µs | logits µs/step | complete | valid of complete |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in runs:
    p = r["config"]["parallel"]
    base = (r.get("unconstrained") or {}).get("tok_s") or 0
    for key, name in modes:
        m = r.get(key)
        if not m or key not in r["config"]["modes"]:
            continue
        ratio = "%.3f" % (m["tok_s"] / base) if base and key != "unconstrained" else "-"
        cold = "%.1f" % m["ttft_cold_p50_ms"] if m.get("ttft_cold_p50_ms") is not None else "-"
        valid = "%.1f%%" % (100 * m["valid_rate"]) if m.get("valid_rate") is not None else "-"
        print("| %d | %s | %d | %d | %.1f | %s | %.1f | %s | %.2f%% | %.0f | %.0f | %.1f%% | %s |" % (
            p, name, m["requests"], m["tokens"], m["tok_s"], ratio, m["ttft_p50_ms"], cold, m["constraint_share_pct"],
            m["step_us"], m["logits_us_per_step"], 100 * m["complete_rate"], valid))
EOF
else
  log "no python3: the tables are the e2e-pP.txt files"
fi
cat "$RES/gpu-tables.md" 2>/dev/null || true

if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  cp "$RES/gpu-tables.md" "$RES/device.txt" "$RES/serve-summary.txt" "$OUT/" 2>/dev/null || true
  tar -czf "$OUT/gpu-results.tar.gz" -C "$RES" .
fi
