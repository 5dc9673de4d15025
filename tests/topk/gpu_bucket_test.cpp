// GPU approximate top-k with large buckets (label gpu): buckets of 2^16 and
// more, one bucket holding the whole vector (bucket = n, and bucket = 2^32 > n),
// against the CPU reference bit for bit (indices, value bits, counts; with
// error feedback the residual too), under both approx designs. The block
// design processes a bucket larger than its tile (2048 elements) in one
// thread block, in several passes over its tiles (count, then place with
// running ranks): these cases are the ones where the block's counts and ranks
// exceed a tile and, at bucket = n, where every output slot belongs to one
// block. The split design cuts them into chunks over the whole GPU: these
// cases combine many chunks' norms and counts per bucket. Skips without a
// CUDA device.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "common/harness.h"
#include "topk_util.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu/gpu_util.h"
#endif

using namespace tk;

#ifdef SPARCOLL_HAVE_CUDA
namespace {

using gputest::DevBuf;

// Random values with zeros, a zero stretch longer than a tile, dominant
// elements (the epsilon-shifted case 2 of the selection probability) and ties.
std::vector<double> vectorWithStructure(size_t n, uint64_t seed) {
  std::vector<double> x = randomVector(n, seed);
  for (size_t i = 0; i < n; i += 89) x[i] = 0.0;
  for (size_t i = 11; i < n; i += 40009) x[i] = 1e4;
  for (size_t i = 3000; i < std::min(n, size_t(8000)); ++i) x[i] = 0.0;
  for (size_t i = 5; i < n; i += 307) x[i] = -0.5;
  return x;
}

std::string describe(const scTopkConfig_t& c, scDataType_t dt, size_t n, size_t shift) {
  return sc::cat(scTopkMethodName(c.method), c.output == scTopkFixedPerBucket ? "/fixed" : "/var", " ",
                 sc::dtypeName(dt), " n ", n, " k ", c.k, " bucket ", c.bucket,
                 c.indexType == scTopkIndexU64 ? " u64" : " u32", " shift ", shift);
}

// Stateless: the device selection equals the CPU reference's; the input is
// untouched. shift > 0 puts the input that many elements past an allocation's
// start (unaligned for the vector loads).
void compareWithHost(const Buf& v, const scTopkConfig_t& cfg, size_t capacity, cudaStream_t s, size_t shift = 0) {
  const size_t n = v.size(), e = esz(v.dt), isz = cfg.indexType == scTopkIndexU32 ? 4 : 8;
  SCOPED_TRACE(describe(cfg, v.dt, n, shift));
  const Sel host = select(v, cfg, capacity);
  DevBuf in((n + shift) * e), di(capacity * isz), dval(capacity * e);
  char* p = in.get() + shift * e;
  gputest::upload(p, v.data(), n * e, s);
  scTopkInfo_t info{};
  ASSERT_EQ(scTopkSelect(p, n, v.dt, &cfg, di.get(), dval.get(), capacity, &info, s), host.rc)
      << scGetLastError(nullptr);
  EXPECT_EQ(info.nnz, host.info.nnz);
  EXPECT_EQ(info.selected, host.info.selected);
  EXPECT_EQ(info.deferred, host.info.deferred);
  const auto idx = gputest::download(di.get(), info.nnz * isz, s), val = gputest::download(dval.get(), info.nnz * e, s);
  const Sel dev = readBack(idx.data(), val.data(), info.nnz, cfg.indexType, v.dt);
  ASSERT_EQ(dev.idx, host.idx);
  ASSERT_EQ(dev.bits, host.bits);
  EXPECT_TRUE(gputest::download(p, n * e, s) == std::vector<uint8_t>(v.bytes.begin(), v.bytes.end()))
      << "the input was modified";
}

// Runs body under both approx designs (SPARCOLL_TOPK_KERNEL): the thread
// block per bucket, and the split one (chunks over the whole GPU for these
// large buckets).
template <class Body>
void forEachDesign(Body body) {
  for (const char* design : {"block", "split"}) {
    SCOPED_TRACE(design);
    setenv("SPARCOLL_TOPK_KERNEL", design, 1);
    body();
  }
  unsetenv("SPARCOLL_TOPK_KERNEL");
}

size_t maxOutput(size_t n, const scTopkConfig_t& cfg) {
  size_t cap = 0;
  EXPECT_EQ(scTopkMaxOutput(n, &cfg, &cap), scSuccess) << scGetLastError(nullptr);
  return cap;
}

}  // namespace
#endif

// Buckets of 2^16 elements and more, several per vector (the last partial),
// one bigger than the vector, every dtype, both methods and output modes.
TEST(TopkGpuBuckets, LargeBucketsMatchTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  gputest::Stream s(0, cudaStreamNonBlocking);
  const size_t n = 200003;
  int variant = 0;
  forEachDesign([&] {
    for (scDataType_t dt : {scFloat32, scFloat16, scBfloat16, scFloat64}) {
      const Buf v(vectorWithStructure(n, 7 + dt), dt);
      for (size_t bucket : {size_t(1) << 16, (size_t(1) << 16) + 1, size_t(1) << 17, size_t(1) << 20, size_t(1) << 32})
        for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost})
          for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket})
            for (size_t k : {n / 1000 + 1, n / 20}) {
              scTopkConfig_t cfg = config(m, k, bucket, 99 + k, 4);
              cfg.output = out;
              cfg.indexType = ++variant % 2 ? scTopkIndexU32 : scTopkIndexU64;
              compareWithHost(v, cfg, maxOutput(n, cfg), s.get(), size_t(variant % 3 == 0));
              // Variable output into k slots: more may be selected (the first k
              // are kept, scInvalidUsage), on both sides alike.
              if (out == scTopkVariable) compareWithHost(v, cfg, k, s.get());
            }
    }
  });
#endif
}

// One bucket holding the whole vector: sizes around the tile (2048) and far
// past it, k from 1 to n (all selected).
TEST(TopkGpuBuckets, BucketEqualsN) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  gputest::Stream s(0, cudaStreamNonBlocking);
  forEachDesign([&] {
    for (size_t n : {size_t(1), size_t(2), size_t(1000), size_t(2047), size_t(2048), size_t(2049), size_t(65536),
                     (size_t(1) << 20) + 3, (size_t(1) << 22) + 5})
      for (scDataType_t dt : {scFloat32, scFloat16}) {
        const Buf v(vectorWithStructure(n, n + dt), dt);
        std::vector<size_t> ks = {1, n / 100 + 1, n};
        std::sort(ks.begin(), ks.end());
        ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
        for (size_t k : ks)
          for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost})
            for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket}) {
              scTopkConfig_t cfg = config(m, k, n, 5 * n + k, 1);
              cfg.output = out;
              cfg.indexType = (k + n) % 2 ? scTopkIndexU32 : scTopkIndexU64;
              compareWithHost(v, cfg, maxOutput(n, cfg), s.get(), n % 2);
            }
      }
  });
#endif
}

// Error feedback with large buckets: the same selections, sent values and
// residual as a host state fed the same gradients (NaN and Inf included),
// with capacity k so that selected entries beyond it are deferred.
TEST(TopkGpuBuckets, FeedbackWithLargeBuckets) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  gputest::Stream s;
  const size_t n = 300007;
  forEachDesign([&] {
    for (scDataType_t dt : {scFloat32, scFloat16, scBfloat16})
      for (size_t bucket : {size_t(1) << 16, n})
        for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket}) {
          scTopkConfig_t cfg = config(scTopkApprox, 2000, bucket, 31);
          cfg.output = out;
          SCOPED_TRACE(describe(cfg, dt, n, 0));
          const size_t cap = 2000, e = esz(dt);
          scTopkState_t hs = nullptr, ds = nullptr;
          ASSERT_EQ(scTopkStateCreate(&hs, n, dt, -1), scSuccess);
          ASSERT_EQ(scTopkStateCreate(&ds, n, dt, 0), scSuccess) << scGetLastError(nullptr);
          void *hr = nullptr, *dr = nullptr;
          scTopkStateResidual(hs, &hr);
          scTopkStateResidual(ds, &dr);
          DevBuf dg(n * e), di(cap * 4), dv(cap * e);
          std::vector<uint32_t> hidx(cap);
          std::vector<char> hval(cap * e);
          for (int t = 0; t < 3; ++t) {
            std::vector<double> g = vectorWithStructure(n, 1000 + t);
            if (t == 2) {
              g[17] = std::numeric_limits<double>::infinity();
              g[n - 3] = std::numeric_limits<double>::quiet_NaN();
            }
            const Buf gb(g, dt);
            gputest::upload(dg.get(), gb.data(), n * e, s.get());
            scTopkInfo_t hinfo{}, dinfo{};
            ASSERT_EQ(scTopkSelectFeedback(hs, gb.data(), &cfg, hidx.data(), hval.data(), cap, &hinfo, nullptr),
                      scSuccess)
                << scGetLastError(nullptr);
            ASSERT_EQ(scTopkSelectFeedback(ds, dg.get(), &cfg, di.get(), dv.get(), cap, &dinfo, s), scSuccess)
                << scGetLastError(nullptr);
            EXPECT_EQ(dinfo.nnz, hinfo.nnz);
            EXPECT_EQ(dinfo.selected, hinfo.selected);
            EXPECT_EQ(dinfo.deferred, hinfo.deferred);
            const auto gi = gputest::download(di.get(), dinfo.nnz * 4, s.get());
            const auto gv = gputest::download(dv.get(), dinfo.nnz * e, s.get());
            const Sel d = readBack(gi.data(), gv.data(), dinfo.nnz, scTopkIndexU32, dt);
            const Sel h = readBack(hidx.data(), hval.data(), hinfo.nnz, scTopkIndexU32, dt);
            ASSERT_EQ(d.idx, h.idx) << "step " << t;
            // Sent values and the residual are computed (g + r): NaN payloads may differ.
            ASSERT_EQ(nanCanonical(d.bits, dt), nanCanonical(h.bits, dt)) << "step " << t;
            const auto res = gputest::download(dr, n * e, s.get());
            size_t bad = 0, first = n;
            for (size_t i = 0; i < n; ++i)
              if (nanCanonical(bitsAt(res.data(), i, dt), dt) != nanCanonical(bitsAt(hr, i, dt), dt) && !bad++)
                first = i;
            ASSERT_EQ(bad, 0u) << "step " << t << ": residual differs in " << bad << " elements, first " << first;
          }
          scTopkStateDestroy(hs);
          scTopkStateDestroy(ds);
        }
  });
#endif
}
