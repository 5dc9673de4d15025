// Native calls on one device (transport/local/direct.h) on simulated devices:
// one meeting and one kernel per call whatever the collective and the rank
// count, no rounds, no host wait, pooled events; results bit-identical to the
// host path's native calls (the kernel's specification is the host's fold);
// mismatched calls fail on every rank; ranks on several devices are refused.
#include <gtest/gtest.h>

#include <atomic>
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

namespace {

using sctest::run;

enum class Coll { AllReduce, ReduceScatter, AllGather, Broadcast };
const char* name(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "allreduce";
    case Coll::ReduceScatter: return "reduce_scatter";
    case Coll::AllGather: return "allgather";
    default: return "broadcast";
  }
}

scConfig_t config() {
  scConfig_t cfg = sctest::testConfig();
  cfg.check = scCheckOff;
  return cfg;
}

// Random, not integer-valued: a different fold order gives different bits.
std::vector<float> input(size_t n, int rank) {
  std::mt19937 g(1234u + unsigned(rank));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

// One native call of `c` with `count` (per the C API) on `comm`; returns the
// rank's output.
std::vector<float> call(Coll c, scComm_t comm, int rank, int P, size_t count, scRedOp_t op, void* stream,
                        bool inPlace = false) {
  const size_t in = c == Coll::ReduceScatter ? count * size_t(P) : count;
  const size_t out = c == Coll::AllGather ? count * size_t(P) : count;
  std::vector<float> send = input(in, rank), recv(out, -7.0f);
  switch (c) {
    case Coll::AllReduce:
      if (inPlace) recv = send;
      EXPECT_EQ(scAllReduce(inPlace ? recv.data() : send.data(), recv.data(), count, scFloat32, op, scAlgoNative, comm,
                            stream),
                scSuccess)
          << scGetLastError(comm);
      break;
    case Coll::ReduceScatter:
      EXPECT_EQ(scReduceScatter(send.data(), recv.data(), count, scFloat32, op, scAlgoNative, comm, stream), scSuccess)
          << scGetLastError(comm);
      break;
    case Coll::AllGather:
      if (inPlace) std::copy(send.begin(), send.end(), recv.begin() + std::ptrdiff_t(size_t(rank) * count));
      EXPECT_EQ(scAllGather(inPlace ? recv.data() + size_t(rank) * count : send.data(), recv.data(), count, scFloat32,
                            scAlgoNative, comm, stream),
                scSuccess)
          << scGetLastError(comm);
      break;
    case Coll::Broadcast:
      EXPECT_EQ(scBroadcast(send.data(), count, scFloat32, P - 1, scAlgoNative, comm, stream), scSuccess)
          << scGetLastError(comm);
      recv = send;
      break;
  }
  return recv;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Direct, OneMeetingOneKernelAndTheHostPathsBits) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  for (int P : {1, 2, 4, 5})
    for (Coll c : {Coll::AllReduce, Coll::ReduceScatter, Coll::AllGather, Coll::Broadcast})
      for (scRedOp_t op : {scSum, scMax, scAvg})
        for (bool inPlace : {false, true}) {
          if (op != scSum && (c == Coll::AllGather || c == Coll::Broadcast)) continue;
          SCOPED_TRACE(std::string(name(c)) + " P " + std::to_string(P) + " op " + std::to_string(int(op)) +
                       (inPlace ? " in place" : ""));
          const size_t count = 1003;  // not a multiple of P: blocks of two lengths
          const size_t np = static_cast<size_t>(P);
          std::vector<std::vector<float>> host(np), dev(np);
          run(
              P,
              [&](scComm_t comm, int rank) {
                host[size_t(rank)] = call(c, comm, rank, P, count, op, nullptr, inPlace);
              },
              &cfg);
          std::vector<scStats_t> first(np), later(np);
          const int64_t directs0 = simdev::directs();
          std::vector<int> devices(np, 0);
          run(
              P,
              [&](scComm_t comm, int rank) {
                scStats_t a{}, b{}, d{};
                SC_OK(comm, scCommGetStats(comm, &a));
                dev[size_t(rank)] = call(c, comm, rank, P, count, op, simdev::stream(), inPlace);
                SC_OK(comm, scCommGetStats(comm, &b));
                for (int i = 0; i < 5; ++i)
                  EXPECT_TRUE(
                      sameBits(call(c, comm, rank, P, count, op, simdev::stream(), inPlace), dev[size_t(rank)]));
                SC_OK(comm, scCommGetStats(comm, &d));
                first[size_t(rank)] = b;
                later[size_t(rank)] = d;
                first[size_t(rank)].rendezvous -= a.rendezvous;
                first[size_t(rank)].eventsCreated -= a.eventsCreated;
                first[size_t(rank)].rounds -= a.rounds;
                later[size_t(rank)].rendezvous -= b.rendezvous;
                later[size_t(rank)].eventsCreated -= b.eventsCreated;
                later[size_t(rank)].hostSyncs -= b.hostSyncs;
              },
              &cfg, devices.data());
          // One rank meets nobody: an allgather's copy at most.
          const int kernels = P > 1 || (c == Coll::AllGather && !inPlace) ? 6 : 0;
          EXPECT_EQ(simdev::directs() - directs0, kernels) << "one kernel per call, for all ranks";
          for (int r = 0; r < P; ++r) {
            SCOPED_TRACE("rank " + std::to_string(r));
            EXPECT_TRUE(sameBits(dev[size_t(r)], host[size_t(r)]));
            EXPECT_TRUE(sameBits(dev[size_t(r)], dev[0]) || c == Coll::ReduceScatter);
            EXPECT_EQ(first[size_t(r)].rendezvous, P > 1 ? 1u : 0u);
            EXPECT_EQ(first[size_t(r)].rounds, 0u);
            EXPECT_LE(first[size_t(r)].eventsCreated, 2u);  // its point; the executor the point after
            EXPECT_EQ(later[size_t(r)].rendezvous, P > 1 ? 5u : 0u);
            EXPECT_LE(later[size_t(r)].eventsCreated, 1u);  // another rank became the executor
            EXPECT_EQ(later[size_t(r)].hostSyncs, 0u);
          }
          EXPECT_EQ(simdev::liveEvents(), 0);
        }
}

// The same text on every rank, before any buffer is read; as after any
// remote error, the communicator is then aborted.
TEST(Direct, MismatchedCallsFailOnEveryRank) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  constexpr int P = 3;
  std::vector<int> devices(P, 0);
  std::vector<std::string> errors(P);
  run(
      P,
      [&](scComm_t comm, int rank) {
        std::vector<float> buf(64, 1.0f);
        const size_t count = rank == 1 ? 32 : 64;  // rank 1 disagrees
        EXPECT_EQ(scAllReduce(buf.data(), buf.data(), count, scFloat32, scSum, scAlgoNative, comm, simdev::stream()),
                  scRemoteError);
        errors[size_t(rank)] = scGetLastError(comm);
        EXPECT_EQ(buf, std::vector<float>(64, 1.0f));
        EXPECT_EQ(scAllReduce(buf.data(), buf.data(), 64, scFloat32, scSum, scAlgoNative, comm, simdev::stream()),
                  scInvalidUsage);
      },
      &cfg, devices.data());
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("mismatched native calls: rank 1 called allreduce(count=32, float, op 0) as call #1, rank 0 "
                     "called allreduce(count=64"),
              std::string::npos)
        << e;
    EXPECT_EQ(e.substr(0, e.find(" (csrc")), errors[0].substr(0, errors[0].find(" (csrc")));
  }
  // A broadcast against an allgather of the same count.
  run(
      P,
      [&](scComm_t comm, int rank) {
        std::vector<float> buf(64 * size_t(P), 1.0f), mine(64, 2.0f);
        const scResult_t rc =
            rank == 0 ? scBroadcast(buf.data(), 64, scFloat32, 0, scAlgoNative, comm, simdev::stream())
                      : scAllGather(mine.data(), buf.data(), 64, scFloat32, scAlgoNative, comm, simdev::stream());
        EXPECT_EQ(rc, scRemoteError) << scGetLastError(comm);
        EXPECT_NE(std::string(scGetLastError(comm)).find("called broadcast(count=64, float, root 0)"),
                  std::string::npos)
            << scGetLastError(comm);
      },
      &cfg, devices.data());
}

// A rank that never comes: the others time out naming it, and withdraw, so
// that when it comes after all it does not run the kernel over buffers their
// callers have freed.
TEST(Direct, AMissingRankIsNamedAndNoBufferIsTouchedAfterTheDeadline) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  simdev::expectMissingRankNamed(config(), scAlgoNative, "a native call");
}

TEST(Direct, RanksOnSeveralDevicesAreToldWhy) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "simulated devices are local ranks";
  const scConfig_t cfg = config();
  std::vector<int> devices = {0, 1};
  run(
      2,
      [&](scComm_t comm, int) {
        std::vector<float> buf(16, 1.0f);
        EXPECT_EQ(scAllReduce(buf.data(), buf.data(), 16, scFloat32, scSum, scAlgoNative, comm, simdev::stream()),
                  scInvalidUsage);
        const std::string err = scGetLastError(comm);
        EXPECT_NE(err.find("needs every rank on one device; these ranks are on devices 0, 1"), std::string::npos)
            << err;
        SC_OK(comm, scAllReduce(buf.data(), buf.data(), 16, scFloat32, scSum, scAlgoRing, comm, simdev::stream()));
        EXPECT_EQ(buf[5], 2.0f);
      },
      &cfg, devices.data());
}

}  // namespace
