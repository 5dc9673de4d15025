// The sparse allreduce past 2^31 elements on one GPU: the CUDA stream
// operations driven directly (sort + coalesce of more than 2^31 pairs, a merge
// of two streams totalling more than 2^31 entries, densify / scatter-add /
// sparsify over 2^32 positions with uint32 indices up to 2^32 - 1), and the C
// API with dim = 2^32 on two device-local ranks, every algorithm. Patterned
// data written on the device, mismatches counted there, spot values read back
// (gpu_fill.h); each test checks the free memory first and skips with the
// numbers when it is short.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "common/harness.h"
#include "gpu/gpu_fill.h"
#include "gpu/gpu_util.h"
#include "sparse/ops.h"

namespace {

using gputest::DevBuf;
using gputest::Mismatch;

constexpr size_t k2p31 = size_t(1) << 31, k2p32 = size_t(1) << 32;
constexpr size_t kMargin = size_t(1) << 30;

// The device operations on GPU 0, their temporaries in grow-only buffers.
struct GpuOps {
  gputest::Stream stream;
  gputest::Slots slots;
  std::unique_ptr<sc::sp::SparseOps> ops;
  GpuOps(scIndexType_t it, scDataType_t vt) {
    sc::sp::OpsEnv env;
    env.stream = stream.get();
    env.device = 0;
    env.scratch = [this](int slot, size_t bytes) { return slots.get(slot, bytes); };
    ops = sc::sp::makeCudaOps(it, vt, env);
  }
  cudaStream_t s() const { return stream.get(); }
  uint64_t read(const void* word) {
    uint64_t h = 0;
    ops->toHost(&h, word, 8);
    return h;
  }
};

// Stable sort + coalesce of n = 2^31 + 2^21 (uint32, uint8) pairs: indices
// 0..D-1 ascending, then D-1..0 descending (D = n/2), so every index appears
// twice, once on each side of 2^30 + 2^20 positions. Values 1, but for a few
// planted ones. The output is 0..D-1 with the sums of both occurrences.
TEST(LargeSparseOps, SortCoalescePastTwoToThe31Pairs) {
  SC_REQUIRE_GPU();
  const size_t n = k2p31 + (size_t(1) << 21), D = n / 2;
  // Input, sorted copy, the radix sort's second buffers, run starts (8 bytes
  // each) and the D coalesced entries (the count is known, so oi/ov hold D).
  SC_REQUIRE_DEVICE_MEMORY(0, 23 * n + 5 * D + kMargin, "sort + coalesce of 2^31 + 2^21 pairs");
  GpuOps g(scIndexU32, scUint8);
  DevBuf idx(n * 4), val(n), oi(D * 4), ov(D), cnt(8);
  gputest::fillIota(idx.get(), D, 4, 0, 1, g.s());
  gputest::fillIota(idx.get() + D * 4, D, 4, D - 1, ~uint64_t(0), g.s());  // D-1 down to 0
  gputest::fillBits(val.get(), n, 1, 1, g.s());
  const std::vector<uint64_t> spots = {0, 1, D - 1, D, D + 1, k2p31 - 1, k2p31, n - 2, n - 1};
  std::vector<uint64_t> vals;
  std::map<uint64_t, uint64_t> sums;  // output index -> its sum
  for (size_t j = 0; j < spots.size(); ++j) {
    vals.push_back(2 + j);
    const uint64_t p = spots[j], x = p < D ? p : D - 1 - (p - D);
    sums.emplace(x, 2);  // both occurrences 1 ...
  }
  for (size_t j = 0; j < spots.size(); ++j) {  // ... but the planted ones
    const uint64_t p = spots[j], x = p < D ? p : D - 1 - (p - D);
    sums[x] += vals[j] - 1;
  }
  gputest::scatterBits(val.get(), 1, spots, vals, g.s());
  g.ops->sortCoalesce(idx.get(), val.get(), n, oi.get(), ov.get(), reinterpret_cast<uint64_t*>(cnt.get()));
  ASSERT_EQ(g.read(cnt.get()), D);
  const Mismatch mi = gputest::countNotIota(oi.get(), D, 4, 0, 1, g.s());
  EXPECT_EQ(mi.count, 0u) << "indices not 0..D-1, first at " << mi.first;
  std::vector<uint64_t> pos, want;
  for (const auto& [x, v] : sums) {
    pos.push_back(x);
    want.push_back(v & 0xff);
  }
  const Mismatch mv = gputest::countNotEqual(ov.get(), D, 1, 2, g.s());
  EXPECT_EQ(mv.count, pos.size()) << "first unexpected sum at " << mv.first;
  EXPECT_EQ(gputest::gatherBits(ov.get(), 1, pos, g.s()), want);
}

// Merge-sum of a = 0..na-1 (values 1) and b = na/2 .. na/2+nb-1 (values 2),
// na + nb = 2^31 + 2^21: the union is 0..U-1, sums 1, 3 where both have the
// index, 2 past a; planted values at both ends of both streams. The outputs
// hold the U entries of the known union (the contract allows na + nb).
TEST(LargeSparseOps, MergeSumPastTwoToThe31Entries) {
  SC_REQUIRE_GPU();
  const size_t na = (size_t(1) << 30) + (size_t(1) << 20), nb = na, n = na + nb, U = na / 2 + nb;
  SC_REQUIRE_DEVICE_MEMORY(0, 10 * n + 5 * U + kMargin, "merge-sum of 2^31 + 2^21 entries");
  GpuOps g(scIndexU32, scUint8);
  DevBuf ai(na * 4), av(na), bi(nb * 4), bv(nb), oi(U * 4), ov(U), cnt(8);
  gputest::fillIota(ai.get(), na, 4, 0, 1, g.s());
  gputest::fillIota(bi.get(), nb, 4, na / 2, 1, g.s());
  gputest::fillBits(av.get(), na, 1, 1, g.s());
  gputest::fillBits(bv.get(), nb, 1, 2, g.s());
  gputest::scatterBits(av.get(), 1, {0, na - 1}, {5, 7}, g.s());
  gputest::scatterBits(bv.get(), 1, {0, nb - 1}, {9, 11}, g.s());
  g.ops->mergeSum(ai.get(), av.get(), na, bi.get(), bv.get(), nb, oi.get(), ov.get(),
                  reinterpret_cast<uint64_t*>(cnt.get()));
  ASSERT_EQ(g.read(cnt.get()), U);
  const Mismatch mi = gputest::countNotIota(oi.get(), U, 4, 0, 1, g.s());
  EXPECT_EQ(mi.count, 0u) << "indices not 0..U-1, first at " << mi.first;
  // Per region: its constant sum, and the planted entries that differ from it.
  EXPECT_EQ(gputest::countNotEqual(ov.get(), na / 2, 1, 1, g.s()).count, 1u);
  EXPECT_EQ(gputest::countNotEqual(ov.get() + na / 2, na - na / 2, 1, 3, g.s()).count, 2u);
  EXPECT_EQ(gputest::countNotEqual(ov.get() + na, U - na, 1, 2, g.s()).count, 1u);
  EXPECT_EQ(gputest::gatherBits(ov.get(), 1, {0, na / 2, na - 1, U - 1}, g.s()),
            (std::vector<uint64_t>{5, 1 + 9, 7 + 2, 11}));
}

// 1000 entries spread over [0, 2^32) with uint32 indices, the extremes and the
// neighbours of 2^31 among them: densify over all 2^32 positions, densify of
// the upper half alone (lo = 2^31), scatter-add, and sparsify back.
TEST(LargeSparseOps, DensifyAndSparsifyOverTwoToThe32) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_DEVICE_MEMORY(0, k2p32 + kMargin, "a dense vector of 2^32 int8");
  GpuOps g(scIndexU32, scInt8);
  std::vector<uint64_t> pos = {0, 1, k2p31 - 1, k2p31, k2p31 + 1, k2p32 - 2, k2p32 - 1};
  for (uint64_t j = 0; j < 993; ++j) pos.push_back(13 + j * 4294967);
  std::sort(pos.begin(), pos.end());
  pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
  std::vector<uint32_t> hidx(pos.begin(), pos.end());
  std::vector<int8_t> hval;
  std::vector<uint64_t> bits, twice;
  for (size_t j = 0; j < pos.size(); ++j) {
    const int8_t v = int8_t(j % 2 ? -(1 + int(j % 60)) : 1 + int(j % 60));
    hval.push_back(v);
    bits.push_back(uint8_t(v));
    twice.push_back(uint8_t(int8_t(2 * v)));
  }
  const size_t nnz = pos.size();
  DevBuf idx(nnz * 4), val(nnz), dense(k2p32), oi(nnz * 4), ov(nnz), cnt(8);
  gputest::upload(idx.get(), hidx.data(), nnz * 4, g.s());
  gputest::upload(val.get(), hval.data(), nnz, g.s());
  g.ops->densify(idx.get(), val.get(), nnz, 0, k2p32, dense.get());
  Mismatch m = gputest::countNotEqual(dense.get(), k2p32, 1, 0, g.s());
  EXPECT_EQ(m.count, nnz) << "first non-zero at " << m.first;
  EXPECT_EQ(gputest::gatherBits(dense.get(), 1, pos, g.s()), bits);

  // The upper half alone: positions relative to lo.
  const size_t firstUpper = size_t(std::lower_bound(pos.begin(), pos.end(), k2p31) - pos.begin());
  g.ops->densify(idx.get() + firstUpper * 4, val.get() + firstUpper, nnz - firstUpper, k2p31, k2p31, dense.get());
  m = gputest::countNotEqual(dense.get(), k2p31, 1, 0, g.s());
  EXPECT_EQ(m.count, nnz - firstUpper) << "upper half: first non-zero at " << m.first;
  std::vector<uint64_t> rel;
  for (size_t j = firstUpper; j < nnz; ++j) rel.push_back(pos[j] - k2p31);
  EXPECT_EQ(gputest::gatherBits(dense.get(), 1, rel, g.s()),
            std::vector<uint64_t>(bits.begin() + long(firstUpper), bits.end()));

  // Scatter-add onto the full vector again, then back to sparse. sparsify's
  // outputs are sized for the known count (the contract allows len entries).
  g.ops->densify(idx.get(), val.get(), nnz, 0, k2p32, dense.get());
  g.ops->scatterAdd(idx.get(), val.get(), nnz, 0, dense.get());
  EXPECT_EQ(gputest::gatherBits(dense.get(), 1, pos, g.s()), twice);
  g.ops->sparsify(dense.get(), k2p32, 0, oi.get(), ov.get(), reinterpret_cast<uint64_t*>(cnt.get()));
  ASSERT_EQ(g.read(cnt.get()), nnz);
  const auto gi = gputest::download(oi.get(), nnz * 4, g.s()), gv = gputest::download(ov.get(), nnz, g.s());
  EXPECT_EQ(0, std::memcmp(gi.data(), hidx.data(), nnz * 4)) << "sparsified indices";
  for (size_t j = 0; j < nnz; ++j) ASSERT_EQ(uint64_t(gv[j]), twice[j]) << "sparsified value " << j;
}

// scSparseAllReduce with dim = 2^32 (uint32 indices, int8 values) on two
// device-local ranks sharing GPU 0: shared indices at 0, 2^31 - 1, 2^31 and
// 2^32 - 1, the rest each rank's own. Every algorithm with a dense result of
// 2^32 elements (the dense ones reduce and gather blocks of 2^31), and the
// sparse result of the sparse algorithms (a dense one would be re-sparsified
// through index and value arrays of 2^32 entries each).
TEST(LargeSparse, AllReduceOverTwoToThe32Indices) {
  SC_REQUIRE_GPU();
  const int P = 2;
  const size_t dim = k2p32;
  SC_REQUIRE_DEVICE_MEMORY(0, P * 8 * dim + 2 * kMargin, "two ranks' sparse allreduce with dim = 2^32 int8");
  std::vector<std::vector<uint64_t>> idx(P);
  std::vector<std::vector<int8_t>> val(P);
  std::map<uint64_t, int> sum;
  for (int r = 0; r < P; ++r) {
    std::map<uint64_t, int8_t> mine = {{0, 1}, {k2p31 - 1, 2}, {k2p31, 3}, {dim - 1, int8_t(4 + r)}};
    for (uint64_t j = 0; j < 600; ++j) mine.emplace(uint64_t(r) + 5 + j * 7000001, int8_t(1 + j % 5));
    for (const auto& [x, v] : mine) {
      idx[r].push_back(x);
      val[r].push_back(v);
      sum[x] += v;
    }
  }
  std::vector<uint64_t> pos, want;
  for (const auto& [x, v] : sum) {
    pos.push_back(x);
    want.push_back(uint8_t(int8_t(v)));
  }
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 120;
  gputest::runOnDevices(P, cfg, [&](scComm_t comm, int rank, cudaStream_t s) {
    const size_t nnz = idx[rank].size();
    const std::vector<uint32_t> i32(idx[rank].begin(), idx[rank].end());
    DevBuf di(nnz * 4), dv(nnz), out(dim);
    gputest::upload(di.get(), i32.data(), nnz * 4, s);
    gputest::upload(dv.get(), val[rank].data(), nnz, s);
    scSparseResult_t res = nullptr;
    ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess) << scGetLastError(comm);
    for (scSparseAlgo_t algo :
         {scSparseAuto, scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch, scSparseDense}) {
      SCOPED_TRACE(scSparseAlgoName(algo));
      gputest::poison(out.get(), dim, s);
      SC_OK(comm, scSparseAllReduce(di.get(), dv.get(), nnz, dim, scIndexU32, scInt8, scSum, algo, out.get(), comm, s));
      const Mismatch m = gputest::countNotEqual(out.get(), dim, 1, 0, s);
      EXPECT_EQ(m.count, pos.size()) << "first non-zero at " << m.first;
      EXPECT_EQ(gputest::gatherBits(out.get(), 1, pos, s), want);
      if (algo != scSsarRecDbl && algo != scSsarSplitAllGather) continue;
      SC_OK(comm, scSparseAllReduceToSparse(di.get(), dv.get(), nnz, dim, scIndexU32, scInt8, scSum, algo, nullptr, res,
                                            comm, s));
      int isDense = 1;
      size_t rn = 0;
      const void *ri = nullptr, *rv = nullptr;
      scSparseResultIsDense(res, &isDense);
      scSparseResultNnz(res, &rn);
      scSparseResultIndices(res, &ri);
      scSparseResultValues(res, &rv);
      ASSERT_EQ(isDense, 0);
      ASSERT_EQ(rn, pos.size());
      const auto gi = gputest::download(ri, rn * 4, s), gv = gputest::download(rv, rn, s);
      for (size_t j = 0; j < rn; ++j) {
        uint32_t x = 0;
        std::memcpy(&x, gi.data() + j * 4, 4);
        ASSERT_EQ(x, pos[j]) << "entry " << j;
        ASSERT_EQ(uint64_t(gv[j]), want[j]) << "entry " << j;
      }
    }
    scSparseResultDestroy(res);
  });
}

}  // namespace
