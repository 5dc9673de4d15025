# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# DSOP on device buffers over the local transport, plus the outer-product
# kernel bandwidth (custom kernel vs cuBLAS) at N = M = 8192.
step_dsop() {
  local rc=0
  # Device-local communicators have no native collective: the allreduce baseline runs over auto.
  run_bench dsop_perf -t local -p 4 -D 1 -B auto -n 1000,4000 -i 10 -r 3 -c 1 || rc=1
  # Outer products (K = 1) and the DSOP local kernel (K > 1), custom and cuBLAS.
  run_bench dsop_perf -K -n 1024,2048,4096,8192,16384 -k 1 || rc=1
  run_bench dsop_perf -K -n 8192 -k 1,4,64 || rc=1
  return "$rc"
}
