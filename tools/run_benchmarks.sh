#!/usr/bin/env bash
# Regenerates the raw benchmark results behind docs/PERFORMANCE.md (tools layer): runs
# `ampkit bench gemm|linear --json` and `ampkit bench norm` (the table, with its targets summary)
# under flock, so that two sessions never measure at the same time, and writes them to OUTDIR
# with a note of the commit, the machine and the load. Raw results are not kept in the tree.
#   tools/run_benchmarks.sh OUTDIR [gemm] [linear] [norm]     (default: all three)
#   AMPKIT_BUILD=build-release tools/run_benchmarks.sh /tmp/results-$(date +%F)
# Takes about 7 (gemm) + 4 (linear) + 2 (norm) minutes on the 2-vCPU development machine.
set -euo pipefail

usage() {
  echo "usage: tools/run_benchmarks.sh OUTDIR [gemm] [linear] [norm]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
case $1 in -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
outdir=$1
shift
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(gemm linear norm)
for b in "${benches[@]}"; do
  case $b in gemm | linear | norm) ;; *) echo "run_benchmarks.sh: unknown bench '$b' (gemm, linear, norm)" >&2; exit 2 ;; esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
build=${AMPKIT_BUILD:-$root/build}
ampkit=$build/ampkit
lock=${AMPKIT_BENCH_LOCK:-/tmp/ampkit-bench.lock}
[ -x "$ampkit" ] || { echo "run_benchmarks.sh: $ampkit not found (build target ampkit_cli)" >&2; exit 1; }
mkdir -p "$outdir"

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -1)
{
  echo "commit: $commit${dirty:+ (with uncommitted changes)}"
  echo "started: $(date -u +%FT%TZ)"
  echo "machine: $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(nproc) cpus"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$ampkit" info
} > "$outdir/README.txt"

for b in "${benches[@]}"; do
  case $b in
    gemm | linear) out=$outdir/$b.jsonl; args=(bench "$b" --json) ;;
    norm) out=$outdir/norm.txt; args=(bench norm) ;;
  esac
  echo "run_benchmarks.sh: ampkit ${args[*]} > $out (waiting for $lock)" >&2
  start=$(date -u +%T)
  flock "$lock" "$ampkit" "${args[@]}" > "$out"
  echo "$b: ampkit ${args[*]}, $start-$(date -u +%T) UTC, load after $(cut -d' ' -f1-3 /proc/loadavg)" >> "$outdir/README.txt"
done
echo "run_benchmarks.sh: results in $outdir" >&2
