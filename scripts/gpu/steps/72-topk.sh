# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Top-k: the target size (N = 2^26 float32, k = N/1000) for every method and
# output mode against torch.topk in the same run, every tile shape of the
# thread-block-per-bucket approx kernel and the split design beside it
# (SPARCOLL_TOPK_KERNEL=split: a warp per small bucket, blocks per chunk of a
# large one; also at bucket = N), error feedback, then the sweep N =
# 2^20..2^28 at k = N/1000 and N/100.
step_topk() {
  local rc=0 t
  run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx,approx-at-most,exact,threshold \
    -o variable,fixed || rc=1
  for t in 128x4 64x8 256x8; do  # every shape SPARCOLL_TOPK_TILE accepts
    echo "--- SPARCOLL_TOPK_TILE=$t"
    SPARCOLL_TOPK_TILE=$t run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx -o variable,fixed \
      --torch none || rc=1
  done
  echo "--- SPARCOLL_TOPK_KERNEL=split"
  SPARCOLL_TOPK_KERNEL=split run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx,approx-at-most \
    -o variable,fixed || rc=1
  SPARCOLL_TOPK_KERNEL=split run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx --feedback \
    --torch none || rc=1
  for t in block split; do  # one bucket as long as the vector: one SM against the whole GPU
    echo "--- SPARCOLL_TOPK_KERNEL=$t, bucket = N"
    SPARCOLL_TOPK_KERNEL=$t run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx -B 67108864 \
      --torch none || rc=1
  done
  run_bench topk_perf --where gpu -b 64M -e 64M -k 0.001 -m approx --feedback --torch none || rc=1
  run_bench topk_perf --where gpu -b 1M -e 256M -f 4 -k 0.001,0.01 -m approx,exact,threshold -n 10 || rc=1
  return "$rc"
}
