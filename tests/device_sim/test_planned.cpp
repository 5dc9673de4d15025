// Planned calls (transport/local/plan_call.cpp) on simulated devices: every
// dense schedule on device buffers is recorded by each rank and enqueued for
// all at one meeting. Results bit-identical to the same schedule on host
// memory (where ranks meet at every message), on one device (receives
// reduced out of the sender's buffer) and on a device each (copies); scratch that
// grows inside a call is not handed out again before the call's work ran
// (under ASan a use after free); mismatched calls fail on every rank, and
// fast, also when one rank's call is of another kind; a rank that never
// comes is named and its peers' buffers are not touched after they return.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "missing_rank.h"
#include "sim_device.h"
#include "sparcoll/sparcoll.h"
#include "sparcoll/sparse.h"

namespace {

using sctest::run;

enum class Coll { AllReduce, ReduceScatter, AllGather, Broadcast };

struct Shape {
  Coll coll;
  scAlgo_t algo;
  const char* name;
};

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {Coll::AllReduce, scAlgoRing, "allreduce ring"},
      {Coll::AllReduce, scAlgoRabenseifner, "allreduce rabenseifner"},
      {Coll::AllReduce, scAlgoRecDbl, "allreduce recdbl"},
      {Coll::ReduceScatter, scAlgoRing, "reduce_scatter ring"},
      {Coll::ReduceScatter, scAlgoRabenseifner, "reduce_scatter rabenseifner"},
      {Coll::AllGather, scAlgoRing, "allgather ring"},
      {Coll::AllGather, scAlgoRecDbl, "allgather recdbl"},
      {Coll::Broadcast, scAlgoBinomial, "broadcast binomial"},
      {Coll::Broadcast, scAlgoScatterAllGather, "broadcast scatter_allgather"},
  };
  return s;
}

scConfig_t config() {
  scConfig_t cfg = sctest::testConfig();
  cfg.check = scCheckOff;
  cfg.pipelineBytes = 1024;  // 256 floats a ring slice: many rounds in flight
  return cfg;
}

// Random, not integer-valued: a different fold order gives different bits.
std::vector<float> input(size_t n, int rank) {
  std::mt19937 g(777u + unsigned(rank));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

std::vector<float> call(const Shape& s, scComm_t comm, int rank, int P, size_t count, scRedOp_t op, void* stream,
                        bool inPlace) {
  const size_t in = s.coll == Coll::ReduceScatter ? count * size_t(P) : count;
  const size_t out = s.coll == Coll::AllGather ? count * size_t(P) : count;
  std::vector<float> send = input(in, rank), recv(out, -7.0f);
  scResult_t rc = scSuccess;
  switch (s.coll) {
    case Coll::AllReduce:
      if (inPlace) recv = send;
      rc = scAllReduce(inPlace ? recv.data() : send.data(), recv.data(), count, scFloat32, op, s.algo, comm, stream);
      break;
    case Coll::ReduceScatter:
      rc = scReduceScatter(send.data(), recv.data(), count, scFloat32, op, s.algo, comm, stream);
      break;
    case Coll::AllGather:
      if (inPlace) std::copy(send.begin(), send.end(), recv.begin() + std::ptrdiff_t(size_t(rank) * count));
      rc = scAllGather(inPlace ? recv.data() + size_t(rank) * count : send.data(), recv.data(), count, scFloat32,
                       s.algo, comm, stream);
      break;
    case Coll::Broadcast:
      rc = scBroadcast(send.data(), count, scFloat32, P - 1, s.algo, comm, stream);
      recv = send;
      break;
  }
  EXPECT_EQ(rc, scSuccess) << scGetLastError(comm);
  return recv;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Planned, OneMeetingPerCallAndTheHostPathsBits) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  for (int P : {2, 3, 4, 5, 8})
    for (bool oneDevice : {true, false})
      for (const Shape& s : shapes())
        for (scRedOp_t op : {scSum, scMax, scAvg})
          for (bool inPlace : {false, true}) {
            const bool reduces = s.coll == Coll::AllReduce || s.coll == Coll::ReduceScatter;
            if ((op != scSum && !reduces) || (inPlace && s.coll != Coll::AllReduce && s.coll != Coll::AllGather))
              continue;
            SCOPED_TRACE(std::string(s.name) + " P " + std::to_string(P) +
                         (oneDevice ? " one device" : " a device each") + " op " + std::to_string(int(op)) +
                         (inPlace ? " in place" : ""));
            const size_t count = 2003, np = size_t(P);  // blocks of two lengths, several slices each
            std::vector<std::vector<float>> host(np), dev(np);
            run(
                P,
                [&](scComm_t comm, int rank) {
                  host[size_t(rank)] = call(s, comm, rank, P, count, op, nullptr, inPlace);
                },
                &cfg);
            std::vector<int> devices(np);
            for (int r = 0; r < P; ++r) devices[size_t(r)] = oneDevice ? 0 : r;
            std::vector<scStats_t> stats(np);
            run(
                P,
                [&](scComm_t comm, int rank) {
                  scStats_t a{}, b{};
                  SC_OK(comm, scCommGetStats(comm, &a));
                  dev[size_t(rank)] = call(s, comm, rank, P, count, op, simdev::stream(), inPlace);
                  SC_OK(comm, scCommGetStats(comm, &b));
                  stats[size_t(rank)].rendezvous = b.rendezvous - a.rendezvous;
                  stats[size_t(rank)].rounds = b.rounds - a.rounds;
                  stats[size_t(rank)].msgsReduced = b.msgsReduced - a.msgsReduced;
                },
                &cfg, devices.data());
            for (int r = 0; r < P; ++r) {
              SCOPED_TRACE("rank " + std::to_string(r));
              EXPECT_TRUE(sameBits(dev[size_t(r)], host[size_t(r)]));
              EXPECT_EQ(stats[size_t(r)].rendezvous, 1u);
              if (!oneDevice) EXPECT_EQ(stats[size_t(r)].msgsReduced, 0u);  // no peer's memory to read: copies
            }
            EXPECT_EQ(simdev::liveEvents(), 0);
          }
}

// SPARCOLL_LOCAL_PLANNED=off: the baseline, a handshake per message, the
// same bits; a bad value is refused naming the variable.
TEST(Planned, TheBaselineMeetsAtEveryMessage) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  constexpr int P = 4;
  std::vector<int> devices(P, 0);
  std::vector<std::vector<float>> planned(P), each(P);
  std::vector<scStats_t> stats(P);
  const Shape& ring = shapes()[0];
  for (const char* v : {"1", "off"}) {
    setenv("SPARCOLL_LOCAL_PLANNED", v, 1);
    run(
        P,
        [&](scComm_t comm, int rank) {
          scStats_t a{}, b{};
          SC_OK(comm, scCommGetStats(comm, &a));
          (*v == '1' ? planned : each)[size_t(rank)] = call(ring, comm, rank, P, 2003, scSum, simdev::stream(), false);
          SC_OK(comm, scCommGetStats(comm, &b));
          if (*v == '1') EXPECT_EQ(b.rendezvous - a.rendezvous, 1u);
          else EXPECT_EQ(b.rendezvous - a.rendezvous, (b.msgsSent - a.msgsSent) + (b.msgsRecv - a.msgsRecv));
        },
        &cfg, devices.data());
  }
  for (int r = 0; r < P; ++r) EXPECT_TRUE(sameBits(planned[size_t(r)], each[size_t(r)]));
  setenv("SPARCOLL_LOCAL_PLANNED", "sometimes", 1);
  std::vector<scComm_t> comms(P);
  EXPECT_EQ(scCommInitLocal(comms.data(), P, devices.data(), &cfg), scInvalidArgument);
  const std::string err = scGetLastError(nullptr);
  EXPECT_NE(err.find("SPARCOLL_LOCAL_PLANNED='sometimes'"), std::string::npos) << err;
  unsetenv("SPARCOLL_LOCAL_PLANNED");
}

// SPARCOLL_LOCAL_PLANNED=one-stream: ranks on one device run a call on one
// stream (the last arriver's): P records of the ranks' points and one of the
// point after, 2(P-1) waits, whatever the messages; copies only for the
// messages not reduced on arrival; the host path's bits. Ranks on several
// devices keep a stream each.
TEST(Planned, OneStreamCallsWaitOnlyAtTheirEnds) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  setenv("SPARCOLL_LOCAL_PLANNED", "one-stream", 1);
  for (int P : {2, 4, 5})
    for (const Shape& s : shapes()) {
      SCOPED_TRACE(std::string(s.name) + " P " + std::to_string(P));
      const size_t np = size_t(P), count = 2003;
      std::vector<std::vector<float>> host(np), dev(np);
      std::vector<scStats_t> stats(np);
      run(
          P,
          [&](scComm_t comm, int rank) { host[size_t(rank)] = call(s, comm, rank, P, count, scSum, nullptr, false); },
          &cfg);
      std::vector<int> devices(np, 0);
      const int64_t rec0 = simdev::records(), wait0 = simdev::waits(), copy0 = simdev::copies();
      run(
          P,
          [&](scComm_t comm, int rank) {
            dev[size_t(rank)] = call(s, comm, rank, P, count, scSum, simdev::stream(), false);
            SC_OK(comm, scCommGetStats(comm, &stats[size_t(rank)]));
          },
          &cfg, devices.data());
      uint64_t recvs = 0, reduced = 0;
      for (const scStats_t& x : stats) {
        recvs += x.msgsRecv;
        reduced += x.msgsReduced;
        EXPECT_EQ(x.rendezvous, 1u);
      }
      EXPECT_EQ(simdev::records() - rec0, P + 1);
      EXPECT_EQ(simdev::waits() - wait0, 2 * (P - 1));
      EXPECT_EQ(uint64_t(simdev::copies() - copy0), recvs - reduced);
      for (int r = 0; r < P; ++r) EXPECT_TRUE(sameBits(dev[size_t(r)], host[size_t(r)])) << "rank " << r;
      EXPECT_EQ(simdev::liveEvents(), 0);
      std::vector<int> each(np);
      for (int r = 0; r < P; ++r) each[size_t(r)] = r;
      run(
          P,
          [&](scComm_t comm, int rank) {
            EXPECT_TRUE(sameBits(call(s, comm, rank, P, count, scSum, simdev::stream(), false), host[size_t(rank)]));
          },
          &cfg, each.data());
    }
  unsetenv("SPARCOLL_LOCAL_PLANNED");
}

// The same text on every rank, before any work is enqueued.
TEST(Planned, MismatchedCallsFailOnEveryRankWithOneText) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  constexpr int P = 3;
  std::vector<int> devices(P, 0);
  for (bool byAlgo : {false, true}) {
    std::vector<std::string> errors(P);
    run(
        P,
        [&](scComm_t comm, int rank) {
          std::vector<float> buf(64, 1.0f);
          const size_t count = !byAlgo && rank == 1 ? 32 : 64;
          const scAlgo_t algo = byAlgo && rank == 1 ? scAlgoRabenseifner : scAlgoRing;
          EXPECT_EQ(scAllReduce(buf.data(), buf.data(), count, scFloat32, scSum, algo, comm, simdev::stream()),
                    scRemoteError);
          errors[size_t(rank)] = scGetLastError(comm);
          EXPECT_EQ(buf, std::vector<float>(64, 1.0f));
        },
        &cfg, devices.data());
    const std::string want = byAlgo ? "mismatched calls: rank 1 called scAllReduce(count=64, float, sum, rabenseifner) "
                                      "as call #1, rank 0 called scAllReduce(count=64, float, sum, ring) as call #1"
                                    : "mismatched calls: rank 1 called scAllReduce(count=32, float, sum, ring) as "
                                      "call #1, rank 0 called scAllReduce(count=64, float, sum, ring) as call #1";
    for (const std::string& e : errors) {
      EXPECT_NE(e.find(want), std::string::npos) << e;
      // After each rank's own call's name, one text.
      auto tail = [](const std::string& t) {
        return t.substr(t.find("mismatched"), t.find(" (csrc") - t.find("mismatched"));
      };
      EXPECT_EQ(tail(e), tail(errors[0]));
    }
  }
}

// A rank making another kind of call as the same call number — native (its
// own meeting) or a schedule that meets at every message (the sparse
// allreduce) — is seen at once, long before the deadline.
TEST(Planned, ACallOfAnotherKindFailsFastOnEveryRank) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  scConfig_t cfg = config();
  cfg.timeoutSeconds = 60;
  constexpr int P = 3;
  std::vector<int> devices(P, 0);
  for (int other : {0, 1}) {
    SCOPED_TRACE(other ? "sparse" : "native");
    const auto t0 = std::chrono::steady_clock::now();
    run(
        P,
        [&](scComm_t comm, int rank) {
          std::vector<float> buf(64, 1.0f), out(64);
          std::vector<uint32_t> idx = {1, 5};
          scResult_t rc;
          if (rank != 2)
            rc = scAllReduce(buf.data(), buf.data(), 64, scFloat32, scSum, scAlgoRing, comm, simdev::stream());
          else if (other == 0)
            rc = scAllReduce(buf.data(), buf.data(), 64, scFloat32, scSum, scAlgoNative, comm, simdev::stream());
          else
            rc = scSparseAllReduce(idx.data(), buf.data(), 2, 64, scIndexU32, scFloat32, scSum, scSsarRecDbl,
                                   out.data(), comm, simdev::stream());
          EXPECT_EQ(rc, scRemoteError) << scGetLastError(comm);
          EXPECT_NE(std::string(scGetLastError(comm)).find("mismatched calls"), std::string::npos)
              << scGetLastError(comm);
        },
        &cfg, devices.data());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  }
}

// A rank that never comes: the others time out naming it, and withdraw, so
// that when it comes after all its call does not run over their buffers.
TEST(Planned, AMissingRankIsNamedAndNoBufferIsTouchedAfterTheDeadline) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  simdev::expectMissingRankNamed(config(), scAlgoRing, "a collective call");
}

}  // namespace
