// Device DSOP kernels.
//
// Custom kernel (element arithmetic shared with the host loop: dsop/tile_math.h):
// the result of a GEMM with a small inner dimension K is written
// once and read never, so the kernel is built around the store stream. A block
// of 256 threads owns ROWS rows x 256*VEC columns; every thread keeps its
// ROWS x VEC results in registers, loops over the K pairs (the a coefficient is
// one broadcast load per warp, the b values are coalesced loads that the
// ROWS rows of the block share), then writes each result once with a
// streaming store (__stcs: the output should not evict the operands from L2).
// Columns are strided by blockDim so every store instruction of a warp is one
// contiguous 128-byte (float32) segment for any alignment of dst and ldd.
//
// cuBLAS: the row-major rectangle is the column-major cols x rows matrix
// C = X * Y with X[j,q] = b_q[c0+j] (ld ldb, no transpose) and
// Y[q,i] = a_q[r0+i] (the transpose of a rows x K matrix with ld lda).
// cublasSgemm_64 / cublasDgemm_64 for float32 / float64, cublasGemmEx_64 with
// float32 compute for 16-bit inputs. Handles are cached per thread and device.
// cuBLAS is loaded when the first of them is made (core/cuda/cublas.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <map>

#include "dsop/kernels.h"
#include "core/cuda/cublas.h"
#include "dsop/tile_math.h"
#include "dsop_device.cuh"

namespace sc::dsop {
namespace {

constexpr int kThreads = 256, kRows = 4, kVec = 4;

// Read-only cached loads; the 16-bit storage types load their bits.
template <typename T>
__device__ __forceinline__ T ldg(const T* p) {
  return __ldg(p);
}
__device__ __forceinline__ Half ldg(const Half* p) { return {__ldg(&p->bits)}; }
__device__ __forceinline__ BFloat16 ldg(const BFloat16* p) { return {__ldg(&p->bits)}; }

template <typename In, typename Out>
__global__ void __launch_bounds__(kThreads)
    rectKernel(const In* __restrict__ A, size_t lda, const In* __restrict__ B, size_t ldb, size_t K, size_t r0,
               size_t rows, size_t c0, size_t cols, Out* __restrict__ dst, size_t ldd, bool accumulate) {
  const size_t col = size_t(blockIdx.x) * (kThreads * kVec) + threadIdx.x;
  const size_t rowBlocks = (rows + kRows - 1) / kRows;
  for (size_t rb = blockIdx.y; rb < rowBlocks; rb += gridDim.y) {
    const size_t row = rb * kRows;
    Out acc[kRows][kVec];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int v = 0; v < kVec; ++v) acc[r][v] = Out(0);
    for (size_t q = 0; q < K; ++q) {
      const In* bq = B + q * ldb + c0;
      const In* aq = A + q * lda + r0 + row;
      Out bv[kVec], av[kRows];
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const size_t c = col + size_t(v) * kThreads;
        bv[v] = c < cols ? Out(widen(ldg(bq + c))) : Out(0);
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) av[r] = row + r < rows ? Out(widen(ldg(aq + r))) : Out(0);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int v = 0; v < kVec; ++v) acc[r][v] += av[r] * bv[v];
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row + r >= rows) break;
      Out* d = dst + (row + r) * ldd;
#pragma unroll
      for (int v = 0; v < kVec; ++v) {
        const size_t c = col + size_t(v) * kThreads;
        if (c >= cols) break;
        if (accumulate) d[c] += acc[r][v];
        else __stcs(d + c, acc[r][v]);
      }
    }
  }
}

void blasCheck(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) SC_THROW(scCudaError, what, " failed: ", blas::cublas().statusString(s));
}

// One cuBLAS handle per (thread, device): a handle must not be used by two
// threads at once, and local communicators run one thread per rank.
cublasHandle_t handleFor(int device) {
  struct Cache {
    std::map<int, cublasHandle_t> h;
    ~Cache() {
      for (auto& [d, handle] : h) {
        cudaSetDevice(d);
        blas::cublas().destroy(handle);
      }
    }
  };
  thread_local Cache cache;
  auto it = cache.h.find(device);
  if (it != cache.h.end()) return it->second;
  cublasHandle_t h = nullptr;
  blasCheck(blas::cublas().create(&h), "cublasCreate");
  cache.h[device] = h;
  return h;
}

template <typename In, typename Out>
void launchCustom(const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate, cudaStream_t s) {
  const size_t colBlocks = (r.cols + kThreads * kVec - 1) / (kThreads * kVec);
  const size_t rowBlocks = (r.rows + kRows - 1) / kRows;
  SC_ARG(colBlocks <= 0x7fffffffu, "DSOP rectangle with ", r.cols, " columns is too wide for one launch");
  const dim3 grid(unsigned(colBlocks), unsigned(std::min<size_t>(rowBlocks, 65535)));
  rectKernel<In, Out><<<grid, kThreads, 0, s>>>(static_cast<const In*>(p.a), p.lda, static_cast<const In*>(p.b), p.ldb,
                                                p.K, r.r0, r.rows, r.c0, r.cols, static_cast<Out*>(dst), ldd,
                                                accumulate);
  SC_CUDA_CHECK(cudaGetLastError());
}

void launchBlas(scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate, cudaStream_t s,
                int device) {
  cublasHandle_t h = handleFor(device);
  const blas::Cublas& lib = blas::cublas();
  blasCheck(lib.setStream(h, s), "cublasSetStream");
  const size_t esz = dtypeSize(in);
  const void* X = static_cast<const char*>(p.b) + r.c0 * esz;
  const void* Y = static_cast<const char*>(p.a) + r.r0 * esz;
  // With one pair the stride between pairs is irrelevant; cuBLAS still wants ld >= rows.
  const int64_t ldx = int64_t(std::max(p.ldb, r.cols)), ldy = int64_t(std::max(p.lda, r.rows));
  const int64_t M = int64_t(r.cols), N = int64_t(r.rows), K = int64_t(p.K), ldc = int64_t(ldd);
  if (in == scFloat64) {
    const double one = 1, beta = accumulate ? 1 : 0;
    blasCheck(lib.dgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, static_cast<const double*>(X), ldx,
                        static_cast<const double*>(Y), ldy, &beta, static_cast<double*>(dst), ldc),
              "cublasDgemm_64");
  } else if (in == scFloat32) {
    const float one = 1, beta = accumulate ? 1 : 0;
    blasCheck(lib.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, static_cast<const float*>(X), ldx,
                        static_cast<const float*>(Y), ldy, &beta, static_cast<float*>(dst), ldc),
              "cublasSgemm_64");
  } else {
    const cudaDataType t = in == scFloat16 ? CUDA_R_16F : CUDA_R_16BF;
    const float one = 1, beta = accumulate ? 1 : 0;
    blasCheck(lib.gemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, X, t, ldx, Y, t, ldy, &beta, dst, CUDA_R_32F, ldc,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx_64");
  }
}

void rectOnDevice(scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate, void* stream,
                  Engine engine) {
  if (r.rows == 0 || r.cols == 0) return;
  SC_REQUIRE(p.K > 0, scInternalError, "DSOP kernel called with no vector pairs");
  OnDeviceOf on(dst);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (engine == Engine::Blas) return launchBlas(in, p, r, dst, ldd, accumulate, s, on.device());
  switch (in) {
    case scFloat32: return launchCustom<float, Acc<float>>(p, r, dst, ldd, accumulate, s);
    case scFloat64: return launchCustom<double, Acc<double>>(p, r, dst, ldd, accumulate, s);
    case scFloat16: return launchCustom<Half, Acc<Half>>(p, r, dst, ldd, accumulate, s);
    case scBfloat16: return launchCustom<BFloat16, Acc<BFloat16>>(p, r, dst, ldd, accumulate, s);
    default: SC_THROW(scInvalidArgument, "DSOP does not support data type ", dtypeName(in));
  }
}

}  // namespace

SC_PROVIDE(deviceRect, rectOnDevice);

}  // namespace sc::dsop
