# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

step_perf_local() {
  run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 1M -e 64M -f 4 -A ring,rabenseifner,recdbl -c 1
}
