// The dense schedules on device memory: P ranks as threads of this process, all
// on GPU 0 (each with its own stream), over the local transport's CUDA path
// (cudaMemcpyAsync ordered by events) and the CUDA backend. Integer-valued data
// (tests/dense/dense_data.h) so every result is exact; every rank's result
// bit-identical; traffic against the Patarasuk-Yuan bound; bad input.
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "gpu/gpu_util.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::Stream;
using gputest::upload;

const int kPs[] = {1, 2, 3, 4, 5, 8};
constexpr size_t kBig = (size_t(1) << 20) + 3;

scConfig_t deviceConfig() {
  scConfig_t c = sctest::testConfig();
  c.timeoutSeconds = 30;
  c.pipelineBytes = 64 << 10;  // several ring slices per block at the big count
  return c;
}

// Runs body(comm, rank, stream) on P device-local ranks, rank r on devices[r]
// (default: all on GPU 0), each with its own stream.
void runOnDevice(int P, const std::function<void(scComm_t, int, cudaStream_t)>& body, std::vector<int> devices = {}) {
  gputest::runOnDevices(P, deviceConfig(), body, std::move(devices));
}

// Per-rank digests of every result, compared after the run (bit-identical ranks).
struct CrossRank {
  explicit CrossRank(int P) : d(size_t(P)) {}
  std::vector<std::vector<uint64_t>> d;
  void verify() const {
    for (size_t r = 1; r < d.size(); ++r) EXPECT_EQ(d[r], d[0]) << "rank " << r << " differs from rank 0";
  }
};

struct Case {
  scAlgo_t algo;
  scDataType_t dt;
  scRedOp_t op;
  size_t count;
  bool inPlace;
  std::string label() const {
    return dtest::algoStr(algo) + std::string(" ") + dtest::typeStr(dt) + " " + dtest::opStr(op) +
           " count=" + std::to_string(count) + (inPlace ? " in-place" : " out-of-place");
  }
};

// Expected results per (dtype, op, count), computed once and shared read-only.
struct Expect {
  std::map<std::tuple<int, int, size_t>, Bytes> m;
  const Bytes& get(scDataType_t dt, scRedOp_t op, int P, size_t n) {
    auto key = std::make_tuple(int(dt), int(op), n);
    auto it = m.find(key);
    if (it == m.end()) it = m.emplace(key, dtest::makeExpected(dt, op, P, 0, n)).first;
    return it->second;
  }
};

class DeviceLocal : public testing::TestWithParam<int> {};

TEST_P(DeviceLocal, AllReduce) {
  SC_REQUIRE_GPU();
  const int P = GetParam();
  std::vector<Case> cases;
  Expect ex;
  for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl})
    for (scDataType_t dt : dtest::kAllTypes)
      for (scRedOp_t op : dtest::kAllOps) {
        std::vector<size_t> counts = dtest::smallCounts(P);
        if (op == scSum && (dt == scFloat32 || dt == scBfloat16 || dt == scInt64)) counts.push_back(kBig);
        for (size_t n : counts)
          for (bool inPlace : {false, true}) {
            cases.push_back({algo, dt, op, n, inPlace});
            ex.get(dt, op, P, n);
          }
      }
  CrossRank xr(P);
  runOnDevice(P, [&](scComm_t comm, int rank, cudaStream_t s) {
    DevBuf send(kBig * 8), recv(kBig * 8);
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label());
      const size_t bytes = c.count * dtest::elemSize(c.dt);
      const Bytes in = dtest::makeInput(c.dt, c.op, P, rank, 0, c.count);
      gputest::poison(recv.get(), bytes, s);
      upload(send.get(), in.data(), bytes, s);
      char* out = c.inPlace ? send.get() : recv.get();
      const scResult_t r = scAllReduce(send.get(), out, c.count, c.dt, c.op, c.algo, comm, s);
      ASSERT_EQ(r, scSuccess) << scGetLastError(comm);  // peers may now wait until their deadline
      const Bytes got = download(out, bytes, s);
      const std::string diff = dtest::firstMismatch(got.data(), ex.m.at({int(c.dt), int(c.op), c.count}).data(),
                                                    c.count, dtest::elemSize(c.dt));
      EXPECT_TRUE(diff.empty()) << diff;
      if (!c.inPlace) EXPECT_EQ(download(send.get(), bytes, s), in) << "sendbuf modified";
      xr.d[size_t(rank)].push_back(dtest::digest(got.data(), bytes));
    }
  });
  xr.verify();
}

TEST_P(DeviceLocal, ReduceScatter) {
  SC_REQUIRE_GPU();
  const int P = GetParam();
  std::vector<Case> cases;
  Expect ex;
  for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner})
    for (scDataType_t dt : dtest::kAllTypes)
      for (scRedOp_t op : dtest::kAllOps) {
        std::vector<size_t> counts = dtest::smallCounts(P);
        if (op == scSum && dt == scFloat32) counts.push_back((size_t(1) << 17) + 3);
        for (size_t n : counts)
          for (bool inPlace : {false, true}) {
            cases.push_back({algo, dt, op, n, inPlace});
            ex.get(dt, op, P, n * P);
          }
      }
  runOnDevice(P, [&](scComm_t comm, int rank, cudaStream_t s) {
    const size_t cap = ((size_t(1) << 17) + 3) * P * 8;
    DevBuf send(cap), recv(cap);
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label());
      const size_t esz = dtest::elemSize(c.dt), bytes = c.count * esz;
      const Bytes in = dtest::makeInput(c.dt, c.op, P, rank, 0, c.count * P);
      gputest::poison(recv.get(), bytes, s);
      upload(send.get(), in.data(), in.size(), s);
      char* out = c.inPlace ? send.get() + rank * bytes : recv.get();
      const scResult_t r = scReduceScatter(send.get(), out, c.count, c.dt, c.op, c.algo, comm, s);
      ASSERT_EQ(r, scSuccess) << scGetLastError(comm);
      const Bytes got = download(out, bytes, s);
      const Bytes& want = ex.m.at({int(c.dt), int(c.op), c.count * P});
      const std::string diff = dtest::firstMismatch(got.data(), want.data() + rank * bytes, c.count, esz);
      EXPECT_TRUE(diff.empty()) << diff;
      if (!c.inPlace) EXPECT_EQ(download(send.get(), in.size(), s), in) << "sendbuf modified";
    }
  });
}

TEST_P(DeviceLocal, AllGather) {
  SC_REQUIRE_GPU();
  const int P = GetParam();
  std::vector<Case> cases;
  for (scAlgo_t algo : {scAlgoRing, scAlgoRecDbl})
    for (scDataType_t dt : {scInt8, scFloat16, scFloat32, scFloat64}) {
      std::vector<size_t> counts = dtest::smallCounts(P);
      counts.push_back((size_t(1) << 17) + 3);
      for (size_t n : counts)
        for (bool inPlace : {false, true}) cases.push_back({algo, dt, scSum, n, inPlace});
    }
  CrossRank xr(P);
  runOnDevice(P, [&](scComm_t comm, int rank, cudaStream_t s) {
    const size_t cap = ((size_t(1) << 17) + 3) * P * 8;
    DevBuf send(cap), recv(cap);
    uint64_t salt = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label());
      const size_t bytes = c.count * dtest::elemSize(c.dt);
      Bytes want;
      for (int q = 0; q < P; ++q) {
        const Bytes b = dtest::makePayload(q, bytes, salt);
        want.insert(want.end(), b.begin(), b.end());
      }
      const Bytes mine(want.begin() + rank * bytes, want.begin() + (rank + 1) * bytes);
      gputest::poison(recv.get(), bytes * P, s);
      char* in = c.inPlace ? recv.get() + rank * bytes : send.get();
      upload(in, mine.data(), bytes, s);
      const scResult_t r = scAllGather(in, recv.get(), c.count, c.dt, c.algo, comm, s);
      ASSERT_EQ(r, scSuccess) << scGetLastError(comm);
      const Bytes got = download(recv.get(), bytes * P, s);
      EXPECT_TRUE(got == want) << dtest::firstMismatch(got.data(), want.data(), bytes * P, 1);
      xr.d[size_t(rank)].push_back(dtest::digest(got.data(), got.size()));
      ++salt;
    }
  });
  xr.verify();
}

INSTANTIATE_TEST_SUITE_P(P, DeviceLocal, testing::ValuesIn(kPs),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

// Same schedule, same counters as on host: ring and Rabenseifner send exactly
// 2(P-1)/P * S bytes per rank for power-of-two P and count divisible by P;
// and, as a planned call, one meeting of the ranks per call, no host wait.
TEST(DeviceLocalTraffic, BandwidthOptimal) {
  SC_REQUIRE_GPU();
  for (int P : {2, 4, 8}) {
    const size_t count = 4096 * size_t(P), S = count * 4;
    runOnDevice(P, [&](scComm_t comm, int rank, cudaStream_t s) {
      DevBuf buf(S);
      const Bytes in = dtest::makeInput(scFloat32, scSum, P, rank, 0, count);
      for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner}) {
        upload(buf.get(), in.data(), S, s);
        ASSERT_EQ(scCommResetStats(comm), scSuccess);
        ASSERT_EQ(scAllReduce(buf.get(), buf.get(), count, scFloat32, scSum, algo, comm, s), scSuccess)
            << scGetLastError(comm);
        scStats_t st;
        ASSERT_EQ(scCommGetStats(comm, &st), scSuccess);
        EXPECT_EQ(st.bytesSent, 2 * (P - 1) * S / P) << dtest::algoStr(algo) << " P=" << P;
        EXPECT_EQ(st.bytesRecv, 2 * (P - 1) * S / P) << dtest::algoStr(algo) << " P=" << P;
        EXPECT_EQ(st.rendezvous, 1u) << "a planned call meets once: " << dtest::algoStr(algo) << " P=" << P;
        EXPECT_EQ(st.hostSyncs, 0u) << dtest::algoStr(algo) << " P=" << P;
        const Bytes got = download(buf.get(), S, s);
        EXPECT_EQ(got, dtest::makeExpected(scFloat32, scSum, P, 0, count));
      }
    });
  }
}

// Several GPUs: ranks alternate between devices 0 and 1 (peer copies).
TEST(DeviceLocalMultiGpu, AllReduceAcrossDevices) {
  SC_REQUIRE_GPU();
  if (sctest::gpuCount() < 2) GTEST_SKIP() << "needs 2 GPUs, " << sctest::gpuCount() << " present";
  const int P = 4;
  const Bytes want = dtest::makeExpected(scFloat32, scSum, P, 0, kBig);
  runOnDevice(P,
              [&](scComm_t comm, int rank, cudaStream_t s) {
                DevBuf send(kBig * 4, rank % 2), recv(kBig * 4, rank % 2);
                const Bytes in = dtest::makeInput(scFloat32, scSum, P, rank, 0, kBig);
                for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl}) {
                  upload(send.get(), in.data(), in.size(), s);
                  ASSERT_EQ(scAllReduce(send.get(), recv.get(), kBig, scFloat32, scSum, algo, comm, s), scSuccess)
                      << scGetLastError(comm);
                  EXPECT_TRUE(download(recv.get(), in.size(), s) == want) << dtest::algoStr(algo);
                }
              },
              {0, 1, 0, 1});
}

TEST(DeviceLocalErrors, WrongMemoryKind) {
  SC_REQUIRE_GPU();
  // Host pointer on a device communicator: rejected on every rank before any
  // message; the communicator stays usable.
  runOnDevice(2, [&](scComm_t comm, int rank, cudaStream_t s) {
    std::vector<float> host(64, 1.0f);
    DevBuf dev(64 * 4);
    EXPECT_EQ(scAllReduce(host.data(), dev.get(), 64, scFloat32, scSum, scAlgoRing, comm, s), scInvalidArgument);
    EXPECT_NE(std::string(scGetLastError(comm)).find("host memory"), std::string::npos) << scGetLastError(comm);
    EXPECT_EQ(scAllReduce(dev.get(), host.data(), 64, scFloat32, scSum, scAlgoRing, comm, s), scInvalidArgument);
    EXPECT_EQ(scAllGather(host.data(), dev.get(), 32, scFloat32, scAlgoRing, comm, s), scInvalidArgument);
    // native on one device is the direct kernel (direct_test.cpp).
    const Bytes in = dtest::makeInput(scFloat32, scSum, 2, rank, 0, 64);
    upload(dev.get(), in.data(), in.size(), s);
    ASSERT_EQ(scAllReduce(dev.get(), dev.get(), 64, scFloat32, scSum, scAlgoRing, comm, s), scSuccess)
        << scGetLastError(comm);
    EXPECT_EQ(download(dev.get(), in.size(), s), dtest::makeExpected(scFloat32, scSum, 2, 0, 64));
  });
  // Device pointer on a host communicator.
  DevBuf dev(64 * 4);
  std::vector<float> host(64);
  scComm_t comm = nullptr;
  ASSERT_EQ(scCommInitLocal(&comm, 1, nullptr, nullptr), scSuccess);
  EXPECT_EQ(scAllReduce(dev.get(), host.data(), 64, scFloat32, scSum, scAlgoRing, comm, nullptr), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(comm)).find("device memory"), std::string::npos) << scGetLastError(comm);
  scCommDestroy(comm);
  // A device that does not exist.
  const int bad[2] = {0, sctest::gpuCount()};
  scComm_t two[2] = {nullptr, nullptr};
  EXPECT_EQ(scCommInitLocal(two, 2, bad, nullptr), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("does not exist"), std::string::npos) << scGetLastError(nullptr);
}

// Without a device (CI), asking for device ranks fails at init with a clear
// CUDA error instead of crashing later. (With a device this case cannot arise.)
TEST(DeviceLocalErrors, NoDeviceFailsCleanly) {
  if (sctest::gpuCount() > 0) GTEST_SKIP() << "a CUDA device is present";
  const int devices[2] = {0, 0};
  scComm_t comms[2] = {nullptr, nullptr};
  EXPECT_EQ(scCommInitLocal(comms, 2, devices, nullptr), scCudaError);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("CUDA"), std::string::npos) << scGetLastError(nullptr);
  EXPECT_EQ(comms[0], nullptr);
}

}  // namespace
