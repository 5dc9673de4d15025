# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# compute-sanitizer over every GPU test binary: memcheck, racecheck, initcheck
# and synccheck. Left out: tests that only grow sizes (LargeGridStride), tests
# whose point is waiting for a timeout, and CudaBackend.Errors, which provokes
# CUDA errors (an impossible allocation) on purpose. NCCL probes its kernels
# with cudaFuncGetAttributes and gets cudaErrorNoKernelImageForDevice for
# architectures it was not built for: API errors are not reported for the
# NCCL binary (sparcoll's own CUDA calls are all checked, and a failing one
# fails its test). The tools slow kernels down by one to two orders of
# magnitude (racecheck most): all four over every binary takes longer than
# ten minutes on an H100; SPARCOLL_SANITIZE_TOOLS picks tools,
# SPARCOLL_SANITIZE_TIMEOUT bounds each run (default 300 s).
# The approximate top-k kernel (CUB block loads, reductions and scans in
# shared memory, the decoupled look-back between buckets) runs first under
# racecheck and synccheck on its own, so that a timeout of the long sweep
# cannot leave it unchecked: every tile shape, one- and multi-tile buckets,
# aligned and misaligned inputs (topk_gpu_test's tile-shape test), buckets of
# 2^16 and more and bucket = n (topk_gpu_bucket_test).
SANITIZE_TOOLS=${SPARCOLL_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
APPROX_RUNS=("tests/topk/topk_gpu_test TopkGpu.EveryTileShapeMatchesTheCpuReference"
             "tests/topk/topk_gpu_bucket_test TopkGpuBuckets.*")
step_sanitize() {
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found"; return 1; }
  local rc=0 tool bin extra run
  for tool in $SANITIZE_TOOLS; do
    [ "$tool" = racecheck ] || [ "$tool" = synccheck ] || continue
    for run in "${APPROX_RUNS[@]}"; do
      bin=${run%% *}
      [ -x "$build/$bin" ] || { echo "--- $bin not built: skipped"; continue; }
      echo "--- approx top-k kernel: $tool"
      run_sanitizer "$tool" "$build/$bin" --gtest_filter="${run#* }" || rc=1
    done
  done
  for tool in $SANITIZE_TOOLS; do
    for bin in tests/gpu/gpu_backend tests/gpu/gpu_local tests/gpu/gpu_direct tests/gpu/gpu_nccl_id \
               tests/gpu/gpu_nccl_graph tests/topk/topk_gpu_test tests/sparse/test_sparse_gpu tests/dsop/gpu_dsop; do
      [ -x "$build/$bin" ] || { echo "--- $bin not built: skipped"; continue; }
      extra=()
      case $bin in tests/gpu/gpu_nccl_*) extra=(--report-api-errors no) ;; esac
      run_sanitizer "$tool" "${extra[@]}" "$build/$bin" --gtest_filter='-*LargeGridStride*:*Timeout*:CudaBackend.Errors' \
        || rc=1
    done
  done
  return "$rc"
}
