#!/usr/bin/env bash
# The convergence table of docs/TRAIN.md: `ampkit train` (the default GPT and data) for a fixed
# budget of steps in fp32, bf16, fp16 exact, fp16 under the MI200 model with the default policy
# (alt GEMMs in the backward pass) and fp16 under the MI200 model with --fp16-alt off, the fp16
# ones with and without loss scaling, each over several seeds. Prints a Markdown table of the
# final validation losses (mean and per seed) and their ratio to fp32's mean.
#
#   bench/convergence.sh [-b build/ampkit] [-s steps] [-j parallel runs] [-t threads per run]
#                        [-e "1 2 3" seeds] [-o output folder]
#
# Each run's stdout goes to <output>/<config>-seed<seed>.txt. Runs are independent processes;
# on a machine with C cores, -j C/t uses it fully.
set -euo pipefail

ampkit=build/ampkit steps=400 jobs=1 threads=2 seeds="1 2 3" out=convergence-runs
while getopts "b:s:j:t:e:o:" opt; do
  case $opt in
    b) ampkit=$OPTARG ;;
    s) steps=$OPTARG ;;
    j) jobs=$OPTARG ;;
    t) threads=$OPTARG ;;
    e) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
[[ -x $ampkit ]] || { echo "convergence.sh: $ampkit is not an executable (build first, or give -b)" >&2; exit 1; }
mkdir -p "$out"

# name|options
configs=(
  "fp32|--precision fp32"
  "bf16|--precision bf16"
  "fp16-exact|--precision fp16 --fp16-model exact"
  "fp16-exact-noscale|--precision fp16 --fp16-model exact --loss-scale off"
  "fp16-mi200-auto|--precision fp16 --fp16-model mi200 --fp16-alt auto"
  "fp16-mi200-auto-noscale|--precision fp16 --fp16-model mi200 --fp16-alt auto --loss-scale off"
  "fp16-mi200-off|--precision fp16 --fp16-model mi200 --fp16-alt off"
  "fp16-mi200-off-noscale|--precision fp16 --fp16-model mi200 --fp16-alt off --loss-scale off"
)

run_one() {  # name options seed
  local file="$out/$1-seed$3.txt"
  # shellcheck disable=SC2086
  "$ampkit" train $2 --steps "$steps" --seed "$3" --threads "$threads" --eval-every 0 --sample-tokens 0 \
    >"$file" 2>/dev/null || echo "failed (exit $?)" >>"$file"
}

for c in "${configs[@]}"; do
  for seed in $seeds; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
    run_one "${c%%|*}" "${c#*|}" "$seed" &
  done
done
wait

# The final validation loss of a run ("validation loss X nats per character ..."), or "failed".
final_loss() { grep -oP '^validation loss \K[0-9.]+' "$1" || echo failed; }

echo "| run (${steps} steps, default GPT and data) | mean validation loss | per seed ($seeds) | / fp32 |"
echo "|---|---|---|---|"
fp32_mean=""
for c in "${configs[@]}"; do
  name=${c%%|*} losses=()
  for seed in $seeds; do losses+=("$(final_loss "$out/$name-seed$seed.txt")"); done
  mean=$(printf '%s\n' "${losses[@]}" | awk '/failed/ {bad=1} {s+=$1; n++} END {if (bad) print "failed"; else printf "%.4f", s/n}')
  [[ $name == fp32 ]] && fp32_mean=$mean
  ratio=$(awk -v m="$mean" -v f="$fp32_mean" 'BEGIN {if (m == "failed" || f == "" || f == "failed") print "-"; else printf "%.4f", m/f}')
  echo "| \`${c#*|}\` | $mean | ${losses[*]} | $ratio |"
done
