# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

step_configure() {
  local arch=${CMAKE_CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')}
  local mpi=AUTO nccl=AUTO args=()
  if mpi_usable; then
    mpi=ON
    [ -n "${SPARCOLL_MPI_C_COMPILER:-}" ] && args+=(-DMPI_C_COMPILER="$SPARCOLL_MPI_C_COMPILER")
  elif command -v mpirun >/dev/null; then
    mpi=OFF  # there but unusable: a build with MPI would fail its tests
  fi
  echo "MPI: $mpi${mpi_reason:+ ($mpi_reason)}"
  find_nccl
  if [ -n "$nccl_ver" ]; then
    nccl=ON
    [ -n "$nccl_pip" ] && args+=(-DNCCL_INCLUDE_DIR="$nccl_inc" -DNCCL_LIBRARY="$nccl_lib")
  fi
  [ -n "${SPARCOLL_GTEST_SOURCE_DIR:-}" ] && args+=(-DSPARCOLL_GTEST_SOURCE_DIR="$SPARCOLL_GTEST_SOURCE_DIR")
  [ -f "$build/CMakeCache.txt" ] || args+=(-G "$(generator)")
  # shellcheck disable=SC2086  # SPARCOLL_GPU_CMAKE_ARGS: word-split on purpose
  (set -x; cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSPARCOLL_CUDA=ON -DSPARCOLL_NCCL=$nccl \
        -DSPARCOLL_MPI=$mpi -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" "${args[@]}" ${SPARCOLL_GPU_CMAKE_ARGS:-})
}
