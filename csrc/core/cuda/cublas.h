// cuBLAS, loaded when first used.
//
// Why: libcublas.so pulls in libcublasLt.so, whose load alone costs about
// 60 ms and 200 MB of mapped pages per process. Linked, every process that
// loads libsparcoll paid that, even one that never runs a GEMM (CPU
// transports, every rank of an MPI job, `import sparcoll`). Only DSOP's cuBLAS
// engine needs it, so the library opens it there, once per process.
//
// The functions are typed from cuBLAS's own header (decltype), so a changed
// signature fails to compile rather than at run time.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace sc::blas {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  decltype(&cublasSgemm_v2_64) sgemm = nullptr;
  decltype(&cublasDgemm_v2_64) dgemm = nullptr;
  decltype(&cublasGemmEx_64) gemmEx = nullptr;
  decltype(&cublasGetStatusString) statusString = nullptr;
  std::string error;  // why it could not be loaded; empty when it was
};

// The SONAME of the cuBLAS this library was built against (libcublas.so.13).
std::string cublasSoname();

// Opens `soname` and looks up every function; on failure `error` names the
// library and the cause (dlerror, or the functions it lacks).
Cublas loadCublas(const std::string& soname);

// The process's cuBLAS, loaded on the first call, found by its SONAME as the
// dynamic linker would have found a linked one: a copy already loaded (by
// PyTorch, say) is the one used, else LD_LIBRARY_PATH, the library's RUNPATH
// and the system's cache. Throws scCudaError naming the cause when it cannot be
// loaded (every later call fails the same way, without trying again).
const Cublas& cublas();

}  // namespace sc::blas
