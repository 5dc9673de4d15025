// scSparseAllReduce / scSparseAllReduceToSparse correctness against the dense
// sum of the densified inputs: every algorithm, P = 1..9 (local) or the world
// size (mpirun), densities {0, 1e-4, 1e-2, 0.3, 1}, uniform and power-law
// indices, empty ranks, all-disjoint and all-identical sets, every value type,
// both index types, sum and avg, options. Exact integer-valued data; results
// bit-identical on every rank.
#include <map>

#include "sparse_check.h"

namespace sptest {
namespace {

const double kDensities[] = {0.0, 1e-4, 1e-2, 0.3, 1.0};

scConfig_t testCfg() {
  scConfig_t c = sctest::testConfig();
  c.pipelineBytes = 4096;  // several ring slices in the dense parts
  return c;
}

struct Prepared {
  Call call;
  std::vector<Input> in;
  std::vector<uint8_t> want;
};

// Every algorithm x {dense, sparse output} on each prepared case.
void runCases(int P, const std::vector<Prepared>& cases) {
  const scConfig_t cfg = testCfg();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        scSparseResult_t res = nullptr;
        ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
        for (const Prepared& p : cases)
          for (scSparseAlgo_t algo : kAllAlgos)
            for (bool sparseOut : {false, true}) {
              Call c = p.call;
              c.algo = algo;
              c.sparseOut = sparseOut;
              checkCall(comm, rank, c, p.in[rank], p.want, res);
            }
        scSparseResultDestroy(res);
      },
      &cfg);
}

Prepared prepare(Dist d, uint64_t N, uint64_t k, int P, uint64_t seed, scDataType_t dt = scFloat32,
                 scRedOp_t op = scSum, scIndexType_t it = scIndexU32) {
  Prepared p;
  p.call.N = N;
  p.call.dt = dt;
  p.call.op = op;
  p.call.it = it;
  p.in = makeAll(d, N, k, P, seed, isUnsigned(dt));
  p.want = expectedDense(p.in, N, dt, op);
  return p;
}

TEST(SparseAllReduce, DensityGrid) {
  for (int P : gridP({1, 2, 3, 4, 5, 6, 7, 8, 9})) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    std::vector<Prepared> cases;
    const uint64_t N = 20011;
    for (double dens : kDensities)
      for (Dist d : {Dist::Uniform, Dist::PowerLaw}) cases.push_back(prepare(d, N, kFor(N, dens), P, cases.size() + 1));
    runCases(P, cases);
  }
}

TEST(SparseAllReduce, SpecialIndexSets) {
  for (int P : gridP({2, 3, 4, 5, 8, 9})) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    const uint64_t N = 4099;
    std::vector<Prepared> cases;
    // Empty ranks: every even rank contributes nothing; then every rank empty.
    Prepared e = prepare(Dist::Uniform, N, 60, P, 11);
    for (int r = 0; r < P; r += 2) e.in[r] = Input{};
    e.want = expectedDense(e.in, N, scFloat32, scSum);
    cases.push_back(e);
    cases.push_back(prepare(Dist::Uniform, N, 0, P, 12));
    // All-disjoint (the allgather case): small, and covering the whole vector.
    cases.push_back(prepare(Dist::Disjoint, N, 20, P, 13));
    cases.push_back(prepare(Dist::Disjoint, N, N, P, 14));
    cases.push_back(prepare(Dist::Elsewhere, N, 30, P, 15));
    // All-identical (the subspace allreduce): sparse and past the switch.
    cases.push_back(prepare(Dist::Identical, N, 40, P, 16));
    cases.push_back(prepare(Dist::Identical, N, N / 2, P, 17));
    cases.push_back(prepare(Dist::EvenIdentical, N, 8 * P, P, 18));
    // Tiny vectors: dim 0, dim 1, dim < P.
    cases.push_back(prepare(Dist::Uniform, 0, 0, P, 19));
    cases.push_back(prepare(Dist::Uniform, 1, 1, P, 20));
    cases.push_back(prepare(Dist::Uniform, P > 2 ? P - 1 : 1, 1, P, 21));
    runCases(P, cases);
  }
}

TEST(SparseAllReduce, AllTypesBothIndexTypesSumAndAvg) {
  const scDataType_t kTypes[] = {scInt8,   scUint8,   scInt32,   scUint32,  scInt64,
                                 scUint64, scFloat16, scFloat32, scFloat64, scBfloat16};
  for (int P : gridP({3, 4})) {
    std::vector<Prepared> cases;
    for (scDataType_t dt : kTypes)
      for (scRedOp_t op : {scSum, scAvg})
        for (scIndexType_t it : {scIndexU32, scIndexU64})
          cases.push_back(prepare(Dist::Uniform, 1031, 40 + 3 * cases.size() % 50, P, 100 + cases.size(), dt, op, it));
    runCases(P, cases);
  }
}

// Options: compute-aware and custom switch densities, forced early-switch group sizes.
TEST(SparseAllReduce, Options) {
  for (int P : gridP({2, 4, 5, 8})) {
    const uint64_t N = 8191;
    const std::vector<Prepared> base = {prepare(Dist::Uniform, N, kFor(N, 0.02), P, 31),
                                        prepare(Dist::PowerLaw, N, kFor(N, 0.1), P, 32)};
    std::vector<scSparseOptions_t> opts;
    for (double dens : {SC_SPARSE_SWITCH_COMPUTE_AWARE, 0.01, 1.0})
      for (int g : {0, 1, 2, 4, 64}) {
        scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
        o.switchDensity = dens;
        o.earlyGroupSize = g;
        opts.push_back(o);
      }
    std::vector<Prepared> cases;
    for (const scSparseOptions_t& o : opts)
      for (const Prepared& b : base) {
        cases.push_back(b);
        cases.back().call.opts = &o;
      }
    runCases(P, cases);
  }
}

// scSparseSortInput: unsorted input with duplicates (nnz may exceed dim) is
// sorted and coalesced; the reference sums the duplicates.
TEST(SparseAllReduce, SortAndCoalesce) {
  for (int P : gridP({1, 2, 3, 4})) {
    const uint64_t N = 97;
    std::vector<Input> in(P);
    for (int r = 0; r < P; ++r)
      for (int j = 0; j < 150; ++j) {  // more entries than dim: duplicates for sure
        in[r].idx.push_back((uint64_t(j) * 7919 + 13 * r) % N);
        in[r].val.push_back((j + r) % 5 + 1);
      }
    const std::vector<uint8_t> want = expectedDense(in, N, scInt32, scSum);
    scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
    o.flags = scSparseSortInput;
    const scConfig_t cfg = testCfg();
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          scSparseResult_t res = nullptr;
          ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
          for (scSparseAlgo_t algo : kAllAlgos)
            for (bool sparseOut : {false, true}) {
              Call c;
              c.algo = algo;
              c.sparseOut = sparseOut;
              c.dt = scInt32;
              c.N = N;
              c.opts = &o;
              checkCall(comm, rank, c, in[rank], want, res);
            }
          scSparseResultDestroy(res);
        },
        &cfg);
  }
}

// 64-bit indices beyond 2^32 (dim = 2^40): sparse algorithms with a sparse
// result never touch a dense vector, so this needs no memory of size dim.
TEST(SparseAllReduce, IndicesBeyond32Bits) {
  for (int P : gridP({2, 3, 4})) {
    const uint64_t N = uint64_t(1) << 40;
    std::vector<Input> in(P);
    std::map<uint64_t, double> want;
    for (int r = 0; r < P; ++r) {
      for (uint64_t j = 0; j < 50; ++j) {
        const uint64_t x = (j * 0x9E3779B97ull + (j % 3 == 0 ? 0 : uint64_t(r) << 33)) % N;
        in[r].idx.push_back(x);
      }
      std::sort(in[r].idx.begin(), in[r].idx.end());
      in[r].idx.erase(std::unique(in[r].idx.begin(), in[r].idx.end()), in[r].idx.end());
      for (size_t j = 0; j < in[r].idx.size(); ++j) {
        in[r].val.push_back(int(j % 7) + 1);
        want[in[r].idx[j]] += int(j % 7) + 1;
      }
    }
    sctest::run(P, [&](scComm_t comm, int rank) {
      scSparseResult_t res = nullptr;
      ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
      for (scSparseAlgo_t algo : {scSparseAuto, scSsarRecDbl, scSsarSplitAllGather}) {
        SCOPED_TRACE(scSparseAlgoName(algo));
        const auto idx = packIndices(in[rank].idx, scIndexU64);
        const auto val = packValues(in[rank].val, scFloat64);
        ASSERT_EQ(scSparseAllReduceToSparse(idx.data(), val.data(), in[rank].idx.size(), N, scIndexU64, scFloat64,
                                            scSum, algo, nullptr, res, comm, nullptr),
                  scSuccess)
            << scGetLastError(comm);
        size_t nnz = 0;
        const void *ri = nullptr, *rv = nullptr;
        int dense = 1;
        scSparseResultIsDense(res, &dense);
        scSparseResultNnz(res, &nnz);
        scSparseResultIndices(res, &ri);
        scSparseResultValues(res, &rv);
        ASSERT_EQ(dense, 0);
        ASSERT_EQ(nnz, want.size());
        size_t j = 0;
        for (const auto& [x, v] : want) {
          EXPECT_EQ(static_cast<const uint64_t*>(ri)[j], x);
          EXPECT_EQ(static_cast<const double*>(rv)[j], v);
          ++j;
        }
      }
      scSparseResultDestroy(res);
    });
  }
}

// Non-integer floats: sums round, so the reference is approximate, but every
// rank must still hold the same bits.
TEST(SparseAllReduce, BitIdenticalWithRoundingData) {
  for (int P : gridP({3, 5, 8})) {
    const uint64_t N = 5003;
    sctest::run(P, [&](scComm_t comm, int rank) {
      Input in = makeInput(Dist::Uniform, N, 700, rank, P, 77, false);
      std::vector<float> val;
      for (size_t i = 0; i < in.idx.size(); ++i) val.push_back(float(in.val[i]) * 0.1f + 1e-3f * float(rank));
      const auto idx = packIndices(in.idx, scIndexU32);
      std::vector<float> out(N);
      for (scSparseAlgo_t algo : kAllAlgos) {
        SCOPED_TRACE(scSparseAlgoName(algo));
        EXPECT_EQ(scSparseAllReduce(idx.data(), val.data(), in.idx.size(), N, scIndexU32, scFloat32, scSum, algo,
                                    out.data(), comm, nullptr),
                  scSuccess)
            << scGetLastError(comm);
        EXPECT_TRUE(sameOnAllRanks(comm, digest(out.data(), out.size() * 4)));
      }
    });
  }
}

// A reused result handle grows and shrinks with the results; scSparseAlgoFor
// predicts what auto runs.
TEST(SparseAllReduce, ResultReuseAndAlgoFor) {
  for (int P : gridP({2, 4})) {
    const uint64_t N = 30000;
    std::vector<Prepared> cases;
    for (double dens : {0.3, 0.001, 0.05, 1.0, 0.0})
      cases.push_back(prepare(Dist::Uniform, N, kFor(N, dens), P, 50 + cases.size()));
    const scConfig_t cfg = testCfg();
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          scSparseResult_t res = nullptr;
          ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
          for (const Prepared& p : cases) {
            Call c = p.call;
            c.sparseOut = true;
            checkCall(comm, rank, c, p.in[rank], p.want, res);
            std::vector<size_t> nnz;
            for (const Input& i : p.in) nnz.push_back(i.idx.size());
            scSparseAlgo_t predicted = scSparseAuto, used = scSparseAuto;
            EXPECT_EQ(scSparseAlgoFor(comm, nnz.data(), N, scIndexU32, scFloat32, nullptr, 0, &predicted), scSuccess);
            EXPECT_EQ(scSparseResultAlgo(res, &used), scSuccess);
            EXPECT_EQ(predicted, used);
          }
          EXPECT_EQ(scSparseResultDestroy(res), scSuccess);
        },
        &cfg);
  }
}

}  // namespace
}  // namespace sptest
