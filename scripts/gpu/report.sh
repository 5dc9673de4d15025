# shellcheck shell=bash disable=SC2154  # globals come from scripts/gpu-check
# The dated Markdown report of scripts/gpu-check (sourced): machine, versions,
# commit, every step's result (this call's and earlier calls' on the same build
# dir) and the tail of its log. Written to $report; with --out DIR, the report
# and a tarball of the step logs go to DIR instead of bench/results/.

write_report() {
  local gpu_names driver cuda commit s r when any_fail=0
  gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd ';' -)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  cuda=$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
  for s in "${STEPS[@]}"; do grep -q "^FAIL" "$logs/$s.result" 2>/dev/null && any_fail=1; done
  {
    echo "# sparcoll GPU check — $today"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| date (UTC) | $(date -u '+%F %T') |"
    echo "| host | $(hostname) |"
    echo "| device(s) | ${gpu_names:-none found} |"
    echo "| driver | ${driver:-unknown} |"
    echo "| CUDA | ${cuda:-unknown} |"
    echo "| NCCL | $(nccl_version) |"
    echo "| MPI | $(mpirun --version 2>/dev/null | head -1)${OPAL_PREFIX:+ (unpacked in $OPAL_PREFIX)} |"
    echo "| commit | $commit |"
    echo "| overall | $([ $any_fail -eq 0 ] && echo PASS || echo FAIL) (every step below, this call and earlier ones) |"
    echo
    echo "## Steps"
    echo
    echo "| step | result | seconds | when (UTC) |"
    echo "|---|---|---|---|"
    for s in "${STEPS[@]}"; do
      [ -f "$logs/$s.result" ] || continue
      IFS=$'\t' read -r r secs when < "$logs/$s.result"
      echo "| $s | $r | $secs | $when |"
    done
    for s in "${STEPS[@]}"; do
      [ -f "$logs/$s.result" ] || continue
      IFS=$'\t' read -r r secs when < "$logs/$s.result"
      echo
      echo "### $s — $r"
      echo
      echo '```'
      tail -n 60 "$logs/$s.log" 2>/dev/null
      echo '```'
    done
  } > "$report"
  # With --out the full step logs travel with the report.
  [ -n "$out_dir" ] && tar -C "$build" -czf "$out_dir/gpu-check-logs.tar.gz" gpu-check-logs 2>/dev/null
  return 0
}
