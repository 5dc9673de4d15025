// cuBLAS is opened on first use, not linked (core/cuda/cublas.h): loading
// libsparcoll must not load it, the loader finds every function DSOP calls,
// and a library that cannot be opened is named in the error. No device needed.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/cuda/cublas.h"
#include "core/error.h"

namespace {

bool loaded(const std::string& soname) {
  void* h = dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);  // drops only the reference NOLOAD took
  return h != nullptr;
}

// First in the file: nothing has asked for cuBLAS yet in this process, which
// has libsparcoll and the CUDA runtime loaded (linked).
TEST(CublasLoad, NotLoadedWithTheLibrary) {
  EXPECT_FALSE(loaded(sc::blas::cublasSoname()))
      << sc::blas::cublasSoname() << " is loaded before any GEMM: is it linked again?";
}

TEST(CublasLoad, FirstUseLoadsEveryFunction) {
  const sc::blas::Cublas& c = sc::blas::cublas();
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_TRUE(c.create && c.destroy && c.setStream && c.sgemm && c.dgemm && c.gemmEx && c.statusString);
  EXPECT_TRUE(loaded(sc::blas::cublasSoname()));
  EXPECT_STREQ(c.statusString(CUBLAS_STATUS_NOT_INITIALIZED), "the library was not initialized");
  EXPECT_EQ(&sc::blas::cublas(), &c);  // once per process
}

TEST(CublasLoad, MissingLibraryIsNamed) {
  const sc::blas::Cublas c = sc::blas::loadCublas("libcublas.so.999");
  EXPECT_EQ(c.create, nullptr);
  EXPECT_NE(c.error.find("cannot load cuBLAS (libcublas.so.999)"), std::string::npos) << c.error;
}

TEST(CublasLoad, LibraryWithoutTheFunctionsIsNamed) {
  // libm opens, and has none of cuBLAS's functions.
  const sc::blas::Cublas c = sc::blas::loadCublas("libm.so.6");
  EXPECT_NE(c.error.find("libm.so.6 lacks cublasCreate_v2, cublasDestroy_v2"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("built against cuBLAS 13"), std::string::npos) << c.error;
}

}  // namespace
