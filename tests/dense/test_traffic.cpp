// Traffic accounting (scCommGetStats / scCommResetStats): every rank's bytes
// and messages, sent and received, against the figures derived in
// traffic_model.cpp, and against the papers' closed forms:
//   ring / Rabenseifner allreduce  2(P-1)/P * S per rank (Patarasuk & Yuan's
//                                  lower bound; power-of-two P, P | count)
//   recursive doubling allreduce   log2(P) * S
//   reduce-scatter, allgather      (P-1)/P * S (S = the whole vector)
// The results of the calls are checked too (small pipeline slices here).
#include <cmath>
#include <tuple>

#include "dense_check.h"
#include "traffic_model.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace dtest {
namespace {

constexpr size_t kSliceBytes = 200;  // scConfig_t.pipelineBytes of these tests

struct Algo {
  Coll coll;
  scAlgo_t algo;
};
const Algo kScheduled[] = {
    {Coll::AllReduce, scAlgoRing},     {Coll::AllReduce, scAlgoRabenseifner},     {Coll::AllReduce, scAlgoRecDbl},
    {Coll::ReduceScatter, scAlgoRing}, {Coll::ReduceScatter, scAlgoRabenseifner}, {Coll::AllGather, scAlgoRing},
    {Coll::AllGather, scAlgoRecDbl}};

const char* collStr(Coll c) {
  return c == Coll::AllReduce ? "allreduce" : c == Coll::ReduceScatter ? "reduce-scatter" : "allgather";
}

// One checked call of `coll`; references computed by the calling rank.
bool callChecked(scComm_t comm, int rank, int P, Coll coll, const Call& c) {
  switch (coll) {
    case Coll::AllReduce: return checkAllReduce(comm, rank, P, c, makeExpected(c.dt, c.op, P, 0, c.count), nullptr);
    case Coll::ReduceScatter:
      return checkReduceScatter(comm, rank, P, c, makeExpected(c.dt, c.op, P, 0, size_t(P) * c.count));
    case Coll::AllGather: return checkAllGather(comm, rank, P, c, 5, nullptr);
  }
  return false;
}

Traffic stats(scComm_t comm) {
  scStats_t s{};
  EXPECT_EQ(scCommGetStats(comm, &s), scSuccess) << scGetLastError(comm);
  return fromStats(s);
}

// Sums of the four counters over all ranks: local threads add into `sums`
// (read after sctest::run), MPI ranks reduce over MPI_COMM_WORLD.
struct Totals {
  std::vector<Traffic> perRank;
  explicit Totals(int P) : perRank(size_t(P)) {}
  void add(int rank, const Traffic& t) {
    Traffic& x = perRank[size_t(rank)];
    x.bytesSent += t.bytesSent;
    x.bytesRecv += t.bytesRecv;
    x.msgsSent += t.msgsSent;
    x.msgsRecv += t.msgsRecv;
  }
  // Every byte and message sent was received by someone. MPI: called by
  // every rank at the end of the body; local: after sctest::run returned.
  void expectConserved() {
    uint64_t v[4] = {0, 0, 0, 0};
    for (const Traffic& t : perRank) {
      v[0] += t.bytesSent;
      v[1] += t.bytesRecv;
      v[2] += t.msgsSent;
      v[3] += t.msgsRecv;
    }
#ifdef SPARCOLL_TEST_MPI
    uint64_t all[4];
    MPI_Allreduce(v, all, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    std::copy(all, all + 4, v);
#endif
    EXPECT_EQ(v[0], v[1]) << "bytes sent and received over all ranks differ";
    EXPECT_EQ(v[2], v[3]) << "messages sent and received over all ranks differ";
    EXPECT_GT(v[0], 0u);
  }
};

class TrafficTest : public testing::TestWithParam<int> {};

// Every scheduled algorithm, three element sizes, even and uneven counts:
// each rank's four counters equal the model's.
TEST_P(TrafficTest, MatchesScheduleModel) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(30, kSliceBytes);
  Totals totals(P);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        bool ok = true;
        for (const Algo& a : kScheduled)
          for (scDataType_t dt : {scInt8, scBfloat16, scFloat64})
            for (size_t count : {size_t(1), size_t(P - 1), size_t(P), size_t(2 * P + 1), size_t(1000), size_t(4099)}) {
              if (!ok) break;
              SC_OK(comm, scCommResetStats(comm));
              const Call c{a.algo, dt, scSum, count, false};
              ok = callChecked(comm, rank, P, a.coll, c);
              const size_t esz = elemSize(dt);
              const Traffic want = expectedTraffic(a.coll, a.algo, P, rank, count, esz, kSliceBytes / esz);
              const Traffic got = stats(comm);
              EXPECT_EQ(got, want) << collStr(a.coll) << " " << c.label() << " rank " << rank << " of " << P
                                   << ": measured " << got.str() << ", model " << want.str();
              totals.add(rank, got);
            }
        if (P > 1 && sctest::mode() == sctest::Mode::Mpi) totals.expectConserved();
      },
      &cfg);
  if (P > 1 && sctest::mode() == sctest::Mode::Local) totals.expectConserved();
}

// The papers' closed forms, with the count a multiple of P (and of P').
TEST_P(TrafficTest, ClosedForms) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  int p2 = 1;
  while (p2 * 2 <= P) p2 *= 2;
  const bool pow2 = p2 == P;
  const int lg = int(std::lround(std::log2(p2)));
  const size_t esz = 4, count = size_t(P) * size_t(p2) * 96;  // 96 * P * P' floats
  const uint64_t S = count * esz;
  const scConfig_t cfg = config(30, kSliceBytes);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        auto run = [&](Coll coll, scAlgo_t algo, size_t n) {
          EXPECT_EQ(scCommResetStats(comm), scSuccess);
          EXPECT_TRUE(callChecked(comm, rank, P, coll, {algo, scFloat32, scSum, n, false}));
          return stats(comm);
        };
        // Ring allreduce meets 2(P-1)/P * S for every P when P divides the count.
        const Traffic ring = run(Coll::AllReduce, scAlgoRing, count);
        EXPECT_EQ(ring.bytesSent, 2 * (P - 1) * S / P) << "ring allreduce, rank " << rank;
        EXPECT_EQ(ring.bytesRecv, 2 * (P - 1) * S / P) << "ring allreduce, rank " << rank;
        const uint64_t blockBytes = S / P, slices = (blockBytes + kSliceBytes - 1) / kSliceBytes;
        EXPECT_EQ(ring.msgsSent, P > 1 ? (P - 1) * slices + (P - 1) : 0) << "ring allreduce messages, rank " << rank;
        EXPECT_EQ(ring.msgsRecv, ring.msgsSent);

        const Traffic rab = run(Coll::AllReduce, scAlgoRabenseifner, count);
        const Traffic rd = run(Coll::AllReduce, scAlgoRecDbl, count);
        if (pow2) {
          EXPECT_EQ(rab.bytesSent, 2 * (P - 1) * S / P) << "Rabenseifner allreduce, rank " << rank;
          EXPECT_EQ(rab.bytesRecv, 2 * (P - 1) * S / P) << "Rabenseifner allreduce, rank " << rank;
          EXPECT_EQ(rab.msgsSent, uint64_t(2 * lg));
          EXPECT_EQ(rd.bytesSent, uint64_t(lg) * S) << "recursive doubling allreduce, rank " << rank;
          EXPECT_EQ(rd.bytesRecv, uint64_t(lg) * S);
          EXPECT_EQ(rd.msgsSent, uint64_t(lg));
        } else {
          // Documented for the fold: the P' ranks send 2(P'-1)/P' of the vector,
          // the odd rank of a folded pair one vector more, the even one a vector.
          const bool idle = rank < 2 * (P - p2) && rank % 2 == 0, odd = rank < 2 * (P - p2) && rank % 2 == 1;
          const uint64_t core = 2 * (p2 - 1) * S / p2;
          EXPECT_EQ(rab.bytesSent, idle ? S : core + (odd ? S : 0)) << "Rabenseifner allreduce, rank " << rank;
          EXPECT_EQ(rab.bytesRecv, idle ? S : core + (odd ? S : 0)) << "Rabenseifner allreduce, rank " << rank;
          EXPECT_EQ(rd.bytesSent, idle ? S : uint64_t(lg) * S + (odd ? S : 0)) << "recursive doubling, rank " << rank;
        }

        // Reduce-scatter and allgather: (P-1)/P of the whole vector each way.
        const size_t block = count / size_t(P);
        const Traffic rsRing = run(Coll::ReduceScatter, scAlgoRing, block);
        const Traffic agRing = run(Coll::AllGather, scAlgoRing, block);
        EXPECT_EQ(rsRing.bytesSent, (P - 1) * S / P);
        EXPECT_EQ(rsRing.bytesRecv, (P - 1) * S / P);
        EXPECT_EQ(rsRing.msgsSent, P > 1 ? (P - 1) * slices : 0);
        EXPECT_EQ(agRing.bytesSent, (P - 1) * S / P);
        EXPECT_EQ(agRing.bytesRecv, (P - 1) * S / P);
        EXPECT_EQ(agRing.msgsSent, uint64_t(P - 1));
        const Traffic rsHalving = run(Coll::ReduceScatter, scAlgoRabenseifner, block);
        const Traffic agDoubling = run(Coll::AllGather, scAlgoRecDbl, block);
        if (pow2) {
          EXPECT_EQ(rsHalving.bytesSent, (P - 1) * S / P);
          EXPECT_EQ(rsHalving.bytesRecv, (P - 1) * S / P);
          EXPECT_EQ(rsHalving.msgsSent, uint64_t(lg));
          EXPECT_EQ(agDoubling.bytesSent, (P - 1) * S / P);
          EXPECT_EQ(agDoubling.bytesRecv, (P - 1) * S / P);
          EXPECT_EQ(agDoubling.msgsSent, uint64_t(lg));
        }
      },
      &cfg);
}

// Counters accumulate over calls until reset; reset zeroes all four.
TEST_P(TrafficTest, AccumulateAndReset) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(30, kSliceBytes);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        SC_OK(comm, scCommResetStats(comm));
        EXPECT_EQ(stats(comm), Traffic{});
        const Call c{scAlgoRing, scInt32, scMax, 777, false};
        const Traffic one = expectedTraffic(Coll::AllReduce, scAlgoRing, P, rank, 777, 4, kSliceBytes / 4);
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, c));
        EXPECT_EQ(stats(comm), one);
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, c));
        const Traffic two{2 * one.bytesSent, 2 * one.bytesRecv, 2 * one.msgsSent, 2 * one.msgsRecv};
        EXPECT_EQ(stats(comm), two) << "counters do not accumulate";
        SC_OK(comm, scCommResetStats(comm));
        EXPECT_EQ(stats(comm), Traffic{}) << "reset did not zero the counters";
      },
      &cfg);
}

// count 0 moves nothing; native calls are not counted (sparcoll.h); on one rank
// nothing is sent at all.
TEST_P(TrafficTest, ZeroCountNativeAndSingleRank) {
  const int P = GetParam();
  DT_SKIP_UNLESS_RUNS(P);
  const scConfig_t cfg = config(30, kSliceBytes);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        SC_OK(comm, scCommResetStats(comm));
        for (scAlgo_t a : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative, scAlgoAuto}) {
          EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, {a, scFloat32, scSum, 0, false}));
          EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, {scAlgoNative, scFloat32, scSum, 0, true}));
        }
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::ReduceScatter, {scAlgoRing, scInt8, scSum, 0, false}));
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllGather, {scAlgoRecDbl, scInt8, scSum, 0, false}));
        EXPECT_EQ(stats(comm), Traffic{}) << "count 0 produced traffic";
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, {scAlgoNative, scFloat32, scSum, 1000, false}));
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::ReduceScatter, {scAlgoNative, scInt32, scMin, 100, true}));
        EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllGather, {scAlgoNative, scUint8, scSum, 100, false}));
        EXPECT_EQ(stats(comm), Traffic{}) << "native calls were counted";
        if (P == 1) {
          for (scAlgo_t a : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoAuto})
            EXPECT_TRUE(callChecked(comm, rank, P, Coll::AllReduce, {a, scFloat64, scProd, 1000, false}));
          EXPECT_EQ(stats(comm), Traffic{}) << "a single rank sent messages";
        }
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Dense, TrafficTest, testing::ValuesIn(gridP()),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

}  // namespace
}  // namespace dtest
