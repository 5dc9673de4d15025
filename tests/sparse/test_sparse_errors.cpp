// Bad input to the sparse allreduce: every error of the issue gets a clear
// scInvalidArgument on every rank — never a crash, a hang or a wrong answer.
// A fault on one rank only is reported there with its details and on the
// other ranks as "invalid input on another rank"; the communicator stays
// usable, which the valid call after each case proves.
#include <cstdlib>
#include <cstring>
#include <functional>

#include "sparse_check.h"

namespace sptest {
namespace {

constexpr uint64_t kN = 100;

// What one rank passes; filled per case.
struct Args {
  std::vector<uint32_t> idx{3, 10, 42, 99};
  std::vector<float> val{1, 2, 3, 4};
  const void* ip = nullptr;
  const void* vp = nullptr;
  size_t nnz = 4;
  size_t dim = kN;
  scIndexType_t it = scIndexU32;
  scDataType_t vt = scFloat32;
  scRedOp_t op = scSum;
  scSparseAlgo_t algo = scSparseAuto;
  scSparseOptions_t opt = SC_SPARSE_OPTIONS_INITIALIZER;
  bool useOpts = false;
  void* stream = nullptr;
  std::vector<float> out = std::vector<float>(kN);
  void* outp = nullptr;
  bool outSet = false;
  bool sparseOut = false;
  bool nullResult = false;
};

using Mutator = std::function<void(Args&, int rank)>;

// Runs the bad call on every rank (mutated by `bad`), expects `code` and
// `mine` in the message on the ranks where `faulty(rank)`, the remote message
// elsewhere (unless everyone is faulty), then a valid call that must succeed.
void expectError(int P, const char* what, const Mutator& bad, const std::function<bool(int)>& faulty,
                 const std::string& mine, scResult_t code = scInvalidArgument) {
  SCOPED_TRACE(testing::Message() << what << ", P=" << P);
  sctest::run(P, [&](scComm_t comm, int rank) {
    Args a;
    bad(a, rank);
    const void* ip = a.ip ? a.ip : a.idx.data();
    const void* vp = a.vp ? a.vp : a.val.data();
    if (a.ip == reinterpret_cast<const void*>(1)) ip = nullptr;
    if (a.vp == reinterpret_cast<const void*>(1)) vp = nullptr;
    void* out = a.outSet ? a.outp : a.out.data();
    scResult_t rc;
    if (a.sparseOut) {
      scSparseResult_t res = nullptr;
      ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
      rc = scSparseAllReduceToSparse(ip, vp, a.nnz, a.dim, a.it, a.vt, a.op, a.algo, a.useOpts ? &a.opt : nullptr,
                                     a.nullResult ? nullptr : res, comm, a.stream);
      scSparseResultDestroy(res);
    } else {
      rc = scSparseAllReduceEx(ip, vp, a.nnz, a.dim, a.it, a.vt, a.op, a.algo, a.useOpts ? &a.opt : nullptr, out, comm,
                               a.stream);
    }
    const std::string msg = scGetLastError(comm);
    EXPECT_EQ(rc, code) << "rank " << rank << ": " << msg;
    if (faulty(rank)) EXPECT_NE(msg.find(mine), std::string::npos) << "rank " << rank << ": " << msg;
    else EXPECT_NE(msg.find("on another rank"), std::string::npos) << "rank " << rank << ": " << msg;
    // The communicator is still usable.
    Args ok;
    EXPECT_EQ(scSparseAllReduce(ok.idx.data(), ok.val.data(), ok.nnz, kN, scIndexU32, scFloat32, scSum, scSparseAuto,
                                ok.out.data(), comm, nullptr),
              scSuccess)
        << scGetLastError(comm);
    EXPECT_EQ(ok.out[42], float(3 * P));
  });
}

bool all(int) { return true; }
bool rank1(int r) { return r == 1; }

TEST(SparseErrors, DataErrorsOnOneRank) {
  for (int P : gridP({2, 3, 4})) {
    auto only1 = [](const Mutator& m) {
      return [m](Args& a, int r) {
        if (r == 1) m(a, r);
      };
    };
    expectError(P, "unsorted", only1([](Args& a, int) {
                  a.idx = {3, 42, 10, 99};
                }),
                rank1, "indices[2] = 10 is below indices[1] = 42");
    expectError(P, "duplicate", only1([](Args& a, int) {
                  a.idx = {3, 10, 10, 99};
                }),
                rank1, "indices[2] = 10 repeats indices[1] = 10");
    expectError(P, "index >= dim", only1([](Args& a, int) {
                  a.idx = {3, 10, 42, 100};
                }),
                rank1, "indices[3] = 100 is not below dim = 100");
    expectError(P, "nnz > dim", only1([](Args& a, int) { a.dim = 3; }), rank1, "nnz = 4 exceeds dim = 3");
    expectError(P, "NULL indices", only1([](Args& a, int) { a.ip = reinterpret_cast<const void*>(1); }), rank1,
                "indices is NULL with nnz = 4");
    expectError(P, "NULL values", only1([](Args& a, int) { a.vp = reinterpret_cast<const void*>(1); }), rank1,
                "values is NULL with nnz = 4");
    expectError(
        P, "range error with sort flag",
        [](Args& a, int r) {
          a.useOpts = true;
          a.opt.flags = scSparseSortInput;
          if (r == 1) a.idx = {99, 3, 1000, 3};
        },
        rank1, "indices[2] = 1000 is not below dim = 100");
  }
}

TEST(SparseErrors, MismatchAcrossRanks) {
  for (int P : gridP({2, 3})) {
    expectError(
        P, "dims differ",
        [P](Args& a, int r) {
          if (r == P - 1) a.dim = kN + 1;
        },
        all, "dim differs across ranks");
    expectError(
        P, "value types differ",
        [](Args& a, int r) {
          if (r == 1) {
            a.vt = scInt32;
          }
        },
        all, "value type differs across ranks");
    expectError(
        P, "algorithms differ", [](Args& a, int r) { a.algo = r ? scSsarRecDbl : scSparseDense; }, all,
        "algorithm differs across ranks");
    expectError(
        P, "options differ",
        [](Args& a, int r) {
          a.useOpts = true;
          a.opt.switchDensity = r ? 0.5 : 0.25;
        },
        all, "switchDensity");
  }
}

TEST(SparseErrors, BadArgumentsEverywhere) {
  for (int P : gridP({1, 2, 3})) {
    expectError(
        P, "op max", [](Args& a, int) { a.op = scMax; }, all, "sum and avg only");
    expectError(
        P, "op prod", [](Args& a, int) { a.op = scProd; }, all, "sum and avg only");
    expectError(
        P, "unknown op", [](Args& a, int) { a.op = scRedOp_t(17); }, all, "unknown reduction op 17");
    expectError(
        P, "unknown itype", [](Args& a, int) { a.it = scIndexType_t(5); }, all, "unknown index type 5");
    expectError(
        P, "unknown vtype", [](Args& a, int) { a.vt = scDataType_t(42); }, all, "unknown data type 42");
    expectError(
        P, "unknown algo", [](Args& a, int) { a.algo = scSparseAlgo_t(9); }, all, "unknown sparse algorithm 9");
    expectError(
        P, "NULL denseOut",
        [](Args& a, int) {
          a.outSet = true;
          a.outp = nullptr;
        },
        all, "denseOut is NULL with dim = 100");
    expectError(
        P, "denseOut overlaps values",
        [](Args& a, int) {
          a.val.resize(kN);
          a.outSet = true;
          a.outp = a.val.data();
        },
        all, "denseOut overlaps");
    expectError(
        P, "uint32 with dim > 2^32", [](Args& a, int) { a.dim = (uint64_t(1) << 32) + 1; }, all,
        "needs 64-bit indices");
    expectError(
        P, "stream on a host communicator", [](Args& a, int) { a.stream = &a; }, all,
        "stream must be NULL on a host communicator");
    expectError(
        P, "options size",
        [](Args& a, int) {
          a.useOpts = true;
          a.opt.size = 3;
        },
        all, "scSparseOptions_t.size is 3");
    expectError(
        P, "switchDensity",
        [](Args& a, int) {
          a.useOpts = true;
          a.opt.switchDensity = 1.5;
        },
        all, "switchDensity must be in [0, 1]");
    expectError(
        P, "group size",
        [](Args& a, int) {
          a.useOpts = true;
          a.opt.earlyGroupSize = 3;
        },
        all, "earlyGroupSize must be 0 or a power of two");
    expectError(
        P, "flags",
        [](Args& a, int) {
          a.useOpts = true;
          a.opt.flags = 8;
        },
        all, "unknown bits");
    expectError(
        P, "NULL result",
        [](Args& a, int) {
          a.sparseOut = true;
          a.nullResult = true;
        },
        all, "sparse result handle is NULL");
  }
}

TEST(SparseErrors, HandlesAndQueries) {
  EXPECT_EQ(scSparseAllReduce(nullptr, nullptr, 0, 0, scIndexU32, scFloat32, scSum, scSparseAuto, nullptr, nullptr,
                              nullptr),
            scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("communicator is NULL"), std::string::npos);
  EXPECT_EQ(scSparseResultCreate(nullptr, nullptr), scInvalidArgument);
  EXPECT_EQ(scSparseResultDestroy(nullptr), scSuccess);
  int d = 0;
  EXPECT_EQ(scSparseResultIsDense(nullptr, &d), scInvalidArgument);
  EXPECT_STREQ(scSparseAlgoName(scDsarEarlySwitch), "dsar_early_switch");
  EXPECT_STREQ(scSparseAlgoName(scSparseAlgo_t(99)), "?");
  sctest::run(1, [&](scComm_t comm, int) {
    scSparseResult_t res = nullptr;
    ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess);
    size_t n = 0;
    EXPECT_EQ(scSparseResultNnz(res, &n), scInvalidUsage);  // nothing written yet
    EXPECT_NE(std::string(scGetLastError(nullptr)).find("holds nothing yet"), std::string::npos);
    EXPECT_EQ(scSparseResultNnz(res, nullptr), scInvalidUsage);
    scSparseResultDestroy(res);
    scSparseAlgo_t a;
    EXPECT_EQ(scSparseAlgoFor(comm, nullptr, 10, scIndexU32, scFloat32, nullptr, 1, &a), scInvalidArgument);
  });
}

// A bad SPARCOLL_SPARSE_OWNER_SUM fails every rank in the call's checks, at
// the header round, before the schedule starts (a failure in the middle of
// the split would leave the peers waiting for its payload).
TEST(SparseErrors, BadOwnerSumSettingFailsAtTheHeader) {
  for (int P : gridP({1, 2, 3})) {
    SCOPED_TRACE(testing::Message() << "P=" << P);
    ASSERT_EQ(setenv("SPARCOLL_SPARSE_OWNER_SUM", "fastest", 1), 0);
    sctest::run(P, [&](scComm_t comm, int rank) {
      Args a;
      ASSERT_EQ(scCommResetStats(comm), scSuccess);
      EXPECT_EQ(scSparseAllReduce(a.idx.data(), a.val.data(), a.nnz, kN, scIndexU32, scFloat32, scSum,
                                  scSsarSplitAllGather, a.out.data(), comm, nullptr),
                scInvalidArgument);
      EXPECT_NE(std::string(scGetLastError(comm)).find("SPARCOLL_SPARSE_OWNER_SUM='fastest'"), std::string::npos)
          << "rank " << rank << ": " << scGetLastError(comm);
      scStats_t st{};
      ASSERT_EQ(scCommGetStats(comm, &st), scSuccess);
      EXPECT_EQ(st.hostReads, 1u) << "rank " << rank << ": the header's read only, no split";
    });
    unsetenv("SPARCOLL_SPARSE_OWNER_SUM");
    sctest::run(P, [&](scComm_t comm, int) {
      Args ok;
      EXPECT_EQ(scSparseAllReduce(ok.idx.data(), ok.val.data(), ok.nnz, kN, scIndexU32, scFloat32, scSum,
                                  scSsarSplitAllGather, ok.out.data(), comm, nullptr),
                scSuccess)
          << scGetLastError(comm);
      EXPECT_EQ(ok.out[42], float(3 * P));
    });
  }
}

}  // namespace
}  // namespace sptest
