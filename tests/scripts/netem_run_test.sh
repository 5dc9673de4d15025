#!/usr/bin/env bash
# netem_run_test.sh NETEM_RUN PYTHON — see CMakeLists.txt.
set -uo pipefail
tool=$1 py=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect <status> <stderr pattern> <args...>
  local want=$1 pat=$2; shift 2
  local err; err=$("$tool" "$@" 2>&1 >/dev/null); local got=$?
  [[ $got == "$want" ]] || fail "netem-run $* exited $got, expected $want ($err)"
  [[ $err == *"$pat"* ]] || fail "netem-run $*: message '$err' lacks '$pat'"
}
expect 2 usage
expect 2 usage 1gbit true
expect 2 "not a rate" fast -- true
expect 2 "not a rate" -- -- true
expect 2 "must be positive" 0gbit -- true

if ! unshare -n true 2>/dev/null; then
  expect 2 "cannot create a network namespace" 1gbit -- true
  echo "netem-run: no rights to create namespaces here; shaping not checked"
  exit 0
fi
# Without rights (as nobody), when this test runs as root.
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
  err=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash "$tool" 1gbit -- true 2>&1); st=$?
  [[ $st == 2 && $err == *"cannot create a network namespace"* ]] || fail "unprivileged run: status $st, '$err'"
fi
"$tool" 1gbit -- bash -c 'exit 7'; st=$?
[[ $st == 7 ]] || fail "the command's exit status 7 came back as $st"
q=$("$tool" 1gbit -- tc qdisc show dev lo) || fail "tc inside the namespace failed"
[[ $q == *tbf*"rate 1Gbit"* ]] || fail "loopback not shaped: $q"
link=$("$tool" none -- ip -o link show lo)  # (sysfs would show the parent namespace's)
[[ $link == *"mtu 9000"* ]] || fail "loopback MTU not 9000: $link"
q=$("$tool" none -- tc qdisc show dev lo)
[[ $q != *tbf* ]] || fail "'none' shaped the loopback: $q"

# 16 MiB over TCP at 200 Mbit/s takes 0.67 s; unshaped loopback takes milliseconds.
secs=$("$tool" 200mbit -- "$py" - <<'PY'
import socket, threading, time
n = 16 << 20
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def sink():
    c, _ = srv.accept(); got = 0
    while got < n:
        b = c.recv(1 << 20)
        if not b: break
        got += len(b)
    c.sendall(b"k"); c.close()
t = threading.Thread(target=sink); t.start()
s = socket.create_connection(srv.getsockname()); t0 = time.time()
s.sendall(b"x" * n); s.recv(1); dt = time.time() - t0; t.join()
print(f"{dt:.3f}")
PY
) || fail "transfer in the shaped namespace failed"
awk -v s="$secs" 'BEGIN { exit !(s >= 0.55 && s < 5) }' || fail "16 MiB at 200mbit took $secs s, expected about 0.67 s"
echo "netem-run: ok (16 MiB at 200mbit in $secs s)"
