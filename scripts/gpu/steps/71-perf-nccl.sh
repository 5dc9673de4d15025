# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# One NCCL rank: under mpirun when MPI works, else as a plain process
# (scGetUniqueId/scCommInitRank, no MPI).
step_perf_nccl() {
  if grep -q "sparcoll: .*NCCL=OFF" "$logs/configure.log" 2>/dev/null; then
    echo "SKIP: this build has no NCCL transport ($(grep -m1 'sparcoll: CUDA' "$logs/configure.log"))"; return 77
  fi
  # shellcheck disable=SC2054  # commas belong to the tool's -A list
  local args=(all_reduce_perf -t nccl -d float -b 1M -e 64M -f 4 -A ring,rabenseifner,native -c 1)
  if mpi_usable && ! grep -q "sparcoll: .*MPI=OFF" "$logs/configure.log" 2>/dev/null; then
    run_bench --mpi 1 "${args[@]}"
  else
    echo "no usable mpirun (${mpi_reason:-build without MPI}): running one NCCL rank without mpirun"
    run_bench "${args[@]}"
  fi
}
