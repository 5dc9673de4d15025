// Bad arguments to the collectives: each returns its documented scResult_t
// with a last-error message that names the problem and carries
// csrc/<file>:<line>; nothing is sent (all ranks make the same bad call and
// none may hang), and an argument error does not abort the communicator. Runs
// on the local transport and, in the _mpi binary, on the MPI transport.
// Communicator creation and configuration: test_errors_init.cpp.
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

#include "dense_check.h"

extern "C" {
scResult_t c_allreduce(const void* s, void* r, size_t n, int dt, int op, int algo, scComm_t comm);
scResult_t c_reduce_scatter(const void* s, void* r, size_t n, int dt, int op, int algo, scComm_t comm);
scResult_t c_allgather(const void* s, void* r, size_t n, int dt, int algo, scComm_t comm);
scResult_t c_init_local_with_algo(scComm_t* comms, int nranks, int algo);
}

namespace dtest {
namespace {

const scAlgo_t kAllAlgos[] = {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative};

// Ends a death-test child with `code` (the number of wrong answers it printed).
[[noreturn]] void exitWith(int code) {
  std::fflush(stderr);
  std::_Exit(code);
}

// After the bad calls the communicator must still work.
void expectStillWorks(scComm_t comm, int rank, int P) {
  EXPECT_TRUE(checkAllReduce(comm, rank, P, {scAlgoRing, scInt32, scSum, 10, false},
                             makeExpected(scInt32, scSum, P, 0, 10), nullptr))
      << "an argument error left the communicator unusable";
}

TEST(DenseErrors, NullCommunicator) {
  float x[4] = {1, 2, 3, 4}, y[16];
  int i = 0;
  scStats_t st;
  scAlgo_t a;
  const scResult_t bad = scInvalidArgument;
  EXPECT_TRUE(
      failedWith(scAllReduce(x, y, 4, scFloat32, scSum, scAlgoRing, nullptr, nullptr), bad, nullptr, "communicator"));
  EXPECT_TRUE(failedWith(scReduceScatter(x, y, 1, scFloat32, scSum, scAlgoRing, nullptr, nullptr), bad, nullptr,
                         "communicator"));
  EXPECT_TRUE(failedWith(scAllGather(x, y, 4, scFloat32, scAlgoRing, nullptr, nullptr), bad, nullptr, "communicator"));
  EXPECT_TRUE(failedWith(scBarrier(nullptr, nullptr), bad, nullptr, "communicator"));
  EXPECT_TRUE(failedWith(scAllReduceAlgoFor(nullptr, 8, &a), bad, nullptr, "communicator"));
  EXPECT_TRUE(failedWith(scCommResetStats(nullptr), bad, nullptr, "communicator"));
  EXPECT_TRUE(failedWith(scCommDestroy(nullptr), bad, nullptr, "communicator"));
  EXPECT_EQ(scCommGetStats(nullptr, &st), bad);
  EXPECT_EQ(scCommRank(nullptr, &i), bad);
  EXPECT_EQ(scCommSize(nullptr, &i), bad);
  EXPECT_EQ(scCommDevice(nullptr, &i), bad);
  EXPECT_STRNE(scGetLastError(nullptr), "");
}

// scCommDevice: -1 on host communicators; a NULL output is a bad argument.
TEST(DenseErrors, CommDeviceOfHostCommunicator) {
  const int P = anyP(2);
  const scConfig_t cfg = config();
  sctest::run(
      P,
      [&](scComm_t comm, int) {
        int d = 7, isDev = 1;
        ASSERT_EQ(scCommDevice(comm, &d), scSuccess) << scGetLastError(comm);
        ASSERT_EQ(scCommIsDevice(comm, &isDev), scSuccess);
        EXPECT_EQ(d, -1);
        EXPECT_EQ(isDev, 0);
        EXPECT_TRUE(failedWith(scCommDevice(comm, nullptr), scInvalidArgument, comm, "null"));
      },
      &cfg);
}

TEST(DenseErrors, NullBuffers) {
  const int P = anyP(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<float> buf(size_t(P) * 10);
    float* b = buf.data();
    for (scAlgo_t a : kAllAlgos) {
      SCOPED_TRACE(algoStr(a));
      EXPECT_TRUE(failedWith(scAllReduce(nullptr, b, 10, scFloat32, scSum, a, comm, nullptr), scInvalidArgument, comm,
                             "sendbuf"));
      EXPECT_TRUE(failedWith(scAllReduce(b, nullptr, 10, scFloat32, scSum, a, comm, nullptr), scInvalidArgument, comm,
                             "recvbuf"));
      // NULL buffers are fine with count 0: nothing to read or write.
      EXPECT_EQ(scAllReduce(nullptr, nullptr, 0, scFloat32, scSum, a, comm, nullptr), scSuccess)
          << scGetLastError(comm);
    }
    for (scAlgo_t a : {scAlgoAuto, scAlgoRing, scAlgoRabenseifner, scAlgoNative}) {
      SCOPED_TRACE(algoStr(a));
      EXPECT_TRUE(failedWith(scReduceScatter(nullptr, b, 10, scFloat32, scMax, a, comm, nullptr), scInvalidArgument,
                             comm, "sendbuf"));
      EXPECT_TRUE(failedWith(scReduceScatter(b, nullptr, 10, scFloat32, scMax, a, comm, nullptr), scInvalidArgument,
                             comm, "recvbuf"));
      EXPECT_EQ(scReduceScatter(nullptr, nullptr, 0, scFloat32, scMax, a, comm, nullptr), scSuccess)
          << scGetLastError(comm);
    }
    for (scAlgo_t a : {scAlgoAuto, scAlgoRing, scAlgoRecDbl, scAlgoNative}) {
      SCOPED_TRACE(algoStr(a));
      EXPECT_TRUE(
          failedWith(scAllGather(nullptr, b, 10, scFloat32, a, comm, nullptr), scInvalidArgument, comm, "sendbuf"));
      EXPECT_TRUE(
          failedWith(scAllGather(b, nullptr, 10, scFloat32, a, comm, nullptr), scInvalidArgument, comm, "recvbuf"));
      EXPECT_EQ(scAllGather(nullptr, nullptr, 0, scFloat32, a, comm, nullptr), scSuccess) << scGetLastError(comm);
    }
    expectStillWorks(comm, rank, P);
  });
}

// Values that are no enumerator (but inside the C++ enums' value ranges, so
// passing them is defined behaviour in C++ too), with a non-zero and with a
// zero count: an unknown value is bad input either way.
TEST(DenseErrors, UnknownDtypeOpAlgo) {
  const int P = anyP(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<uint64_t> buf(size_t(P) * 8);
    void* b = buf.data();
    for (size_t n : {size_t(8), size_t(0)}) {
      SCOPED_TRACE("count " + std::to_string(n));
      for (int dt : {int(scNumTypes), 15}) {
        SCOPED_TRACE("dtype " + std::to_string(dt));
        EXPECT_TRUE(
            failedWith(c_allreduce(b, b, n, dt, scSum, scAlgoRing, comm), scInvalidArgument, comm, "data type"));
        EXPECT_TRUE(
            failedWith(c_reduce_scatter(b, b, n, dt, scSum, scAlgoRing, comm), scInvalidArgument, comm, "data type"));
        EXPECT_TRUE(failedWith(c_allgather(b, b, n, dt, scAlgoRing, comm), scInvalidArgument, comm, "data type"));
      }
      for (int op : {int(scNumOps), 7}) {
        SCOPED_TRACE("op " + std::to_string(op));
        EXPECT_TRUE(failedWith(c_allreduce(b, b, n, scInt32, op, scAlgoRing, comm), scInvalidArgument, comm, "op"));
        EXPECT_TRUE(
            failedWith(c_reduce_scatter(b, b, n, scInt32, op, scAlgoRing, comm), scInvalidArgument, comm, "op"));
      }
      for (int algo : {int(scNumAlgos), 7}) {
        SCOPED_TRACE("algo " + std::to_string(algo));
        EXPECT_TRUE(failedWith(c_allreduce(b, b, n, scInt32, scSum, algo, comm), scInvalidArgument, comm, "algorithm"));
        EXPECT_TRUE(
            failedWith(c_reduce_scatter(b, b, n, scInt32, scSum, algo, comm), scInvalidArgument, comm, "algorithm"));
        EXPECT_TRUE(failedWith(c_allgather(b, b, n, scInt32, algo, comm), scInvalidArgument, comm, "algorithm"));
      }
    }
    expectStillWorks(comm, rank, P);
  });
}

// Any int a C caller may pass (-1, 1000: outside the C++ enums' value ranges,
// which UBSan's enum check catches if the library loads them as enums).
// Returns the number of wrong answers (on stderr).
int outOfRangeEnumsFromC() {
  scComm_t comm = nullptr;
  const scConfig_t cfg = config(5);
  if (scCommInitLocal(&comm, 1, nullptr, &cfg) != scSuccess) return 100;
  uint64_t b[8] = {};
  int wrong = 0;
  auto expect = [&](scResult_t r, const char* needle, const char* what, int v, size_t n) {
    if (r == scInvalidArgument && contains(scGetLastError(comm), needle)) return;
    std::fprintf(stderr, "%s %d, count %zu: returned %d (%s)\n", what, v, n, int(r), scGetLastError(comm));
    ++wrong;
  };
  for (size_t n : {size_t(8), size_t(0)})
    for (int v : {-1, 1000}) {
      expect(c_allreduce(b, b, n, v, scSum, scAlgoRing, comm), "data type", "allreduce dtype", v, n);
      expect(c_reduce_scatter(b, b, n, v, scSum, scAlgoRing, comm), "data type", "reduce-scatter dtype", v, n);
      expect(c_allgather(b, b, n, v, scAlgoRing, comm), "data type", "allgather dtype", v, n);
      expect(c_allreduce(b, b, n, scInt32, v, scAlgoRing, comm), "op", "allreduce op", v, n);
      expect(c_reduce_scatter(b, b, n, scInt32, v, scAlgoRing, comm), "op", "reduce-scatter op", v, n);
      expect(c_allreduce(b, b, n, scInt32, scSum, v, comm), "algorithm", "allreduce algo", v, n);
      expect(c_reduce_scatter(b, b, n, scInt32, scSum, v, comm), "algorithm", "reduce-scatter algo", v, n);
      expect(c_allgather(b, b, n, scInt32, v, comm), "algorithm", "allgather algo", v, n);
    }
  for (int v : {-1, 1000}) {
    scComm_t c = nullptr;
    const scResult_t r = c_init_local_with_algo(&c, 1, v);
    if (r != scInvalidArgument || !contains(scGetLastError(nullptr), "algorithm")) {
      std::fprintf(stderr, "scConfig_t.algo %d: returned %d (%s)\n", v, int(r), scGetLastError(nullptr));
      ++wrong;
    }
    if (c) scCommDestroy(c);
  }
  scCommDestroy(comm);
  return wrong;
}

// In a child process, so that a sanitizer abort fails this test alone.
TEST(DenseErrorsDeathTest, OutOfRangeEnumValuesFromC) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "forks a child; checked by the local binary";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exitWith(outOfRangeEnumsFromC()), testing::ExitedWithCode(0), "");
}

// reduce-scatter offers ring, rabenseifner, native; allgather ring, recdbl, native.
TEST(DenseErrors, AlgorithmNotOfferedForCollective) {
  const int P = anyP(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<int32_t> buf(size_t(P) * 8);
    int32_t* b = buf.data();
    for (size_t n : {size_t(8), size_t(0)}) {
      SCOPED_TRACE("count " + std::to_string(n));
      EXPECT_TRUE(failedWith(scReduceScatter(b, b, n, scInt32, scSum, scAlgoRecDbl, comm, nullptr), scInvalidArgument,
                             comm, "recdbl"));
      EXPECT_TRUE(failedWith(scAllGather(b, b, n, scInt32, scAlgoRabenseifner, comm, nullptr), scInvalidArgument, comm,
                             "rabenseifner"));
    }
    expectStillWorks(comm, rank, P);
  });
}

// Element counts whose byte size (or P times which) does not fit size_t.
TEST(DenseErrors, CountOverflow) {
  const int P = anyP(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<uint64_t> buf(64);
    void* b = buf.data();
    const size_t huge = SIZE_MAX;
    for (scDataType_t dt : {scFloat32, scFloat64, scFloat16}) {
      SCOPED_TRACE(typeStr(dt));
      for (scAlgo_t a : kAllAlgos)
        EXPECT_TRUE(
            failedWith(scAllReduce(b, b, huge, dt, scSum, a, comm, nullptr), scInvalidArgument, comm, "overflow"));
      EXPECT_TRUE(failedWith(scAllReduce(b, b, SIZE_MAX / elemSize(dt) + 1, dt, scSum, scAlgoRing, comm, nullptr),
                             scInvalidArgument, comm, "overflow"));
    }
    if (P > 1) {
      // P * count overflows even for one-byte elements.
      EXPECT_TRUE(failedWith(scReduceScatter(b, b, huge / 2 + 1, scInt8, scSum, scAlgoRing, comm, nullptr),
                             scInvalidArgument, comm, "overflow"));
      EXPECT_TRUE(failedWith(scAllGather(b, b, huge / 2 + 1, scUint8, scAlgoRing, comm, nullptr), scInvalidArgument,
                             comm, "overflow"));
    }
    EXPECT_TRUE(failedWith(scReduceScatter(b, b, huge, scInt32, scSum, scAlgoRabenseifner, comm, nullptr),
                           scInvalidArgument, comm, "overflow"));
    EXPECT_TRUE(
        failedWith(scAllGather(b, b, huge, scInt32, scAlgoRecDbl, comm, nullptr), scInvalidArgument, comm, "overflow"));
    expectStillWorks(comm, rank, P);
  });
}

// One-byte elements: SIZE_MAX elements fit size_t bytes, but no buffer can
// hold more than PTRDIFF_MAX bytes; the calls must refuse, not read or
// allocate SIZE_MAX bytes. Returns the number of wrong answers (on stderr).
int hugeOneByteCounts() {
  int wrong = 0;
  auto expectRefused = [&](scResult_t r, scComm_t comm, const char* what) {
    if (r == scInvalidArgument && std::string(scGetLastError(comm)).size()) return;
    std::fprintf(stderr, "%s returned %d: %s\n", what, int(r), scGetLastError(comm));
    ++wrong;
  };
  for (int P : {1, 2}) {
    std::vector<scComm_t> comms(static_cast<size_t>(P));
    const scConfig_t cfg = config(5);
    if (scCommInitLocal(comms.data(), P, nullptr, &cfg) != scSuccess) return 100;
    std::vector<std::thread> ranks;
    std::mutex m;
    for (int r = 0; r < P; ++r)
      ranks.emplace_back([&, r] {
        uint8_t b[64] = {};
        const size_t huge = SIZE_MAX, perRank = SIZE_MAX / size_t(P);
        for (scAlgo_t a : kAllAlgos) {
          const scResult_t x = scAllReduce(b, b, huge, scInt8, scSum, a, comms[size_t(r)], nullptr);
          std::lock_guard<std::mutex> lk(m);
          expectRefused(x, comms[size_t(r)], "allreduce of SIZE_MAX int8");
        }
        const scResult_t y = scReduceScatter(b, b, perRank, scUint8, scMax, scAlgoRing, comms[size_t(r)], nullptr);
        const scResult_t z = scAllGather(b, b, perRank, scInt8, scAlgoRing, comms[size_t(r)], nullptr);
        std::lock_guard<std::mutex> lk(m);
        expectRefused(y, comms[size_t(r)], "reduce-scatter of SIZE_MAX/P uint8 per rank");
        expectRefused(z, comms[size_t(r)], "allgather of SIZE_MAX/P int8 per rank");
      });
    for (auto& t : ranks) t.join();
    for (scComm_t c : comms) scCommDestroy(c);
  }
  return wrong;
}

// In a child process (gtest's death-test machinery), so that a crash fails
// this test alone. Forking under MPI is unsafe: the local binary checks it.
TEST(DenseErrorsDeathTest, CountBeyondAnyBuffer) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "forks a child; checked by the local binary";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exitWith(hugeOneByteCounts()), testing::ExitedWithCode(0), "");
}

TEST(DenseErrors, StreamOnHostCommunicator) {
  const int P = anyP(3);
  sctest::run(P, [&](scComm_t comm, int rank) {
    std::vector<float> buf(size_t(P) * 4);
    float* b = buf.data();
    void* stream = reinterpret_cast<void*>(uintptr_t(0x1000));
    EXPECT_TRUE(failedWith(scAllReduce(b, b, 4, scFloat32, scSum, scAlgoRing, comm, stream), scInvalidArgument, comm,
                           "stream"));
    EXPECT_TRUE(failedWith(scReduceScatter(b, b, 4, scFloat32, scSum, scAlgoRing, comm, stream), scInvalidArgument,
                           comm, "stream"));
    EXPECT_TRUE(
        failedWith(scAllGather(b, b, 4, scFloat32, scAlgoRing, comm, stream), scInvalidArgument, comm, "stream"));
    EXPECT_TRUE(failedWith(scBarrier(comm, stream), scInvalidArgument, comm, "stream"));
    expectStillWorks(comm, rank, P);
  });
}

TEST(DenseErrors, NullOutputArguments) {
  const int P = anyP(2);
  sctest::run(P, [&](scComm_t comm, int) {
    EXPECT_TRUE(failedWith(scCommGetStats(comm, nullptr), scInvalidArgument, comm, "null"));
    EXPECT_TRUE(failedWith(scAllReduceAlgoFor(comm, 8, nullptr), scInvalidArgument, comm, "null"));
    EXPECT_TRUE(failedWith(scCommRank(comm, nullptr), scInvalidArgument, comm, "null"));
    EXPECT_TRUE(failedWith(scCommSize(comm, nullptr), scInvalidArgument, comm, "null"));
  });
}

}  // namespace
}  // namespace dtest
