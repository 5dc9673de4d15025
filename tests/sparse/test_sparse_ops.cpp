// The CPU reference of the sparse stream operations against hand-computed
// results, the switch rule, and the auto model (expected union sizes; auto never
// picks a sparse algorithm when dense is predicted faster).
#include <cmath>

#include "ops_suite.h"
#include "core/comm.h"
#include "sparse/model.h"
#include "sparse_check.h"

namespace sptest {
namespace {

using sc::sp::kDenseMark;
using sc::sp::kNoError;
using sc::sp::SwitchRule;

std::unique_ptr<sc::sp::SparseOps> cpu(scIndexType_t it = scIndexU32, scDataType_t vt = scInt32) {
  return sc::sp::makeCpuOps(it, vt, sc::sp::OpsEnv{});
}

TEST(SparseOpsCpu, HandComputed) {
  auto ops = cpu();
  const uint32_t ai[] = {1, 4, 7}, bi[] = {0, 4, 9};
  const int32_t av[] = {10, 20, 30}, bv[] = {1, 2, 3};
  uint32_t oi[6];
  int32_t ov[6];
  uint64_t n = 0;
  ops->mergeSum(ai, av, 3, bi, bv, 3, oi, ov, &n);
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(std::vector<uint32_t>(oi, oi + 5), (std::vector<uint32_t>{0, 1, 4, 7, 9}));
  EXPECT_EQ(std::vector<int32_t>(ov, ov + 5), (std::vector<int32_t>{1, 10, 22, 30, 3}));

  int32_t dense[10];
  ops->densify(ai, av, 3, 0, 10, dense);
  EXPECT_EQ(std::vector<int32_t>(dense, dense + 10), (std::vector<int32_t>{0, 10, 0, 0, 20, 0, 0, 30, 0, 0}));
  ops->scatterAdd(bi, bv, 3, 0, dense);
  EXPECT_EQ(std::vector<int32_t>(dense, dense + 10), (std::vector<int32_t>{1, 10, 0, 0, 22, 0, 0, 30, 0, 3}));
  ops->sparsify(dense, 10, 100, oi, ov, &n);
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(std::vector<uint32_t>(oi, oi + 5), (std::vector<uint32_t>{100, 101, 104, 107, 109}));

  const uint64_t bounds[] = {0, 4, 8, 10};
  uint64_t counts[4], offs[4];
  ops->split(ai, 3, nullptr, bounds, 3, counts, offs);
  EXPECT_EQ(std::vector<uint64_t>(counts, counts + 4), (std::vector<uint64_t>{1, 2, 0, 0}));
  EXPECT_EQ(std::vector<uint64_t>(offs, offs + 4), (std::vector<uint64_t>{0, 1, 3, 3}));

  const uint32_t raw[] = {5, 1, 5, 3, 1, 5};
  const int32_t rv[] = {1, 2, 3, 4, 5, 6};
  ops->sortCoalesce(raw, rv, 6, oi, ov, &n);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(std::vector<uint32_t>(oi, oi + 3), (std::vector<uint32_t>{1, 3, 5}));
  EXPECT_EQ(std::vector<int32_t>(ov, ov + 3), (std::vector<int32_t>{7, 4, 10}));

  uint64_t err = 0;
  ops->validate(ai, 3, 8, false, &err);
  EXPECT_EQ(err, kNoError);
  ops->validate(ai, 3, 7, false, &err);
  EXPECT_EQ(err, sc::sp::errWord(2, sc::sp::kErrRange));
  const uint32_t dup[] = {1, 1}, uns[] = {2, 1};
  ops->validate(dup, 2, 8, false, &err);
  EXPECT_EQ(err, sc::sp::errWord(1, sc::sp::kErrDuplicate));
  ops->validate(uns, 2, 8, false, &err);
  EXPECT_EQ(err, sc::sp::errWord(1, sc::sp::kErrUnsorted));
  ops->validate(uns, 2, 8, true, &err);
  EXPECT_EQ(err, kNoError);
}

// The shared suite on the CPU itself: exercises every case (the GPU suite runs
// the same cases against this reference).
TEST(SparseOpsCpu, Suite) {
  for (scIndexType_t it : {scIndexU32, scIndexU64})
    for (scDataType_t vt : {scInt8, scFloat16, scFloat32, scFloat64, scBfloat16}) {
      SCOPED_TRACE(testing::Message() << (it == scIndexU64 ? "u64 " : "u32 ") << typeStr(vt));
      auto ops = cpu(it, vt);
      HostMem mem;
      OpsSuite(*ops, mem, 3).runAll();
    }
}

TEST(SparseSwitchRule, SizeAndDensity) {
  const SwitchRule r32{4, 4, 0};  // delta = N/2
  EXPECT_TRUE(r32.sparseOk(49, 100));
  EXPECT_FALSE(r32.sparseOk(50, 100));  // sparse no smaller than dense
  EXPECT_FALSE(r32.sparseOk(kDenseMark, 100));
  EXPECT_EQ(r32.maxSparse(100), 49u);
  const SwitchRule r64{8, 2, 0};  // uint64 index + float16: delta = N/5
  EXPECT_TRUE(r64.sparseOk(19, 100));
  EXPECT_FALSE(r64.sparseOk(20, 100));
  const SwitchRule aware{4, 4, SC_SPARSE_SWITCH_COMPUTE_AWARE};
  EXPECT_TRUE(aware.sparseOk(62, 1000));
  EXPECT_FALSE(aware.sparseOk(63, 1000));
  EXPECT_TRUE(r32.sparseOk(0, 0) == false);  // an empty range is "dense" with no values
}

TEST(SparseModel, ExpectedUnionAndAutoNeverSlowerThanDense) {
  for (int P : gridP({2, 3, 4, 8})) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      if (rank != 0) return;
      sc::sp::ModelInput in;
      in.model = &comm->model;
      in.N = 1 << 20;
      in.rule = SwitchRule{4, 4, 0};
      // f(k, N, P) = N (1 - (1 - k/N)^P)
      in.k.assign(P, 1000);
      std::vector<int> all(P);
      for (int i = 0; i < P; ++i) all[i] = i;
      const double f = double(in.N) * (1 - std::pow(1 - 1000.0 / double(in.N), P));
      EXPECT_NEAR(sc::sp::expectedUnion(in, all), f, 1e-6 * f);
      EXPECT_NEAR(sc::sp::expectedUnion(in, {0}), 1000.0, 1e-6);
      for (double d : {0.0, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 1.0})
        for (bool denseOut : {false, true}) {
          in.k.assign(P, uint64_t(d * double(in.N)));
          in.denseOutput = denseOut;
          const scSparseAlgo_t a = sc::sp::chooseSparse(in);
          const double dense = sc::sp::predictSparse(in, scSparseDense);
          SCOPED_TRACE(testing::Message() << "P=" << P << " density " << d << " -> " << scSparseAlgoName(a));
          if (a != scSparseDense) EXPECT_LT(sc::sp::predictSparse(in, a), dense);
          for (scSparseAlgo_t s : {scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch})
            if (sc::sp::predictSparse(in, s) >= dense) EXPECT_NE(a, s);
        }
      // Very sparse inputs go sparse; fully dense ones go dense.
      in.k.assign(P, 10);
      EXPECT_NE(sc::sp::chooseSparse(in), scSparseDense);
      in.k.assign(P, in.N);
      EXPECT_EQ(sc::sp::chooseSparse(in), scSparseDense);
    });
  }
}

}  // namespace
}  // namespace sptest
