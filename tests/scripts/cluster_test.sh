#!/usr/bin/env bash
# cluster_test.sh CLUSTER PYTHON [EXAMPLES_DIR] — see CMakeLists.txt.
# Checks scripts/cluster: bad descriptions are refused with messages naming
# the key; the examples validate; and, as root with network namespaces and
# Open MPI, a 2 switches x 2 hosts cluster runs an MPI program with one rank
# per host (by host name), shapes each direction of its links to the
# configured rates, and leaves nothing behind after a normal run, a failing
# command, SIGTERM, SIGINT, or (with "down --stale") SIGKILL.
# Exit 77 (skipped) when the machine cannot build clusters.
set -uo pipefail
tool=$(realpath "$1") py=$2 examples=$(realpath "${3:-$(dirname "$1")/cluster-examples}")
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d /tmp/cluster-test.XXXXXX)
pid=
# On a failure mid-way, a cluster still running in the background is stopped
# (which tears it down) before the scratch directory goes.
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null && wait $pid 2>/dev/null; rm -rf "$work"' EXIT
run_tool() { "$py" "$tool" "$@"; }

# -- descriptions ----------------------------------------------------------
bad() {  # bad <stderr pattern> <json>
  local pat=$1 f=$work/bad.json err st
  printf '%s\n' "$2" >"$f"
  err=$(run_tool check "$f" 2>&1 >/dev/null); st=$?
  [[ $st == 2 ]] || fail "check of $2 exited $st, expected 2 ($err)"
  [[ $err == *"$pat"* ]] || fail "check of $2: message '$err' lacks '$pat'"
}
S='"switches": [{"name": "s0"}]'
H='"hosts": [{"name": "h0", "switch": "s0"}]'
bad 'not JSON' '{"version": 1,'
bad 'missing key "version"' "{$S, $H}"
bad 'version: 2 is not supported' "{\"version\": 2, $S, $H}"
bad 'unknown key "hostz"' "{\"version\": 1, $S, \"hostz\": []}"
bad 'host "h0" (hosts[0]): unknown key "rate"' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h0\", \"switch\": \"s0\", \"rate\": \"1gbit\"}]}"
bad 'host "h0".switch: no switch named "s9"' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h0\", \"switch\": \"s9\"}]}"
bad 'host "h0".link.rate: rate "fast"' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h0\", \"switch\": \"s0\", \"link\": {\"rate\": \"fast\"}}]}"
bad 'defaults.uplink.rate: rate "1gbps"' "{\"version\": 1, \"defaults\": {\"uplink\": {\"rate\": \"1gbps\"}}, $S, $H}"
bad 'switch "s1".uplink.delay' "{\"version\": 1, \"switches\": [{\"name\": \"s0\"}, {\"name\": \"s1\", \"parent\": \"s0\", \"uplink\": {\"delay\": \"soon\"}}], $H}"
bad 'parents form a cycle' "{\"version\": 1, \"switches\": [{\"name\": \"r\"}, {\"name\": \"a\", \"parent\": \"b\"}, {\"name\": \"b\", \"parent\": \"a\"}], \"hosts\": [{\"name\": \"h0\", \"switch\": \"r\"}]}"
bad 'switch "s1".parent: no switch named "s7"' "{\"version\": 1, \"switches\": [{\"name\": \"s0\"}, {\"name\": \"s1\", \"parent\": \"s7\"}], $H}"
# A chain that passes through a switch whose own parent is missing.
bad 'switch "b".parent: no switch named "nope"' "{\"version\": 1, \"switches\": [{\"name\": \"s0\"}, {\"name\": \"a\", \"parent\": \"b\"}, {\"name\": \"b\", \"parent\": \"nope\"}], $H}"
bad 'exactly one root switch' "{\"version\": 1, \"switches\": [{\"name\": \"s0\"}, {\"name\": \"s1\"}], $H}"
bad 'host "h0": the name is used twice' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h0\", \"switch\": \"s0\"}, {\"name\": \"h0\", \"switch\": \"s0\"}]}"
bad 'host "h0".slots' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h0\", \"switch\": \"s0\", \"slots\": 0}]}"
bad 'is not a host name label' "{\"version\": 1, $S, \"hosts\": [{\"name\": \"h_0\", \"switch\": \"s0\"}]}"
bad 'hosts: must be a non-empty list' "{\"version\": 1, $S, \"hosts\": []}"
for f in "$examples"/*.json; do
  run_tool check "$f" >/dev/null || fail "example $f does not validate"
done
[[ $(ls "$examples"/*.json | wc -l) -ge 3 ]] || fail "fewer than 3 examples in $examples"
echo "cluster: descriptions ok"

# -- a cluster -------------------------------------------------------------
skip() { echo "SKIP: $* (descriptions checked, clusters not)"; exit 77; }
[[ $(id -u) == 0 ]] || skip "not root: building a cluster needs root"
for t in ip tc nsenter unshare mpirun mpicc; do command -v $t >/dev/null || skip "'$t' not found"; done
probe_ns=sctestprobe$$
ip netns add $probe_ns 2>/dev/null || skip "'ip netns add' does not work here"
ip netns del $probe_ns
unshare --uts true 2>/dev/null || skip "cannot create UTS namespaces"

mpicc -O2 -o "$work/probe" "$here/cluster_probe.c" || fail "mpicc could not build cluster_probe.c"
topo=$work/t22.json
cat >"$topo" <<'EOF'
{"version": 1, "name": "test-2x2",
 "defaults": {"host_link": {"rate": "400mbit"}, "uplink": {"rate": "100mbit"}},
 "switches": [{"name": "sw0"}, {"name": "sw1", "parent": "sw0"}],
 "hosts": [{"name": "a0", "switch": "sw0"}, {"name": "a1", "switch": "sw0"},
           {"name": "b0", "switch": "sw1"}, {"name": "b1", "switch": "sw1"}]}
EOF
# nothing_left PREFIX: no namespace, hosts file, state or mount of the run.
nothing_left() {
  local p=$1
  [[ -n $p ]] || fail "no prefix to check"
  ! ip netns list | grep -q "^$p" || fail "namespaces left: $(ip netns list | grep "^$p" | tr '\n' ' ')"
  ! ip -o link show | grep -q "$p" || fail "links named $p* in the machine's namespace"
  [[ ! -e /run/sparcoll-cluster/$p ]] || fail "state /run/sparcoll-cluster/$p left"
  ! ls /etc/netns 2>/dev/null | grep -q "^$p" || fail "/etc/netns/$p* left"
  ! grep -q "sparcoll-cluster/$p" /proc/self/mounts || fail "mounts of $p left"
}
prefix_of() { sed -n 's/.*SPARCOLL_CLUSTER_PREFIX=\([a-z0-9-]*\).*/\1/p' "$1" | head -1; }
cd "$work"

# One rank per host, each with its host's name, and a message round the ring.
out=$(run_tool run "$topo" -- ./probe hosts a0 a1 b0 b1 2>&1) || fail "probe hosts failed: $out"
[[ $(grep -c '^host .* local 1$' <<<"$out") == 4 ]] || fail "expected 4 ranks alone on their hosts: $out"

# The run's environment, its prefix, and teardown after a normal exit.
run_tool exec "$topo" -- sh -c 'echo SPARCOLL_CLUSTER_PREFIX=$SPARCOLL_CLUSTER_PREFIX; hostname; ip -o -4 addr show eth0;
  tc qdisc show dev eth0; echo "$SPARCOLL_CLUSTER_MPIRUN"' >"$work/env.out" 2>&1 || fail "exec failed: $(cat "$work/env.out")"
p=$(prefix_of "$work/env.out")
grep -q '^a0$' "$work/env.out" || fail "the command did not run on a0: $(cat "$work/env.out")"
grep -q '10.77.0.1/16' "$work/env.out" || fail "a0 has not 10.77.0.1: $(cat "$work/env.out")"
grep -q 'tbf.*rate 400Mbit' "$work/env.out" || fail "a0's NIC not shaped to 400 Mbit/s: $(cat "$work/env.out")"
grep -q 'btl_tcp_if_include eth0' "$work/env.out" || fail "SPARCOLL_CLUSTER_MPIRUN lacks the interface: $(cat "$work/env.out")"
nothing_left "$p"

# The command's exit status comes back, and the cluster goes.
run_tool exec "$topo" -- sh -c 'echo SPARCOLL_CLUSTER_PREFIX=$SPARCOLL_CLUSTER_PREFIX; exit 7' >"$work/e7.out" 2>&1; st=$?
[[ $st == 7 ]] || fail "exit status 7 came back as $st"
nothing_left "$(prefix_of "$work/e7.out")"

# Rates: 12 MiB a0->a1 (one switch, 400 Mbit/s links), and across the
# 100 Mbit/s uplink in both directions (a0->b0, b0->a0) and b1->a1.
out=$(run_tool run "$topo" -- ./probe send 12 0:1 1:0 0:2 2:0 3:1 2>&1) || fail "probe send failed: $out"
echo "$out" | grep '^rate'
check_rate() {  # check_rate SRC DST CONFIGURED_MBIT
  local r
  r=$(awk -v s=$1 -v d=$2 '$1 == "rate" && $2 == s && $3 == d { print $4 }' <<<"$out")
  [[ -n $r ]] || fail "no rate for $1 -> $2: $out"
  awk -v r="$r" -v c=$3 'BEGIN { exit !(r >= 0.5 * c && r <= 1.1 * c) }' ||
    fail "$1 -> $2 ran at $r Mbit/s, expected 50-110 % of $3 Mbit/s"
}
check_rate 0 1 400
check_rate 1 0 400
check_rate 0 2 100
check_rate 2 0 100
check_rate 3 1 100

# A delay needs the kernel's netem qdisc: applied where there is one, refused
# with a message saying so (and nothing left) where there is none.
sed 's/"rate": "100mbit"}/"rate": "100mbit", "delay": "1ms"}/' "$topo" >"$work/delay.json"
out=$(run_tool exec "$work/delay.json" -- sh -c 'echo SPARCOLL_CLUSTER_PREFIX=$SPARCOLL_CLUSTER_PREFIX' 2>&1); st=$?
if [[ $st == 0 ]]; then
  echo "cluster: delays applied (netem)"
elif [[ $st == 2 && $out == *"no netem qdisc"* ]]; then
  echo "cluster: no netem in this kernel: delays refused as they should be"
else
  fail "a topology with a delay: exit status $st: $out"
fi
p=$(grep -o 'sc[0-9][0-9]*-' <<<"$out" | head -1)
nothing_left "$p"

# Signals: SIGTERM and SIGINT during a run (mpirun and ranks sleeping on every
# host), and SIGKILL followed by "down --stale".
for sig in TERM INT KILL; do
  rm -f "$work/ready"
  # (not through run_tool: $! must be the tool's own process)
  "$py" "$tool" exec "$topo" -- sh -c 'echo SPARCOLL_CLUSTER_PREFIX=$SPARCOLL_CLUSTER_PREFIX;
    $SPARCOLL_CLUSTER_MPIRUN sh -c "touch '"$work"'/ready; exec sleep 4247"' >"$work/sig.out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [[ -e $work/ready ]] && break; sleep 0.1; done
  [[ -e $work/ready ]] || { kill -TERM $pid; wait $pid; fail "SIG$sig: ranks did not start: $(cat "$work/sig.out")"; }
  sleep 0.5
  p=$(prefix_of "$work/sig.out")
  [[ $(ip netns list | grep -c "^$p") == 6 ]] || fail "SIG$sig: expected 6 namespaces of $p before the signal"
  kill -$sig $pid
  { wait $pid; } 2>/dev/null; st=$?
  case $sig in
    TERM) [[ $st == 143 ]] || fail "SIGTERM: exit status $st, expected 143: $(cat "$work/sig.out")" ;;
    INT) [[ $st == 130 ]] || fail "SIGINT: exit status $st, expected 130: $(cat "$work/sig.out")" ;;
    KILL)
      [[ $(ip netns list | grep -c "^$p") == 6 ]] || fail "SIGKILL: the namespaces should outlive the tool"
      run_tool list | grep -q "^$p.*stale" || fail "list does not show $p as stale: $(run_tool list)"
      run_tool down --stale >/dev/null 2>&1 || fail "down --stale failed" ;;
  esac
  pid=
  nothing_left "$p"
  for _ in $(seq 30); do pgrep -f 'sleep 4247' >/dev/null || break; sleep 0.1; done
  ! pgrep -f 'sleep 4247' >/dev/null || fail "SIG$sig: ranks left running: $(pgrep -af 'sleep 4247')"
done
echo "cluster: ok"
