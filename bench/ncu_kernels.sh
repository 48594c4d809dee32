#!/bin/bash
# Profiles mlpcore's kernels with Nsight Compute: for each network ('a-bxc-d', as bench/gpu_bench.py) and
# backend, the second kernel launch of `mlpcore bench` at 2^22 samples, float32 I/O, in LAYOUT (default
# sample_major; feature_major: the kernels that read and write [dim, batch]).
#   bench/ncu_kernels.sh OUT_DIR "64-64x5-4 3-64x4-1" "cuda cuda-f16acc" [LAYOUT]   (build/apps/mlpcore, ncu on PATH)
set -euo pipefail
out=$1 networks=$2 backends=$3 layout=${4:-sample_major}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
for n in $networks; do
  PYTHONPATH="$here:$here/../models/export" python3 -c "
import sys, torch
from bench_networks import make_net, parse_network
from mlpcore_export import export
torch.manual_seed(1)
_, i, w, h, o = parse_network(sys.argv[1])
export(make_net(i, w, h, o), sys.argv[2])" "$n" "$out/$n.safetensors"
  for b in $backends; do
    ncu --kernel-name regex:mlpcore --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats \
      --section MemoryWorkloadAnalysis \
      build/apps/mlpcore bench -q -b "$b" --layout "$layout" -n 4194304 -r 1 -w 1 "$out/$n.safetensors" \
      > "$out/ncu_${n}_${b}_$layout.txt" 2>&1
    echo "== $n $b $layout"
    grep -E "Duration|Registers Per|Theoretical Occupancy|Executed Instructions  |Issue Slots Busy|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput" "$out/ncu_${n}_${b}_$layout.txt"
  done
done
