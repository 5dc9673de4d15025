// DSOP on the GPU (label gpu; skipped without a device):
//  - the device kernel, both engines (custom and cuBLAS), against the host
//    kernel on the same integer-valued operands: every type, K around the
//    engine threshold, rectangle offsets, row strides, accumulate;
//  - every algorithm on device memory over the local transport (P threads on
//    device 0), under both engines, against the sequential reference;
//  - sparse DSOP on device memory (CUB unions, densify, scatter);
//  - host pointers on a device communicator are rejected.
#include <cmath>
#include <cstdlib>
#include <set>

#include "common/harness.h"
#include "dsop/kernels.h"
#include "dsop_util.h"
#include "gpu/gpu_util.h"

using namespace dsoptest;
using gputest::DevBuf;
using gputest::Stream;
using sc::dsop::Engine;
using sc::dsop::Pairs;
using sc::dsop::Rect;

namespace {

// Sets SPARCOLL_DSOP_GEMM for the scope (the library reads it per kernel call).
struct EngineEnv {
  explicit EngineEnv(const char* v) { setenv("SPARCOLL_DSOP_GEMM", v, 1); }
  ~EngineEnv() { unsetenv("SPARCOLL_DSOP_GEMM"); }
};

std::vector<int> zeros(int P) { return std::vector<int>(size_t(P), 0); }

}  // namespace

TEST(DsopGpu, KernelMatchesHostBothEngines) {
  SC_REQUIRE_GPU();
  Stream s;
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16})
    for (size_t K : {size_t(1), size_t(3), size_t(4), size_t(9), sc::dsop::kBlasMinK + 1, size_t(130)})
      for (auto [n, m] : {std::pair<size_t, size_t>{1, 1}, {7, 1029}, {300, 257}, {1025, 3}}) {
        const size_t lda = n + 2, ldb = m + 5;
        std::vector<double> A(K * lda, 0.0), B(K * ldb, 0.0);
        for (size_t q = 0; q < K; ++q) {
          for (size_t x = 0; x < n; ++x) A[q * lda + x] = aValue(int(q), x);
          for (size_t y = 0; y < m; ++y) B[q * ldb + y] = bValue(int(q), y);
        }
        const auto hA = encode(A, dt), hB = encode(B, dt);
        DevBuf dA(hA.size()), dB(hB.size());
        gputest::upload(dA.get(), hA.data(), hA.size(), s.get());
        gputest::upload(dB.get(), hB.data(), hB.size(), s.get());
        const Rect r{n / 3, n - n / 3, m / 4, m - m / 4};
        const size_t ldd = r.cols + 3, osz = outSize(dt);
        std::vector<double> init(r.rows * ldd);
        for (size_t i = 0; i < init.size(); ++i) init[i] = double(int(i % 5) - 2);
        const auto hInit = encode(init, osz == 8 ? scFloat64 : scFloat32);
        for (bool acc : {false, true}) {
          std::vector<char> want = hInit;
          sc::dsop::hostRect(dt, Pairs{hA.data(), lda, hB.data(), ldb, K}, r, want.data(), ldd, acc);
          for (Engine e : {Engine::Custom, Engine::Blas}) {
            SCOPED_TRACE(testing::Message() << "dt=" << int(dt) << " K=" << K << " n=" << n << " m=" << m
                                            << " acc=" << acc << " engine=" << sc::dsop::engineName(e));
            DevBuf dG(hInit.size());
            gputest::upload(dG.get(), hInit.data(), hInit.size(), s.get());
            sc::dsop::deviceRect(dt, Pairs{dA.get(), lda, dB.get(), ldb, K}, r, dG.get(), ldd, acc, s, e);
            const auto got = gputest::download(dG.get(), hInit.size(), s.get());
            EXPECT_EQ(compare(decodeOut(got.data(), r.rows * ldd, dt), decodeOut(want.data(), r.rows * ldd, dt), ldd),
                      "");
          }
        }
      }
}

// Real-valued operands: both device engines (fused multiply-adds from 0 with
// the old value added last; cuBLAS in its own order) stay within the rounding
// bound that the host kernel also meets (test_dsop_kernels.cpp).
TEST(DsopGpu, RealValuedWithinRoundingBound) {
  SC_REQUIRE_GPU();
  Stream s;
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16})
    for (size_t K : {size_t(1), size_t(5), sc::dsop::kBlasMinK + 1, size_t(300)}) {
      const size_t n = 67, m = 1029;
      const RealOperands o = realOperands(dt, K, n, m, 5 + K);
      const scDataType_t odt = outSize(dt) == 8 ? scFloat64 : scFloat32;
      DevBuf dA(o.a.size()), dB(o.b.size());
      gputest::upload(dA.get(), o.a.data(), o.a.size(), s.get());
      gputest::upload(dB.get(), o.b.data(), o.b.size(), s.get());
      for (bool acc : {false, true}) {
        std::vector<double> init;
        if (acc)
          for (size_t i = 0; i < n * m; ++i) init.push_back(std::ldexp(double(int(i % 17) - 8), -3));
        const auto hInit = encode(acc ? init : std::vector<double>(n * m, 7.0), odt);
        for (Engine e : {Engine::Custom, Engine::Blas}) {
          SCOPED_TRACE(testing::Message()
                       << "dt=" << int(dt) << " K=" << K << " acc=" << acc << " engine=" << sc::dsop::engineName(e));
          DevBuf dG(hInit.size());
          gputest::upload(dG.get(), hInit.data(), hInit.size(), s.get());
          sc::dsop::deviceRect(dt, Pairs{dA.get(), n, dB.get(), m, K}, Rect{0, n, 0, m}, dG.get(), m, acc, s, e);
          const auto got = gputest::download(dG.get(), hInit.size(), s.get());
          EXPECT_EQ(withinRoundingBound(o, dt, init, decodeOut(got.data(), n * m, dt)), "");
        }
      }
    }
}

TEST(DsopGpu, AlgorithmsOnDeviceMemory) {
  SC_REQUIRE_GPU();
  for (const char* engine : {"custom", "cublas"}) {
    EngineEnv env(engine);
    for (int P : {1, 2, 3, 4}) {
      const auto devs = zeros(P);
      sctest::run(P, gputest::guarded([&](scComm_t comm, int rank) {
                    Stream s;
                    for (scDataType_t dt : {scFloat32, scFloat64, scFloat16})
                      for (auto [n, m] : {std::pair<size_t, size_t>{size_t(P + 1), 97}, {1000, 3}, {1, 50}})
                        for (scDsopAlgo_t algo : kAlgos) {
                          SCOPED_TRACE(testing::Message() << engine << " " << scDsopAlgoName(algo) << " P=" << P
                                                          << " n=" << n << " m=" << m << " dt=" << int(dt));
                          const auto a = encode(vecA(rank, n), dt), b = encode(vecB(rank, m), dt);
                          DevBuf da(a.size()), db(b.size()), dG(n * m * outSize(dt));
                          gputest::upload(da.get(), a.data(), a.size(), s.get());
                          gputest::upload(db.get(), b.data(), b.size(), s.get());
                          gputest::poison(dG.get(), n * m * outSize(dt), s.get());
                          SC_OK(comm, scDsop(da.get(), n, db.get(), m, dG.get(), dt, algo, comm, s));
                          const auto G = gputest::download(dG.get(), n * m * outSize(dt), s.get());
                          EXPECT_EQ(compare(decodeOut(G.data(), n * m, dt), reference(P, n, m), m), "");
                        }
                  }),
                  nullptr, devs.data());
    }
  }
}

TEST(DsopGpu, SparseOnDeviceMemory) {
  SC_REQUIRE_GPU();
  for (int P : {1, 3, 4}) {
    const auto devs = zeros(P);
    sctest::run(P, gputest::guarded([&](scComm_t comm, int rank) {
                  Stream s;
                  const size_t n = 300, m = 120;
                  // Rank q's support: every (q+2)-th index from q (a) / every (q+3)-th from 2q (b).
                  auto supp = [](int q, size_t len, size_t step, size_t start) {
                    std::vector<uint64_t> v;
                    for (size_t x = start; x < len; x += step) v.push_back(x);
                    return v;
                  };
                  std::vector<std::vector<double>> A(P, std::vector<double>(n)), B(P, std::vector<double>(m));
                  std::vector<uint64_t> myA, myB;
                  std::vector<double> valA, valB;
                  for (int q = 0; q < P; ++q) {
                    const auto ia = supp(q, n, q + 2, q), ib = supp(q, m, q + 3, 2 * q);
                    for (auto x : ia) A[q][x] = aValue(q, x) ? aValue(q, x) : 1;
                    for (auto y : ib) B[q][y] = bValue(q, y) ? bValue(q, y) : 2;
                    if (q == rank) {
                      myA = ia;
                      myB = ib;
                      for (auto x : ia) valA.push_back(A[q][x]);
                      for (auto y : ib) valB.push_back(B[q][y]);
                    }
                  }
                  for (scDsopAlgo_t algo : {scDsopAuto, scDsopAllGather, scDsopGRabenseifner}) {
                    SCOPED_TRACE(testing::Message() << scDsopAlgoName(algo) << " P=" << P);
                    const auto va = encode(valA, scFloat32), vb = encode(valB, scFloat32);
                    DevBuf dia(myA.size() * 8), dib(myB.size() * 8), dva(va.size()), dvb(vb.size()), dG(n * m * 4);
                    gputest::upload(dia.get(), myA.data(), myA.size() * 8, s.get());
                    gputest::upload(dib.get(), myB.data(), myB.size() * 8, s.get());
                    gputest::upload(dva.get(), va.data(), va.size(), s.get());
                    gputest::upload(dvb.get(), vb.data(), vb.size(), s.get());
                    gputest::poison(dG.get(), n * m * 4, s.get());
                    SC_OK(comm, scDsopSparse(reinterpret_cast<const uint64_t*>(dia.get()), dva.get(), myA.size(), n,
                                             reinterpret_cast<const uint64_t*>(dib.get()), dvb.get(), myB.size(), m,
                                             dG.get(), scFloat32, algo, comm, s));
                    const auto G = gputest::download(dG.get(), n * m * 4, s.get());
                    EXPECT_EQ(compare(decodeOut(G.data(), n * m, scFloat32), reference(A, B), m), "");
                  }
                  // Unsorted indices are caught on the device before any message.
                  const uint64_t bad[2] = {5, 3};
                  DevBuf dbad(16), dv(8);
                  gputest::upload(dbad.get(), bad, 16, s.get());
                  EXPECT_EQ(scDsopSparse(reinterpret_cast<const uint64_t*>(dbad.get()), dv.get(), 2, n, nullptr,
                                         nullptr, 0, m, dv.get(), scFloat32, scDsopAuto, comm, s),
                            scInvalidArgument);
                }),
                nullptr, devs.data());
  }
}

TEST(DsopGpu, HostPointersRejected) {
  SC_REQUIRE_GPU();
  const auto devs = zeros(2);
  sctest::run(2, gputest::guarded([&](scComm_t comm, int) {
                Stream s;
                float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1};
                DevBuf dG(16 * 4);
                EXPECT_EQ(scDsop(a, 4, b, 4, dG.get(), scFloat32, scDsopGRabenseifner, comm, s), scInvalidArgument);
                EXPECT_NE(std::string(scGetLastError(comm)).find("host memory"), std::string::npos)
                    << scGetLastError(comm);
              }),
              nullptr, devs.data());
}
