// Mismatched calls with checking off: ranks that call different collectives,
// or one collective with different counts. Whatever a rank returns, it must
// never be scSuccess with data other than its own call's correct result, now
// or in a later, matched call on the same communicator (the defect: leftovers
// of the mismatched call taken by the next one). Every rank returns within the
// deadline plus slack: nothing hangs, nothing crashes (Open MPI's
// shared-memory single-copy path corrupted the heap on truncated receives).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/harness.h"
#include "reliability/reliability_util.h"

namespace {

constexpr double kDeadline = 0.5;

enum class Coll { AllReduce, ReduceScatter, AllGather, Broadcast };

struct Call {
  Coll coll;
  size_t count;  // allreduce: count; reduce-scatter: recvcount; allgather: sendcount; broadcast: count
  scAlgo_t algo;
  int root = 0;  // broadcast
};

const char* const kAlgoNames[] = {"auto", "ring", "rabenseifner", "recdbl", "native", "binomial", "scatter_allgather"};
static_assert(sizeof(kAlgoNames) / sizeof(kAlgoNames[0]) == scNumAlgos, "kAlgoNames follows scAlgo_t");

std::string text(const Call& c) {
  static const char* n[] = {"allreduce", "reduce_scatter", "allgather", "broadcast"};
  return std::string(n[int(c.coll)]) + "(" + std::to_string(c.count) + ", " + kAlgoNames[c.algo] +
         (c.coll == Coll::Broadcast ? ", root " + std::to_string(c.root) : std::string()) + ")";
}

// Rank r's input element i: exact in float32 for every sum here.
float input(int r, size_t i) { return float((r + 1) * 1000 + int(i % 997)); }

// The correct result of `c` had every one of P ranks made it.
std::vector<float> expected(const Call& c, int P, int rank) {
  std::vector<float> out;
  switch (c.coll) {
    case Coll::AllReduce:
      for (size_t i = 0; i < c.count; ++i) {
        float s = 0;
        for (int q = 0; q < P; ++q) s += input(q, i);
        out.push_back(s);
      }
      break;
    case Coll::ReduceScatter:
      for (size_t i = 0; i < c.count; ++i) {
        float s = 0;
        for (int q = 0; q < P; ++q) s += input(q, size_t(rank) * c.count + i);
        out.push_back(s);
      }
      break;
    case Coll::AllGather:
      for (int q = 0; q < P; ++q)
        for (size_t i = 0; i < c.count; ++i) out.push_back(input(q, i));
      break;
    case Coll::Broadcast:
      for (size_t i = 0; i < c.count; ++i) out.push_back(input(c.root, i));
      break;
  }
  return out;
}

scResult_t issue(const Call& c, scComm_t comm, int P, int rank, std::vector<float>& out) {
  std::vector<float> in(c.coll == Coll::ReduceScatter ? c.count * P : c.count);
  for (size_t i = 0; i < in.size(); ++i) in[i] = input(rank, i);
  out.assign(c.coll == Coll::AllGather ? c.count * P : c.count, -1.0f);
  switch (c.coll) {
    case Coll::AllReduce: return scAllReduce(in.data(), out.data(), c.count, scFloat32, scSum, c.algo, comm, nullptr);
    case Coll::ReduceScatter:
      return scReduceScatter(in.data(), out.data(), c.count, scFloat32, scSum, c.algo, comm, nullptr);
    case Coll::AllGather: return scAllGather(in.data(), out.data(), c.count, scFloat32, c.algo, comm, nullptr);
    case Coll::Broadcast: out = in; return scBroadcast(out.data(), c.count, scFloat32, c.root, c.algo, comm, nullptr);
  }
  return scInternalError;
}

// The check's text of a call as call #1 of a fresh communicator.
std::string sigText(const Call& c) {
  static const char* n[] = {"scAllReduce", "scReduceScatter", "scAllGather", "scBroadcast"};
  const bool noOp = c.coll == Coll::AllGather || c.coll == Coll::Broadcast;
  return std::string(n[int(c.coll)]) + "(count=" + std::to_string(c.count) + ", float" + (noOp ? "" : ", sum") + ", " +
         kAlgoNames[c.algo] + (c.coll == Coll::Broadcast ? ", root=" + std::to_string(c.root) : std::string()) +
         ") as call #1";
}

// The ranks 1..P-1 as the check names them.
std::string rankList(int P) {
  if (P == 2) return "rank 1";
  if (P == 3) return "ranks 1, 2";
  return "ranks 1-" + std::to_string(P - 1);
}

using reltest::since;

// Rank 0 makes call `a`, every other rank call `b`; then every rank makes the
// matched call `next`. Checks each rank's outcome of both. `checked`: the
// mismatch check covers the call, so every rank must return scInvalidUsage
// naming both calls, and the communicator stays usable.
void mismatch(int P, const Call& a, const Call& b, const Call& next, scCheck_t check = scCheckDefault,
              bool checked = false) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  cfg.check = check;
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        const Call& mine = rank == 0 ? a : b;
        SCOPED_TRACE(text(a) + " on rank 0 against " + text(b) + " on the others; rank " + std::to_string(rank));
        std::vector<float> out;
        auto t0 = std::chrono::steady_clock::now();
        scResult_t r = issue(mine, comm, P, rank, out);
        EXPECT_LT(since(t0), kDeadline + 3) << "the mismatched call took far past its deadline";
        // One line per rank and case, collected into bench/results/ ("what each rank returned").
        std::printf("mismatch P=%d %s | rank0 %s | others %s | transport %s | rank %d returned %s\n", P,
                    checked ? "checked" : "unchecked", text(a).c_str(), text(b).c_str(), sctest::modeName(), rank,
                    scGetErrorString(r));
        if (checked) {
          ASSERT_EQ(r, scInvalidUsage) << scGetLastError(comm);
          const std::string msg = scGetLastError(comm);
          EXPECT_NE(msg.find("rank 0 called " + sigText(a)), std::string::npos) << msg;
          EXPECT_NE(msg.find(rankList(P) + " called " + sigText(b)), std::string::npos) << msg;
        } else if (r == scSuccess) {
          EXPECT_EQ(out, expected(mine, P, rank)) << "scSuccess with wrong data in the mismatched call";
        } else {
          EXPECT_TRUE(r == scRemoteError || r == scTimeout || r == scInvalidUsage)
              << scGetErrorString(r) << ": " << scGetLastError(comm);
          const std::string msg = scGetLastError(comm);
          EXPECT_NE(msg.find("rank"), std::string::npos) << "the error names no rank: " << msg;
        }
        t0 = std::chrono::steady_clock::now();
        r = issue(next, comm, P, rank, out);
        EXPECT_LT(since(t0), kDeadline + 3) << "the next call took far past its deadline";
        if (r == scSuccess) EXPECT_EQ(out, expected(next, P, rank)) << "scSuccess with wrong data in the next call";
        if (checked)
          EXPECT_EQ(r, scSuccess) << "a checked mismatch left the communicator unusable: " << scGetLastError(comm);
        reltest::syncWorld();
      },
      &cfg);
}

const scAlgo_t kP2PAlgos[] = {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl};

// Allreduce on rank 0, reduce-scatter on the others (same total size), then a
// matched allreduce.
TEST(Mismatch, AllReduceAgainstReduceScatter) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : {scAlgoRing, scAlgoRabenseifner}) {
      const size_t n = 48 * 1024;
      mismatch(P, {Coll::AllReduce, n, alg}, {Coll::ReduceScatter, n / P, alg}, {Coll::AllReduce, 4096, alg});
    }
}

TEST(Mismatch, AllReduceAgainstAllGather) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : {scAlgoRing, scAlgoRecDbl}) {
      const scAlgo_t ar = alg == scAlgoRecDbl ? scAlgoRecDbl : scAlgoRing;
      mismatch(P, {Coll::AllReduce, 6000, ar}, {Coll::AllGather, size_t(6000 / P), alg}, {Coll::AllReduce, 6000, ar});
    }
}

// One collective, different counts: the larger-count rank sends more than
// its peers expect (the truncation that corrupted Open MPI's heap).
TEST(Mismatch, CountsDiffer) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : kP2PAlgos)
      for (size_t big : {size_t(2000), size_t(300000)}) {
        mismatch(P, {Coll::AllReduce, big, alg}, {Coll::AllReduce, big / 2, alg}, {Coll::AllReduce, 1000, alg});
        mismatch(P, {Coll::AllReduce, big / 2, alg}, {Coll::AllReduce, big, alg}, {Coll::AllReduce, 1000, alg});
      }
}

TEST(Mismatch, AllGatherCountsDiffer) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : {scAlgoRing, scAlgoRecDbl})
      mismatch(P, {Coll::AllGather, 5000, alg}, {Coll::AllGather, 2500, alg}, {Coll::AllGather, 100, alg});
}

// Native: the library's own collective, which cannot be protected from a
// mismatch (Open MPI corrupts its heap): the default check covers it, so
// every rank returns scInvalidUsage naming both calls.
TEST(Mismatch, NativeCountsDiffer) {
  for (int P : {2, 3, 4}) {
    mismatch(P, {Coll::AllReduce, 4000, scAlgoNative}, {Coll::AllReduce, 2000, scAlgoNative},
             {Coll::AllReduce, 100, scAlgoRing}, scCheckDefault, true);
    mismatch(P, {Coll::ReduceScatter, 3000, scAlgoNative}, {Coll::ReduceScatter, 1000, scAlgoNative},
             {Coll::AllReduce, 100, scAlgoRing}, scCheckDefault, true);
    mismatch(P, {Coll::AllGather, 5000, scAlgoNative}, {Coll::AllGather, 2500, scAlgoNative},
             {Coll::AllGather, 100, scAlgoNative}, scCheckDefault, true);
  }
}

TEST(Mismatch, NativeCollectivesDiffer) {
  for (int P : {2, 3})
    mismatch(P, {Coll::AllReduce, 3000, scAlgoNative}, {Coll::AllGather, 1000, scAlgoNative},
             {Coll::AllReduce, 100, scAlgoRing}, scCheckDefault, true);
}

// With every call checked, any mismatch is scInvalidUsage on every rank.
TEST(Mismatch, CheckAll) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : kP2PAlgos) {
      mismatch(P, {Coll::AllReduce, 3000, alg}, {Coll::AllReduce, 2000, alg}, {Coll::AllReduce, 100, alg}, scCheckAll,
               true);
      const scAlgo_t other = alg == scAlgoRing ? scAlgoRabenseifner : scAlgoRing;
      mismatch(P, {Coll::AllReduce, 3000, alg}, {Coll::AllReduce, 3000, other}, {Coll::AllReduce, 100, alg}, scCheckAll,
               true);
    }
  for (int P : {2, 3})
    mismatch(P, {Coll::AllReduce, 3000, scAlgoRing}, {Coll::AllGather, 1000, scAlgoRing},
             {Coll::AllReduce, 100, scAlgoRing}, scCheckAll, true);
}

// Broadcast: ranks that disagree on the root, the count, or the collective
// (broadcast against allreduce). Every broadcast is checked by default (a
// rank that takes itself for the root only sends, so its messages cannot
// tell it: with P = 2 and each rank its own root, both returned success):
// every rank returns scInvalidUsage naming both calls, roots included, on
// every algorithm and size; with the check off, no rank may return success
// with data other than its own call's result.
const scAlgo_t kBcastAlgos[] = {scAlgoAuto, scAlgoBinomial, scAlgoScatterAllGather};

TEST(Mismatch, BroadcastRootsDiffer) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : kBcastAlgos)
      for (size_t n : {size_t(1000), size_t(1) << 20}) {
        mismatch(P, {Coll::Broadcast, n, alg, 0}, {Coll::Broadcast, n, alg, 1}, {Coll::Broadcast, 500, alg, P - 1},
                 scCheckDefault, alg != scAlgoAuto);
        mismatch(P, {Coll::Broadcast, n, alg, P - 1}, {Coll::Broadcast, n, alg, 0}, {Coll::Broadcast, 500, alg, 0},
                 scCheckDefault, alg != scAlgoAuto);
        if (alg != scAlgoAuto)
          mismatch(P, {Coll::Broadcast, n, alg, 0}, {Coll::Broadcast, n, alg, 1}, {Coll::Broadcast, 500, alg, 0},
                   scCheckOff);
      }
}

// Every rank its own root, the case no message can reveal (each only sends).
TEST(Mismatch, BroadcastEveryRankItsOwnRoot) {
  for (int P : {2, 3})
    for (scAlgo_t alg : kBcastAlgos)
      for (size_t n : {size_t(1000), size_t(1) << 20}) {
        scConfig_t cfg = sctest::testConfig();
        cfg.timeoutSeconds = kDeadline;
        sctest::run(
            P,
            [&](scComm_t comm, int rank) {
              std::vector<float> x(n, float(rank));
              ASSERT_EQ(scBroadcast(x.data(), n, scFloat32, rank, alg, comm, nullptr), scInvalidUsage)
                  << scGetLastError(comm);
              const std::string msg = scGetLastError(comm);
              for (int q = 0; q < P; ++q) EXPECT_NE(msg.find("root=" + std::to_string(q)), std::string::npos) << msg;
              x.assign(n, float(rank));
              ASSERT_EQ(scBroadcast(x.data(), n, scFloat32, 0, alg, comm, nullptr), scSuccess) << scGetLastError(comm);
              EXPECT_EQ(x, std::vector<float>(n, 0.0f));
              reltest::syncWorld();
            },
            &cfg);
      }
}

TEST(Mismatch, BroadcastCountsDiffer) {
  for (int P : {2, 3, 4})
    for (scAlgo_t alg : {scAlgoBinomial, scAlgoScatterAllGather}) {
      mismatch(P, {Coll::Broadcast, 4000, alg, 0}, {Coll::Broadcast, 2000, alg, 0}, {Coll::Broadcast, 100, alg, 0},
               scCheckDefault, true);
      mismatch(P, {Coll::Broadcast, 2000, alg, 1}, {Coll::Broadcast, 4000, alg, 1}, {Coll::Broadcast, 100, alg, 1},
               scCheckDefault, true);
    }
}

TEST(Mismatch, BroadcastAgainstAllReduce) {
  for (int P : {2, 3, 4}) {
    mismatch(P, {Coll::Broadcast, 3000, scAlgoBinomial, 0}, {Coll::AllReduce, 3000, scAlgoRecDbl},
             {Coll::AllReduce, 100, scAlgoRing});
    mismatch(P, {Coll::AllReduce, 3000, scAlgoRing}, {Coll::Broadcast, 3000, scAlgoScatterAllGather, 0},
             {Coll::Broadcast, 100, scAlgoBinomial, 0});
  }
}

TEST(Mismatch, BroadcastChecked) {
  for (int P : {2, 3, 4}) {
    // native: checked by default (MPI_Bcast cannot be protected otherwise).
    mismatch(P, {Coll::Broadcast, 3000, scAlgoNative, 0}, {Coll::Broadcast, 3000, scAlgoNative, 1},
             {Coll::Broadcast, 100, scAlgoNative, 1}, scCheckDefault, true);
    mismatch(P, {Coll::Broadcast, 3000, scAlgoNative, 1}, {Coll::Broadcast, 1500, scAlgoNative, 1},
             {Coll::Broadcast, 100, scAlgoBinomial, 0}, scCheckDefault, true);
    for (scAlgo_t alg : {scAlgoBinomial, scAlgoScatterAllGather}) {
      mismatch(P, {Coll::Broadcast, 3000, alg, 0}, {Coll::Broadcast, 3000, alg, P - 1}, {Coll::Broadcast, 100, alg, 0},
               scCheckAll, true);
      mismatch(P, {Coll::Broadcast, 3000, alg, 0}, {Coll::AllReduce, 3000, scAlgoRing},
               {Coll::AllReduce, 100, scAlgoRing}, scCheckAll, true);
    }
  }
}

}  // namespace
