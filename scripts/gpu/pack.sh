# shellcheck shell=bash disable=SC2015,SC2016,SC2034,SC2154  # globals come from scripts/gpu-check
# The offline-node dependency pack (made by scripts/gpu-pack): what
# scripts/gpu-check --pack does with it (sourced). Packages are unpacked with
# dpkg -x into $deps_prefix, never into /, and their environment is written to
# $deps_prefix/env.sh.


# pack_install <pack dir> <component...>: unpacks the pack's .debs of the
# given components (mpi gtest json) into $deps_prefix with dpkg -x, never into /,
# and writes (and sources) $deps_prefix/env.sh. Libraries the system already
# has are moved aside (so LD_LIBRARY_PATH does not shadow the system's copies)
# unless Open MPI then fails to resolve its libraries.
pack_install() {
  local pk=$1; shift
  local want=" $* " d p comp n=0
  [ -d "$pk/debs" ] || { echo "pack $pk has no debs/ (make it with scripts/gpu-pack)"; return 1; }
  command -v dpkg-deb >/dev/null || command -v ar >/dev/null \
    || { echo "neither dpkg-deb nor ar found: cannot unpack the pack"; return 1; }
  [ -f "$pk/MANIFEST.txt" ] && head -1 "$pk/MANIFEST.txt"
  mkdir -p "$deps_prefix" || return 1
  for d in "$pk"/debs/*.deb; do
    p=$(basename "$d"); p=${p%%_*}
    case $p in googletest) comp=gtest ;; nlohmann-json3-dev) comp=json ;; *) comp=mpi ;; esac
    [[ $want == *" $comp "* ]] || continue
    deb_extract "$d" "$deps_prefix" || { echo "dpkg -x $d failed"; return 1; }
    n=$((n + 1))
    echo "  unpacked $(basename "$d") -> $deps_prefix"
  done
  echo "$n packages unpacked (components: $*)"
  local u=$deps_prefix/usr ml=$deps_prefix/usr/lib/x86_64-linux-gnu f b so
  if [[ $want == *" mpi "* ]] && [ -e "$u/bin/orterun" ]; then
    # Debian alternatives that dpkg -x does not create.
    for b in mpirun mpiexec mpicc mpicxx mpic++ mpiCC; do
      [ -e "$u/bin/$b.openmpi" ] && ln -sfn "$b.openmpi" "$u/bin/$b"
    done
    for f in "$u"/lib/*/lib*.so.*; do  # e.g. usr/lib/libpsm1/libpsm_infinipath.so.1.16
      [ -f "$f" ] && [ ! -L "$f" ] || continue
      case $f in "$ml"/*) continue ;; esac
      so=$(basename "$f" | sed 's/\(\.so\.[0-9]*\).*/\1/')
      [ -e "$ml/$so" ] || ln -s "$f" "$ml/$so"
    done
    local shadow=$deps_prefix/shadowed syslibs moved=0
    mkdir -p "$shadow"
    syslibs=" $(ldconfig -p 2>/dev/null | awk 'NR > 1 {print $1}' | sort -u | tr '\n' ' ') "
    for f in "$ml"/lib*.so.*; do
      b=$(basename "$f")
      case $b in libmpi*|libopen-*|liboshmem*|libmca_common*|libompitrace*) continue ;; esac
      [[ $syslibs == *" $b "* ]] && mv "$f" "$shadow/" && moved=$((moved + 1))
    done
    write_pack_env
    # shellcheck disable=SC1091
    . "$deps_prefix/env.sh"
    if ! pack_libs_resolve; then
      echo "with the system's copies of $moved libraries some did not resolve: using the pack's copies"
      mv "$shadow"/* "$ml"/ 2>/dev/null
      pack_libs_resolve || { echo "Open MPI from the pack does not resolve its libraries:"; pack_libs_resolve -v; }
    else
      echo "$moved libraries the system already has were kept from the system (pack copies in $shadow)"
    fi
  fi
  write_pack_env
  # shellcheck disable=SC1091
  . "$deps_prefix/env.sh"
  echo "environment: $deps_prefix/env.sh"; sed 's/^/  /' "$deps_prefix/env.sh"
}

# deb_extract <deb> <dir>: dpkg -x, or ar + tar where dpkg-deb is missing.
deb_extract() {
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local m z=()
  m=$(ar t "$1" | grep '^data\.tar') || return 1
  case $m in *.xz) z=(-J) ;; *.gz) z=(-z) ;; *.zst) z=(--zstd) ;; *.bz2) z=(-j) ;; esac
  ar p "$1" "$m" | tar -x "${z[@]}" -C "$2" -f -
}

# The pack's Open MPI loads: ldd of its programs and libraries, then ompi_info,
# which opens every component (plugins and their libraries too).
pack_libs_resolve() {
  local u=$deps_prefix/usr ml=$deps_prefix/usr/lib/x86_64-linux-gnu out
  out=$(ldd "$u/bin/orterun" "$u/bin/orted" "$u/bin/opal_wrapper" \
            "$ml"/libmpi.so.40 "$ml"/libopen-pal.so.40 "$ml"/libopen-rte.so.40 2>&1 | grep -E "not found|:$")
  out+=$'\n'$(timeout 60 "$u/bin/ompi_info" 2>&1 >/dev/null; echo "ompi_info exit $?")
  [ "${1:-}" = -v ] && echo "$out"
  ! echo "$out" | grep -qE "not found|unable to open|error while loading|too short|ompi_info exit [1-9]"
}

# env.sh from what the prefix holds; idempotent when sourced again.
write_pack_env() {
  local u=$deps_prefix/usr ml=$deps_prefix/usr/lib/x86_64-linux-gnu
  {
    echo "# written by scripts/gpu-check: the dependencies unpacked from a gpu-pack. Source it."
    echo '_sc_pre() { case ":${!1:-}:" in *":$2:"*) ;; *) export "$1=$2${!1:+:${!1}}" ;; esac; }'
    if [ -e "$u/bin/orterun" ]; then
      echo "_sc_pre PATH $u/bin"
      echo "_sc_pre LD_LIBRARY_PATH $ml/openmpi/lib"
      echo "_sc_pre LD_LIBRARY_PATH $ml"
      echo "export OPAL_PREFIX=$u  # Open MPI relocation"
      echo "export PMIX_PREFIX=$ml/pmix2 PMIX_PKGDATADIR=$ml/pmix2/share/pmix PMIX_PKGLIBDIR=$ml/pmix2/lib/pmix"
      echo "export FI_PROVIDER_PATH=$ml/libfabric"
      echo "export SPARCOLL_MPI_C_COMPILER=$u/bin/mpicc"
      echo "export OMPI_MCA_pml=\${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=\${OMPI_MCA_btl:-self,vader,tcp}  # no RDMA probing"
    fi
    if [ -f "$u/include/nlohmann/json.hpp" ]; then
      echo "_sc_pre CMAKE_PREFIX_PATH $u"
      echo "export SPARCOLL_JSON_INCLUDE_DIR=$u/include"
    fi
    [ -f "$u/src/googletest/CMakeLists.txt" ] && echo "export SPARCOLL_GTEST_SOURCE_DIR=$u/src/googletest"
    echo "unset -f _sc_pre"
  } > "$deps_prefix/env.sh"
}
