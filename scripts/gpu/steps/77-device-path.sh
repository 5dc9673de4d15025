# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.
#
# The device path's targets in one run (a few minutes on one GPU): 4 local
# ranks on one device, every dense allreduce algorithm (native: the direct
# kernel) at 8 B, 1 MiB and 64 MiB, with each call's structure per rank (rounds, host handshakes, host
# syncs, events created: the JSON lines' *_per_call_max fields); the device's
# own copy bandwidth (kernel_perf's copy rows) is the bound the 64 MiB times
# are compared with; the sparse allreduce at N = 2^24 floats, density 0.1 %,
# dense output, against the dense allreduce in the same run. The schedules run
# three ways, one after the other at each size: as planned calls (one meeting
# per call, a stream per rank: the default), with
# SPARCOLL_LOCAL_PLANNED=one-stream (the call's work on one stream) and with
# SPARCOLL_LOCAL_PLANNED=off (a meeting at every message), the baseline.
step_device_path() {
  local rc=0 out=$logs/device-path
  mkdir -p "$out"
  run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 8 -e 8 -A ring,rabenseifner,recdbl,native -c 1 \
    -J "$out/allreduce-8B.jsonl" || rc=1
  SPARCOLL_LOCAL_PLANNED=one-stream run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 8 -e 8 \
    -A ring,rabenseifner,recdbl -c 1 -J "$out/allreduce-8B-one-stream.jsonl" || rc=1
  SPARCOLL_LOCAL_PLANNED=off run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 8 -e 8 \
    -A ring,rabenseifner,recdbl -c 1 -J "$out/allreduce-8B-per-message.jsonl" || rc=1
  run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 1M -e 64M -f 64 -A ring,rabenseifner,recdbl,native -c 1 \
    -J "$out/allreduce-1M-64M.jsonl" || rc=1
  SPARCOLL_LOCAL_PLANNED=one-stream run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 1M -e 64M -f 64 \
    -A ring,rabenseifner,recdbl -c 1 -J "$out/allreduce-1M-64M-one-stream.jsonl" || rc=1
  SPARCOLL_LOCAL_PLANNED=off run_bench all_reduce_perf -t local -p 4 -D 1 -d float -b 1M -e 64M -f 64 \
    -A ring,rabenseifner,recdbl -c 1 -J "$out/allreduce-1M-64M-per-message.jsonl" || rc=1
  run_bench kernel_perf || rc=1
  run_bench sparse_all_reduce_perf -t local -p 4 -g 1 -b 64M -e 64M -D 0.001 -c 1 || rc=1
  # Each call's structure, as the JSON lines carry it.
  "${SPARCOLL_PYTHON:-python3}" - "$out"/allreduce-*.jsonl <<'PY' || rc=1
import json, sys
for path in sys.argv[1:]:
    print("per-message baseline (SPARCOLL_LOCAL_PLANNED=off):" if "per-message" in path
          else "planned calls on one stream (SPARCOLL_LOCAL_PLANNED=one-stream):" if "one-stream" in path
          else "planned calls:")
    for line in open(path):
        r = json.loads(line)
        if r.get("in_place"):
            continue
        print(f'{r["algorithm"]:>14} {r["size_bytes"]:>10} B  {r["time_us"]:9.1f} us  rounds {r.get("rounds_per_call_max")}'
              f'  rendezvous {r.get("rendezvous_per_call_max")}  host syncs {r.get("host_syncs_per_call_max")}'
              f'  events {r.get("events_created_per_call_max")}  reduced on arrival {r.get("msgs_reduced_per_rank_max")}')
PY
  return $rc
}
