// GPU top-k (label gpu): every kernel path must select exactly the elements the
// CPU reference selects for the same (seed, step, input): same indices, same
// value bits, same counts, and with error feedback the same residual bits.
// Skips with a message when there is no CUDA device (or no CUDA build).
#include <cstdlib>
#include <limits>
#include <random>

#include "common/harness.h"
#include "topk/radix_select.h"
#include "topk_util.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu_compare.h"
#endif

using namespace tk;

TEST(TopkGpu, EveryKernelMatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    for (size_t n : {size_t(1), size_t(1000), size_t(70001)}) {
      const Buf v(adversarial(n, n + dt), dt);
      for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold, scTopkBracket}) {
        const bool bucketed = m == scTopkApprox || m == scTopkApproxAtMost;
        // Bucket sizes hit both tile configurations, multi-tile buckets and bucket 1.
        for (size_t bucket : bucketed ? std::vector<size_t>{512, 1, 100, 2048, 5000} : std::vector<size_t>{512}) {
          for (int fixed = 0; fixed < (bucketed ? 2 : 1); ++fixed) {
            for (size_t k : {size_t(1), n / 50 + 1, n}) {
              Case c{config(m, k, bucket, 1234 + k, 3), dt, n};
              c.cfg.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
              c.cfg.indexType = (k & 1) ? scTopkIndexU32 : scTopkIndexU64;
              size_t cap = 0;
              ASSERT_EQ(scTopkMaxOutput(n, &c.cfg, &cap), scSuccess);
              compareStateless(c, v, cap, stream);
              if (bucketed && !fixed) compareStateless(c, v, k, stream);  // overflow: scInvalidUsage on both
            }
          }
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

// Vectors long enough for the sample, the candidate list and the select among
// candidates, and each branch after the pass: a normal vector (the band
// select), few levels (ties at every cut), 99 % zeros (bracket keeps only the
// nonzeros, exact falls back), all equal (the list overflows).
TEST(TopkGpu, SampledSelectionMatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t n = (size_t(1) << 20) + 7;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> shapes(4, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) {
    const double x = normal(rng);
    shapes[0][i] = x;
    shapes[1][i] = std::round(4 * x) / 4;
    shapes[2][i] = i % 100 == 7 ? x : 0.0;
    shapes[3][i] = i % 2 ? 1.5 : -1.5;
  }
  for (scDataType_t dt : {scFloat32, scFloat16, scFloat64})
    for (const auto& x : shapes) {
      const Buf v(x, dt);
      for (scTopkMethod_t m : {scTopkBracket, scTopkExact, scTopkThreshold})
        for (size_t k : {size_t(3), n / 1000, n / 100, n / 50})
          for (uint64_t step : {0, 1}) {
            Case c{config(m, k, 0, 99 + k, step), dt, n};
            c.cfg.indexType = step ? scTopkIndexU64 : scTopkIndexU32;
            compareStateless(c, v, k, stream);
            compareStateless(c, v, k, stream, 1);  // misaligned: the pass's scalar loads
          }
    }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

TEST(TopkGpu, FeedbackMatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  const size_t n = 30011;
  for (scDataType_t dt : {scFloat32, scFloat16, scFloat64, scBfloat16}) {
    const std::vector<Buf> grads = feedbackGradients(n, dt);
    for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold, scTopkBracket}) {
      const bool bucketed = m == scTopkApprox || m == scTopkApproxAtMost;
      for (int fixed = 0; fixed < (bucketed ? 2 : 1); ++fixed) {
        for (size_t bucket : bucketed ? std::vector<size_t>{512, 3000} : std::vector<size_t>{512}) {
          Case c{config(m, 300, bucket, 77), dt, n};
          c.cfg.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
          compareFeedback(c, grads, n, stream);
          if (bucketed && !fixed) compareFeedback(c, grads, 300, stream);  // deferral to the residual
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

// SPARCOLL_TOPK_TILE picks the kernel's tile shape; every shape must select
// what the reference selects, on aligned and misaligned inputs, buckets that
// start at multiples of 4 or not (the Philox fast path or the general one),
// one-tile and multi-tile buckets; a bad value is a clear error.
TEST(TopkGpu, EveryTileShapeMatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  // The tile shapes belong to the thread-block-per-bucket design.
  ASSERT_EQ(setenv("SPARCOLL_TOPK_KERNEL", "block", 1), 0);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  const size_t n = 70001;
  for (const char* tile : {"128x4", "64x8", "256x8", "auto"}) {
    ASSERT_EQ(setenv("SPARCOLL_TOPK_TILE", tile, 1), 0);
    SCOPED_TRACE(tile);
    for (scDataType_t dt : {scFloat32, scFloat16, scFloat64}) {
      const Buf v(adversarial(n, 7 + dt), dt);
      for (size_t bucket : {size_t(512), size_t(513), size_t(3000), size_t(7)}) {
        for (int fixed = 0; fixed < 2; ++fixed) {
          for (size_t shift : {size_t(0), size_t(1)}) {
            Case c{config(scTopkApprox, n / 100, bucket, 42, 5), dt, n};
            c.cfg.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
            size_t cap = 0;
            ASSERT_EQ(scTopkMaxOutput(n, &c.cfg, &cap), scSuccess);
            compareStateless(c, v, cap, stream, shift);
          }
        }
      }
    }
  }
  ASSERT_EQ(setenv("SPARCOLL_TOPK_TILE", "96x3", 1), 0);
  const Buf v(randomVector(1000, 3), scFloat32);
  Dev dv(v.data(), v.bytes.size(), stream), di(1000 * 4), dval(1000 * 4);
  const scTopkConfig_t cfg = config(scTopkApprox, 10, 512, 1);
  EXPECT_EQ(scTopkSelect(dv.p, 1000, scFloat32, &cfg, di.p, dval.p, 1000, nullptr, stream), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("SPARCOLL_TOPK_TILE"), std::string::npos);
  unsetenv("SPARCOLL_TOPK_TILE");
  unsetenv("SPARCOLL_TOPK_KERNEL");
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

TEST(TopkGpu, FixedAndExactDoNotNeedInfo) {
  // Asynchronous path (info == NULL): the result after a stream sync is the reference's.
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  const size_t n = 1 << 18, k = n / 1000;
  const Buf v(randomVector(n, 4), scFloat32);
  for (scTopkMethod_t m : {scTopkApprox, scTopkExact}) {
    scTopkConfig_t cfg = config(m, k, 512, 8);
    if (m == scTopkApprox) cfg.output = scTopkFixedPerBucket;
    const Sel host = select(v, cfg, k);
    Dev dv(v.data(), v.bytes.size(), nullptr), di(k * 4), dval(k * 4);
    ASSERT_EQ(scTopkSelect(dv.p, n, scFloat32, &cfg, di.p, dval.p, k, nullptr, nullptr), scSuccess)
        << scGetLastError(nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint32_t> idx(k);
    std::vector<float> val(k);
    di.toHost(idx.data(), k * 4);
    dval.toHost(val.data(), k * 4);
    const Sel dev = readBack(idx.data(), val.data(), k, scTopkIndexU32, scFloat32);
    EXPECT_EQ(dev.idx, host.idx);
    EXPECT_EQ(dev.bits, host.bits);
  }
#endif
}

TEST(TopkGpu, RejectsMixedMemoryKinds) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  std::vector<float> host(100, 1.0f);
  Dev dv(host.data(), 400, nullptr), di(800), dval(400);
  std::vector<uint64_t> hidx(100);
  scTopkConfig_t cfg = config(scTopkExact, 10);
  cfg.indexType = scTopkIndexU64;
  EXPECT_EQ(scTopkSelect(dv.p, 100, scFloat32, &cfg, hidx.data(), dval.p, 100, nullptr, nullptr), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("indices is in host memory"), std::string::npos)
      << scGetLastError(nullptr);
  scTopkState_t st = nullptr;
  ASSERT_EQ(scTopkStateCreate(&st, 100, scFloat32, 0), scSuccess);
  EXPECT_EQ(scTopkSelectFeedback(st, host.data(), &cfg, di.p, dval.p, 100, nullptr, nullptr), scInvalidArgument);
  scTopkStateDestroy(st);
#endif
}

TEST(TopkGpu, TheDefaultPoolIsLeftAlone) {
  // Scratch comes from sparcoll's own pool: the device's default pool, which
  // an application may tune, keeps its release threshold and serves nothing.
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  const size_t n = 1 << 20, k = n / 100;
  const Buf v(randomVector(n, 5), scFloat32);
  Dev dv(v.data(), v.bytes.size(), nullptr), di(n * 4), dval(n * 4);
  int dev = 0;
  cudaMemPool_t pool;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, dev));
  uint64_t before = 0, zero = 0;
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  for (scTopkMethod_t m : {scTopkBracket, scTopkExact, scTopkThreshold, scTopkApprox}) {
    scTopkConfig_t cfg = config(m, k, 0);
    ASSERT_EQ(scTopkSelect(dv.p, n, scFloat32, &cfg, di.p, dval.p, n, nullptr, nullptr), scSuccess)
        << scGetLastError(nullptr);
  }
  CUDA_OK(cudaDeviceSynchronize());
  uint64_t after = 0, used = 0;
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &after));
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used));
  EXPECT_EQ(after, before) << "top-k changed the default pool's release threshold";
  EXPECT_EQ(used, 0u) << "top-k allocated from the default pool";
#endif
}

TEST(TopkGpu, ExactAllKeysEqualAtLargeN) {
  // 2^26 equal magnitudes (both signs): every histogram pass sees one bin, the
  // tie select runs over 26 index bits, and the output is the first k indices.
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t n = size_t(1) << 26;
  std::vector<float> host(n, 3.0f);
  for (size_t i = 1; i < n; i += 2) host[i] = -3.0f;
  Dev dv(host.data(), n * 4, stream);
  for (size_t k : {size_t(1), n / 1000 + 1, n - 5, n}) {
    SCOPED_TRACE(sc::cat("k ", k));
    Dev di(k * 4), dval(k * 4);
    scTopkConfig_t cfg = config(scTopkExact, k);
    scTopkInfo_t info{};
    ASSERT_EQ(scTopkSelect(dv.p, n, scFloat32, &cfg, di.p, dval.p, k, &info, stream), scSuccess)
        << scGetLastError(nullptr);
    CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_EQ(info.nnz, k);
    std::vector<uint32_t> idx(k);
    std::vector<float> val(k);
    di.toHost(idx.data(), k * 4);
    dval.toHost(val.data(), k * 4);
    size_t firstBad = k;
    for (size_t j = 0; j < k && firstBad == k; ++j)
      if (idx[j] != j || val[j] != host[j]) firstBad = j;
    ASSERT_EQ(firstBad, k) << "entry " << firstBad << ": index " << idx[firstBad] << " value " << val[firstBad];
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

TEST(TopkGpu, ExactMatchesTheCpuAtManySizes) {
  // n around powers of two and digit boundaries, k from 1 to n, random and
  // heavily tied data (ties straddle T at most k), every dtype and index width.
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    for (size_t n : {size_t(2), size_t(3), size_t(2047), size_t(2049), size_t(100003), size_t(1) << 21}) {
      std::vector<double> tied(n);
      std::mt19937_64 rng(n);
      for (auto& e : tied) e = double(int(rng() % 9) - 4);
      for (int ties = 0; ties < 2; ++ties) {
        const Buf v(ties ? tied : adversarial(n, n + dt), dt);
        for (size_t k : {size_t(1), size_t(2), n / 7 + 1, n / 2, n - 1, n}) {
          if (k == 0 || k > n) continue;
          Case c{config(scTopkExact, k), dt, n};
          c.cfg.indexType = (k & 1) ? scTopkIndexU32 : scTopkIndexU64;
          compareStateless(c, v, k, stream);
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

TEST(TopkGpu, ThresholdWithManyCandidatesMatchesTheCpu) {
  // Half the keys above the cut (the candidate list overflows its bound: the
  // whole vector is rescanned), tied integers (the candidates exceed k but fit
  // the list: the exact top-k of the list), random data (the candidates
  // usually are the output), all keys equal.
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t n = (size_t(1) << 20) + 5;
  std::mt19937_64 rng(17);
  std::vector<double> half = randomVector(n, 2, 0.1), tied(n);
  for (auto& e : half) e = (rng() & 1) ? ((rng() & 2) ? 4.0 : -4.0) : std::fmax(-1.0, std::fmin(1.0, e));
  for (auto& e : tied) e = double(int(rng() % 41) - 20);
  for (scDataType_t dt : {scFloat32, scFloat16, scFloat64}) {
    const Buf bufs[] = {Buf(half, dt), Buf(tied, dt), Buf(randomVector(n, 3), dt),
                        Buf(std::vector<double>(n, -0.5), dt)};
    for (const Buf& v : bufs) {
      for (size_t k : {size_t(1), size_t(1000), n / 50, n / 3}) {
        for (uint64_t step = 0; step < 3; ++step) {
          Case c{config(scTopkThreshold, k, 512, 99, step), dt, n};
          c.cfg.indexType = step == 1 ? scTopkIndexU64 : scTopkIndexU32;
          compareStateless(c, v, k, stream);
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}
