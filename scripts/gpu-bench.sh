#!/usr/bin/env bash
# The WebGPU benchmark and device checks on a GPU machine, in one run of a few minutes.
#
#   OUT=/some/dir bash scripts/gpu-bench.sh
#
# Needs only the folder that `node scripts/gpu-bench-pack.mjs [--with-node]` makes (gpu-bench/:
# the bundled bench and device checks, Dawn's linux-x64 binary, a Vulkan loader, optionally a
# node binary), no network and no node_modules. Writes to $OUT (default ./gpu-bench-out):
#   gpu-bench.log        everything printed, with the machine, Node, GPU and Vulkan facts
#   device-check.md/json the precise math routines against Math on this device (max ulp per
#                        function, and the device built-ins for comparison), and bundles of random
#                        i32/f32 programs against the cpu backend
#   report.md            the bench reports joined; bessel/, gmm/, ba/ hold each one's
#                        report.md, results.json and ratio-*.svg: the bench rows: batched Bessel gradient, GMM gradient, BA Jacobian for
#                        Tenet (cpu), Tenet (wasm), Tenet (webgpu, tree and atomic), jax-js (wasm)
#                        and jax-js (webgpu), measured in this one run. Rows on a fallback adapter
#                        say "emulated (SwiftShader)"; otherwise they name the adapter.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACK="$ROOT/gpu-bench"
OUT=${OUT:-$ROOT/gpu-bench-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-bench.log") 2>&1

echo "== machine"
uname -srm
echo "cpus: $(nproc 2>/dev/null || echo '?')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
else
  echo "nvidia-smi: not found"
fi

echo "== node"
NODE=node
if ! command -v node >/dev/null 2>&1; then
  if [ -f "$PACK/node.xz" ] && command -v xz >/dev/null 2>&1; then
    xz -dc "$PACK/node.xz" > "$OUT/node" && chmod +x "$OUT/node"
    NODE="$OUT/node"
    echo "no node on PATH: using the carried one (gpu-bench/node.xz)"
  else
    echo "ERROR: Node.js is missing: 'node' is not on PATH and gpu-bench/node.xz was not carried (or xz is missing)."
    echo "       Install Node >= 18, or pack with 'node scripts/gpu-bench-pack.mjs --with-node' and carry gpu-bench/ again."
    exit 3
  fi
fi
echo "node $("$NODE" --version)"
if [ ! -f "$PACK/bench.mjs" ] || [ ! -f "$PACK/node_modules/webgpu/dist/linux-x64/dawn.node" ]; then
  echo "ERROR: $PACK is incomplete: run 'node scripts/gpu-bench-pack.mjs' in a built checkout and carry gpu-bench/"
  exit 4
fi

echo "== vulkan"
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
  echo "no Vulkan loader installed: using the carried gpu-bench/lib/libvulkan.so.1"
  export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
ICDS=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null || true)
echo "ICD files: ${ICDS:-none}"
NV_ICD=$(echo "$ICDS" | grep -i nvidia | head -1)
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -n "$NV_ICD" ]; then
  # name it, so that nothing falls back to another driver (the bench rows pick SwiftShader when
  # VK_ICD_FILENAMES is unset and Debian's chromium is installed)
  export VK_ICD_FILENAMES="$NV_ICD"
fi
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -z "$NV_ICD" ]; then
  # the NVIDIA Vulkan driver lives in libGLX_nvidia.so.0; containers started without the
  # 'graphics' driver capability have no ICD file for it: write one when the library is there
  GLX=$(ldconfig -p 2>/dev/null | awk '/libGLX_nvidia.so.0/ {print $NF; exit}')
  if [ -n "$GLX" ]; then
    printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\n' "$GLX" > "$OUT/nvidia_icd.json"
    export VK_ICD_FILENAMES="$OUT/nvidia_icd.json"
    echo "no NVIDIA ICD file: wrote $OUT/nvidia_icd.json for $GLX"
  else
    echo "WARNING: no NVIDIA Vulkan driver found (no ICD file, no libGLX_nvidia.so.0): Dawn will find no GPU."
    echo "         In a container, start it with NVIDIA_DRIVER_CAPABILITIES including 'graphics' (or 'all')."
  fi
fi
echo "VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-}"

cd "$PACK"
echo "== device checks (precise math against Math, random programs against the cpu backend)"
timeout 90 "$NODE" device-check.mjs --out "$OUT" --math 65536 --seconds 20 --per-bundle 10
echo "device-check exit status $?"

# one bench invocation per workload, each with a time budget (rows not started by then are
# reported n/a, and the report is still written) and a hard limit above it; the reports are
# joined into $OUT/report.md at the end
ROWS='Tenet (cpu),Tenet (wasm),Tenet (webgpu),jax-js'
for w in bessel:45 gmm:60 ba:90; do
  name=${w%%:*}; budget=${w##*:}
  echo "== bench $name (budget ${budget} s)"
  timeout $((budget + 60)) "$NODE" bench.mjs "$name" --rows "$ROWS" --out "$OUT/$name" --no-study --budget "$budget"
  echo "bench $name exit status $? (124: stopped at the hard limit, no report)"
done
{ echo "# GPU bench"; echo; head -1 "$OUT/device-check.md" 2>/dev/null; echo;
  for name in bessel gmm ba; do [ -f "$OUT/$name/report.md" ] && cat "$OUT/$name/report.md" && echo; done; } > "$OUT/report.md"
echo "== wrote $OUT"
ls -laR "$OUT" | head -40
