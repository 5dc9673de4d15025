# shellcheck shell=bash disable=SC2015,SC2034,SC2154  # globals come from scripts/gpu-check
# Helpers of scripts/gpu-check and its steps (sourced): launching benchmarks and
# compute-sanitizer, and finding what the machine has (NCCL, a usable MPI,
# GoogleTest, nlohmann-json, the CMake generator).

# run_sanitizer <tool> [sanitizer options...] <binary> [args...]: fails on any
# reported error, a test failure or a timeout.
run_sanitizer() {
  local tool=$1 opts=(); shift
  while [ $# -gt 0 ] && [[ $1 == --* ]]; do opts+=("$1" "$2"); shift 2; done
  [ -x "$1" ] || { echo "missing test binary $1"; return 1; }
  echo "--- compute-sanitizer --tool $tool ${opts[*]} $*"
  timeout "${SPARCOLL_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" "${opts[@]}" --error-exitcode 86 \
    --print-limit 20 "$@" 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -n 25
  local rc=${PIPESTATUS[0]}
  echo "--- exit status $rc$( [ "$rc" -eq 124 ] && echo ' (timed out)')"
  return "$rc"
}

# run_bench [--mpi N] <tool> [args...]: runs $build/bench/<tool>, under
# mpirun -np N when asked. A missing tool is a skip, not a failure (the
# benchmark area may not have built it).
run_bench() {
  local launcher=()
  if [ "$1" = --mpi ]; then launcher=("${MPIRUN[@]}" -np "$2"); shift 2; fi
  local tool=$1; shift
  [ -x "$build/bench/$tool" ] || { echo "SKIP: $build/bench/$tool was not built (benchmark CLI missing)"; return 77; }
  echo "+ ${launcher[*]} $build/bench/$tool $*"
  "${launcher[@]}" "$build/bench/$tool" "$@"
}

# NCCL: the CUDA toolkit's copy, the system's, or the pip package nvidia-nccl-*
# (which ships libnccl.so.2 only, so its paths are passed to CMake).
nccl_ver="" nccl_inc="" nccl_lib="" nccl_pip="" nccl_searched=""
find_nccl() {
  [ -n "$nccl_searched" ] && return 0
  nccl_searched=1
  local h d
  for h in /usr/local/cuda/include/nccl.h /usr/include/nccl.h; do
    [ -f "$h" ] && { nccl_inc=$(dirname "$h"); break; }
  done
  if [ -z "$nccl_inc" ]; then
    d=$("${SPARCOLL_PYTHON:-python3}" -c 'import nvidia, sys; sys.stdout.write(list(nvidia.__path__)[0])' 2>/dev/null) || d=""
    if [ -n "$d" ]; then
      h=$(find "$d" -maxdepth 4 -name nccl.h 2>/dev/null | head -1)
      nccl_lib=$(find "$d" -maxdepth 4 -name 'libnccl.so*' 2>/dev/null | sort | head -1)
      [ -n "$h" ] && [ -n "$nccl_lib" ] && { nccl_inc=$(dirname "$h"); nccl_pip=1; }
    fi
  fi
  [ -n "$nccl_inc" ] || return 0
  [ -n "$nccl_lib" ] || nccl_lib=$(compgen -G "/usr/local/cuda/lib64/libnccl.so*" || compgen -G "/usr/lib/x86_64-linux-gnu/libnccl.so*")
  nccl_lib=${nccl_lib%%$'\n'*}
  nccl_ver=$(awk '/#define NCCL_(MAJOR|MINOR|PATCH) /{v[$2]=$3} END{if (v["NCCL_MAJOR"]!="") printf "%s.%s.%s", v["NCCL_MAJOR"], v["NCCL_MINOR"], v["NCCL_PATCH"]}' "$nccl_inc/nccl.h")
}
nccl_version() { find_nccl; echo "$nccl_ver${nccl_pip:+ (pip package, $nccl_inc)}"; }

# mpi_usable: mpirun and mpicc are there and mpirun starts 2 ranks (cached).
mpi_state="" mpi_reason=""
mpi_usable() {
  if [ -z "$mpi_state" ]; then
    mpi_state=no
    if ! command -v mpirun >/dev/null; then mpi_reason="no mpirun"
    elif ! command -v mpicc >/dev/null; then mpi_reason="no mpicc (MPI headers/wrappers missing)"
    elif ! out=$(timeout 60 "${MPIRUN[@]}" -np 2 true 2>&1); then mpi_reason="mpirun -np 2 true failed: $(echo "$out" | grep -v '^-*$' | head -3 | tr '\n' ' ')"
    else mpi_state=yes; mpi_reason=""
    fi
  fi
  [ "$mpi_state" = yes ]
}

generator() {
  if [ -f "$build/CMakeCache.txt" ]; then sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt"
  elif command -v ninja >/dev/null; then echo Ninja
  else echo "Unix Makefiles"; fi
}

gtest_where() {
  local f
  for f in /usr/lib/*/cmake/GTest/GTestConfig.cmake /usr/lib/cmake/GTest/GTestConfig.cmake \
           /usr/local/lib/cmake/GTest/GTestConfig.cmake /usr/local/lib64/cmake/GTest/GTestConfig.cmake; do
    [ -f "$f" ] && { echo "installed ($(dirname "$f"))"; return 0; }
  done
  for f in "${SPARCOLL_GTEST_SOURCE_DIR:-}" /usr/src/googletest; do
    [ -n "$f" ] && [ -f "$f/CMakeLists.txt" ] && { echo "source tree $f (built by CMake)"; return 0; }
  done
  return 1
}
have_gtest() { gtest_where >/dev/null; }

json_where() {
  local d
  for d in "${SPARCOLL_JSON_INCLUDE_DIR:-}" /usr/include /usr/local/include; do
    [ -n "$d" ] && [ -f "$d/nlohmann/json.hpp" ] && { echo "$d/nlohmann/json.hpp"; return 0; }
  done
  echo "not found (bench -J disabled)"; return 1
}

# What the pack can provide and this machine lacks: mpi gtest json.
missing_deps() {
  local m=()
  { command -v mpirun && command -v mpicc; } >/dev/null || m+=(mpi)
  have_gtest || m+=(gtest)
  json_where >/dev/null || m+=(json)
  echo "${m[*]}"
}
