// The structure of every dense collective, counted (scStats_t): rounds per
// call against the schedules' formulas, one handshake per message (local
// threads, and MPI ranks in the _mpi build), no host
// sync on a device communicator, events pooled and scratch kept across calls
// of one shape. Host communicators and simulated devices (sim_device.h) run
// the same schedules, so a device call must have the structure of the same
// host call plus what only a device has (events), which is what a GPU round
// costs and what the CPU can check; but where the ranks' hosts meet: once
// per call on device buffers (the planned call), at every message on host
// memory.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <vector>

#include "common/harness.h"
#include "sim_device.h"
#include "sparcoll/sparcoll.h"

namespace {

using sctest::run;

// A call of one collective with one algorithm on count elements per rank.
struct Shape {
  const char* name;
  scAlgo_t algo;
  size_t count;
  // Rounds each rank posts, by rank, for P ranks (the schedule's formula).
  std::function<int(int P, int rank)> rounds;
};

constexpr size_t kPipeline = 4096;  // bytes: 1024 floats per ring slice
constexpr size_t kSlice = kPipeline / sizeof(float);

int log2i(int p) {
  int l = 0;
  while ((1 << (l + 1)) <= p) ++l;
  return l;
}
size_t ceilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

// Ring: P-1 reduce-scatter steps of ceil(block / slice) rounds, P-1 allgather
// steps of one; count a multiple of P, so every block is as long.
int ringRounds(int P, size_t count) {
  const size_t block = count / size_t(P);
  return (P - 1) * int(ceilDiv(block, std::min(kSlice, block))) + (P - 1);
}
// Rabenseifner: 2 log2 P' steps, the fold's pairs 2 more (the lower sits out
// after its fold send, until the unfold).
int rabRounds(int P, int rank) {
  const int p2 = 1 << log2i(P), r = P - p2;
  if (rank < 2 * r) return rank % 2 == 0 ? 2 : 2 * log2i(p2) + 2;
  return 2 * log2i(p2);
}
int recdblRounds(int P, int rank) {
  const int p2 = 1 << log2i(P), r = P - p2;
  if (rank < 2 * r) return rank % 2 == 0 ? 2 : log2i(p2) + 2;
  return log2i(p2);
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {"allreduce", scAlgoRing, 1000 * 4 * 5, [](int P, int) { return ringRounds(P, 1000 * 4 * 5); }},
      {"allreduce", scAlgoRing, 20 * 4 * 5 * 1024, [](int P, int) { return ringRounds(P, 20 * 4 * 5 * 1024); }},
      {"allreduce", scAlgoRabenseifner, 1000 * 4 * 5, rabRounds},
      {"allreduce", scAlgoRecDbl, 1000 * 4 * 5, recdblRounds},
      {"reduce_scatter", scAlgoRing, 3 * kSlice + 5,
       [](int P, int) { return (P - 1) * int(ceilDiv(3 * kSlice + 5, kSlice)); }},
      {"allgather", scAlgoRing, 3 * kSlice + 5, [](int P, int) { return P - 1; }},
      {"allgather", scAlgoRecDbl, 3 * kSlice + 5, recdblRounds},
      {"broadcast", scAlgoBinomial, 5000,
       [](int P, int rank) {
         // Root 0: rank r receives once (but the root) and sends to r + 2^k for
         // every 2^k below its lowest set bit (the root: below P).
         int rounds = rank ? 1 : 0;
         for (int m = 1; m < P && !(rank & m); m <<= 1)
           if (rank + m < P) ++rounds;
         return rounds;
       }},
  };
  return s;
}

scConfig_t config() {
  scConfig_t cfg = sctest::testConfig();
  cfg.pipelineBytes = kPipeline;
  cfg.check = scCheckOff;  // the check's own round is not the collective's
  return cfg;
}

// Runs one call of `s`; the result is checked (integer-valued floats: exact).
void call(const Shape& s, scComm_t comm, int rank, int P, void* stream) {
  const bool rs = std::string(s.name) == "reduce_scatter", ag = std::string(s.name) == "allgather";
  const size_t in = rs ? s.count * size_t(P) : s.count, out = ag ? s.count * size_t(P) : s.count;
  std::vector<float> send(in), recv(out);
  for (size_t i = 0; i < in; ++i) send[i] = float((i % 97) + size_t(rank));
  const std::string n = s.name;
  if (n == "allreduce") {
    SC_OK(comm, scAllReduce(send.data(), recv.data(), s.count, scFloat32, scSum, s.algo, comm, stream));
    for (size_t i = 0; i < out; i += 997) ASSERT_EQ(recv[i], float(P * (i % 97) + P * (P - 1) / 2)) << i;
  } else if (n == "reduce_scatter") {
    SC_OK(comm, scReduceScatter(send.data(), recv.data(), s.count, scFloat32, scSum, s.algo, comm, stream));
    for (size_t i = 0; i < out; i += 997) {
      const size_t g = size_t(rank) * s.count + i;
      ASSERT_EQ(recv[i], float(P * (g % 97) + P * (P - 1) / 2)) << i;
    }
  } else if (n == "allgather") {
    SC_OK(comm, scAllGather(send.data(), recv.data(), s.count, scFloat32, s.algo, comm, stream));
    for (size_t i = 0; i < out; i += 997) ASSERT_EQ(recv[i], float((i % s.count) % 97 + i / s.count)) << i;
  } else {
    SC_OK(comm, scBroadcast(send.data(), s.count, scFloat32, 0, s.algo, comm, stream));
    for (size_t i = 0; i < in; i += 997) ASSERT_EQ(send[i], float(i % 97)) << i;
  }
}

scStats_t since(const scStats_t& a, const scStats_t& b) {
  return {b.bytesSent - a.bytesSent,
          b.bytesRecv - a.bytesRecv,
          b.msgsSent - a.msgsSent,
          b.msgsRecv - a.msgsRecv,
          b.interNodeBytesSent - a.interNodeBytesSent,
          b.interNodeMsgsSent - a.interNodeMsgsSent,
          b.hostReads - a.hostReads,
          b.rounds - a.rounds,
          b.rendezvous - a.rendezvous,
          b.hostSyncs - a.hostSyncs,
          b.eventsCreated - a.eventsCreated,
          b.scratchAllocs - a.scratchAllocs,
          b.maxLinkBytes - a.maxLinkBytes,
          b.msgsReduced - a.msgsReduced};
}

// Messages the local transport reduces as they arrive (scStats_t.msgsReduced):
// every receive of the ring's reduce-scatter steps and of recursive halving
// (Rabenseifner; the fold's pairs sit out of it); none elsewhere. On the mpi
// transport none.
uint64_t reducedMsgs(const Shape& s, int P, int rank) {
  if (sctest::mode() == sctest::Mode::Mpi) return 0;
  const std::string n = s.name;
  if (s.algo == scAlgoRing && n == "allreduce") return uint64_t(s.rounds(P, rank) - (P - 1));
  if (s.algo == scAlgoRing && n == "reduce_scatter") return uint64_t(s.rounds(P, rank));
  if (s.algo == scAlgoRabenseifner) {
    const int p2 = 1 << log2i(P), r = P - p2;
    return rank < 2 * r && rank % 2 == 0 ? 0 : uint64_t(log2i(p2));
  }
  return 0;
}

// Calls of `s` on P ranks; per rank, the counts of the first call and of the
// `more` calls after it, together. In the MPI build only this process's rank
// is filled in (mine), and nothing when P is not the world size (ran).
struct Counts {
  std::vector<scStats_t> first, second;
  bool ran = false;
  bool mine(int r) const { return sctest::mode() == sctest::Mode::Local || r == sctest::mpiWorldRank(); }
};
constexpr int kMore = 10;
Counts measure(const Shape& s, int P, bool device) {
  Counts c{std::vector<scStats_t>(size_t(P)), std::vector<scStats_t>(size_t(P))};
  const scConfig_t cfg = config();
  std::vector<int> devices(size_t(P), 0);
  c.ran = run(
      P,
      [&](scComm_t comm, int rank) {
        void* stream = device ? simdev::stream() : nullptr;
        scStats_t a{}, b{}, d{};
        SC_OK(comm, scCommGetStats(comm, &a));
        call(s, comm, rank, P, stream);
        SC_OK(comm, scCommGetStats(comm, &b));
        for (int i = 0; i < kMore; ++i) call(s, comm, rank, P, stream);
        SC_OK(comm, scCommGetStats(comm, &d));
        c.first[size_t(rank)] = since(a, b);
        c.second[size_t(rank)] = since(b, d);
      },
      &cfg, device ? devices.data() : nullptr);
  return c;
}

std::string what(const Shape& s, int P) {
  return std::string(s.name) + " algo " + std::to_string(int(s.algo)) + " count " + std::to_string(s.count) + " P " +
         std::to_string(P);
}

TEST(Structure, RoundsFollowTheSchedulesAndEachMessageIsOneHandshake) {
  for (int P : {2, 4, 5, 8})
    for (const Shape& s : shapes()) {
      const Counts c = measure(s, P, false);
      for (int r = 0; r < P && c.ran; ++r) {
        if (!c.mine(r)) continue;
        const scStats_t& x = c.first[size_t(r)];
        SCOPED_TRACE(what(s, P) + " rank " + std::to_string(r));
        EXPECT_EQ(x.rounds, uint64_t(s.rounds(P, r)));
        EXPECT_EQ(x.msgsReduced, reducedMsgs(s, P, r));
        EXPECT_EQ(x.rendezvous, x.msgsSent + x.msgsRecv);
        EXPECT_EQ(x.hostSyncs, 0u);
        EXPECT_EQ(x.hostReads, 0u);
        EXPECT_EQ(x.eventsCreated, 0u);                    // host memory: no events
        EXPECT_EQ(c.second[size_t(r)].scratchAllocs, 0u);  // kept from the first call
      }
    }
}

TEST(Structure, DeviceCallsHaveTheHostStructureNoHostSyncAndPooledEvents) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  for (int P : {2, 4, 5})
    for (const Shape& s : shapes()) {
      const Counts h = measure(s, P, false), d = measure(s, P, true);
      uint64_t created = 0;
      for (int r = 0; r < P; ++r) {
        const scStats_t &x = h.first[size_t(r)], &y = d.first[size_t(r)], &z = d.second[size_t(r)];
        SCOPED_TRACE(what(s, P) + " rank " + std::to_string(r));
        EXPECT_EQ(y.rounds, x.rounds);
        EXPECT_EQ(y.msgsSent, x.msgsSent);
        EXPECT_EQ(y.msgsRecv, x.msgsRecv);
        EXPECT_EQ(y.bytesSent, x.bytesSent);
        // One meeting per call, whatever the rounds (transport/local/plan_call.cpp).
        EXPECT_EQ(y.rendezvous, 1u);
        EXPECT_EQ(z.rendezvous, uint64_t(kMore));
        EXPECT_EQ(y.msgsReduced, x.msgsReduced);  // the ranks share one device
        EXPECT_EQ(y.hostSyncs, 0u);
        EXPECT_EQ(z.hostSyncs, 0u);
        EXPECT_EQ(z.scratchAllocs, 0u);
        EXPECT_EQ(z.rounds, kMore * y.rounds);
        created += y.eventsCreated;
        // Reused within the call: a rank's live events are its rounds' marks
        // and its copies' ends of the two rounds in flight (a ring posts
        // slice k+1 before it reduces slice k), however many rounds the call
        // has (up to 357 here); an event per message would be 2 per round.
        EXPECT_LE(y.eventsCreated, 6u);
        // Then hardly ever: a later call creates one only when its ranks'
        // timing puts more in flight than any call before.
        EXPECT_LE(z.eventsCreated, 2u);
      }
      if (P > 1) EXPECT_GT(created, 0u) << what(s, P);
    }
}

// The local transport's protocol on device buffers, counted: per round one
// record of the rank's point; per received message one record of the copy's
// end, two waits of the copy stream (the receiver's point, the sender's) and
// one of the receiver's stream; per message reduced as it arrived one wait of
// the receiver's stream (the sender's point) for its reduction, no copy, and
// one record of its end; per sent message one wait of the sender's stream
// for the copy or reduction. Nothing is left behind.
TEST(Structure, DeviceRoundsRecordAndWaitAsTheProtocolSays) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const int P = 4;
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(what(s, P));
    const int64_t rec0 = simdev::records(), wait0 = simdev::waits(), copy0 = simdev::copies();
    const Counts d = measure(s, P, true);
    uint64_t rounds = 0, recvs = 0, reduced = 0, sends = 0;
    for (const std::vector<scStats_t>* v : {&d.first, &d.second})
      for (const scStats_t& x : *v) {
        rounds += x.rounds;
        recvs += x.msgsRecv;
        reduced += x.msgsReduced;
        sends += x.msgsSent;
      }
    EXPECT_EQ(uint64_t(simdev::records() - rec0), rounds + recvs);
    EXPECT_GT(recvs, 0u);
    EXPECT_EQ(uint64_t(simdev::waits() - wait0), 3 * (recvs - reduced) + reduced + sends);
    EXPECT_EQ(uint64_t(simdev::copies() - copy0), recvs - reduced);
    EXPECT_EQ(simdev::liveEvents(), 0);  // the pools went with their communicators
    EXPECT_EQ(simdev::liveStreams(), 0);
  }
}

}  // namespace

namespace {

// The sparse allreduces on a device: the static-size one with a status word
// reads nothing on the host and never waits for the device, and its ranks
// meet once; without it, one read of the status. The count-driven
// schedules wait once per read.
TEST(Structure, StaticSparseOnADeviceNeverWaitsForTheDevice) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const int P = 4;
  const size_t cap = 64, dim = 10000;
  std::vector<int> devices(size_t(P), 0);
  const scConfig_t cfg = config();
  for (bool withStatus : {true, false}) {
    SCOPED_TRACE(withStatus ? "with a status word" : "without a status word");
    run(
        P,
        [&](scComm_t comm, int rank) {
          std::vector<uint32_t> idx(cap);
          std::vector<float> val(cap);
          const uint64_t count = 10 + uint64_t(rank);  // in "device" memory: nnzPtr
          for (size_t i = 0; i < cap; ++i) {
            idx[i] = uint32_t((i * 37 + size_t(rank) * 11) % dim);
            val[i] = float(rank + 1);
          }
          std::vector<float> out(dim, -1.0f);
          uint64_t status = 0;
          for (int call = 0; call < 2; ++call) {
            scStats_t a{}, b{};
            SC_OK(comm, scCommGetStats(comm, &a));
            SC_OK(comm,
                  scSparseAllReduceStatic(idx.data(), val.data(), 0, &count, cap, dim, scIndexU32, scFloat32, scSum,
                                          out.data(), withStatus ? &status : nullptr, comm, simdev::stream()));
            SC_OK(comm, scCommGetStats(comm, &b));
            const scStats_t d = since(a, b);
            EXPECT_EQ(d.hostReads, withStatus ? 0u : 1u);
            EXPECT_EQ(d.hostSyncs, d.hostReads);
            EXPECT_GT(d.rounds, 0u);
            EXPECT_EQ(d.rendezvous, 1u);  // its allgather is a planned call
            if (call) EXPECT_EQ(d.scratchAllocs, 0u);
          }
          EXPECT_EQ(status, 0u);
          std::vector<float> want(dim, 0.0f);
          for (int q = 0; q < P; ++q)
            for (size_t i = 0; i < 10 + size_t(q); ++i) want[(i * 37 + size_t(q) * 11) % dim] += float(q + 1);
          EXPECT_EQ(out, want);
        },
        &cfg, devices.data());
  }
}

TEST(Structure, CountDrivenSparseOnADeviceWaitsOncePerRead) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const int P = 4;
  const size_t dim = 4096;
  std::vector<int> devices(size_t(P), 0);
  const scConfig_t cfg = config();
  for (bool device : {false, true}) {
    run(
        P,
        [&](scComm_t comm, int rank) {
          std::vector<uint32_t> idx;
          std::vector<float> val;
          for (uint32_t i = uint32_t(rank); i < dim; i += 64) {
            idx.push_back(i);
            val.push_back(1.0f);
          }
          std::vector<float> out(dim);
          for (scSparseAlgo_t algo : {scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather}) {
            SCOPED_TRACE(std::string(device ? "device" : "host") + " algo " + std::to_string(int(algo)));
            scStats_t a{}, b{};
            SC_OK(comm, scCommGetStats(comm, &a));
            SC_OK(comm, scSparseAllReduce(idx.data(), val.data(), idx.size(), dim, scIndexU32, scFloat32, scSum, algo,
                                          out.data(), comm, device ? simdev::stream() : nullptr));
            SC_OK(comm, scCommGetStats(comm, &b));
            const scStats_t d = since(a, b);
            EXPECT_GT(d.hostReads, 0u);
            EXPECT_EQ(d.hostSyncs, device ? d.hostReads : 0u);
            for (size_t i = 0; i < dim; ++i) ASSERT_EQ(out[i], (i % 64) < size_t(P) ? 1.0f : 0.0f) << i;
          }
        },
        &cfg, device ? devices.data() : nullptr);
  }
}

}  // namespace
