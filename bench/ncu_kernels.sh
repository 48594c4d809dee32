#!/bin/bash
# Profiles mlpcore's kernels with Nsight Compute: for each network ('a-bxc-d', as bench/gpu_bench.py) and
# backend (cuda+builtin: the built-in kernels), the second call of bench/profile_call.py, in LAYOUT
# (sample_major, the default, or feature_major), with IO arrays (float32, the default, or float16) of
# 2^BATCH_LOG2 samples (default 22). Writes each report's details to OUT_DIR and prints its main figures,
# the tensor pipe's busy share and the warp stall reasons (cycles per issued instruction).
#   bench/ncu_kernels.sh OUT_DIR "64-64x5-4 3-64x4-1" "cuda cuda-f16acc" [LAYOUT] [IO] [BATCH_LOG2]
#   (build/engine/libmlpcore_c.so, or LIB=...; PyTorch, and ncu on PATH)
set -euo pipefail
out=$1 networks=$2 backends=$3 layout=${4:-sample_major} io=${5:-float32} batch_log2=${6:-22}
mkdir -p "$out"
stalls=
for reason in wait dispatch_stall long_scoreboard short_scoreboard math_pipe_throttle mio_throttle lg_throttle not_selected \
  selected branch_resolving no_instruction barrier membar drain imc_miss tex_throttle sleeping; do
  stalls+=smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio,
done
metrics=${stalls}sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
here=$(cd "$(dirname "$0")" && pwd)
for n in $networks; do
  for b in $backends; do
    report="$out/ncu_${n}_${b}_${layout}_${io}_2^$batch_log2"
    echo "== $n $b $layout $io 2^$batch_log2"
    if ! ncu --kernel-name regex:mlpcore --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats \
      --section MemoryWorkloadAnalysis --section SourceCounters --metrics "$metrics" \
      python3 "$here/profile_call.py" --lib "${LIB:-build/engine/libmlpcore_c.so}" "$n" "$b" --layout "$layout" --io "$io" \
      --batch-log2 "$batch_log2" > "$report.txt" 2>&1; then
      tail -n 20 "$report.txt" >&2
      echo "ncu_kernels.sh: the profiled call failed: $report.txt" >&2
      exit 1
    fi
    grep -E "Duration|Registers Per|Achieved Occupancy|Executed Instructions  |Issue Slots Busy|Compute \(SM\) Throughput|L1/TEX Cache Throughput|DRAM Throughput|Local Memory Spilling Requests  |highest-utilized|excessive wavefronts|smsp__average_warps_issue_stalled|sm__pipe_tensor_op_hmma|l1tex__t_sectors_pipe_lsu" "$report.txt" ||
      echo "  no mlpcore kernel profiled: $report.txt"
  done
done
