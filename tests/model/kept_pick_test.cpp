// auto keeps each collective's last pick with its size (algo/dense.h,
// neighbor/model.cpp). These tests change the size and the collective from
// call to call, across the sizes where the pick changes, and check that every
// auto call runs what the model picks for that call: the messages and bytes
// it sends are those of the picked algorithm requested by name, and the
// *AlgoFor answers are the comm-free model's.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "common/harness.h"
#include "model_util.h"
#include "sparcoll/neighbor.h"

namespace mtest {
namespace {

// Latency-heavy parameters: the picks change between 8 B and 64 MiB.
std::string pickFile() {
  auto entry = [](const char* tr) {
    return std::string(R"({"transport": ")") + tr + R"(", "alpha": 2e-5, "beta": 1e-9, "gamma": 5e-10})";
  };
  static const std::string path = writeTuning(tuningJson("[" + entry("local") + ", " + entry("mpi") + "]"));
  return path;
}

struct Traffic {
  uint64_t msgs = 0, bytes = 0;
  bool operator==(const Traffic& o) const { return msgs == o.msgs && bytes == o.bytes; }
};

// What one call sent from this rank.
template <class F>
Traffic sentBy(scComm_t comm, F&& call) {
  scStats_t a{}, b{};
  EXPECT_EQ(scCommGetStats(comm, &a), scSuccess);
  EXPECT_EQ(call(), scSuccess) << scGetLastError(comm);
  EXPECT_EQ(scCommGetStats(comm, &b), scSuccess);
  return {b.msgsSent - a.msgsSent, b.bytesSent - a.bytesSent};
}

scResult_t callDense(scCollective_t coll, scAlgo_t algo, size_t count, std::vector<float>& in, std::vector<float>& out,
                     scComm_t comm, int P) {
  switch (coll) {
    case scCollAllReduce: return scAllReduce(in.data(), out.data(), count, scFloat32, scSum, algo, comm, nullptr);
    case scCollReduceScatter:
      return scReduceScatter(in.data(), out.data(), count / size_t(P), scFloat32, scSum, algo, comm, nullptr);
    case scCollAllGather: return scAllGather(in.data(), out.data(), count / size_t(P), scFloat32, algo, comm, nullptr);
    default: return scBroadcast(out.data(), count, scFloat32, 0, algo, comm, nullptr);
  }
}

TEST(KeptPick, DenseAutoFollowsEveryCallsSize) {
  const std::string file = pickFile();
  const scConfig_t cfg = configWith(file.c_str());
  const int P = 4;
  // Full vectors (elements per rank, a multiple of P), back and forth.
  const size_t counts[] = {4, 1 << 22, 4, 1 << 14, 1 << 22, 1 << 10, 4, 1 << 18, 1 << 14, 4};
  const scCollective_t colls[] = {scCollAllReduce, scCollReduceScatter, scCollAllGather, scCollBroadcast};
  sctest::run(
      P,
      [&](scComm_t comm, int) {
        std::vector<float> in(size_t(1) << 22, 1.0f), out(size_t(1) << 22);
        std::set<std::pair<int, int>> picks;  // (collective, algorithm)
        for (size_t count : counts)
          for (scCollective_t coll : colls) {
            const size_t estCount = coll == scCollAllReduce || coll == scCollBroadcast ? count : count / P;
            double s = 0;
            int want = -1;
            ASSERT_EQ(scEstimateTime(comm, coll, scAlgoAuto, estCount, scFloat32, 0, &s, &want), scSuccess)
                << scGetLastError(comm);
            picks.insert({int(coll), want});
            const Traffic autoSent = sentBy(comm, [&] { return callDense(coll, scAlgoAuto, count, in, out, comm, P); });
            const Traffic named =
                sentBy(comm, [&] { return callDense(coll, scAlgo_t(want), count, in, out, comm, P); });
            EXPECT_TRUE(autoSent == named)
                << "collective " << coll << ", " << count << " floats: auto sent " << autoSent.msgs << " messages / "
                << autoSent.bytes << " B, its pick " << want << " " << named.msgs << " / " << named.bytes;
            if (coll == scCollAllReduce) {
              scAlgo_t a = scAlgoAuto;
              ASSERT_EQ(scAllReduceAlgoFor(comm, count * sizeof(float), &a), scSuccess);
              EXPECT_EQ(int(a), want) << count << " floats";
            }
          }
        // The sizes cross pick boundaries: otherwise this test could not fail.
        for (scCollective_t coll : {scCollAllReduce, scCollBroadcast}) {
          int n = 0;
          for (const auto& [c, a] : picks) n += c == int(coll);
          EXPECT_GE(n, 2) << "collective " << coll << " picked one algorithm at every size";
        }
      },
      &cfg);
}

// The neighbourhood pick at each size: the tuning file's rule for that size
// where one matches (combining below 1 KiB, hierarchical from 64 KiB to
// 1 MiB), else the cheapest estimate; sizes back and forth across them.
TEST(KeptPick, NeighborAutoFollowsEveryCallsSize) {
  const std::string tr = sctest::mode() == sctest::Mode::Local ? "local" : "mpi";
  const std::string file =
      writeTuning(tuningJson(R"([{"transport": ")" + tr + R"(", "alpha": 2e-5, "beta": 1e-9, "gamma": 5e-10}])",
                             R"([{"collective": "neighbor_allgather", "bytes": [0, 1023], "algorithm": "combining"},
          {"collective": "neighbor_allgather", "bytes": [65536, 1048576], "algorithm": "hierarchical"}])"));
  const scConfig_t cfg = configWith(file.c_str());
  const int P = 4;
  ScopedEnv rpn("SPARCOLL_RANKS_PER_NODE", "2");
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        const std::vector<int> others = othersThan(rank, P);
        const scTopology_t t = completeTopology(comm, rank, P);
        ASSERT_NE(t, nullptr);
        std::set<int> picks;
        for (size_t bytes : {size_t(8), size_t(1) << 21, size_t(8), size_t(4096), size_t(1) << 16, size_t(1) << 21,
                             size_t(64), size_t(1) << 16, size_t(4096), size_t(8)}) {
          int want = scNbrNaive;
          if (bytes < 1024) want = scNbrCombining;
          else if (bytes >= 65536 && bytes <= 1048576) want = scNbrHierarchical;
          else {
            double best = 0;
            for (int a : {scNbrNaive, scNbrCombining, scNbrHierarchical}) {
              double s = 0;
              ASSERT_EQ(scTopologyEstimateTime(t, bytes, scNbrAlgo_t(a), &s, nullptr), scSuccess)
                  << scGetLastError(comm);
              if (a == scNbrNaive || s < best) want = a, best = s;
            }
          }
          picks.insert(want);
          scNbrAlgo_t got = scNbrAuto;
          ASSERT_EQ(scNeighborAlgoFor(t, bytes, &got), scSuccess);
          EXPECT_EQ(int(got), want) << bytes << " B";
          // auto's call sends what its pick, requested by name, sends.
          std::vector<char> send(bytes, char(rank)), recv(bytes * size_t(P - 1));
          auto call = [&](scNbrAlgo_t a) {
            return sentBy(comm,
                          [&] { return scNeighborAllGather(send.data(), bytes, recv.data(), scUint8, a, t, nullptr); });
          };
          const Traffic autoSent = call(scNbrAuto);
          for (int e = 0; e < P - 1; ++e) ASSERT_EQ(recv[size_t(e) * bytes], char(others[size_t(e)]));
          const Traffic named = call(scNbrAlgo_t(want));
          EXPECT_TRUE(autoSent == named) << bytes << " B: auto sent " << autoSent.msgs << " messages / "
                                         << autoSent.bytes << " B, its pick " << want << " " << named.msgs << " / "
                                         << named.bytes;
        }
        EXPECT_EQ(picks.size(), size_t(3));
        EXPECT_EQ(scTopologyDestroy(t), scSuccess);
      },
      &cfg);
}

}  // namespace
}  // namespace mtest
