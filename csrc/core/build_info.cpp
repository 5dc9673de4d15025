// scGetBuildInfo: what a result file needs to say about the library that made
// it (the benchmarks write it into every record): version, commit, and the
// versions of the MPI, NCCL and CUDA libraries it runs on, read at run time.
#include <cstdio>
#include <string>

#include "sparcoll/sparcoll.h"

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif
#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef SPARCOLL_HAVE_NCCL
#include <nccl.h>
#endif

#include "sparcoll_commit.h"  // SPARCOLL_GIT_COMMIT, written at build time (cmake/commit.cmake)

namespace {

std::string describe() {
  std::string s = "sparcoll " + std::to_string(SPARCOLL_VERSION_MAJOR) + "." + std::to_string(SPARCOLL_VERSION_MINOR) +
                  "." + std::to_string(SPARCOLL_VERSION_PATCH) + "; commit " + SPARCOLL_GIT_COMMIT;
#ifdef SPARCOLL_HAVE_MPI
  // MPI_Get_library_version may be called before MPI_Init (MPI-3.0, 8.1.1);
  // its first line names the implementation and version.
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS) {
    std::string v(mpi, size_t(len > 0 ? len : 0));
    v = v.substr(0, v.find_first_of("\n,"));
    s += "; mpi " + v;
  }
#else
  s += "; mpi none";
#endif
#ifdef SPARCOLL_HAVE_CUDA
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  char cuda[96];
  if (drv)
    std::snprintf(cuda, sizeof cuda, "; cuda runtime %d.%d, driver %d.%d", rt / 1000, rt % 1000 / 10, drv / 1000,
                  drv % 1000 / 10);
  else std::snprintf(cuda, sizeof cuda, "; cuda runtime %d.%d, no driver", rt / 1000, rt % 1000 / 10);
  s += cuda;
#else
  s += "; cuda none";
#endif
#ifdef SPARCOLL_HAVE_NCCL
  int nv = 0;
  ncclGetVersion(&nv);
  s += "; nccl " + std::to_string(nv / 10000) + "." + std::to_string(nv / 100 % 100) + "." + std::to_string(nv % 100);
#else
  s += "; nccl none";
#endif
  return s;
}

}  // namespace

extern "C" const char* scGetBuildInfo(void) {
  static const std::string info = describe();
  return info.c_str();
}
