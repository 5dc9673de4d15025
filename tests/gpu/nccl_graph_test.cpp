// CUDA graphs on the nccl transport (label gpu): every dense collective and
// algorithm, and the static-size sparse allreduce with a status word, captured
// into a graph (a call that waited for the stream or synchronized would break
// the capture) and replayed 100 times with new data before each replay, the
// results those of eager calls. One rank on the current device (NCCL's one
// rank per GPU); P ranks on P GPUs when present. Skips without a device.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
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

constexpr int kReplays = 100;

struct Call {
  const char* coll;
  scAlgo_t algo;
};
constexpr Call kCalls[] = {{"allreduce", scAlgoRing},        {"allreduce", scAlgoRabenseifner},
                           {"allreduce", scAlgoRecDbl},      {"allreduce", scAlgoNative},
                           {"reduce_scatter", scAlgoRing},   {"reduce_scatter", scAlgoRabenseifner},
                           {"reduce_scatter", scAlgoNative}, {"allgather", scAlgoRing},
                           {"allgather", scAlgoRecDbl},      {"allgather", scAlgoNative},
                           {"broadcast", scAlgoBinomial},    {"broadcast", scAlgoScatterAllGather},
                           {"broadcast", scAlgoNative}};

// Captures body() on s into a graph and instantiates it.
cudaGraphExec_t capture(cudaStream_t s, const std::function<void()>& body) {
  cudaGraph_t g = nullptr;
  GPU_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  body();
  GPU_CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t e = nullptr;
  GPU_CHECK(cudaGraphInstantiate(&e, g, 0));
  GPU_CHECK(cudaGraphDestroy(g));
  return e;
}

// One collective on int32 data: input window `first` (new data per replay),
// output compared with the reference for that window.
void denseReplays(scComm_t comm, int rank, int P, int dev, const Call& c) {
  SCOPED_TRACE(std::string(c.coll) + " algo " + scAlgoName(c.algo));
  Stream s(dev);
  const size_t n = 1027 * size_t(P);  // per rank; reduce-scatter: per block
  const std::string coll = c.coll;
  const bool rs = coll == "reduce_scatter", ag = coll == "allgather", bc = coll == "broadcast";
  const size_t in = rs ? n * size_t(P) : n, out = ag ? n * size_t(P) : n;
  DevBuf send(in * 4, dev), recv(out * 4, dev);
  auto enqueue = [&] {
    scResult_t r = scSuccess;
    if (coll == "allreduce") r = scAllReduce(send.get(), recv.get(), n, scInt32, scSum, c.algo, comm, s.get());
    else if (rs) r = scReduceScatter(send.get(), recv.get(), n, scInt32, scSum, c.algo, comm, s.get());
    else if (ag) r = scAllGather(send.get(), recv.get(), n, scInt32, c.algo, comm, s.get());
    else r = scBroadcast(send.get(), n, scInt32, P - 1, c.algo, comm, s.get());
    ASSERT_EQ(r, scSuccess) << scGetLastError(comm);
  };
  auto input = [&](size_t first) {
    // broadcast: the root's window, the others' poisoned
    if (bc) return rank == P - 1 ? dtest::makeInput(scInt32, scSum, 1, 0, first, n) : Bytes(n * 4, 0xA5);
    if (ag) return dtest::makeInput(scInt32, scSum, 1, 0, first + size_t(rank) * n, n);
    return dtest::makeInput(scInt32, scSum, P, rank, first, in);
  };
  auto expected = [&](size_t first) {
    if (bc) return dtest::makeInput(scInt32, scSum, 1, 0, first, n);
    if (ag) return dtest::makeInput(scInt32, scSum, 1, 0, first, out);
    if (rs) return dtest::makeExpected(scInt32, scSum, P, first + size_t(rank) * n, n);
    return dtest::makeExpected(scInt32, scSum, P, first, n);
  };
  // Eager first: the scratch a call needs is grown outside the capture.
  Bytes x = input(0);
  upload(send.get(), x.data(), x.size(), s.get());
  enqueue();
  ASSERT_EQ(download(bc ? send.get() : recv.get(), out * 4, s.get()), expected(0));
  scStats_t a{}, b{};
  ASSERT_EQ(scCommGetStats(comm, &a), scSuccess);
  cudaGraphExec_t e = capture(s.get(), enqueue);
  ASSERT_EQ(scCommGetStats(comm, &b), scSuccess);
  EXPECT_EQ(b.hostSyncs, a.hostSyncs);
  EXPECT_EQ(b.scratchAllocs, a.scratchAllocs);
  for (int i = 1; i <= kReplays; ++i) {
    x = input(size_t(i) * 7);
    upload(send.get(), x.data(), x.size(), s.get());
    GPU_CHECK(cudaGraphLaunch(e, s.get()));
    const Bytes got = download(bc ? send.get() : recv.get(), out * 4, s.get());
    ASSERT_EQ(got, expected(size_t(i) * 7)) << "replay " << i;
  }
  GPU_CHECK(cudaGraphExecDestroy(e));
}

// The static-size sparse allreduce with a status word, capture and replays:
// rank r's cap pairs, their count in device memory, values changing per replay.
void staticSparseReplays(scComm_t comm, int rank, int P, int dev) {
  Stream s(dev);
  const size_t cap = 256, dim = 50000;
  DevBuf idx(cap * 4, dev), val(cap * 4, dev), cnt(8, dev), out(dim * 4, dev), status(8, dev);
  const uint64_t zero = 0;
  upload(status.get(), &zero, 8, s.get());
  auto pairs = [&](int q, int replay, std::vector<uint32_t>& i, std::vector<float>& v) {
    i.resize(cap);
    v.resize(cap);
    for (size_t k = 0; k < cap; ++k) {
      i[k] = uint32_t((k * 37 + size_t(q) * 11 + size_t(replay) * 5) % dim);
      v[k] = float(q + 1 + replay);
    }
  };
  auto load = [&](int replay) {
    std::vector<uint32_t> i;
    std::vector<float> v;
    pairs(rank, replay, i, v);
    const uint64_t count = cap - size_t(rank) - size_t(replay % 3);  // fewer than capacity
    upload(idx.get(), i.data(), cap * 4, s.get());
    upload(val.get(), v.data(), cap * 4, s.get());
    upload(cnt.get(), &count, 8, s.get());
  };
  auto want = [&](int replay) {
    std::vector<float> w(dim, 0.0f);
    for (int q = 0; q < P; ++q) {
      std::vector<uint32_t> i;
      std::vector<float> v;
      pairs(q, replay, i, v);
      for (size_t k = 0; k < cap - size_t(q) - size_t(replay % 3); ++k) w[i[k]] += v[k];
    }
    Bytes b(dim * 4);
    std::memcpy(b.data(), w.data(), b.size());
    return b;
  };
  auto enqueue = [&] {
    ASSERT_EQ(scSparseAllReduceStatic(idx.get(), val.get(), 0, reinterpret_cast<const uint64_t*>(cnt.get()), cap, dim,
                                      scIndexU32, scFloat32, scSum, out.get(),
                                      reinterpret_cast<uint64_t*>(status.get()), comm, s.get()),
              scSuccess)
        << scGetLastError(comm);
  };
  load(0);
  enqueue();
  ASSERT_EQ(download(out.get(), dim * 4, s.get()), want(0));
  cudaGraphExec_t e = capture(s.get(), enqueue);
  for (int r = 1; r <= kReplays; ++r) {
    load(r);
    GPU_CHECK(cudaGraphLaunch(e, s.get()));
    ASSERT_EQ(download(out.get(), dim * 4, s.get()), want(r)) << "replay " << r;
  }
  Bytes st = download(status.get(), 8, s.get());
  uint64_t word = 1;
  std::memcpy(&word, st.data(), 8);
  EXPECT_EQ(word, 0u);
  GPU_CHECK(cudaGraphExecDestroy(e));
}

void everything(scComm_t comm, int rank, int dev, int P) {
  for (const Call& c : kCalls) denseReplays(comm, rank, P, dev, c);
  staticSparseReplays(comm, rank, P, dev);
}

scConfig_t config() {
  scConfig_t c = sctest::testConfig();
  c.device = -1;
  c.timeoutSeconds = 60;
  return c;
}

TEST(NcclGraph, OneRankCapturesAndReplays) {
  SC_REQUIRE_GPU();
  gputest::ncclRunFromId(1, {-1}, config(), [](scComm_t comm, int rank, int dev) { everything(comm, rank, dev, 1); });
}

TEST(NcclGraph, RanksOnSeveralGpusCaptureAndReplay) {
  const int P = std::min(sctest::gpuCount(), 4);
  if (P < 2) GTEST_SKIP() << "needs 2 CUDA devices, " << sctest::gpuCount() << " present";
  std::vector<int> devices(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) devices[size_t(r)] = r;
  gputest::ncclRunFromId(P, devices, config(),
                         [P](scComm_t comm, int rank, int dev) { everything(comm, rank, dev, P); });
}

}  // namespace
