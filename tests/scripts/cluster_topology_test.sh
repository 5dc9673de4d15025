#!/usr/bin/env bash
# cluster_topology_test.sh CLUSTER PYTHON ALL_REDUCE_PERF — see CMakeLists.txt.
# A ring allreduce across a virtual cluster (scripts/cluster) of 4 hosts on 2
# switches, with the ranks interleaved over the switches (rank 0 a0, 1 b0, 2
# a1, 3 b1: the file lists the hosts in that order, so mpirun fills them so)
# and SPARCOLL_TOPOLOGY_FILE naming the same description: the library finds
# every rank's host by its host name (per-host UTS namespaces), runs the ring
# in the tree's order (a0 a1 b0 b1) and the result must be right (bench's
# -c 1: #wrong 0). Exit 77 (skipped) when the machine cannot build clusters.
set -uo pipefail
tool=$(realpath "$1") py=$2 bench=$(realpath "$3")
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "not root: building a cluster needs root"
for t in ip tc nsenter unshare mpirun; do command -v $t >/dev/null || skip "'$t' not found"; done
probe_ns=sctopoprobe$$
ip netns add $probe_ns 2>/dev/null || skip "'ip netns add' does not work here"
ip netns del $probe_ns
unshare --uts true 2>/dev/null || skip "cannot create UTS namespaces"
[[ -x $bench ]] || fail "no bench binary $bench"
work=$(mktemp -d /tmp/cluster-topology-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
topo=$work/interleaved.json
cat >"$topo" <<'JSON'
{"version": 1, "name": "test-2x2-interleaved",
 "defaults": {"host_link": {"rate": "2gbit"}, "uplink": {"rate": "500mbit"}},
 "switches": [{"name": "sw0"}, {"name": "sw1", "parent": "sw0"}],
 "hosts": [{"name": "a0", "switch": "sw0"}, {"name": "b0", "switch": "sw1"},
           {"name": "a1", "switch": "sw0"}, {"name": "b1", "switch": "sw1"}]}
JSON
cd "$work"
# SPARCOLL_TOPOLOGY_FILE reaches every rank: the remote daemons inherit
# mpirun's environment (scripts/cluster's rsh agent).
out=$(SPARCOLL_TOPOLOGY_FILE=$topo SPARCOLL_TRACE= timeout 120 "$py" "$tool" run "$topo" -- -np 4 \
      "$bench" -t mpi -b 4M -e 4M -d int32 -o sum -A ring -n 3 -w 1 -c 1 2>&1) || fail "the run failed: $out"
echo "$out" | grep -E '^ +[0-9]' || true
rows=$(awk '$1 ~ /^[0-9]+$/ && NF >= 8' <<<"$out")
[[ -n $rows ]] || fail "no result row: $out"
# #wrong is the last column of each of the out-of-place and in-place groups.
awk '{ if ($NF != 0) bad = 1 } END { exit bad }' <<<"$rows" || fail "wrong results: $out"
echo "cluster topology: ring allreduce on the interleaved placement correct"
# A host the file does not name fails the creation on every rank, promptly.
cat >"$work/short.json" <<'JSON'
{"version": 1, "switches": [{"name": "sw0"}], "hosts": [{"name": "a0", "switch": "sw0"}]}
JSON
out=$(SPARCOLL_TOPOLOGY_FILE=$work/short.json timeout 120 "$py" "$tool" run "$topo" -- -np 4 \
      "$bench" -t mpi -b 1M -e 1M -d int32 -A ring -n 1 -w 0 -c 1 2>&1); st=$?
[[ $st != 0 && $st != 124 ]] || fail "a missing host: exit $st (expected a failure, not a hang): $out"
grep -q "has no host for rank 1 on 'b0'" <<<"$out" || fail "a missing host: message lacks the rank and host: $out"
echo "cluster topology: a machine missing from the file fails every rank"
