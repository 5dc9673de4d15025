#include "core/cuda/cublas.h"

#include <dlfcn.h>

#include <type_traits>

#include "core/error.h"

namespace sc::blas {

std::string cublasSoname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

Cublas loadCublas(const std::string& soname) {
  Cublas c;
  void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: handles outlive any call
  if (!h) {
    const char* why = dlerror();
    c.error = "cannot load cuBLAS (" + soname + "): " + (why ? why : "not found");
    return c;
  }
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  // The exported names behind cublas_v2.h's macros (cublasCreate -> cublasCreate_v2).
  sym(c.create, "cublasCreate_v2");
  sym(c.destroy, "cublasDestroy_v2");
  sym(c.setStream, "cublasSetStream_v2");
  sym(c.sgemm, "cublasSgemm_v2_64");
  sym(c.dgemm, "cublasDgemm_v2_64");
  sym(c.gemmEx, "cublasGemmEx_64");
  sym(c.statusString, "cublasGetStatusString");
  if (!missing.empty())
    c.error = soname + " lacks " + missing + " (sparcoll was built against cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
              "." + std::to_string(CUBLAS_VER_MINOR) + ")";
  return c;
}

const Cublas& cublas() {
  static const Cublas c = loadCublas(cublasSoname());  // once per process, thread-safe
  SC_REQUIRE(c.error.empty(), scCudaError, c.error,
             "; DSOP's cuBLAS engine needs it (SPARCOLL_DSOP_GEMM=custom runs sparcoll's own kernel instead)");
  return c;
}

}  // namespace sc::blas
