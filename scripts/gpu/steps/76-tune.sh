# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# The cost model on device buffers: sparcoll-tune --quick over 4 local ranks on
# one GPU (native is left out there: device-local communicators have none),
# then --validate of the file it wrote. The fitted alpha, beta and gamma (gamma:
# the CUDA backend's reduction, per byte) are repeated at the end.
step_tune() {
  local tune=$build/bin/sparcoll-tune out=$logs/tune-device-local4
  [ -x "$tune" ] || { echo "SKIP: $tune was not built"; return 77; }
  local args=(--quick -t local -p 4 -D 1)
  echo "+ $tune ${args[*]} -o $out.json --raw $out-raw.jsonl"
  "$tune" "${args[@]}" -o "$out.json" --raw "$out-raw.jsonl" > "$out.txt" 2>&1
  local rc=$?
  cat "$out.txt"
  [ "$rc" -eq 0 ] || { echo "sparcoll-tune failed (exit $rc)"; return 1; }
  echo "+ $tune ${args[*]} --validate $out.json"
  "$tune" "${args[@]}" --validate "$out.json" || rc=1
  echo "--- the fit on device buffers ($out.json):"
  grep -E "^# fit|^#   alpha" "$out.txt"
  return "$rc"
}
