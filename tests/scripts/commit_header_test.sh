#!/usr/bin/env bash
# cmake/commit.cmake: the header names the checkout's commit, "+changes" while
# a tracked file differs from it, "unknown" outside a checkout, and is not
# rewritten when its text would not change (so an unchanged tree recompiles
# nothing). Usage: commit_header_test.sh <cmake/commit.cmake> <cmake> <git>
set -euo pipefail
script=$1 cmake=$2 git=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gen() { "$cmake" -DSRC="$tmp/repo" -DOUT="$tmp/out.h" -DGIT="$git" -P "$script"; }
want() { grep -qx "#define SPARCOLL_GIT_COMMIT \"$1\"" "$tmp/out.h" || fail "want '$1', header: $(cat "$tmp/out.h")"; }

mkdir "$tmp/repo"
gen
want unknown  # not a checkout
(cd "$tmp/repo" && "$git" init -q && echo a > f && "$git" add f &&
  "$git" -c user.name=t -c user.email=t@t commit -qm one)
head=$("$git" -C "$tmp/repo" rev-parse --short=12 HEAD)
gen
want "$head"
touch -d '2000-01-01' "$tmp/out.h"
gen
[ "$(stat -c %Y "$tmp/out.h")" = "$(date -d 2000-01-01 +%s)" ] || fail "an unchanged header was rewritten"
echo b > "$tmp/repo/f"
gen
want "$head+changes"
(cd "$tmp/repo" && "$git" -c user.name=t -c user.email=t@t commit -qam two)
gen
want "$("$git" -C "$tmp/repo" rev-parse --short=12 HEAD)"
echo "commit header: ok"
