// The static-size sparse allreduce (scSparseAllReduceStatic) on host
// communicators: results bit for bit against a sequential reference that sums
// every index's contributions in rank order, then list order (so float sums
// that round differently in any other order fail), on unsorted lists with
// repeated indices and counts from 0 to the capacity; no host read of a count
// (scStats_t.hostReads == 0); traffic exactly the allgather of P blocks; data
// errors on one rank reported on every rank, naming it; the model's advice.
#include <cmath>
#include <cstring>
#include <random>

#include "sparse_check.h"

namespace sptest {
namespace {

// One rank's input: count entries used (capacity allocated), values as doubles
// that every tested type holds exactly once converted (the reference converts
// the same way).
struct RankIn {
  std::vector<uint64_t> idx;
  std::vector<double> val;
  uint64_t count = 0;
};

// Rank 0 sends nothing, rank P-1 a full block, the others a random count;
// indices come from a quarter of [0, dim) so lists repeat indices and ranks
// share them; values span magnitudes so float sums round by order.
RankIn makeRank(int r, int P, uint64_t cap, uint64_t dim, bool integral, uint64_t seed) {
  std::mt19937_64 g(seed * 1000003 + uint64_t(r));
  RankIn in;
  in.count = r == 0 && P > 1 ? 0 : r == P - 1 ? cap : g() % (cap + 1);
  in.idx.resize(cap);
  in.val.resize(cap);
  for (uint64_t j = 0; j < cap; ++j) {
    in.idx[j] = g() % std::max<uint64_t>(1, dim / 4);
    const double u = double(g() % 2001) - 1000.0;
    in.val[j] = integral ? u : std::ldexp(u / 1000.0, int(g() % 40) - 20);
  }
  return in;
}

template <typename T>
T divide(T x, int P) {
  if constexpr (std::is_integral_v<T>) return T(int64_t(x) / int64_t(P));
  else return T(x / T(P));
}

// The contract's sum: the first contribution to an index sets it, each later
// one (rank order, then list order) is added in T.
template <typename T>
std::vector<T> reference(const std::vector<RankIn>& all, uint64_t dim, scRedOp_t op) {
  std::vector<T> out(dim, T(0));
  std::vector<bool> seen(dim, false);
  for (const RankIn& r : all)
    for (uint64_t j = 0; j < r.count; ++j) {
      const uint64_t i = r.idx[j];
      out[i] = seen[i] ? T(out[i] + T(r.val[j])) : T(r.val[j]);
      seen[i] = true;
    }
  const int P = int(all.size());
  if (op == scAvg && P > 1)
    for (T& x : out) x = divide(x, P);
  return out;
}

template <typename F>
void withTypes(scIndexType_t it, scDataType_t vt, F&& f) {
  auto v = [&](auto itag) {
    switch (vt) {
      case scFloat32: f(itag, float{}); break;
      case scFloat64: f(itag, double{}); break;
      case scInt32: f(itag, int32_t{}); break;
      default: f(itag, int64_t{}); break;
    }
  };
  if (it == scIndexU64) v(uint64_t{});
  else v(uint32_t{});
}

constexpr scDataType_t kTypes[] = {scFloat32, scFloat64, scInt32, scInt64};

// One checked call on this rank; nnzPtr: the count from (host) memory instead of the value.
template <typename I, typename T>
void checkOne(scComm_t comm, int rank, int P, uint64_t cap, uint64_t dim, scIndexType_t it, scDataType_t vt,
              scRedOp_t op, bool countPtr, uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "P=" << P << " cap=" << cap << " dim=" << dim << " " << typeStr(vt)
                                  << (it == scIndexU64 ? " u64" : " u32") << (op == scAvg ? " avg" : " sum")
                                  << (countPtr ? " nnzPtr" : " nnz"));
  const bool integral = std::is_integral_v<T>;
  std::vector<RankIn> all;
  for (int r = 0; r < P; ++r) all.push_back(makeRank(r, P, cap, dim, integral, seed));
  const RankIn& me = all[size_t(rank)];
  std::vector<I> idx(me.idx.begin(), me.idx.end());
  std::vector<T> val(cap);
  for (uint64_t j = 0; j < cap; ++j) val[j] = T(me.val[j]);
  const uint64_t count = me.count;
  std::vector<T> out(dim, T(7));  // not zero: the call must zero it
  uint64_t status = 0;
  SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), countPtr ? 0 : count, countPtr ? &count : nullptr, cap,
                                      dim, it, vt, op, out.data(), &status, comm, nullptr));
  EXPECT_EQ(status, 0u);
  const std::vector<T> want = reference<T>(all, dim, op);
  size_t bad = 0;
  while (bad < dim && std::memcmp(&out[bad], &want[bad], sizeof(T)) == 0) ++bad;
  EXPECT_EQ(bad, dim) << "first difference at " << bad << ": got " << double(out[bad]) << ", want "
                      << double(want[bad]);
  EXPECT_TRUE(sameOnAllRanks(comm, digest(out.data(), dim * sizeof(T))));
}

TEST(SparseStatic, MatchesSequentialReference) {
  for (int P : gridP({1, 2, 3, 4, 5, 8})) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      SC_OK(comm, scCommResetStats(comm));
      uint64_t seed = 1;
      for (uint64_t cap : {1, 7, 64})
        for (scIndexType_t it : {scIndexU32, scIndexU64})
          for (scDataType_t vt : kTypes)
            for (scRedOp_t op : {scSum, scAvg})
              for (bool countPtr : {false, true})
                withTypes(it, vt, [&](auto itag, auto vtag) {
                  checkOne<decltype(itag), decltype(vtag)>(comm, rank, P, cap, 301, it, vt, op, countPtr, seed++);
                });
      scStats_t st;
      SC_OK(comm, scCommGetStats(comm, &st));
      EXPECT_EQ(st.hostReads, 0u) << "the static path must never read a count on the host";
    });
  }
}

// Every slot lands on one index: a long run that a tree sum would round differently.
TEST(SparseStatic, OneIndexLongRun) {
  for (int P : gridP({3, 8})) {
    sctest::run(P, [&](scComm_t comm, int rank) {
      const uint64_t cap = 100, dim = 5;
      std::vector<uint32_t> idx(cap, 3);
      std::vector<float> val(cap);
      for (uint64_t j = 0; j < cap; ++j)
        val[j] = std::ldexp(1.0f + float(j % 7) / 7.0f, int((j * 13 + rank) % 30) - 15);
      std::vector<float> out(dim);
      SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), cap, nullptr, cap, dim, scIndexU32, scFloat32, scSum,
                                          out.data(), nullptr, comm, nullptr));
      float want = 0;
      bool first = true;
      for (int r = 0; r < P; ++r)
        for (uint64_t j = 0; j < cap; ++j) {
          const float v = std::ldexp(1.0f + float(j % 7) / 7.0f, int((j * 13 + r) % 30) - 15);
          want = first ? v : want + v;
          first = false;
        }
      EXPECT_EQ(std::memcmp(&out[3], &want, 4), 0) << out[3] << " vs " << want;
      EXPECT_EQ(out[0], 0.0f);
    });
  }
}

// bytesSent: the allgather of P blocks of 8 + round8(cap isz) + round8(cap vsz)
// bytes — ring: P - 1 blocks per rank; auto: exactly what scAllGather of the
// same bytes sends. Nothing else goes on the wire (no header or count round).
TEST(SparseStatic, TrafficIsOneAllGather) {
  struct Shape {
    uint64_t cap;
    scIndexType_t it;
    scDataType_t vt;
    uint64_t block;
  };
  const Shape shapes[] = {{64, scIndexU32, scFloat32, 8 + 256 + 256},
                          {5, scIndexU32, scFloat64, 8 + 24 + 40},
                          {3, scIndexU64, scInt32, 8 + 24 + 16}};
  for (int P : gridP({2, 3, 4, 5, 8})) {
    for (bool ring : {true, false}) {
      scConfig_t cfg = sctest::testConfig();
      if (ring) cfg.algo = scAlgoRing;
      sctest::run(
          P,
          [&](scComm_t comm, int) {
            for (const Shape& s : shapes) {
              SCOPED_TRACE(testing::Message() << "P=" << P << (ring ? " ring" : " auto") << " block=" << s.block);
              std::vector<uint64_t> idx(s.cap, 1);  // large enough for either index type
              std::vector<double> val(s.cap, 1.0);
              std::vector<double> out(16);
              scStats_t st;
              SC_OK(comm, scCommResetStats(comm));
              SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), s.cap, nullptr, s.cap, 16, s.it, s.vt, scSum,
                                                  out.data(), nullptr, comm, nullptr));
              SC_OK(comm, scCommGetStats(comm, &st));
              const uint64_t sent = st.bytesSent;
              EXPECT_EQ(st.hostReads, 0u);
              if (ring) {
                EXPECT_EQ(sent, uint64_t(P - 1) * s.block);
                EXPECT_EQ(st.msgsSent, uint64_t(P - 1));
              }
              std::vector<uint8_t> blk(s.block), all(size_t(P) * s.block);
              SC_OK(comm, scCommResetStats(comm));
              SC_OK(comm, scAllGather(blk.data(), all.data(), s.block, scUint8, scAlgoAuto, comm, nullptr));
              SC_OK(comm, scCommGetStats(comm, &st));
              EXPECT_EQ(sent, st.bytesSent);
            }
          },
          &cfg);
    }
  }
}

// A data error on one rank: every rank fails with the same message naming it,
// every status word holds it, the output holds the valid entries' sum, and the
// communicator stays usable.
void expectDataError(int P, const char* what, uint64_t badCount, uint32_t badIndex, bool countPtr, uint64_t wantStatus,
                     const std::string& text) {
  SCOPED_TRACE(testing::Message() << what << ", P=" << P << (countPtr ? " nnzPtr" : ""));
  sctest::run(P, [&](scComm_t comm, int rank) {
    const uint64_t cap = 4, dim = 10;
    std::vector<uint32_t> idx{1, 2, 3, 4};
    std::vector<float> val{1, 1, 1, 1};
    uint64_t count = 4;
    if (rank == 1) {
      count = badCount;
      idx[2] = badIndex;
    }
    std::vector<float> out(dim);
    uint64_t status = 0;
    scResult_t rc = scSparseAllReduceStatic(idx.data(), val.data(), countPtr ? 0 : count, countPtr ? &count : nullptr,
                                            cap, dim, scIndexU32, scFloat32, scSum, out.data(), &status, comm, nullptr);
    const std::string msg = scGetLastError(comm);
    EXPECT_EQ(rc, scInvalidArgument) << "rank " << rank << ": " << msg;
    EXPECT_NE(msg.find(text), std::string::npos) << "rank " << rank << ": " << msg;
    EXPECT_EQ(status, wantStatus);
    EXPECT_EQ(SC_STATIC_STATUS_RANK(status), 1);
    // A second bad call keeps the first status word.
    idx[2] = 3;
    rc = scSparseAllReduceStatic(idx.data(), val.data(), 5, nullptr, cap, dim, scIndexU32, scFloat32, scSum, out.data(),
                                 &status, comm, nullptr);
    EXPECT_EQ(rc, scInvalidArgument);
    EXPECT_EQ(status, wantStatus);
    // Still usable: a good call succeeds.
    SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), 4, nullptr, cap, dim, scIndexU32, scFloat32, scSum,
                                        out.data(), nullptr, comm, nullptr));
    EXPECT_EQ(out[3], float(P));
  });
}

TEST(SparseStatic, DataErrorsOnOneRank) {
  for (int P : gridP({2, 3, 4})) {
    for (bool countPtr : {false, true}) {
      expectDataError(P, "count > capacity", 5, 3, countPtr, SC_STATIC_STATUS(1, 0, scStaticCountOverCapacity),
                      "rank 1's count 5 exceeds capacity = 4");
      expectDataError(P, "index >= dim", 4, 10, countPtr, SC_STATIC_STATUS(1, 2, scStaticIndexOutOfRange),
                      "rank 1's indices[2] = 10 is not below dim = 10");
    }
    // An index past the count is never looked at.
    sctest::run(P, [&](scComm_t comm, int) {
      std::vector<uint32_t> idx{1, 2, 999, 999};
      std::vector<float> val{1, 1, 1, 1};
      std::vector<float> out(10);
      SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), 2, nullptr, 4, 10, scIndexU32, scFloat32, scSum,
                                          out.data(), nullptr, comm, nullptr));
      EXPECT_EQ(out[2], float(P));
    });
  }
}

TEST(SparseStatic, ArgumentErrors) {
  for (int P : gridP({2, 3})) {
    // NULL indices on rank 1 alone: in-band, every rank fails, none waits.
    sctest::run(P, [&](scComm_t comm, int rank) {
      std::vector<uint32_t> idx{1, 2};
      std::vector<float> val{1, 1};
      std::vector<float> out(10);
      const scResult_t rc = scSparseAllReduceStatic(rank == 1 ? nullptr : idx.data(), val.data(), 2, nullptr, 2, 10,
                                                    scIndexU32, scFloat32, scSum, out.data(), nullptr, comm, nullptr);
      const std::string msg = scGetLastError(comm);
      EXPECT_EQ(rc, scInvalidArgument) << msg;
      EXPECT_NE(msg.find(rank == 1 ? "indices is NULL with nnz = 2" : "invalid arguments on rank 1"), std::string::npos)
          << "rank " << rank << ": " << msg;
      SC_OK(comm, scSparseAllReduceStatic(idx.data(), val.data(), 2, nullptr, 2, 10, scIndexU32, scFloat32, scSum,
                                          out.data(), nullptr, comm, nullptr));
      EXPECT_EQ(out[1], float(P));
    });
  }
  // Arguments every rank passes alike fail at once, before any message.
  sctest::run(2, [&](scComm_t comm, int) {
    uint32_t idx[1] = {0};
    float val[1] = {1}, out[4] = {};
    auto call = [&](size_t cap, size_t dim, scIndexType_t it, scDataType_t vt, scRedOp_t op) {
      return scSparseAllReduceStatic(idx, val, 1, nullptr, cap, dim, it, vt, op, out, nullptr, comm, nullptr);
    };
    auto expect = [&](scResult_t rc, const char* text) {
      EXPECT_EQ(rc, scInvalidArgument);
      EXPECT_NE(std::string(scGetLastError(comm)).find(text), std::string::npos) << scGetLastError(comm);
    };
    expect(call(0, 4, scIndexU32, scFloat32, scSum), "capacity = 0 is out of range");
    expect(call(1, 4, scIndexU32, scFloat32, scMax), "sum and avg only");
    expect(call(1, 4, scIndexType_t(7), scFloat32, scSum), "unknown index type 7");
    expect(call(1, 4, scIndexU32, scDataType_t(42), scSum), "unknown data type 42");
    expect(call(1, uint64_t(1) << 32, scIndexU32, scFloat32, scSum), "needs 64-bit indices");
    expect(scSparseAllReduceStatic(idx, val, 1, nullptr, 1, 4, scIndexU32, scFloat32, scSum, out, nullptr, comm,
                                   &out[0]),
           "stream must be NULL");
    SC_OK(comm, call(1, 4, scIndexU32, scFloat32, scSum));
    EXPECT_EQ(out[0], 2.0f);
  });
}

// Ranks passing different capacities make different calls: every rank fails
// (the transport sees the other call's message), none hangs or succeeds.
TEST(SparseStatic, CapacityMismatch) {
  for (int P : gridP({2, 3})) {
    scConfig_t cfg = sctest::testConfig();
    cfg.timeoutSeconds = 10;
    // The last rank passes capacity 3, the others 2.
    auto call = [&](scComm_t comm, int rank) {
      std::vector<uint32_t> idx{1, 2, 3};
      std::vector<float> val{1, 1, 1};
      std::vector<float> out(10);
      const size_t cap = rank == P - 1 ? 3 : 2;
      return scSparseAllReduceStatic(idx.data(), val.data(), 2, nullptr, cap, 10, scIndexU32, scFloat32, scSum,
                                     out.data(), nullptr, comm, nullptr);
    };
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scResult_t rc = call(comm, rank);
          EXPECT_EQ(rc, scRemoteError) << "rank " << rank << ": " << scGetLastError(comm);
        },
        &cfg);
    // With the mismatch check on, the capacity is named before any message.
    cfg.check = scCheckAll;
    sctest::run(
        P,
        [&](scComm_t comm, int rank) {
          const scResult_t rc = call(comm, rank);
          const std::string msg = scGetLastError(comm);
          EXPECT_EQ(rc, scInvalidUsage) << "rank " << rank << ": " << msg;
          EXPECT_NE(msg.find("scSparseAllReduceStatic(count=3"), std::string::npos) << msg;
        },
        &cfg);
  }
}

TEST(SparseStatic, ModelAdvice) {
  for (int P : gridP({1, 8})) {
    sctest::run(P, [&](scComm_t comm, int) {
      int use = -1;
      SC_OK(comm, scSparseStaticAdvised(comm, 16, size_t(1) << 22, scIndexU32, scFloat32, &use));
      EXPECT_EQ(use, 1) << "16 pairs per rank against a 16 MiB dense vector";
      SC_OK(comm, scSparseStaticAdvised(comm, 4096, 4096, scIndexU32, scFloat32, &use));
      EXPECT_EQ(use, P == 1 ? 1 : 0) << "a full-size capacity: P x (isz + vsz) x dim bytes against dim x vsz";
      EXPECT_EQ(scSparseStaticAdvised(comm, 0, 10, scIndexU32, scFloat32, &use), scInvalidArgument);
    });
  }
}

}  // namespace
}  // namespace sptest
