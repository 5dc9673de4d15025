// Work on non-blocking streams (cudaStreamNonBlocking: they do not wait for
// the legacy default stream, and neither do torch's side streams) with sizes
// that grow, so a scratch buffer is replaced in the middle of a sequence:
// every dense collective and algorithm, the sparse allreduce (dense and
// sparse results) and top-k (every method, fixed and variable output, error
// feedback). Before each size the stream is held busy by a sleeping host
// function and the calls of that size are queued behind it without a host
// wait in between, so a buffer is outgrown while work that may read it is
// still pending: the library must wait for that work before freeing it (a
// device-wide sync does not cover non-blocking streams). Every call's result
// is checked afterwards, each in its own output buffer.
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <thread>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "gpu/gpu_util.h"
#include "sparse/sparse_util.h"
#include "topk/topk_util.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::upload;

constexpr unsigned kNonBlocking = cudaStreamNonBlocking;

// Holds `s` busy for ms milliseconds: what is enqueued next waits behind it.
void stall(cudaStream_t s, int ms = 30) {
  auto sleepy = [](void* p) { std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<intptr_t>(p))); };
  GPU_CHECK(cudaLaunchHostFunc(s, sleepy, reinterpret_cast<void*>(intptr_t(ms))));
}

scConfig_t streamConfig() {
  scConfig_t c = sctest::testConfig();
  c.pipelineBytes = 256 << 10;  // ring slices grow up to here, the other slots with the count
  return c;
}

// Every dense collective and algorithm of sparcoll's own schedules (native on
// one device is the direct kernel: direct_test.cpp), one output buffer per call.
struct DenseCall {
  enum Kind { AllReduce, ReduceScatter, AllGather, Broadcast } kind;
  scAlgo_t algo;
};
const DenseCall kDense[] = {{DenseCall::AllReduce, scAlgoRing},
                            {DenseCall::AllReduce, scAlgoRabenseifner},
                            {DenseCall::AllReduce, scAlgoRecDbl},
                            {DenseCall::ReduceScatter, scAlgoRing},
                            {DenseCall::ReduceScatter, scAlgoRabenseifner},
                            {DenseCall::AllGather, scAlgoRing},
                            {DenseCall::AllGather, scAlgoRecDbl},
                            {DenseCall::Broadcast, scAlgoBinomial},
                            {DenseCall::Broadcast, scAlgoScatterAllGather}};
const size_t kDenseCounts[] = {1000, 70001, (size_t(1) << 20) + 3, (size_t(1) << 21) + 5};

class NonBlockingDense : public testing::TestWithParam<int> {};

TEST_P(NonBlockingDense, GrowingSizesEveryAlgorithm) {
  SC_REQUIRE_GPU();
  const int P = GetParam();
  const size_t maxCount = kDenseCounts[std::size(kDenseCounts) - 1], esz = 4;
  gputest::runOnDevices(
      P, streamConfig(),
      [&](scComm_t comm, int rank, cudaStream_t s) {
        DevBuf send(maxCount * P * esz);
        std::vector<std::unique_ptr<DevBuf>> out;
        for (size_t j = 0; j < std::size(kDense); ++j) out.push_back(std::make_unique<DevBuf>(maxCount * P * esz));
        uint64_t salt = 0;
        for (size_t count : kDenseCounts) {
          const size_t bytes = count * esz;
          const int root = int(salt % uint64_t(P));
          // Inputs first (a pageable upload waits for the stream), then the stall.
          const Bytes arIn = dtest::makeInput(scFloat32, scSum, P, rank, 0, count);
          const Bytes rsIn = dtest::makeInput(scFloat32, scSum, P, rank, 0, count * P);
          const Bytes mine = dtest::makePayload(rank, bytes, salt), rootData = dtest::makePayload(root, bytes, salt);
          upload(send.get(), rsIn.data(), rsIn.size(), s);  // reduce-scatter's input; the others get their own copy
          for (size_t j = 0; j < std::size(kDense); ++j) {
            gputest::poison(out[j]->get(), bytes * P, s);
            if (kDense[j].kind == DenseCall::Broadcast && rank == root)
              upload(out[j]->get(), rootData.data(), bytes, s);
            if (kDense[j].kind == DenseCall::AllGather) upload(out[j]->get() + rank * bytes, mine.data(), bytes, s);
            if (kDense[j].kind == DenseCall::AllReduce) upload(out[j]->get(), arIn.data(), bytes, s);
          }
          GPU_CHECK(cudaStreamSynchronize(s));
          stall(s);
          for (size_t j = 0; j < std::size(kDense); ++j) {
            const DenseCall& c = kDense[j];
            char* o = out[j]->get();
            scResult_t r = scSuccess;
            switch (c.kind) {  // in place, so nothing but the call touches the buffer
              case DenseCall::AllReduce: r = scAllReduce(o, o, count, scFloat32, scSum, c.algo, comm, s); break;
              case DenseCall::ReduceScatter:
                r = scReduceScatter(send.get(), o, count, scFloat32, scSum, c.algo, comm, s);
                break;
              case DenseCall::AllGather: r = scAllGather(o + rank * bytes, o, count, scFloat32, c.algo, comm, s); break;
              case DenseCall::Broadcast: r = scBroadcast(o, count, scFloat32, root, c.algo, comm, s); break;
            }
            ASSERT_EQ(r, scSuccess) << dtest::algoStr(c.algo) << " count " << count << ": " << scGetLastError(comm);
          }
          const Bytes arWant = dtest::makeExpected(scFloat32, scSum, P, 0, count);
          const Bytes rsAll = dtest::makeExpected(scFloat32, scSum, P, 0, count * P);
          const Bytes rsWant(rsAll.begin() + rank * bytes, rsAll.begin() + (rank + 1) * bytes);
          Bytes agWant;
          for (int q = 0; q < P; ++q) {
            const Bytes b = dtest::makePayload(q, bytes, salt);
            agWant.insert(agWant.end(), b.begin(), b.end());
          }
          for (size_t j = 0; j < std::size(kDense); ++j) {
            const DenseCall& c = kDense[j];
            SCOPED_TRACE(testing::Message() << "call " << j << " (" << dtest::algoStr(c.algo) << ") count " << count);
            const Bytes& want = c.kind == DenseCall::AllReduce       ? arWant
                                : c.kind == DenseCall::ReduceScatter ? rsWant
                                : c.kind == DenseCall::AllGather     ? agWant
                                                                     : rootData;
            const Bytes got = download(out[j]->get(), want.size(), s);
            EXPECT_TRUE(got == want) << dtest::firstMismatch(got.data(), want.data(), want.size() / esz, esz);
          }
          ++salt;
        }
      },
      {}, kNonBlocking);
}

INSTANTIATE_TEST_SUITE_P(P, NonBlockingDense, testing::Values(2, 3, 4),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

// The sparse allreduce: its index/value arrays, counts and dense fallback live
// in the communicator's scratch, which grows with dim and the densities.
TEST(NonBlockingSparse, GrowingSizesEveryAlgorithm) {
  SC_REQUIRE_GPU();
  const int P = 3;
  const scSparseAlgo_t algos[] = {scSparseAuto,         scSsarRecDbl,      scSsarSplitAllGather,
                                  scDsarSplitAllGather, scDsarEarlySwitch, scSparseDense};
  struct Size {
    uint64_t N;
    double density;
  };
  const Size sizes[] = {{5003, 0.01}, {70001, 0.05}, {(1u << 20) + 7, 0.02}, {(1u << 20) + 7, 0.3}};
  std::vector<std::vector<sptest::Input>> inputs;
  std::vector<std::vector<uint8_t>> wants;
  for (const Size& z : sizes) {
    inputs.push_back(
        sptest::makeAll(sptest::Dist::Uniform, z.N, sptest::kFor(z.N, z.density), P, inputs.size() + 11, false));
    wants.push_back(sptest::expectedDense(inputs.back(), z.N, scFloat32, scSum));
  }
  const uint64_t maxN = (1u << 20) + 7;
  gputest::runOnDevices(
      P, streamConfig(),
      [&](scComm_t comm, int rank, cudaStream_t s) {
        const size_t n = std::size(algos);
        std::vector<std::unique_ptr<DevBuf>> dense;
        std::vector<scSparseResult_t> res(n, nullptr);
        for (size_t j = 0; j < n; ++j) {
          dense.push_back(std::make_unique<DevBuf>(maxN * 4));
          ASSERT_EQ(scSparseResultCreate(comm, &res[j]), scSuccess) << scGetLastError(comm);
        }
        DevBuf idx(maxN * 4), val(maxN * 4);
        for (size_t z = 0; z < std::size(sizes); ++z) {
          const sptest::Input& in = inputs[z][size_t(rank)];
          const uint64_t N = sizes[z].N;
          const std::vector<uint8_t> hi = sptest::packIndices(in.idx, scIndexU32),
                                     hv = sptest::packValues(in.val, scFloat32);
          upload(idx.get(), hi.data(), hi.size(), s);
          upload(val.get(), hv.data(), hv.size(), s);
          for (auto& d : dense) gputest::poison(d->get(), N * 4, s);
          GPU_CHECK(cudaStreamSynchronize(s));
          stall(s);
          for (size_t j = 0; j < n; ++j) {
            SCOPED_TRACE(testing::Message() << scSparseAlgoName(algos[j]) << " N " << N);
            ASSERT_EQ(scSparseAllReduce(idx.get(), val.get(), in.idx.size(), N, scIndexU32, scFloat32, scSum, algos[j],
                                        dense[j]->get(), comm, s),
                      scSuccess)
                << scGetLastError(comm);
            ASSERT_EQ(scSparseAllReduceToSparse(idx.get(), val.get(), in.idx.size(), N, scIndexU32, scFloat32, scSum,
                                                algos[j], nullptr, res[j], comm, s),
                      scSuccess)
                << scGetLastError(comm);
          }
          for (size_t j = 0; j < n; ++j) {
            SCOPED_TRACE(testing::Message() << scSparseAlgoName(algos[j]) << " N " << N);
            const Bytes got = download(dense[j]->get(), N * 4, s);
            EXPECT_EQ(sptest::compareDense(got.data(), wants[z], N, scFloat32), "");
            int isDense = 0;
            size_t nnz = 0;
            const void *ri = nullptr, *rv = nullptr;
            ASSERT_EQ(scSparseResultIsDense(res[j], &isDense), scSuccess);
            ASSERT_EQ(scSparseResultNnz(res[j], &nnz), scSuccess);
            ASSERT_EQ(scSparseResultIndices(res[j], &ri), scSuccess);
            ASSERT_EQ(scSparseResultValues(res[j], &rv), scSuccess);
            const Bytes gv = download(rv, nnz * 4, s);
            if (isDense) {
              EXPECT_EQ(sptest::compareDense(gv.data(), wants[z], N, scFloat32), "");
            } else {
              const Bytes gi = download(ri, nnz * 4, s);
              EXPECT_EQ(sptest::compareSparse(gi.data(), gv.data(), nnz, scIndexU32, wants[z], N, scFloat32), "");
            }
          }
        }
        for (auto r : res) scSparseResultDestroy(r);
      },
      {}, kNonBlocking);
}

// Top-k draws its temporaries from the stream-ordered pool on the caller's
// stream: calls of growing n queued behind pending work, asynchronous ones
// (fixed output, exact, info = NULL) back to back, each against the CPU reference.
TEST(NonBlockingTopk, GrowingSizesEveryMethod) {
  SC_REQUIRE_GPU();
  gputest::Stream stream(0, kNonBlocking);
  const cudaStream_t s = stream.get();
  struct Cfg {
    scTopkMethod_t m;
    size_t bucket;
    scTopkOutput_t out;
  };
  const Cfg cfgs[] = {{scTopkApprox, 512, scTopkVariable},        {scTopkApprox, 4096, scTopkFixedPerBucket},
                      {scTopkApproxAtMost, 2048, scTopkVariable}, {scTopkExact, 512, scTopkVariable},
                      {scTopkThreshold, 512, scTopkVariable},     {scTopkApprox, 700, scTopkFixedPerBucket}};
  for (size_t n : {size_t(1000), size_t(70001), size_t(1) << 20, (size_t(1) << 22) + 3}) {
    SCOPED_TRACE(testing::Message() << "n " << n);
    const tk::Buf v(tk::randomVector(n, n), scFloat32);
    const size_t k = n / 100 + 1;
    DevBuf dv(n * 4);
    upload(dv.get(), v.data(), n * 4, s);
    std::vector<std::unique_ptr<DevBuf>> idx, val;
    std::vector<size_t> cap;
    std::vector<scTopkConfig_t> c;
    std::vector<scTopkInfo_t> info(std::size(cfgs));
    for (const Cfg& f : cfgs) {
      c.push_back(tk::config(f.m, k, f.bucket, 17, n));
      c.back().output = f.out;
      c.back().indexType = c.size() % 2 ? scTopkIndexU64 : scTopkIndexU32;
      size_t cp = 0;
      ASSERT_EQ(scTopkMaxOutput(n, &c.back(), &cp), scSuccess) << scGetLastError(nullptr);
      cap.push_back(cp);
      idx.push_back(std::make_unique<DevBuf>(cp * 8));
      val.push_back(std::make_unique<DevBuf>(cp * 4));
    }
    // Error feedback's state is created before the stall (creation waits for the device).
    scTopkState_t hs = nullptr, ds = nullptr;
    ASSERT_EQ(scTopkStateCreate(&hs, n, scFloat32, -1), scSuccess);
    ASSERT_EQ(scTopkStateCreate(&ds, n, scFloat32, 0), scSuccess) << scGetLastError(nullptr);
    DevBuf fi(k * 4), fv(k * 4);
    stall(s);
    for (size_t j = 0; j < c.size(); ++j) {
      const bool async = c[j].output == scTopkFixedPerBucket || c[j].method == scTopkExact;
      ASSERT_EQ(scTopkSelect(dv.get(), n, scFloat32, &c[j], idx[j]->get(), val[j]->get(), cap[j],
                             async ? nullptr : &info[j], s),
                scSuccess)
          << j << ": " << scGetLastError(nullptr);
      if (async) info[j].nnz = c[j].k;
    }
    const scTopkConfig_t fc = tk::config(scTopkApprox, k, 512, 23);
    scTopkInfo_t dinfo{}, hinfo{};
    ASSERT_EQ(scTopkSelectFeedback(ds, dv.get(), &fc, fi.get(), fv.get(), k, &dinfo, s), scSuccess)
        << scGetLastError(nullptr);
    for (size_t j = 0; j < c.size(); ++j) {
      SCOPED_TRACE(testing::Message() << "config " << j << " " << scTopkMethodName(c[j].method));
      const tk::Sel host = tk::select(v, c[j], cap[j]);
      ASSERT_EQ(info[j].nnz, host.info.nnz);
      const size_t isz = c[j].indexType == scTopkIndexU64 ? 8 : 4;
      const Bytes hi = download(idx[j]->get(), info[j].nnz * isz, s), hv = download(val[j]->get(), info[j].nnz * 4, s);
      const tk::Sel dev = tk::readBack(hi.data(), hv.data(), info[j].nnz, c[j].indexType, scFloat32);
      EXPECT_EQ(dev.idx, host.idx);
      EXPECT_EQ(dev.bits, host.bits);
    }
    std::vector<uint32_t> hidx(k);
    std::vector<float> hval(k);
    ASSERT_EQ(scTopkSelectFeedback(hs, v.data(), &fc, hidx.data(), hval.data(), k, &hinfo, nullptr), scSuccess);
    EXPECT_EQ(dinfo.nnz, hinfo.nnz);
    EXPECT_EQ(dinfo.selected, hinfo.selected);
    const Bytes gi = download(fi.get(), dinfo.nnz * 4, s), gv = download(fv.get(), dinfo.nnz * 4, s);
    EXPECT_EQ(0, std::memcmp(gi.data(), hidx.data(), std::min(dinfo.nnz, hinfo.nnz) * 4)) << "feedback indices";
    EXPECT_EQ(0, std::memcmp(gv.data(), hval.data(), std::min(dinfo.nnz, hinfo.nnz) * 4)) << "feedback values";
    void *hr = nullptr, *dr = nullptr;
    scTopkStateResidual(hs, &hr);
    scTopkStateResidual(ds, &dr);
    EXPECT_EQ(0, std::memcmp(download(dr, n * 4, s).data(), hr, n * 4)) << "feedback residual";
    scTopkStateDestroy(hs);
    scTopkStateDestroy(ds);
  }
}

}  // namespace
