# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Keeps going past a failed file (ninja -k 0, make -k), so one run lists every
# file that does not compile against this machine's toolkit and NCCL.
step_build() {
  local keep=-k
  [ "$(generator)" = Ninja ] && keep="-k 0"
  # shellcheck disable=SC2086  # $keep: one or two words
  cmake --build "$build" -j "$jobs" -- $keep
}
