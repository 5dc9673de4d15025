# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Sparse allreduce on device buffers over the local transport (4 ranks, one GPU).
step_sparse() {
  run_bench sparse_all_reduce_perf -t local -p 4 -g 1 -b 64M -e 64M -D 0.001,0.01,0.1 -c 1
}
