// The local computation of DSOP, one operation for every algorithm: a
// rectangle of the sum of K outer products,
//
//   dst[i*ldd + j]  (=, or +=)  sum_{q<K} a_q[r0+i] * b_q[c0+j],   i < rows, j < cols
//
// with a_q = a + q*lda and b_q = b + q*ldb (elements of the input type) — a
// GEMM with inner dimension K. K = 1 is one outer product a b^T; K = P with
// the gathered vectors is "my row block of G". The host version is a blocked,
// vectorisable loop; the device version (kernels/dsop.cu) is a custom
// write-bandwidth-bound kernel or cuBLAS, chosen by deviceEngine().
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/comm.h"
#include "core/toolkit.h"

namespace sc::dsop {

struct Pairs {
  const void* a;
  size_t lda;
  const void* b;
  size_t ldb;
  size_t K;
};

struct Rect {
  size_t r0, rows, c0, cols;
};

// Input dtype -> output dtype (float32 for 16-bit inputs); throws
// scInvalidArgument for types DSOP does not support.
scDataType_t outputType(scDataType_t in);

// Runs on the communicator's memory kind (host loop or device kernel on stream).
void rect(scComm& comm, scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate,
          void* stream);

// Elements [e0, e0 + len) of the row-major product matrix with m columns
// (rows r0.. of a_q, all m columns of b_q), written to dst[0 .. len): at most
// three rectangles (a partial first row, whole rows, a partial last row).
void elementRange(scComm& comm, scDataType_t in, const Pairs& p, size_t m, size_t e0, size_t len, void* dst,
                  bool accumulate, void* stream);

// The decomposition behind elementRange: calls f(rect, dstOffset) for each
// rectangle (dstOffset in elements from dst), in increasing element order.
template <typename F>
void forEachRect(size_t m, size_t e0, size_t len, F&& f) {
  size_t row = e0 / m, col = e0 % m, done = 0;
  if (len && col) {  // partial first row
    const size_t w = std::min(m - col, len);
    f(Rect{row, 1, col, w}, done);
    done += w;
    ++row;
  }
  if (len - done >= m) {  // whole rows
    const size_t rows = (len - done) / m;
    f(Rect{row, rows, 0, m}, done);
    done += rows * m;
    row += rows;
  }
  if (len > done) f(Rect{row, 1, 0, len - done}, done);  // partial last row
}

// The host implementation (also the reference the GPU tests compare against).
void hostRect(scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate);

// Device engines: the custom kernel or cuBLAS (cublasGemmEx).
enum class Engine { Auto, Custom, Blas };
// The documented rule for Auto (env SPARCOLL_DSOP_GEMM=custom|cublas forces one):
// custom for K <= kBlasMinK — the result is write-bandwidth bound and the custom
// kernel streams it once; cuBLAS above, where operand reuse in its tiles matters.
constexpr size_t kBlasMinK = 64;
Engine deviceEngine(size_t K);
const char* engineName(Engine e);
// The device implementation: enqueued on `stream` (a cudaStream_t) on the
// device owning dst; engine: Custom or Blas. A ToolkitFn (core/toolkit.h) that
// kernels/dsop.cu provides; a build without CUDA throws scInvalidUsage.
extern ToolkitFn<void(scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate,
                      void* stream, Engine engine)>
    deviceRect;

}  // namespace sc::dsop
