// Sparse DSOP: results against the dense reference of the same vectors, and
// traffic: only the non-zeros travel, plus the compressed |R| x |C| row blocks.
#include <set>

#include "common/harness.h"
#include "dsop_util.h"

using namespace dsoptest;

namespace {

std::vector<int> ranksToRun() {
  if (sctest::mode() == sctest::Mode::Mpi) return {sctest::mpiWorldSize()};
  return {1, 2, 3, 4, 5, 7, 9};
}

// Rank `rank`'s support of a vector of length len: every x with a
// deterministic hash below density; `salt` separates a from b.
std::vector<uint64_t> support(int rank, size_t len, double density, int salt) {
  std::vector<uint64_t> idx;
  for (size_t x = 0; x < len; ++x) {
    const uint64_t h = (uint64_t(rank + 1) * 2654435761u + x * 40503u + uint64_t(salt) * 97u) % 1000u;
    if (double(h) < density * 1000.0) idx.push_back(x);
  }
  return idx;
}

struct Sparse {
  std::vector<uint64_t> idx;
  std::vector<double> val;
  std::vector<double> dense(size_t len) const {
    std::vector<double> d(len, 0.0);
    for (size_t i = 0; i < idx.size(); ++i) d[idx[i]] = val[i];
    return d;
  }
};

Sparse makeA(int rank, size_t n, double density) {
  Sparse s{support(rank, n, density, 1), {}};
  for (auto x : s.idx) s.val.push_back(aValue(rank, x) == 0 ? 5 : aValue(rank, x));
  return s;
}
Sparse makeB(int rank, size_t m, double density) {
  Sparse s{support(rank, m, density, 2), {}};
  for (auto y : s.idx) s.val.push_back(bValue(rank, y) == 0 ? -4 : bValue(rank, y));
  return s;
}

struct Case {
  size_t n, m;
  double da, db;
};

const Case kCases[] = {{50, 40, 0.1, 0.2},   {97, 1000, 0.05, 0.02}, {7, 3, 1.0, 1.0},     {1, 1, 1.0, 1.0},
                       {200, 150, 0.0, 0.3}, {3, 500, 0.5, 0.01},    {1000, 97, 0.01, 0.5}};

}  // namespace

TEST(DsopSparse, MatchesDenseReference) {
  for (int P : ranksToRun()) {
    scConfig_t cfg = sctest::testConfig();
    cfg.algo = scAlgoRing;
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          for (const Case& c : kCases) {
            std::vector<std::vector<double>> A, B;
            std::set<uint64_t> R, C;
            for (int q = 0; q < P; ++q) {
              const Sparse a = makeA(q, c.n, c.da), b = makeB(q, c.m, c.db);
              A.push_back(a.dense(c.n));
              B.push_back(b.dense(c.m));
              R.insert(a.idx.begin(), a.idx.end());
              C.insert(b.idx.begin(), b.idx.end());
            }
            const auto want = reference(A, B);
            const Sparse a = makeA(rank, c.n, c.da), b = makeB(rank, c.m, c.db);
            for (scDataType_t dt : {scFloat32, scFloat64, scBfloat16}) {
              const auto av = encode(a.val, dt), bv = encode(b.val, dt);
              std::vector<char> G(c.n * c.m * outSize(dt), char(0x55));
              for (scDsopAlgo_t algo : {scDsopAuto, scDsopAllGather, scDsopGRabenseifner}) {
                SCOPED_TRACE(testing::Message() << scDsopAlgoName(algo) << " n=" << c.n << " m=" << c.m
                                                << " nnz=" << a.idx.size() << "+" << b.idx.size() << " dt=" << int(dt));
                SC_OK(comm, scCommResetStats(comm));
                SC_OK(comm, scDsopSparse(a.idx.data(), av.data(), a.idx.size(), c.n, b.idx.data(), bv.data(),
                                         b.idx.size(), c.m, G.data(), dt, algo, comm, nullptr));
                EXPECT_EQ(compare(decodeOut(G.data(), c.n * c.m, dt), want, c.m), "");
                if (algo == scDsopAuto || P == 1) continue;
                // Only the non-zeros (and their counts) travel, plus the compressed row blocks.
                scStats_t st;
                SC_OK(comm, scCommGetStats(comm, &st));
                const uint64_t nR = R.size(), nC = C.size(), Pm1 = uint64_t(P - 1);
                uint64_t want = Pm1 * 16 + Pm1 * (a.idx.size() + b.idx.size()) * (8 + inSize(dt));
                if (algo == scDsopGRabenseifner && nR && nC)
                  want += (nR * nC - blockLen(nR, P, (rank + 1) % P) * nC) * outSize(dt);
                EXPECT_EQ(st.bytesSent, want);
              }
            }
          }
        },
        &cfg);
  }
}

// Only rank 0 contributes: the others pass no non-zeros (NULL pointers allowed).
TEST(DsopSparse, EmptyRanks) {
  for (int P : ranksToRun()) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      const size_t n = 9, m = 4;
      const uint64_t ai[2] = {2, 8}, bi[3] = {0, 1, 3};
      const float av[2] = {2, -3}, bv[3] = {1, 5, -7};
      std::vector<float> G(n * m, 99.f);
      const bool give = rank == 0;
      SC_OK(comm, scDsopSparse(give ? ai : nullptr, give ? av : nullptr, give ? 2 : 0, n, give ? bi : nullptr,
                               give ? bv : nullptr, give ? 3 : 0, m, G.data(), scFloat32, scDsopGRabenseifner, comm,
                               nullptr));
      for (size_t x = 0; x < n; ++x)
        for (size_t y = 0; y < m; ++y) {
          double want = 0;
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j)
              if (ai[i] == x && bi[j] == y) want = double(av[i]) * bv[j];
          EXPECT_EQ(G[x * m + y], want) << x << "," << y;
        }
    });
  }
}
