#!/bin/bash
# Overhead of the mismatch check and of the probe-based MPI receives, P = 4 MPI ranks.
set -u
run() { # label binary env...
  local label=$1 bin=$2; shift 2
  for sz in "-b 8 -e 8 -n 400 -w 50" "-b 64K -e 64K -n 200 -w 20" "-b 64M -e 64M -n 8 -w 2"; do
    env OMPI_MCA_mpi_yield_when_idle=1 "$@" mpirun --oversubscribe --allow-run-as-root -np 4 $bin $sz -A ring,recdbl,native -c 0 2>&1 \
      | grep -E "^ +[0-9]" | sed "s/^/$label /"
  done
}
for rep in 1 2 3; do
  run before ${BEFORE:-build-before}/bench/all_reduce_perf
  run off build/bench/all_reduce_perf SPARCOLL_CHECK=0
  run default build/bench/all_reduce_perf
  run all build/bench/all_reduce_perf SPARCOLL_CHECK=1
done
