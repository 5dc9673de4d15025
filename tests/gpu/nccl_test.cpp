// The nccl transport under mpirun (CTest runs it with -np 1; any world size
// works on a node with at least that many GPUs): bootstrap over MPI, the
// schedules over ncclSend/ncclRecv, the native NCCL collectives, barrier,
// traffic counters, and wrong-memory-kind input. Exact integer-valued data.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "gpu/gpu_util.h"
#include "gpu/nccl_grid.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::Stream;
using gputest::upload;

scConfig_t ncclConfig() {
  scConfig_t c = sctest::testConfig();
  c.transport = scTransportNccl;
  c.timeoutSeconds = 60;
  return c;
}

// The GPU scCommInitMpi gave this rank (its node-local rank's device): buffers
// and streams must live there, not on device 0.
int commDevice(scComm_t comm) {
  int d = -1;
  EXPECT_EQ(scCommDevice(comm, &d), scSuccess) << scGetLastError(comm);
  return d;
}

// Runs body on every MPI rank with an NCCL communicator; skips without enough GPUs.
void ncclRun(const std::function<void(scComm_t, int)>& body) {
  SC_REQUIRE_GPU();
  const int P = sctest::mpiWorldSize();
  if (P > sctest::gpuCount()) GTEST_SKIP() << P << " ranks but " << sctest::gpuCount() << " GPU(s) on this node";
  const scConfig_t cfg = ncclConfig();
  sctest::run(P, gputest::guarded(body), &cfg);
}

TEST(Nccl, InitAndQueries) {
  ncclRun([](scComm_t comm, int rank) {
    int r = -1, n = 0, dev = 0;
    ASSERT_EQ(scCommRank(comm, &r), scSuccess);
    ASSERT_EQ(scCommSize(comm, &n), scSuccess);
    ASSERT_EQ(scCommIsDevice(comm, &dev), scSuccess);
    EXPECT_EQ(r, rank);
    EXPECT_EQ(n, sctest::mpiWorldSize());
    EXPECT_EQ(dev, 1);
    const int d = commDevice(comm);
    EXPECT_GE(d, 0);
    EXPECT_LT(d, sctest::gpuCount());
    Stream s(d);
    EXPECT_EQ(scBarrier(comm, s), scSuccess) << scGetLastError(comm);
  });
}

TEST(Nccl, AllReduceEveryAlgorithm) {
  ncclRun([](scComm_t comm, int rank) {
    gputest::ncclAllReduceGrid(comm, rank, sctest::mpiWorldSize(), commDevice(comm), (size_t(1) << 20) + 3,
                               {scSum, scMax, scMin, scAvg});
  });
}

TEST(Nccl, ReduceScatterAndAllGather) {
  ncclRun([](scComm_t comm, int rank) {
    gputest::ncclScatterGather(comm, rank, sctest::mpiWorldSize(), commDevice(comm), scFloat32);
  });
}

// The schedules count their own traffic on NCCL exactly as on host transports;
// native calls are not counted.
TEST(Nccl, Stats) {
  ncclRun([](scComm_t comm, int rank) {
    const int P = sctest::mpiWorldSize(), d = commDevice(comm);
    Stream s(d);
    const size_t count = 4096 * size_t(P), S = count * 4;
    DevBuf buf(S, d);
    const Bytes in = dtest::makeInput(scFloat32, scSum, P, rank, 0, count);
    for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoNative}) {
      upload(buf.get(), in.data(), S, s.get());
      ASSERT_EQ(scCommResetStats(comm), scSuccess);
      ASSERT_EQ(scAllReduce(buf.get(), buf.get(), count, scFloat32, scSum, algo, comm, s), scSuccess)
          << scGetLastError(comm);
      scStats_t st{};
      ASSERT_EQ(scCommGetStats(comm, &st), scSuccess);
      const uint64_t want = algo == scAlgoNative ? 0 : 2 * (P - 1) * S / P;
      EXPECT_EQ(st.bytesSent, want) << dtest::algoStr(algo);
      EXPECT_EQ(st.bytesRecv, want) << dtest::algoStr(algo);
      EXPECT_EQ(download(buf.get(), S, s.get()), dtest::makeExpected(scFloat32, scSum, P, 0, count));
    }
  });
}

TEST(Nccl, HostPointerRejected) {
  ncclRun([](scComm_t comm, int) {
    const int d = commDevice(comm);
    Stream s(d);
    std::vector<float> host(64);
    DevBuf dev(64 * 4, d);
    EXPECT_EQ(scAllReduce(host.data(), dev.get(), 64, scFloat32, scSum, scAlgoNative, comm, s), scInvalidArgument);
    EXPECT_NE(std::string(scGetLastError(comm)).find("host memory"), std::string::npos) << scGetLastError(comm);
    // Not fatal: the communicator still works.
    EXPECT_EQ(scAllReduce(dev.get(), dev.get(), 64, scFloat32, scSum, scAlgoNative, comm, s), scSuccess)
        << scGetLastError(comm);
  });
}

// A device index that does not exist fails init on every rank, quickly.
TEST(Nccl, BadDeviceFailsInit) {
  SC_REQUIRE_GPU();
  scConfig_t cfg = ncclConfig();
  cfg.device = sctest::gpuCount();
  scComm_t comm = nullptr;
  const scResult_t r = scCommInitMpi(&comm, nullptr, &cfg);
  EXPECT_EQ(r, scInvalidArgument) << scGetLastError(nullptr);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("device"), std::string::npos) << scGetLastError(nullptr);
}

// Without a device (CI), every rank's init fails quickly with a CUDA error;
// the readiness exchange means no rank is left waiting for the others.
TEST(Nccl, NoDeviceFailsCleanly) {
  if (sctest::gpuCount() > 0) GTEST_SKIP() << "a CUDA device is present";
  const scConfig_t cfg = ncclConfig();
  scComm_t comm = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scCudaError) << scGetLastError(nullptr);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("nccl transport needs a CUDA device"), std::string::npos)
      << scGetLastError(nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "init failure was not prompt";
}

}  // namespace
