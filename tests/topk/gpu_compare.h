// The GPU top-k tests' comparisons with the CPU reference (gpu_test.cpp,
// gpu_split_test.cpp): a device buffer, a described case, the stateless and
// the error-feedback comparison (indices, value bits, counts, residual bits),
// and an input with zeros, ties, dominant elements and an all-zero stretch.
// Needs a CUDA build (SPARCOLL_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <limits>

#include "topk_util.h"

namespace tk {
inline namespace gpu {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

// A device copy of a host buffer, freed on scope exit.
struct Dev {
  void* p = nullptr;
  size_t bytes = 0;
  explicit Dev(size_t b) : bytes(b ? b : 1) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  // Uploads on the stream the selection runs on: a legacy-stream cudaMemcpy from
  // pageable memory may return before the data lands, and a non-blocking
  // stream does not wait for the legacy stream.
  Dev(const void* host, size_t b, cudaStream_t s) : Dev(b) {
    EXPECT_EQ(cudaMemcpyAsync(p, host, b, cudaMemcpyHostToDevice, s), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  }
  ~Dev() { cudaFree(p); }
  void toHost(void* host, size_t b) const { EXPECT_EQ(cudaMemcpy(host, p, b, cudaMemcpyDeviceToHost), cudaSuccess); }
};

struct Case {
  scTopkConfig_t cfg;
  scDataType_t dt;
  size_t n;
};

inline std::string describe(const Case& c) {
  return sc::cat(scTopkMethodName(c.cfg.method), c.cfg.output == scTopkFixedPerBucket ? "/fixed" : "/var", " dtype ",
                 sc::dtypeName(c.dt), " n ", c.n, " k ", c.cfg.k, " bucket ", c.cfg.bucket,
                 c.cfg.indexType == scTopkIndexU64 ? " u64" : " u32", " step ", c.cfg.step);
}

// Stateless: device result == host result. shift > 0 places the input that
// many elements past an allocation's start (misaligned for vector loads).
inline void compareStateless(const Case& c, const Buf& v, size_t capacity, cudaStream_t stream, size_t shift = 0) {
  SCOPED_TRACE(describe(c) + sc::cat(" shift ", shift));
  const Sel host = select(v, c.cfg, capacity);
  const size_t isz = c.cfg.indexType == scTopkIndexU32 ? 4 : 8, off = shift * esz(c.dt);
  Dev dbuf(v.bytes.size() + off), di(capacity * isz), dval(capacity * esz(c.dt));
  void* in = static_cast<char*>(dbuf.p) + off;
  CUDA_OK(cudaMemcpyAsync(in, v.data(), v.bytes.size(), cudaMemcpyHostToDevice, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  scTopkInfo_t info{};
  const scResult_t rc = scTopkSelect(in, c.n, c.dt, &c.cfg, di.p, dval.p, capacity, &info, stream);
  ASSERT_EQ(rc, host.rc) << scGetLastError(nullptr);
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(info.nnz, host.info.nnz);
  EXPECT_EQ(info.selected, host.info.selected);
  EXPECT_EQ(info.deferred, host.info.deferred);
  std::vector<char> idx(capacity * isz), val(capacity * esz(c.dt));
  di.toHost(idx.data(), idx.size());
  dval.toHost(val.data(), val.size());
  const Sel dev = readBack(idx.data(), val.data(), info.nnz, c.cfg.indexType, c.dt);
  ASSERT_EQ(dev.idx, host.idx);
  ASSERT_EQ(dev.bits, host.bits);
  // The input is untouched.
  std::vector<char> back(v.bytes.size());
  CUDA_OK(cudaMemcpy(back.data(), in, back.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, v.bytes);
}

// Error feedback: host state and device state fed the same gradients.
inline void compareFeedback(const Case& c, const std::vector<Buf>& grads, size_t capacity, cudaStream_t stream) {
  SCOPED_TRACE(describe(c));
  const size_t isz = c.cfg.indexType == scTopkIndexU32 ? 4 : 8, vb = c.n * esz(c.dt);
  scTopkState_t hs = nullptr, ds = nullptr;
  ASSERT_EQ(scTopkStateCreate(&hs, c.n, c.dt, -1), scSuccess);
  ASSERT_EQ(scTopkStateCreate(&ds, c.n, c.dt, 0), scSuccess) << scGetLastError(nullptr);
  void *hr = nullptr, *dr = nullptr;
  scTopkStateResidual(hs, &hr);
  scTopkStateResidual(ds, &dr);
  Dev di(capacity * isz), dval(capacity * esz(c.dt));
  std::vector<char> hidx(capacity * isz), hval(capacity * esz(c.dt)), didx(hidx.size()), dvalh(hval.size()), dres(vb);
  for (const Buf& g : grads) {
    scTopkInfo_t hinfo{}, dinfo{};
    ASSERT_EQ(scTopkSelectFeedback(hs, g.data(), &c.cfg, hidx.data(), hval.data(), capacity, &hinfo, nullptr),
              scSuccess)
        << scGetLastError(nullptr);
    Dev dg(g.data(), vb, stream);
    ASSERT_EQ(scTopkSelectFeedback(ds, dg.p, &c.cfg, di.p, dval.p, capacity, &dinfo, stream), scSuccess)
        << scGetLastError(nullptr);
    CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_EQ(dinfo.nnz, hinfo.nnz);
    EXPECT_EQ(dinfo.selected, hinfo.selected);
    EXPECT_EQ(dinfo.deferred, hinfo.deferred);
    di.toHost(didx.data(), didx.size());
    dval.toHost(dvalh.data(), dvalh.size());
    const Sel h = readBack(hidx.data(), hval.data(), hinfo.nnz, c.cfg.indexType, c.dt);
    const Sel d = readBack(didx.data(), dvalh.data(), dinfo.nnz, c.cfg.indexType, c.dt);
    ASSERT_EQ(d.idx, h.idx);
    // Selected values and the residual are computed (g + r): NaN payloads may differ.
    ASSERT_EQ(nanCanonical(d.bits, c.dt), nanCanonical(h.bits, c.dt));
    CUDA_OK(cudaMemcpy(dres.data(), dr, vb, cudaMemcpyDeviceToHost));
    size_t firstBad = c.n;
    for (size_t i = 0; i < c.n && firstBad == c.n; ++i)
      if (nanCanonical(bitsAt(dres.data(), i, c.dt), c.dt) != nanCanonical(bitsAt(hr, i, c.dt), c.dt)) firstBad = i;
    ASSERT_EQ(firstBad, c.n) << "device residual differs from the CPU reference at element " << firstBad << ": 0x"
                             << std::hex << bitsAt(dres.data(), firstBad, c.dt) << " vs 0x"
                             << bitsAt(hr, firstBad, c.dt);
  }
  scTopkStateDestroy(hs);
  scTopkStateDestroy(ds);
}

inline std::vector<double> adversarial(size_t n, uint64_t seed) {
  std::vector<double> x = randomVector(n, seed);
  for (size_t i = 0; i < n; i += 97) x[i] = 0.0;                        // zeros
  for (size_t i = 5; i < n; i += 1031) x[i] = 1e4;                      // dominant elements (case 2)
  for (size_t i = 700; i < std::min(n, size_t(1400)); ++i) x[i] = 0.0;  // an all-zero stretch
  for (size_t i = 3; i < n; i += 211) x[i] = 0.25;                      // ties
  return x;
}

// The gradients of the feedback comparisons: three adversarial steps, then one
// with an Inf (element 17) and a NaN (element 4000; n > 4000).
inline std::vector<Buf> feedbackGradients(size_t n, scDataType_t dt) {
  std::vector<Buf> grads;
  for (int t = 0; t < 3; ++t) grads.emplace_back(adversarial(n, 50 + t), dt);
  std::vector<double> bad = adversarial(n, 99);
  bad[17] = std::numeric_limits<double>::infinity();
  bad[4000] = std::numeric_limits<double>::quiet_NaN();
  grads.emplace_back(bad, dt);
  return grads;
}

}  // namespace gpu
}  // namespace tk
