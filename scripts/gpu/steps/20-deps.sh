# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# Installs what is missing (from the pack, SPARCOLL_DEB_DIR or apt), then
# checks: cmake, a C++ compiler, nvcc and GoogleTest are required; MPI, NCCL
# and nlohmann-json are optional (the steps that need them skip or narrow).
step_deps() {
  local need
  need=$(missing_deps)
  if [[ " $need " != *" mpi "* ]] && { [ -n "$pack" ] || [ -d "$root/.gpu-pack/debs" ]; } && ! mpi_usable; then
    echo "mpirun is there but unusable ($mpi_reason): Open MPI from the pack instead"
    need+=" mpi"; mpi_state=""
  fi
  echo "missing before install: ${need:-nothing}"
  if [ -n "$need" ]; then
    if [ -n "$pack" ]; then
      # shellcheck disable=SC2086  # $need: a word list
      pack_install "$pack" $need || return 1
    elif [ -n "${SPARCOLL_DEB_DIR:-}" ]; then
      echo "installing .deb files from $SPARCOLL_DEB_DIR"
      dpkg -i "$SPARCOLL_DEB_DIR"/*.deb || return 1
    elif [ -d "$root/.gpu-pack/debs" ]; then
      echo "using $root/.gpu-pack (present; apt not tried)"
      # shellcheck disable=SC2086
      pack_install "$root/.gpu-pack" $need || return 1
    elif [ -x scripts/setup-deps ]; then
      scripts/setup-deps || echo "setup-deps failed (no network?): carrying on with what is installed"
    fi
    need=$(missing_deps); mpi_state=""
    echo "missing after install: ${need:-nothing}"
  fi
  local rc=0 cxx
  command -v cmake >/dev/null || { echo "FAIL: cmake not found"; rc=1; }
  cxx=$(command -v c++ || command -v g++) || { echo "FAIL: no C++ compiler (c++/g++)"; rc=1; }
  command -v nvcc >/dev/null || { echo "FAIL: nvcc not found (expected the CUDA toolkit in /usr/local/cuda)"; rc=1; }
  have_gtest || { echo "FAIL: GoogleTest not found (neither installed nor a source tree): use --pack"; rc=1; }
  echo "cmake:       $(cmake --version 2>/dev/null | head -1)"
  echo "c++:         ${cxx:-none} ($("${cxx:-false}" --version 2>/dev/null | head -1))"
  echo "nvcc:        $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"
  echo "generator:   $(generator)"
  echo "GoogleTest:  $(gtest_where)"
  echo "json:        $(json_where)"
  find_nccl
  echo "NCCL:        ${nccl_ver:-not found: NCCL tests and perf-nccl are skipped} ${nccl_inc:+(${nccl_inc}, ${nccl_lib})}"
  if mpi_usable; then
    echo "MPI:         $(mpirun --version 2>/dev/null | head -1) at $(command -v mpirun)${OPAL_PREFIX:+ (OPAL_PREFIX=$OPAL_PREFIX)}"
  else
    echo "MPI:         UNUSABLE ($mpi_reason): the build has no MPI transport, mpi-labelled tests are left out"
  fi
  return "$rc"
}
