# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Every gpu-labelled test; a test that skipped for want of a device fails the
# step (this script exists to run them on one).
step_ctest_gpu() {
  local sel=(-L gpu)
  if ! mpi_usable; then sel+=(-LE mpi); echo "mpi-labelled GPU tests left out: $mpi_reason"; fi
  (cd "$build" && ctest "${sel[@]}" --output-on-failure --timeout "${SPARCOLL_TEST_TIMEOUT:-540}" -V) \
    > "$logs/ctest-gpu.full" 2>&1
  local rc=$?
  grep -E "^[0-9]+/[0-9]+ Test|tests passed|Failed|SKIPPED" "$logs/ctest-gpu.full"
  tail -n 40 "$logs/ctest-gpu.full"
  if grep -q "no CUDA device present" "$logs/ctest-gpu.full"; then
    echo "GPU tests were SKIPPED: no CUDA device visible to the test binaries"; return 1
  fi
  return "$rc"
}
