// The nccl transport created NCCL-style, without MPI: one scGetUniqueId, then
// scCommInitRank on every rank (threads of this process here, one GPU each).
// One rank on the current device runs every dense collective and algorithm
// with exact integer-valued data; with >= 2 GPUs, P ranks on P GPUs; a rank
// whose peer never joins times out at its deadline and leaves nothing behind.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

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

scConfig_t idConfig(int device, double timeout = 60) {
  scConfig_t c = sctest::testConfig();
  c.transport = scTransportNccl;  // ignored by scCommInitRank; set as a caller might
  c.device = device;
  c.timeoutSeconds = timeout;
  return c;
}

// P ranks from one id: rank r on devices[r] (-1: the thread's current device,
// made GPU r first).
void runFromId(int P, const std::vector<int>& devices, const std::function<void(scComm_t, int, int)>& body) {
  gputest::ncclRunFromId(P, devices, idConfig(-1), body);
}

// Every algorithm, dtype and op of allreduce (out of place and in place), then
// reduce-scatter and allgather, on rank `rank` of P; results compared bit for bit.
void denseGrid(scComm_t comm, int rank, int dev, int P) {
  gputest::ncclAllReduceGrid(comm, rank, P, dev, 4099 * size_t(P), {scSum, scProd, scMax, scMin, scAvg});
  gputest::ncclScatterGather(comm, rank, P, dev, scInt32);
}

TEST(NcclId, OneRankOnCurrentDevice) {
  SC_REQUIRE_GPU();
  runFromId(1, {-1}, [](scComm_t comm, int rank, int dev) {
    int r = -1, n = 0, isDev = 0;
    ASSERT_EQ(scCommRank(comm, &r), scSuccess);
    ASSERT_EQ(scCommSize(comm, &n), scSuccess);
    ASSERT_EQ(scCommIsDevice(comm, &isDev), scSuccess);
    EXPECT_EQ(r, 0);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(isDev, 1);
    denseGrid(comm, rank, dev, 1);
  });
}

// NCCL refuses two ranks of one communicator on one GPU, so P ranks need P GPUs.
TEST(NcclId, RanksOnSeveralGpus) {
  const int P = std::min(sctest::gpuCount(), 4);
  if (P < 2) GTEST_SKIP() << "needs 2 CUDA devices, " << sctest::gpuCount() << " present";
  std::vector<int> devices(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) devices[r] = r;
  runFromId(P, devices, [P](scComm_t comm, int rank, int dev) { denseGrid(comm, rank, dev, P); });
}

TEST(NcclId, BadDeviceFailsInit) {
  SC_REQUIRE_GPU();
  scUniqueId id;
  ASSERT_EQ(scGetUniqueId(&id), scSuccess) << scGetLastError(nullptr);
  const scConfig_t cfg = idConfig(sctest::gpuCount());
  scComm_t comm = nullptr;
  EXPECT_EQ(scCommInitRank(&comm, 1, id, 0, &cfg), scInvalidArgument) << scGetLastError(nullptr);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("device"), std::string::npos) << scGetLastError(nullptr);
}

// Rank 0 of 2 whose peer never comes: the nonblocking init is polled until the
// deadline, then aborted; the call returns scTimeout and a later init works.
TEST(NcclId, MissingPeerTimesOut) {
  SC_REQUIRE_GPU();
  scUniqueId id;
  ASSERT_EQ(scGetUniqueId(&id), scSuccess) << scGetLastError(nullptr);
  const scConfig_t cfg = idConfig(0, 3.0);
  scComm_t comm = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(scCommInitRank(&comm, 2, id, 0, &cfg), scTimeout) << scGetLastError(nullptr);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("deadline"), std::string::npos) << scGetLastError(nullptr);
  EXPECT_GE(took, 2.5);
  EXPECT_LT(took, 60.0) << "the abort after the deadline took too long";
  runFromId(1, {0}, [](scComm_t comm, int, int dev) {
    Stream s(dev);
    DevBuf buf(4, dev);
    const int one = 1;
    upload(buf.get(), &one, 4, s.get());
    ASSERT_EQ(scAllReduce(buf.get(), buf.get(), 1, scInt32, scSum, scAlgoNative, comm, s), scSuccess)
        << scGetLastError(comm);
    int got = 0;
    std::memcpy(&got, download(buf.get(), 4, s.get()).data(), 4);
    EXPECT_EQ(got, 1);
  });
}

}  // namespace
