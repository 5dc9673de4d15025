// Shared by the nccl-transport suites (over MPI: nccl_test.cpp; from a unique
// id: nccl_id_test.cpp; both: nccl_pipeline_test.cpp): P ranks from one
// unique id as threads of this process, and the allreduce grid: every dtype x
// op x count x algorithm, out of place and in place, on device memory, exact
// against dense_data's expected result, bit for bit.
#pragma once

#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

#include "dense/dense_data.h"
#include "gpu/gpu_util.h"

namespace gputest {

inline bool isFloat(scDataType_t dt) {
  return dt == scFloat16 || dt == scFloat32 || dt == scFloat64 || dt == scBfloat16;
}

// P ranks from one id: rank r on devices[r] (-1: the thread's current device,
// made GPU r first), with cfg but for its device. Init is collective, so each
// rank creates its communicator and runs body(comm, rank, device) on its own
// thread; the communicator is destroyed after.
inline void ncclRunFromId(int P, const std::vector<int>& devices, const scConfig_t& cfg,
                          const std::function<void(scComm_t, int, int)>& body) {
  scUniqueId id;
  ASSERT_EQ(scGetUniqueId(&id), scSuccess) << scGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < P; ++r)
    threads.emplace_back([&, r] {
      const int dev = devices[r] >= 0 ? devices[r] : r;
      if (devices[r] < 0 && cudaSetDevice(dev) != cudaSuccess) {
        ADD_FAILURE() << "rank " << r << ": cudaSetDevice(" << dev << ") failed";
        return;
      }
      scConfig_t mine = cfg;
      mine.device = devices[r];
      scComm_t comm = nullptr;
      const scResult_t rc = scCommInitRank(&comm, P, id, r, &mine);
      if (rc != scSuccess) {
        ADD_FAILURE() << "rank " << r << ": scCommInitRank: " << scGetLastError(nullptr);
        return;
      }
      guarded([&](scComm_t c, int rank) { body(c, rank, dev); })(comm, r);
      EXPECT_EQ(scCommDestroy(comm), scSuccess) << scGetLastError(nullptr);
    });
  for (auto& t : threads) t.join();
}

// Rank `rank` of P on `device`, counts {1, 1000, cap}.
inline void ncclAllReduceGrid(scComm_t comm, int rank, int P, int device, size_t cap,
                              const std::vector<scRedOp_t>& ops) {
  using dtest::Bytes;
  Stream s(device);
  DevBuf send(cap * 8, device), recv(cap * 8, device);
  for (scDataType_t dt : {scInt32, scInt64, scUint8, scFloat16, scFloat32, scFloat64, scBfloat16})
    for (scRedOp_t op : ops)
      for (size_t n : {size_t(1), size_t(1000), cap}) {
        const size_t esz = dtest::elemSize(dt);
        const Bytes in = dtest::makeInput(dt, op, P, rank, 0, n);
        const Bytes want = dtest::makeExpected(dt, op, P, 0, n);
        for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative, scAlgoAuto})
          for (bool inPlace : {false, true}) {
            // NCCL's own integer avg rounding is NCCL's business; ours is tested on the schedules.
            if (algo == scAlgoNative && op == scAvg && !isFloat(dt) && P > 1) continue;
            SCOPED_TRACE(testing::Message() << dtest::algoStr(algo) << " " << dtest::typeStr(dt) << " "
                                            << dtest::opStr(op) << " n=" << n << (inPlace ? " in-place" : ""));
            poison(recv.get(), n * esz, s.get());
            upload(send.get(), in.data(), in.size(), s.get());
            char* out = inPlace ? send.get() : recv.get();
            ASSERT_EQ(scAllReduce(send.get(), out, n, dt, op, algo, comm, s), scSuccess) << scGetLastError(comm);
            const Bytes got = download(out, in.size(), s.get());
            EXPECT_TRUE(got == want) << dtest::firstMismatch(got.data(), want.data(), n, esz);
          }
      }
}

// Reduce-scatter and allgather of n elements per rank of `dt` (sum), every
// algorithm that implements them, exact.
inline void ncclScatterGather(scComm_t comm, int rank, int P, int device, scDataType_t dt, size_t n = 4099) {
  using dtest::Bytes;
  const size_t esz = dtest::elemSize(dt);
  Stream s(device);
  DevBuf send(n * P * esz, device), recv(n * P * esz, device);
  const Bytes whole = dtest::makeExpected(dt, scSum, P, 0, n * P);
  for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoNative, scAlgoAuto}) {
    SCOPED_TRACE(testing::Message() << "reduce-scatter " << dtest::algoStr(algo));
    const Bytes in = dtest::makeInput(dt, scSum, P, rank, 0, n * P);
    upload(send.get(), in.data(), in.size(), s.get());
    ASSERT_EQ(scReduceScatter(send.get(), recv.get(), n, dt, scSum, algo, comm, s), scSuccess) << scGetLastError(comm);
    const Bytes got = download(recv.get(), n * esz, s.get());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), whole.begin() + rank * n * esz));
  }
  for (scAlgo_t algo : {scAlgoRing, scAlgoRecDbl, scAlgoNative, scAlgoAuto}) {
    SCOPED_TRACE(testing::Message() << "allgather " << dtest::algoStr(algo));
    Bytes want;
    for (int q = 0; q < P; ++q) {
      const Bytes b = dtest::makePayload(q, n * esz, 7);
      want.insert(want.end(), b.begin(), b.end());
    }
    upload(send.get(), want.data() + rank * n * esz, n * esz, s.get());
    ASSERT_EQ(scAllGather(send.get(), recv.get(), n, dt, algo, comm, s), scSuccess) << scGetLastError(comm);
    EXPECT_TRUE(download(recv.get(), want.size(), s.get()) == want);
  }
  EXPECT_EQ(scBarrier(comm, s), scSuccess) << scGetLastError(comm);
}

}  // namespace gputest
