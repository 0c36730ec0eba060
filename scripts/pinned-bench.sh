#!/usr/bin/env bash
# The quick suite on a quiet many-core machine, as if on several quiet 2-core machines at once.
#
#   OUT=/some/dir bash scripts/pinned-bench.sh [JOB...]
#
# Each JOB is `NAME=WORKLOADS` (WORKLOADS comma-separated, empty: every workload on its quick
# sizes, as `node apps/bench/dist/cli.js` with no workload runs them); default:
# `suite1= suite2= suite3= kernels1=kernels kernels2=kernels kernels3=kernels`. Every job is one
# run of the bench pinned (`taskset`) to two CPUs of two different physical cores, so the
# "N threads" rows run with 2 threads and no run shares a core with another; jobs beyond the
# number of such pairs wait for a pair to come free. Needs only the folder that
# `node scripts/gpu-bench-pack.mjs [--with-node]` makes (the bundled bench and a node binary):
# no node_modules, no network, no GPU. Writes $OUT/NAME/{report.md,results.json} and
# $OUT/NAME.log per job, and $OUT/pinned-bench.log (the machine's facts, the CPU pairs, each
# job's start and end).
#
# ROWS (environment) selects the bench rows (default: the rows of the root README's table).
# BUDGET (seconds, default 420) is each job's `--budget`, for the whole job (all its workloads
# in order): rows not started by then are reported n/a, so a budget shorter than the job drops
# its last workloads' rows (on a 16-core Xeon with six jobs at once, halves of the quick suite
# did not finish within 150 s: their BA, unitary-RNN, kernels and UNF rows were cut).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACK=${PACK:-$ROOT/gpu-bench}
OUT=${OUT:-$ROOT/pinned-bench-out}
ROWS=${ROWS:-"Tenet (cpu,Tenet (wasm,plain,UNF,Tenet store-all,jax-js (wasm)"}
BUDGET=${BUDGET:-420}
mkdir -p "$OUT"
exec > >(tee "$OUT/pinned-bench.log") 2>&1

if [ $# -eq 0 ]; then
  set -- suite1= suite2= suite3= kernels1=kernels kernels2=kernels kernels3=kernels
fi

echo "== machine"
uname -srm
lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\))' || true
cat /proc/loadavg

NODE=node
if ! command -v node >/dev/null 2>&1; then
  if [ -f "$PACK/node.xz" ] && command -v xz >/dev/null 2>&1; then
    xz -dc "$PACK/node.xz" > "$OUT/node" && chmod +x "$OUT/node"
    NODE="$OUT/node"
  else
    echo "ERROR: no node on PATH and no gpu-bench/node.xz: pack with 'node scripts/gpu-bench-pack.mjs --with-node'"
    exit 3
  fi
fi
echo "node $("$NODE" --version)"
if [ ! -f "$PACK/bench.mjs" ] || [ ! -f "$PACK/gmm-worker.js" ]; then
  echo "ERROR: $PACK is incomplete: run 'node scripts/gpu-bench-pack.mjs' in a built checkout"
  exit 4
fi
if ! command -v taskset >/dev/null 2>&1; then
  echo "ERROR: taskset (util-linux) is missing: the runs cannot be pinned"
  exit 5
fi

# one CPU per physical core (the first of its siblings), then pairs of those
mapfile -t CPUS < <(lscpu -p=CPU,CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -t, -k3,3n -k2,2n -k1,1n |
  awk -F, '!seen[$3","$2]++ {print $1}')
if [ ${#CPUS[@]} -lt 2 ]; then
  mapfile -t CPUS < <(seq 0 $(($(nproc) - 1)))
fi
PAIRS=()
for ((i = 0; i + 1 < ${#CPUS[@]}; i += 2)); do PAIRS+=("${CPUS[i]},${CPUS[i + 1]}"); done
echo "== ${#PAIRS[@]} pairs of CPUs on distinct physical cores: ${PAIRS[*]}"

# a pair is free while its lock file is absent; each job takes the first free pair
LOCKS="$OUT/.locks"
mkdir -p "$LOCKS"
run_job() {
  local name=$1 workloads=$2 pair=$3
  echo "$(date +%T) start $name on CPUs $pair (${workloads:-all workloads})"
  local args=()
  [ -n "$workloads" ] && args+=("${workloads//,/ }")
  # shellcheck disable=SC2086
  (cd "$PACK" && taskset -c "$pair" "$NODE" bench.mjs ${args[*]:-} --rows "$ROWS" --no-study --quiet \
    --budget "$BUDGET" --out "$OUT/$name" > "$OUT/$name.log" 2>&1)
  echo "$(date +%T) end $name (exit status $?)"
  rm -f "$LOCKS/$pair"
}
PIDS=()
for job in "$@"; do
  name=${job%%=*}
  workloads=${job#*=}
  while :; do
    pair=
    for p in "${PAIRS[@]}"; do
      if [ ! -e "$LOCKS/$p" ]; then pair=$p; break; fi
    done
    [ -n "$pair" ] && break
    sleep 1
  done
  touch "$LOCKS/$pair"
  run_job "$name" "$workloads" "$pair" &
  PIDS+=($!)
done
# the jobs only: a plain `wait` would also wait for the `tee` above (bash 5.1+), which never ends
wait "${PIDS[@]}"
rm -rf "$LOCKS"
cat /proc/loadavg
echo "== wrote $OUT"
