#!/usr/bin/env bash
# Fails when an #include crosses the layering of docs/DESIGN.md §1 the wrong way, so the include
# graph only points down: core <- device/ops <- cpu kernels; numerics, layers <- ops; graph above
# them; dist (the communicator) on core only, below train; train (trainer, models, checkpoints,
# data, schedule, sampling) above graph and dist; tools <- public headers only, and within tools,
# train/ and check/ never include bench/.
# Usage: check_include_layers.sh <repository root>
set -u
root=${1:?usage: check_include_layers.sh ROOT}
cd "$root" || exit 2
status=0
checked=0

# The tracked files under a prefix (every file when the tree is not a git checkout, e.g. a tarball).
list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files "$1"
  elif [ -d "$1" ]; then find "$1" -type f | sort
  fi
}

# allowed <file prefix> <regex of include paths it may use>
check() {
  local prefix=$1 allowed=$2 f inc
  while IFS= read -r f; do
    checked=$((checked + 1))
    while IFS= read -r inc; do
      if ! [[ "$inc" =~ $allowed ]]; then
        echo "$f includes \"$inc\", which its layer may not use"
        status=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done < <(list_files "$prefix" | grep -E '\.(hpp|cpp|h|cu|cuh)$')
}

pub_core='ampkit/core/'
pub_low="ampkit/(core|device)/"
pub_ops="ampkit/(core|device|ops)/"
pub_all="ampkit/"

check include/ampkit/core/     "^${pub_core}"
check include/ampkit/device/   "^${pub_low}|^ampkit/ops/(gemm|kernel_info)\.hpp$"
check include/ampkit/ops/      "^${pub_ops}"
check include/ampkit/numerics/ "^ampkit/(core|device|ops|numerics)/"
check include/ampkit/layers/   "^ampkit/(core|device|ops|numerics|layers)/"
check include/ampkit/dist/     "^ampkit/(core|dist)/"
check include/ampkit/graph/    "^ampkit/(core|device|ops|numerics|layers|graph)/"
check include/ampkit/train/    "^${pub_all}"
check src/core/                "^(${pub_core}|core/)"
check src/ops/                 "^(${pub_ops}|ampkit/numerics/|core/|ops/)"
check src/cpu/                 "^(${pub_ops}|ampkit/numerics/|core/|ops/|cpu/)"
check src/cuda/                "^(${pub_all}|core/|ops/|cuda/)"
check src/numerics/            "^(ampkit/(core|device|ops|numerics)/|core/|numerics/)"
check src/layers/              "^(ampkit/(core|device|ops|numerics|layers)/|core/|ops/|layers/)"
check src/dist/                "^(ampkit/(core|dist)/|core/|dist/)"
# graph and train reach device memory through the backend object, and only through its header;
# the graph's op definitions also keep the ops' prepared calls (ops/prepared_ops.hpp and Linear's).
check src/graph/               "^(ampkit/(core|device|ops|numerics|layers|graph)/|core/|graph/|ops/backend\.hpp$|ops/prepared_ops\.hpp$|layers/linear_prepared\.hpp$)"
check src/train/               "^(${pub_all}|core/|train/|ops/backend\.hpp$)"
check tools/                   "^(${pub_all}|tools/)"
# The Python module binds the public API only (python/src/: its own two headers beside it).
check python/src/              "^(${pub_all}|tensors\.hpp$|dlpack_abi\.hpp$)"
# Inside the tool: common/ (JSON lines, memory, progress, the loss plot) stands on the library
# alone; the train and check commands use cli/ and common/ but never bench/.
tool_base="tools/ampkit/(cli/|common/|commands\.hpp$)"
check tools/ampkit/common/     "^(${pub_all}|tools/ampkit/common/)"
check tools/ampkit/train/      "^(${pub_all}|${tool_base}|tools/ampkit/train/)"
check tools/ampkit/check/      "^(${pub_all}|${tool_base}|tools/ampkit/check/)"

echo "checked the includes of $checked files"
[ "$checked" -gt 0 ] || { echo "no files found under $root"; exit 1; }
exit $status
