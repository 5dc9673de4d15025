// The mismatch grid: every dense collective x every argument its ranks must
// agree on (the collective itself, count, dtype, op, algorithm, broadcast's
// root) x every algorithm x a small and a large size, rank 0 disagreeing with
// the others, default check. Whatever a rank returns, never scSuccess with
// data other than its own call's correct result, nothing past the deadline
// plus slack, and a matched call afterwards is correct or fails cleanly.
// Broadcast is checked by default: there every rank must fail, naming both
// calls.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/harness.h"
#include "reliability/reliability_util.h"

namespace {

using reltest::has;
using reltest::since;

constexpr double kDeadline = 0.5;
constexpr int kP = 3;

enum class Coll { AllReduce, ReduceScatter, AllGather, Broadcast };
const char* const kCollNames[] = {"allreduce", "reduce_scatter", "allgather", "broadcast"};

struct Call {
  Coll coll;
  size_t count;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;
  scAlgo_t algo = scAlgoAuto;
  int root = 0;
};

std::string text(const Call& c) {
  return std::string(kCollNames[int(c.coll)]) + "(count " + std::to_string(c.count) + ", dt " +
         std::to_string(int(c.dt)) + ", op " + std::to_string(int(c.op)) + ", algo " + std::to_string(int(c.algo)) +
         ", root " + std::to_string(c.root) + ")";
}

size_t width(scDataType_t dt) { return dt == scFloat64 ? 8 : 4; }

// Small integers: exact in every type and every sum or max here.
double input(int r, size_t i) { return double((r + 1) * 8 + int(i % 7)); }

void store(std::vector<char>& b, scDataType_t dt, size_t i, double v) {
  if (dt == scFloat32) {
    const float f = float(v);
    std::memcpy(&b[i * 4], &f, 4);
  } else if (dt == scInt32) {
    const int32_t n = int32_t(v);
    std::memcpy(&b[i * 4], &n, 4);
  } else std::memcpy(&b[i * 8], &v, 8);
}

double reduce(const Call& c, size_t i) {
  double s = c.op == scMax ? input(0, i) : 0;
  for (int q = 0; q < kP; ++q) s = c.op == scMax ? std::max(s, input(q, i)) : s + input(q, i);
  return s;
}

// What `c` gives on `rank` had every rank made it, as bytes.
std::vector<char> expected(const Call& c, int rank) {
  const size_t n = c.coll == Coll::AllGather ? c.count * kP : c.count;
  std::vector<char> out(n * width(c.dt));
  for (size_t i = 0; i < n; ++i) {
    switch (c.coll) {
      case Coll::AllReduce: store(out, c.dt, i, reduce(c, i)); break;
      case Coll::ReduceScatter: store(out, c.dt, i, reduce(c, size_t(rank) * c.count + i)); break;
      case Coll::AllGather: store(out, c.dt, i, input(int(i / c.count), i % c.count)); break;
      case Coll::Broadcast: store(out, c.dt, i, input(c.root, i)); break;
    }
  }
  return out;
}

scResult_t issue(const Call& c, scComm_t comm, int rank, std::vector<char>& out) {
  const size_t nin = c.coll == Coll::ReduceScatter ? c.count * kP : c.count;
  std::vector<char> in(nin * width(c.dt));
  for (size_t i = 0; i < nin; ++i) store(in, c.dt, i, input(rank, i));
  out.assign((c.coll == Coll::AllGather ? c.count * kP : c.count) * width(c.dt), 0);
  switch (c.coll) {
    case Coll::AllReduce: return scAllReduce(in.data(), out.data(), c.count, c.dt, c.op, c.algo, comm, nullptr);
    case Coll::ReduceScatter: return scReduceScatter(in.data(), out.data(), c.count, c.dt, c.op, c.algo, comm, nullptr);
    case Coll::AllGather: return scAllGather(in.data(), out.data(), c.count, c.dt, c.algo, comm, nullptr);
    case Coll::Broadcast: out = in; return scBroadcast(out.data(), c.count, c.dt, c.root, c.algo, comm, nullptr);
  }
  return scInternalError;
}

void mismatch(const Call& a, const Call& b) {
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = kDeadline;
  const bool bothBroadcast = a.coll == Coll::Broadcast && b.coll == Coll::Broadcast;
  sctest::run(
      kP,
      [&](scComm_t comm, int rank) {
        const Call& mine = rank == 0 ? a : b;
        SCOPED_TRACE(text(a) + " on rank 0 against " + text(b) + "; rank " + std::to_string(rank));
        std::vector<char> out;
        auto t0 = std::chrono::steady_clock::now();
        scResult_t r = issue(mine, comm, rank, out);
        EXPECT_LT(since(t0), kDeadline + 3) << "the mismatched call took far past its deadline";
        const std::string msg = scGetLastError(comm);
        if (bothBroadcast) {
          EXPECT_EQ(r, scInvalidUsage) << msg;
          EXPECT_TRUE(has(msg, "mismatched calls") && has(msg, "rank 0 called scBroadcast") &&
                      has(msg, "ranks 1, 2 called scBroadcast"))
              << msg;
        } else if (r == scSuccess) {
          EXPECT_EQ(out, expected(mine, rank)) << "scSuccess with wrong data in the mismatched call";
        } else {
          EXPECT_TRUE(r == scRemoteError || r == scTimeout || r == scInvalidUsage)
              << scGetErrorString(r) << ": " << msg;
          EXPECT_TRUE(has(msg, "rank")) << "the error names no rank: " << msg;
        }
        const Call next{Coll::AllReduce, 100, scFloat32, scSum, scAlgoRing};
        t0 = std::chrono::steady_clock::now();
        r = issue(next, comm, rank, out);
        EXPECT_LT(since(t0), kDeadline + 3) << "the next call took far past its deadline";
        if (r == scSuccess) EXPECT_EQ(out, expected(next, rank)) << "scSuccess with wrong data in the next call";
        reltest::syncWorld();
      },
      &cfg);
}

std::vector<scAlgo_t> algos(Coll c) {
  switch (c) {
    case Coll::AllReduce: return {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative};
    case Coll::ReduceScatter: return {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoNative};
    case Coll::AllGather: return {scAlgoAuto, scAlgoRing, scAlgoRecDbl, scAlgoNative};
    case Coll::Broadcast: return {scAlgoAuto, scAlgoBinomial, scAlgoScatterAllGather, scAlgoNative};
  }
  return {};
}

// Each argument that must agree, changed on the other ranks.
std::vector<Call> variants(const Call& a) {
  std::vector<Call> v;
  Call b = a;
  b.count = a.count / 2;
  v.push_back(b);
  b = a;
  b.dt = scInt32;  // same width: only the signature tells
  v.push_back(b);
  b.dt = scFloat64;
  v.push_back(b);
  if (a.coll == Coll::AllReduce || a.coll == Coll::ReduceScatter) {
    b = a;
    b.op = scMax;
    v.push_back(b);
  }
  // (auto may resolve to any algorithm: a match, not a mismatch.)
  for (scAlgo_t other : algos(a.coll))
    if (a.algo != scAlgoAuto && other != a.algo && other != scAlgoAuto) {
      b = a;
      b.algo = other;
      v.push_back(b);
      break;
    }
  if (a.coll == Coll::Broadcast) {
    b = a;
    b.root = 2;
    v.push_back(b);
  }
  // Another collective of the same byte count.
  b = a;
  b.coll = a.coll == Coll::AllReduce ? Coll::Broadcast : Coll::AllReduce;
  b.algo = scAlgoAuto;
  b.root = 0;
  v.push_back(b);
  return v;
}

class Grid : public ::testing::TestWithParam<int> {};

TEST_P(Grid, NeverSuccessWithWrongData) {
  const Coll coll = Coll(GetParam());
  for (scAlgo_t algo : algos(coll))
    for (size_t count : {size_t(999), size_t(1) << 18})
      for (const Call& b : variants({coll, count, scFloat32, scSum, algo, 0}))
        mismatch({coll, count, scFloat32, scSum, algo, 0}, b);
}

INSTANTIATE_TEST_SUITE_P(Mismatch, Grid, ::testing::Range(0, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(kCollNames[i.param]); });

}  // namespace
