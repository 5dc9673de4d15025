// Vectors past 2^31 elements on one GPU, where a 32-bit position, count or
// offset would wrap: the reduce kernel (both of its paths), approximate and
// exact top-k (64-bit indices past 2^31, 32-bit indices at n = 2^32: the
// largest index uint32 holds), and DSOP whose n x m matrix has more than 2^31
// elements (dense and sparse inputs, two ranks). The data are patterns written
// on the device with values planted at both ends and around 2^31, chosen so
// the exact answer is known without a CPU pass over billions of elements: the
// checks count mismatches on the device and read back only spot values and
// the (small) selections. Each test first checks the free device memory and
// skips with the numbers when there is not enough.
#include <algorithm>
#include <cstring>

#include "backend/backend.h"
#include "backend/reduce_ops.h"
#include "common/harness.h"
#include "core/dtype.h"
#include "dsop/dsop_util.h"
#include "gpu/gpu_fill.h"
#include "gpu/gpu_util.h"

namespace {

using gputest::DevBuf;
using gputest::Stream;

constexpr size_t k2p31 = size_t(1) << 31, k2p32 = size_t(1) << 32;
constexpr size_t kMargin = size_t(1) << 30;  // context, CUB temporaries, small buffers

// The bits of v in dt (rounded to nearest).
uint64_t bitsOf(scDataType_t dt, double v) {
  uint64_t b = 0;
  sc::dispatchDtype(dt, [&](auto tag) {
    const auto x = sc::fromDouble<decltype(tag)>(v);
    std::memcpy(&b, &x, sizeof x);
  });
  return b;
}

// ---------------------------------------------------------------- reduce kernel

class LargeReduce : public testing::TestWithParam<scDataType_t> {};

// dst = a op b over 2^31 + 77 elements: the 16-byte pack path (operands
// aligned alike) and the scalar path (dst one element off). a and b are
// constants but for planted elements at both ends and around 2^31.
TEST_P(LargeReduce, PastTwoToThe31Elements) {
  SC_REQUIRE_GPU();
  const scDataType_t dt = GetParam();
  const size_t esz = sc::dtypeSize(dt), n = k2p31 + 77;
  SC_REQUIRE_DEVICE_MEMORY(0, 3 * (n + 1) * esz + kMargin, "three operands of 2^31 + 77 elements");
  auto gpu = sc::makeCudaBackend(0), cpu = sc::makeCpuBackend();
  Stream s;
  DevBuf A(n * esz), B(n * esz), D((n + 1) * esz);
  const std::vector<uint64_t> spots = {0, 1, 1000, k2p31 - 2, k2p31 - 1, k2p31, k2p31 + 1, n - 2, n - 1};
  std::vector<uint64_t> sa, sb;
  for (size_t j = 0; j < spots.size(); ++j) {
    sa.push_back(bitsOf(dt, double(9 + j)));
    sb.push_back(bitsOf(dt, double(1 + 2 * j)));
  }
  const uint64_t ca = bitsOf(dt, 3), cb = bitsOf(dt, 5);
  gputest::fillBits(A.get(), n, esz, ca, s.get());
  gputest::fillBits(B.get(), n, esz, cb, s.get());
  gputest::scatterBits(A.get(), esz, spots, sa, s.get());
  gputest::scatterBits(B.get(), esz, spots, sb, s.get());
  uint64_t poisoned = 0;
  std::memset(&poisoned, 0xA5, esz);
  for (scRedOp_t op : {scSum, scMax})
    for (size_t off : {0, 1}) {
      SCOPED_TRACE(testing::Message() << sc::dtypeName(dt) << " " << sc::opName(op)
                                      << (off ? " scalar path" : " packs"));
      char* dst = D.get() + off * esz;
      gputest::poison(D.get(), D.bytes(), s.get());
      gpu->reduce(dst, A.get(), B.get(), n, dt, op, s);
      uint64_t want = 0;
      cpu->reduce(&want, &ca, &cb, 1, dt, op, nullptr);
      std::vector<uint64_t> wantSpots(spots.size(), 0);
      uint64_t differ = 0;
      for (size_t j = 0; j < spots.size(); ++j) {
        cpu->reduce(&wantSpots[j], &sa[j], &sb[j], 1, dt, op, nullptr);
        differ += wantSpots[j] != want;
      }
      const gputest::Mismatch mm = gputest::countNotEqual(dst, n, esz, want, s.get());
      EXPECT_EQ(mm.count, differ) << "first unexpected element " << mm.first;
      EXPECT_EQ(gputest::gatherBits(dst, esz, spots, s.get()), wantSpots);
      if (off) EXPECT_EQ(gputest::gatherBits(D.get(), esz, {0}, s.get())[0], poisoned) << "written before dst";
    }
}

INSTANTIATE_TEST_SUITE_P(Types, LargeReduce, testing::Values(scInt8, scFloat16, scBfloat16, scFloat32, scFloat64),
                         [](const testing::TestParamInfo<scDataType_t>& i) {
                           return std::string(sc::dtypeName(i.param));
                         });

// ---------------------------------------------------------------- approximate top-k

// Two elements of equal magnitude per bucket of B (one at a position that
// moves with the bucket, one at its end), zeros elsewhere, and k = 2 per
// bucket: both planted elements have probability exactly 1 (k_b |v| / L1 = 1)
// and every zero 0, so the selection is known whatever the random draws.
struct Planted {
  std::vector<uint64_t> pos, bits;
};
Planted plantPairs(size_t n, size_t B, scDataType_t dt) {
  Planted p;
  for (size_t b = 0; b < n / B; ++b) {
    const double mag = double(1 + b % 3);
    p.pos.push_back(b * B + (b * 37) % (B - 1));
    p.bits.push_back(bitsOf(dt, b % 2 ? -mag : mag));
    p.pos.push_back(b * B + B - 1);
    p.bits.push_back(bitsOf(dt, mag));
  }
  return p;
}

// The selection in (idx, val) (nnz entries) equals the planted elements.
void expectPlanted(const void* idx, const void* val, size_t nnz, scTopkIndex_t it, scDataType_t dt, const Planted& p,
                   cudaStream_t s) {
  ASSERT_EQ(nnz, p.pos.size());
  const size_t isz = it == scTopkIndexU64 ? 8 : 4, esz = sc::dtypeSize(dt);
  const auto hi = gputest::download(idx, nnz * isz, s), hv = gputest::download(val, nnz * esz, s);
  for (size_t j = 0; j < nnz; ++j) {
    uint64_t x = 0, v = 0;
    std::memcpy(&x, hi.data() + j * isz, isz);
    std::memcpy(&v, hv.data() + j * esz, esz);
    ASSERT_EQ(x, p.pos[j]) << "entry " << j;
    ASSERT_EQ(v, p.bits[j]) << "entry " << j << " (index " << x << ")";
  }
}

void approxPastTwoToThe31(size_t n, scDataType_t dt, scTopkIndex_t it) {
  const size_t B = 512, esz = sc::dtypeSize(dt), isz = it == scTopkIndexU64 ? 8 : 4, k = 2 * (n / B);
  Stream s;
  DevBuf v(n * esz), idx(k * isz), val(k * esz);
  GPU_CHECK(cudaMemsetAsync(v.get(), 0, n * esz, s.get()));
  const Planted p = plantPairs(n, B, dt);
  gputest::scatterBits(v.get(), esz, p.pos, p.bits, s.get());
  scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
  cfg.method = scTopkApprox;
  cfg.k = k;
  cfg.bucket = B;
  cfg.indexType = it;
  cfg.seed = 5;
  cfg.step = 1;
  for (scTopkOutput_t out : {scTopkVariable, scTopkFixedPerBucket}) {
    SCOPED_TRACE(out == scTopkVariable ? "variable output" : "fixed output");
    cfg.output = out;
    scTopkInfo_t info{};
    ASSERT_EQ(scTopkSelect(v.get(), n, dt, &cfg, idx.get(), val.get(), k, &info, s), scSuccess)
        << scGetLastError(nullptr);
    EXPECT_EQ(info.selected, k);
    EXPECT_EQ(info.deferred, 0u);
    expectPlanted(idx.get(), val.get(), info.nnz, it, dt, p, s.get());
  }
  // Error feedback: the same selection, and the residual keeps what was not
  // sent: here nothing but zeros.
  SCOPED_TRACE("error feedback");
  cfg.output = scTopkVariable;
  scTopkState_t st = nullptr;
  ASSERT_EQ(scTopkStateCreate(&st, n, dt, 0), scSuccess) << scGetLastError(nullptr);
  scTopkInfo_t info{};
  ASSERT_EQ(scTopkSelectFeedback(st, v.get(), &cfg, idx.get(), val.get(), k, &info, s), scSuccess)
      << scGetLastError(nullptr);
  expectPlanted(idx.get(), val.get(), info.nnz, it, dt, p, s.get());
  void* r = nullptr;
  ASSERT_EQ(scTopkStateResidual(st, &r), scSuccess);
  const gputest::Mismatch mm = gputest::countNotEqual(r, n, esz, 0, s.get());
  EXPECT_EQ(mm.count, 0u) << "residual not zero, first at " << mm.first;
  scTopkStateDestroy(st);
}

TEST(LargeTopk, ApproxU64PastTwoToThe31) {
  SC_REQUIRE_GPU();
  const size_t n = k2p31 + 512;  // one bucket past 2^31
  SC_REQUIRE_DEVICE_MEMORY(0, 2 * n * 4 + n / 512 * 64 + kMargin, "approximate top-k of 2^31 + 512 float32");
  approxPastTwoToThe31(n, scFloat32, scTopkIndexU64);
}

TEST(LargeTopk, ApproxU32AtTwoToThe32) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_DEVICE_MEMORY(0, 2 * k2p32 * 2 + k2p32 / 512 * 64 + kMargin, "approximate top-k of 2^32 float16");
  approxPastTwoToThe31(k2p32, scFloat16, scTopkIndexU32);
}

// ---------------------------------------------------------------- exact top-k

// Magnitudes 0.5 below tieStart, 1 from there on (some negative), 2 at a few
// planted positions S outside the first `ties` ties. The top k = |S| + ties are
// S and the ties [tieStart, tieStart + ties) (equal magnitudes go to the smaller
// index): a run that crosses 2^31, or ends at 2^32 - 1.
void exactPastTwoToThe31(size_t n, size_t tieStart, std::vector<uint64_t> S, scDataType_t dt, scTopkIndex_t it) {
  const size_t ties = 6, esz = sc::dtypeSize(dt), isz = it == scTopkIndexU64 ? 8 : 4, k = S.size() + ties;
  Stream s;
  DevBuf v(n * esz), idx(k * isz), val(k * esz);
  gputest::fillBits(v.get(), tieStart, esz, bitsOf(dt, 0.5), s.get());
  gputest::fillBits(v.get() + tieStart * esz, n - tieStart, esz, bitsOf(dt, 1.0), s.get());
  std::vector<uint64_t> pos = {tieStart + 1, tieStart + 4}, bits = {bitsOf(dt, -1.0), bitsOf(dt, -1.0)};
  for (size_t j = 0; j < S.size(); ++j) {
    pos.push_back(S[j]);
    bits.push_back(bitsOf(dt, j % 2 ? -2.0 : 2.0));
  }
  gputest::scatterBits(v.get(), esz, pos, bits, s.get());
  Planted want;
  want.pos = S;
  for (size_t t = 0; t < ties; ++t) want.pos.push_back(tieStart + t);
  std::sort(want.pos.begin(), want.pos.end());
  for (uint64_t x : want.pos) {
    const auto at = std::find(pos.begin(), pos.end(), x);
    want.bits.push_back(at != pos.end() ? bits[size_t(at - pos.begin())] : bitsOf(dt, 1.0));
  }
  scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
  cfg.method = scTopkExact;
  cfg.k = k;
  cfg.indexType = it;
  scTopkInfo_t info{};
  ASSERT_EQ(scTopkSelect(v.get(), n, dt, &cfg, idx.get(), val.get(), k, &info, s), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_EQ(info.selected, k);
  expectPlanted(idx.get(), val.get(), info.nnz, it, dt, want, s.get());
}

// The exact path keeps the keys, a sorted copy, the radix sort's second buffer
// and a 64-bit candidate list of n entries: about n (4 esz + 8) bytes.
size_t exactBytes(size_t n, size_t esz) { return n * (5 * esz + 8) + kMargin; }

TEST(LargeTopk, ExactU64PastTwoToThe31) {
  SC_REQUIRE_GPU();
  const size_t n = k2p31 + 4096;
  SC_REQUIRE_DEVICE_MEMORY(0, exactBytes(n, 2), "exact top-k of 2^31 + 4096 float16");
  exactPastTwoToThe31(n, k2p31 - 3, {7, size_t(1) << 30, k2p31 - 100, k2p31 + 100, n - 1}, scFloat16, scTopkIndexU64);
}

TEST(LargeTopk, ExactU32AtTwoToThe32) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_DEVICE_MEMORY(0, exactBytes(k2p32, 2), "exact top-k of 2^32 bfloat16");
  exactPastTwoToThe31(k2p32, k2p32 - 6, {0, k2p31 - 1, k2p31, k2p32 - 100}, scBfloat16, scTopkIndexU32);
}

// ---------------------------------------------------------------- DSOP

// Two ranks on GPU 0 whose n x m matrix has 2^31 + 746153 elements: row
// blocks, ring blocks and scatter offsets pass 2^31. Every element is checked
// on the device against the sum of the outer products of the same small
// integer operands (exact in float32 whatever the order).
TEST(LargeDsop, MatrixPastTwoToThe31Elements) {
  SC_REQUIRE_GPU();
  const int P = 2;
  const size_t n = 46349, m = 46349, G = n * m * 4;
  static_assert(46349ull * 46349ull > (1ull << 31), "the matrix must pass 2^31 elements");
  SC_REQUIRE_DEVICE_MEMORY(0, P * (G + G / 2) + kMargin, "DSOP with 2 x 2^31 float32 matrices");
  scConfig_t cfg = sctest::testConfig();
  cfg.algo = scAlgoRing;  // the allreduce algorithm's scratch: two pipeline slices
  cfg.timeoutSeconds = 120;
  // Dense operands (rank q: dsoptest's vectors) and sparse ones (a few entries
  // per rank, the rest zero), as float32 rows [q * n + x] for the check.
  auto sparseIdx = [](int q, size_t len, size_t step) {
    std::vector<uint64_t> v;
    for (size_t x = size_t(q) * 3; x < len; x += step) v.push_back(x);
    v.push_back(len - 1 - size_t(q));
    return v;
  };
  std::vector<float> A, B, SA(P * n, 0.0f), SB(P * m, 0.0f);
  for (int q = 0; q < P; ++q) {
    for (double x : dsoptest::vecA(q, n)) A.push_back(float(x));
    for (double y : dsoptest::vecB(q, m)) B.push_back(float(y));
    for (uint64_t x : sparseIdx(q, n, 997)) SA[q * n + x] = float(1 + (x + q) % 4);
    for (uint64_t y : sparseIdx(q, m, 1009)) SB[q * m + y] = float((y + q) % 2 ? -1 : 1) * float(1 + y % 3);
  }
  Stream s0;
  DevBuf dA(A.size() * 4), dB(B.size() * 4), dSA(SA.size() * 4), dSB(SB.size() * 4);
  gputest::upload(dA.get(), A.data(), A.size() * 4, s0.get());
  gputest::upload(dB.get(), B.data(), B.size() * 4, s0.get());
  gputest::upload(dSA.get(), SA.data(), SA.size() * 4, s0.get());
  gputest::upload(dSB.get(), SB.data(), SB.size() * 4, s0.get());
  auto where = [m](uint64_t i) { return sc::cat("row ", i / m, " column ", i % m); };
  gputest::runOnDevices(P, cfg, [&](scComm_t comm, int rank, cudaStream_t s) {
    DevBuf a(n * 4), b(m * 4), g(G);
    gputest::upload(a.get(), A.data() + rank * n, n * 4, s);
    gputest::upload(b.get(), B.data() + rank * m, m * 4, s);
    for (scDsopAlgo_t algo : dsoptest::kAlgos) {
      SCOPED_TRACE(scDsopAlgoName(algo));
      gputest::poison(g.get(), G, s, 0xFF);  // NaN everywhere
      SC_OK(comm, scDsop(a.get(), n, b.get(), m, g.get(), scFloat32, algo, comm, s));
      const gputest::Mismatch mm = gputest::countNotOuterSum(g.get(), false, dA.get(), dB.get(), P, n, m, s);
      EXPECT_EQ(mm.count, 0u) << "first at " << where(mm.first);
    }
    // Sparse inputs: only the union of the non-zeros is computed, then
    // scattered into the dense matrix (zeros elsewhere).
    std::vector<uint64_t> ia = sparseIdx(rank, n, 997), ib = sparseIdx(rank, m, 1009);
    std::vector<float> va, vb;
    for (uint64_t x : ia) va.push_back(SA[rank * n + x]);
    for (uint64_t y : ib) vb.push_back(SB[rank * m + y]);
    DevBuf dia(ia.size() * 8), dib(ib.size() * 8), dva(va.size() * 4), dvb(vb.size() * 4);
    gputest::upload(dia.get(), ia.data(), ia.size() * 8, s);
    gputest::upload(dib.get(), ib.data(), ib.size() * 8, s);
    gputest::upload(dva.get(), va.data(), va.size() * 4, s);
    gputest::upload(dvb.get(), vb.data(), vb.size() * 4, s);
    for (scDsopAlgo_t algo : {scDsopAuto, scDsopAllGather, scDsopGRabenseifner}) {
      SCOPED_TRACE(sc::cat("sparse ", scDsopAlgoName(algo)));
      gputest::poison(g.get(), G, s, 0xFF);
      SC_OK(comm, scDsopSparse(reinterpret_cast<const uint64_t*>(dia.get()), dva.get(), ia.size(), n,
                               reinterpret_cast<const uint64_t*>(dib.get()), dvb.get(), ib.size(), m, g.get(),
                               scFloat32, algo, comm, s));
      const gputest::Mismatch mm = gputest::countNotOuterSum(g.get(), false, dSA.get(), dSB.get(), P, n, m, s);
      EXPECT_EQ(mm.count, 0u) << "first at " << where(mm.first);
    }
  });
}

}  // namespace
