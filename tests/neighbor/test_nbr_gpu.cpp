// The neighbourhood collectives on device memory: the catalogue with every
// algorithm, allgather and allgatherv, checked against the sequential
// reference after a copy back to the host. Local binary: P ranks as threads
// sharing GPU 0 (device-local communicators); the _mpi binary: the nccl
// transport, one GPU per rank. Skips without a GPU (label gpu).
#include <cuda_runtime_api.h>

#include "dense/dense_util.h"
#include "gpu/gpu_util.h"
#include "nbr_check.h"

namespace ntest {
namespace {

// Device buffers on the communicator's GPU, copies ordered on the rank's stream.
Memory deviceMemory(int device, cudaStream_t s) {
  Memory m;
  m.alloc = [device](size_t n) {
    GPU_CHECK(cudaSetDevice(device));
    void* p = nullptr;
    GPU_CHECK(cudaMalloc(&p, n ? n : 1));
    return p;
  };
  m.release = [](void* p) { cudaFree(p); };
  m.toMem = [s](void* d, const void* h, size_t n) { gputest::upload(d, h, n, s); };
  m.fromMem = [s](void* h, const void* d, size_t n) {
    const std::vector<uint8_t> b = gputest::download(d, n, s);
    std::copy(b.begin(), b.end(), static_cast<uint8_t*>(h));
  };
  m.stream = s;
  return m;
}

void deviceGrid(int P) {
  scConfig_t cfg = dtest::config(120);
  std::vector<int> devices(size_t(P), 0);
  if (sctest::mode() == sctest::Mode::Mpi) cfg.transport = scTransportNccl;
  sctest::run(P, gputest::guarded([&](scComm_t comm, int rank) {
                int device = 0;
                ASSERT_EQ(scCommDevice(comm, &device), scSuccess) << scGetLastError(comm);
                gputest::Stream stream(device);
                const Memory mem = deviceMemory(device, stream.get());
                for (const Graph& g : catalogue(P)) {
                  scTopology_t topo = makeTopology(comm, g, rank);
                  if (!topo) return;
                  for (scNbrAlgo_t a : kAllAlgos)
                    for (bool v : {false, true})
                      if (!checkCall(comm, topo, g, rank, {a, scBfloat16, 1000, v, 5}, mem)) return;
                  EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
                }
              }),
              &cfg, sctest::mode() == sctest::Mode::Local ? devices.data() : nullptr);
}

TEST(NeighborGpu, DeviceBuffers) {
  SC_REQUIRE_GPU();
  if (sctest::mode() == sctest::Mode::Mpi) {
    const int P = sctest::mpiWorldSize();
    if (P > sctest::gpuCount()) GTEST_SKIP() << P << " ranks but " << sctest::gpuCount() << " GPU(s)";
    deviceGrid(P);
    return;
  }
  for (int P : {1, 2, 4}) {
    SCOPED_TRACE("P=" + std::to_string(P));
    dtest::ScopedEnv env("SPARCOLL_RANKS_PER_NODE", "2");
    deviceGrid(P);
  }
}

// A host pointer on a device communicator is rejected before any message.
TEST(NeighborGpu, HostPointerRejected) {
  SC_REQUIRE_GPU();
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "checked on device-local communicators";
  const int P = 2, devices[2] = {0, 0};
  const scConfig_t cfg = dtest::config(60);
  const Graph g = star(P);
  sctest::run(P, gputest::guarded([&](scComm_t comm, int rank) {
                scTopology_t topo = makeTopology(comm, g, rank);
                if (!topo) return;
                std::vector<int> host(16);
                gputest::DevBuf dev(64);
                EXPECT_TRUE(dtest::failedWith(scNeighborAllGather(host.data(), 1, dev.get(), scInt32, scNbrNaive, topo,
                                                                  nullptr),
                                              scInvalidArgument, comm, "send"));
                EXPECT_EQ(scTopologyDestroy(topo), scSuccess);
              }),
              &cfg, devices);
}

}  // namespace
}  // namespace ntest
