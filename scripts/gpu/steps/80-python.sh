# shellcheck shell=bash disable=SC2317,SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# A step of scripts/gpu-check, sourced by it (it defines $root, $build, $logs,
# $jobs and MPIRUN; scripts/gpu/common.sh the helpers). A step returns 0 (pass),
# 77 (skipped, with a reason printed) or anything else (fail); its output goes
# to its log, whose tail lands in the report.

# The Python extension built WITH CUDA (no network: the interpreter's own
# scikit-build-core, pybind11 and cmake), installed into $build/python-site,
# then the pytest tests marked `gpu`. Fails when none of them passed (all
# skipped means the build or the device is not what it should be).
step_python() {
  local py=${SPARCOLL_PYTHON:-python3} site=$build/python-site
  local arch=${CMAKE_CUDA_ARCHITECTURES:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')}
  command -v "$py" >/dev/null || { echo "$py not found"; return 1; }
  "$py" -c 'import scikit_build_core, pybind11, pytest, numpy' \
    || { echo "$py lacks scikit-build-core, pybind11, pytest or numpy (carry them as wheels: device README)"; return 1; }
  echo "python: $("$py" --version) at $(command -v "$py"); torch: $("$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())' 2>&1 | tail -1)"
  local cmake_args="-DCMAKE_CUDA_ARCHITECTURES=${arch:-90}"
  find_nccl
  [ -n "$nccl_pip" ] && cmake_args+=" -DNCCL_INCLUDE_DIR=$nccl_inc -DNCCL_LIBRARY=$nccl_lib"
  local mpi=OFF
  if mpi_usable; then mpi=AUTO; [ -n "${SPARCOLL_MPI_C_COMPILER:-}" ] && cmake_args+=" -DMPI_C_COMPILER=$SPARCOLL_MPI_C_COMPILER"; fi
  rm -rf "$site"
  local cuda=${SPARCOLL_PY_CUDA:-ON}
  echo "+ SPARCOLL_CUDA=$cuda SPARCOLL_MPI=$mpi CMAKE_ARGS='$cmake_args' $py -m pip install --no-build-isolation --no-deps --no-index --target $site -C build-dir=$build/python-build ./python"
  local t0=$SECONDS
  # install.strip=false: a crash's backtrace names the library's functions.
  SPARCOLL_CUDA=$cuda SPARCOLL_MPI=$mpi SPARCOLL_NCCL=AUTO CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL=$jobs \
    "$py" -m pip install -v --no-build-isolation --no-deps --no-index --no-cache-dir --target "$site" \
      -C build-dir="$build/python-build" -C install.strip=false "$root/python" > "$logs/python-build.full" 2>&1
  local rc=$?
  grep -E "sparcoll(:| python:)" "$logs/python-build.full" | sort -u
  if [ "$rc" -ne 0 ]; then tail -n 40 "$logs/python-build.full"; echo "pip install failed (exit $rc)"; return 1; fi
  echo "built and installed in $((SECONDS - t0)) s"
  # With pytest-xdist, tests run in 4 worker processes: a test that crashes its
  # process is reported as failed and the others still run.
  local xdist=()
  "$py" -c 'import xdist' 2>/dev/null && xdist=(-n 4)
  # PYTHONSAFEPATH: python/ (the source tree, without the compiled module) must
  # not shadow the installed package.
  (cd "$root/python" && PYTHONSAFEPATH=1 PYTHONPATH="$site" PYTHONUNBUFFERED=1 SPARCOLL_TIMEOUT=${SPARCOLL_TIMEOUT:-120} \
     "$py" -c 'import sparcoll; print("sparcoll", sparcoll.__file__, sparcoll.features)' \
   && PYTHONSAFEPATH=1 PYTHONPATH="$site" PYTHONUNBUFFERED=1 SPARCOLL_TIMEOUT=${SPARCOLL_TIMEOUT:-120} \
     "$py" -m pytest -p no:cacheprovider -ra -v -m gpu "${xdist[@]}" tests) > "$logs/python-test.full" 2>&1
  rc=$?
  grep -E "PASSED|FAILED|SKIPPED|ERROR|^sparcoll " "$logs/python-test.full" | head -n 80
  tail -n 15 "$logs/python-test.full"
  if [ "$rc" -eq 0 ] && ! tail -n 1 "$logs/python-test.full" | grep -qE "[0-9]+ passed"; then
    echo "every GPU-marked Python test was skipped: not a pass"; return 1
  fi
  return "$rc"
}
