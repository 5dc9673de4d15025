# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Top-k, the targets first: N = 2^26 float32, k = N/1000 and N/100, every
# method (bracket, exact, threshold, approx with the derived bucket, variable
# and fixed output) against torch.topk in the same run, stateless and with
# error feedback, every result checked bit for bit against the CPU reference
# (JSON lines in $logs/topk-target*.jsonl); the quality inputs (synthetic at
# 2^24 and the shipped real gradients); then approx's designs and tile shapes
# (SPARCOLL_TOPK_KERNEL, SPARCOLL_TOPK_TILE) and the sweep N = 2^20..2^28.
step_topk() {
  local rc=0 t
  run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001,0.01 -o variable,fixed -J "$logs/topk-target.jsonl" || rc=1
  run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001,0.01 -m bracket,exact,threshold,approx --feedback \
    --torch none -J "$logs/topk-target-feedback.jsonl" || rc=1
  run_bench topk_perf --where gpu -b 16M -e 16M -k 0.001,0.01 -n 5 -I normal,laplace,student-t3,sparse99,gradients \
    -J "$logs/topk-quality.jsonl" || rc=1
  for t in block split; do
    echo "--- SPARCOLL_TOPK_KERNEL=$t (512-element buckets, and one bucket as long as the vector)"
    SPARCOLL_TOPK_KERNEL=$t run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx -B 512,67108864 \
      -o variable,fixed --torch none || rc=1
  done
  for t in 128x4 64x8 256x8; do  # every shape SPARCOLL_TOPK_TILE accepts (block design)
    echo "--- SPARCOLL_TOPK_KERNEL=block SPARCOLL_TOPK_TILE=$t"
    SPARCOLL_TOPK_KERNEL=block SPARCOLL_TOPK_TILE=$t run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 \
      -m approx -B 512 --torch none || rc=1
  done
  run_bench topk_perf --where gpu -b 1M -e 256M -f 4 -k 0.001,0.01 -m bracket,exact,threshold,approx -n 10 || rc=1
  return "$rc"
}
