// The nccl transport at P >= 2, one rank per GPU: sparcoll's own schedules
// over ncclSend/ncclRecv (and the native collectives) for the dense
// collectives, the sparse allreduce, DSOP, and TopK SGD's step (top-k with
// error feedback on the device feeding the sparse allreduce). The local binary
// makes P = min(GPUs, 4) ranks from one unique id, threads of this process;
// the _mpi binary runs one rank per process under mpirun. Either way every
// rank needs its own GPU (NCCL refuses two ranks of one communicator on one
// device): the tests skip with "needs N GPUs, M present" where there are too
// few. Exact integer-valued data; every result bit-identical across ranks.
#include <algorithm>
#include <cstring>
#include <functional>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "dsop/dsop_util.h"
#include "gpu/gpu_util.h"
#include "gpu/nccl_grid.h"
#include "sparse/sparse_check.h"
#include "topk/pipeline_trace.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::Stream;
using gputest::upload;

// Ranks this binary runs: the world size under mpirun, else up to 4 GPUs.
int ranks() { return sctest::mode() == sctest::Mode::Mpi ? sctest::mpiWorldSize() : std::min(sctest::gpuCount(), 4); }

#define SC_REQUIRE_NCCL_RANKS(P)                                                                         \
  do {                                                                                                   \
    SC_REQUIRE_GPU();                                                                                    \
    const int need_ = std::max((P), 2);                                                                  \
    if (sctest::gpuCount() < need_)                                                                      \
      GTEST_SKIP() << "needs " << need_ << " GPUs, " << sctest::gpuCount() << " present (one per rank)"; \
  } while (0)

// body(comm, rank, device) on P NCCL ranks, the thread on the rank's GPU.
void runNccl(int P, const std::function<void(scComm_t, int, int)>& body) {
  scConfig_t cfg = sctest::testConfig();
  cfg.transport = scTransportNccl;
  cfg.timeoutSeconds = 120;
  if (sctest::mode() == sctest::Mode::Mpi) {
    sctest::run(P, gputest::guarded([&](scComm_t comm, int rank) {
                  int d = -1;
                  ASSERT_EQ(scCommDevice(comm, &d), scSuccess) << scGetLastError(comm);
                  GPU_CHECK(cudaSetDevice(d));
                  body(comm, rank, d);
                }),
                &cfg);
    return;
  }
  std::vector<int> devices(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) devices[size_t(r)] = r;
  gputest::ncclRunFromId(P, devices, cfg, [&](scComm_t comm, int rank, int dev) {
    GPU_CHECK(cudaSetDevice(dev));  // helpers allocate on the current device
    body(comm, rank, dev);
  });
}

TEST(NcclPipeline, DenseCollectives) {
  const int P = ranks();
  SC_REQUIRE_NCCL_RANKS(P);
  runNccl(P, [P](scComm_t comm, int rank, int dev) {
    gputest::ncclAllReduceGrid(comm, rank, P, dev, 4099 * size_t(P), {scSum, scMax, scAvg});
    gputest::ncclScatterGather(comm, rank, P, dev, scFloat32, (size_t(1) << 18) + 3);
    Stream s(dev);
    const size_t n = (size_t(1) << 20) + 5;
    DevBuf buf(n * 2, dev);
    for (int root = 0; root < P; ++root)
      for (scAlgo_t algo : {scAlgoBinomial, scAlgoScatterAllGather, scAlgoNative, scAlgoAuto}) {
        SCOPED_TRACE(testing::Message() << "broadcast " << dtest::algoStr(algo) << " root " << root);
        const Bytes src = dtest::makePayload(root, n * 2, uint64_t(algo));
        if (rank == root) upload(buf.get(), src.data(), src.size(), s.get());
        else gputest::poison(buf.get(), src.size(), s.get());
        ASSERT_EQ(scBroadcast(buf.get(), n, scBfloat16, root, algo, comm, s), scSuccess) << scGetLastError(comm);
        EXPECT_TRUE(download(buf.get(), src.size(), s.get()) == src);
      }
  });
}

TEST(NcclPipeline, SparseAllReduce) {
  const int P = ranks();
  SC_REQUIRE_NCCL_RANKS(P);
  const uint64_t N = 50021;
  struct Case {
    sptest::Dist d;
    double dens;
    scDataType_t dt;
    scIndexType_t it;
    scRedOp_t op;
  };
  const Case cases[] = {{sptest::Dist::Uniform, 1e-3, scFloat32, scIndexU32, scSum},
                        {sptest::Dist::PowerLaw, 0.05, scFloat16, scIndexU64, scSum},
                        {sptest::Dist::Disjoint, 1.0 / P, scBfloat16, scIndexU32, scSum},
                        {sptest::Dist::Uniform, 0.3, scInt32, scIndexU64, scAvg}};
  std::vector<std::vector<sptest::Input>> inputs;
  std::vector<std::vector<uint8_t>> wants;
  for (const Case& c : cases) {
    inputs.push_back(sptest::makeAll(c.d, N, sptest::kFor(N, c.dens), P, inputs.size() + 40, false));
    wants.push_back(sptest::expectedDense(inputs.back(), N, c.dt, c.op));
  }
  runNccl(P, [&](scComm_t comm, int rank, int dev) {
    Stream s(dev);
    scSparseResult_t res = nullptr;
    ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess) << scGetLastError(comm);
    for (size_t ci = 0; ci < std::size(cases); ++ci) {
      const Case& c = cases[ci];
      const sptest::Input& in = inputs[ci][size_t(rank)];
      const std::vector<uint8_t> hi = sptest::packIndices(in.idx, c.it), hv = sptest::packValues(in.val, c.dt);
      const size_t esz = sptest::typeSize(c.dt), isz = c.it == scIndexU64 ? 8 : 4;
      DevBuf di(hi.size() + 1, dev), dv(hv.size() + 1, dev), out(N * esz, dev);
      upload(di.get(), hi.data(), hi.size(), s.get());
      upload(dv.get(), hv.data(), hv.size(), s.get());
      for (scSparseAlgo_t algo : sptest::kAllAlgos) {
        SCOPED_TRACE(testing::Message() << "case " << ci << " " << scSparseAlgoName(algo));
        gputest::poison(out.get(), N * esz, s.get());
        ASSERT_EQ(scSparseAllReduce(di.get(), dv.get(), in.idx.size(), N, c.it, c.dt, c.op, algo, out.get(), comm, s),
                  scSuccess)
            << scGetLastError(comm);
        const Bytes got = download(out.get(), N * esz, s.get());
        EXPECT_EQ(sptest::compareDense(got.data(), wants[ci], N, c.dt), "") << "rank " << rank;
        EXPECT_TRUE(sptest::sameOnAllRanks(comm, sptest::digest(got.data(), got.size()))) << "rank " << rank;
        ASSERT_EQ(scSparseAllReduceToSparse(di.get(), dv.get(), in.idx.size(), N, c.it, c.dt, c.op, algo, nullptr, res,
                                            comm, s),
                  scSuccess)
            << scGetLastError(comm);
        int isDense = 0;
        size_t nnz = 0;
        const void *ri = nullptr, *rv = nullptr;
        scSparseResultIsDense(res, &isDense);
        scSparseResultNnz(res, &nnz);
        scSparseResultIndices(res, &ri);
        scSparseResultValues(res, &rv);
        const Bytes gv = download(rv, nnz * esz, s.get());
        if (isDense) EXPECT_EQ(sptest::compareDense(gv.data(), wants[ci], N, c.dt), "");
        else
          EXPECT_EQ(sptest::compareSparse(download(ri, nnz * isz, s.get()).data(), gv.data(), nnz, c.it, wants[ci], N,
                                          c.dt),
                    "");
      }
    }
    scSparseResultDestroy(res);
  });
}

TEST(NcclPipeline, Dsop) {
  const int P = ranks();
  SC_REQUIRE_NCCL_RANKS(P);
  runNccl(P, [P](scComm_t comm, int rank, int dev) {
    Stream s(dev);
    for (scDataType_t dt : {scFloat32, scFloat16, scFloat64})
      for (auto [n, m] : {std::pair<size_t, size_t>{size_t(P) + 1, 97}, {1000, 3}, {513, 1029}}) {
        const std::vector<char> a = dsoptest::encode(dsoptest::vecA(rank, n), dt),
                                b = dsoptest::encode(dsoptest::vecB(rank, m), dt);
        const size_t gb = n * m * dsoptest::outSize(dt);
        DevBuf da(a.size(), dev), db(b.size(), dev), G(gb, dev);
        upload(da.get(), a.data(), a.size(), s.get());
        upload(db.get(), b.data(), b.size(), s.get());
        const std::vector<double> want = dsoptest::reference(P, n, m);
        for (scDsopAlgo_t algo : dsoptest::kAlgos) {
          SCOPED_TRACE(testing::Message() << scDsopAlgoName(algo) << " n=" << n << " m=" << m << " dt=" << int(dt));
          gputest::poison(G.get(), gb, s.get());
          SC_OK(comm, scDsop(da.get(), n, db.get(), m, G.get(), dt, algo, comm, s));
          const Bytes got = download(G.get(), gb, s.get());
          EXPECT_EQ(dsoptest::compare(dsoptest::decodeOut(got.data(), n * m, dt), want, m), "");
          EXPECT_TRUE(sptest::sameOnAllRanks(comm, dsoptest::hashBytes(got.data(), got.size())));
        }
      }
    // Sparse inputs: rank q holds every (q+2)-th entry of its vectors.
    const size_t n = 300, m = 120;
    std::vector<std::vector<double>> A(static_cast<size_t>(P), std::vector<double>(n)),
        B(static_cast<size_t>(P), std::vector<double>(m));
    std::vector<uint64_t> ia, ib;
    std::vector<float> va, vb;
    for (int q = 0; q < P; ++q) {
      for (size_t x = size_t(q); x < n; x += size_t(q) + 2)
        A[q][x] = dsoptest::aValue(q, x) ? dsoptest::aValue(q, x) : 1;
      for (size_t y = 2 * size_t(q); y < m; y += size_t(q) + 3)
        B[q][y] = dsoptest::bValue(q, y) ? dsoptest::bValue(q, y) : 2;
    }
    for (size_t x = 0; x < n; ++x) {
      if (A[rank][x] == 0) continue;
      ia.push_back(x);
      va.push_back(float(A[rank][x]));
    }
    for (size_t y = 0; y < m; ++y) {
      if (B[rank][y] == 0) continue;
      ib.push_back(y);
      vb.push_back(float(B[rank][y]));
    }
    DevBuf dia(ia.size() * 8 + 8, dev), dib(ib.size() * 8 + 8, dev), dva(va.size() * 4 + 4, dev),
        dvb(vb.size() * 4 + 4, dev), G(n * m * 4, dev);
    upload(dia.get(), ia.data(), ia.size() * 8, s.get());
    upload(dib.get(), ib.data(), ib.size() * 8, s.get());
    upload(dva.get(), va.data(), va.size() * 4, s.get());
    upload(dvb.get(), vb.data(), vb.size() * 4, s.get());
    const std::vector<double> want = dsoptest::reference(A, B);
    for (scDsopAlgo_t algo : {scDsopAuto, scDsopAllGather, scDsopGRabenseifner}) {
      SCOPED_TRACE(testing::Message() << "sparse " << scDsopAlgoName(algo));
      gputest::poison(G.get(), n * m * 4, s.get());
      SC_OK(comm, scDsopSparse(reinterpret_cast<const uint64_t*>(dia.get()), dva.get(), ia.size(), n,
                               reinterpret_cast<const uint64_t*>(dib.get()), dvb.get(), ib.size(), m, G.get(),
                               scFloat32, algo, comm, s));
      EXPECT_EQ(dsoptest::compare(dsoptest::decodeOut(download(G.get(), n * m * 4, s.get()).data(), n * m, scFloat32),
                                  want, m),
                "");
    }
  });
}

// TopK SGD's step on the GPU: each rank selects from gradient + residual with
// a device state, and its selection goes straight into the sparse allreduce.
// Integer-valued gradients make every sum exact, and the CPU reference selects
// bit for bit what the GPU selects, so the expected sum of what every rank
// sent is recomputed here with host states, for every step.
constexpr size_t kTopkN = 20011;

TEST(NcclPipeline, TopkFeedbackIntoSparseAllReduce) {
  const int P = ranks();
  SC_REQUIRE_NCCL_RANKS(P);
  const int steps = 3;
  std::vector<scTopkConfig_t> cfgs = {tk::config(scTopkApprox, 200, 512, 9), tk::config(scTopkExact, 150),
                                      tk::config(scTopkThreshold, 150, 512, 4), tk::config(scTopkApprox, 300, 2000, 8)};
  cfgs[1].indexType = scTopkIndexU64;
  cfgs[3].output = scTopkFixedPerBucket;
  cfgs[3].indexType = scTopkIndexU64;
  // expected[c][t]: the sum over ranks of what each sent at step t (host states).
  std::vector<std::vector<std::vector<float>>> expected(cfgs.size());
  for (size_t c = 0; c < cfgs.size(); ++c) {
    expected[c].assign(steps, std::vector<float>(kTopkN, 0.0f));
    for (int q = 0; q < P; ++q) {
      const tk::RankTrace tr = tk::pipelineTrace(q, cfgs[c], kTopkN, steps);
      for (int t = 0; t < steps; ++t)
        for (size_t i = 0; i < kTopkN; ++i) expected[c][t][i] += tr.sent[size_t(t)][i];
    }
  }
  const scSparseAlgo_t algos[] = {scSsarRecDbl,      scSsarSplitAllGather, scDsarSplitAllGather,
                                  scDsarEarlySwitch, scSparseDense,        scSparseAuto};
  runNccl(P, [&](scComm_t comm, int rank, int dev) {
    Stream s(dev);
    DevBuf grad(kTopkN * 4, dev), out(kTopkN * 4, dev), idx(kTopkN * 8, dev), val(kTopkN * 4, dev);
    for (size_t c = 0; c < cfgs.size(); ++c) {
      size_t cap = 0;
      ASSERT_EQ(scTopkMaxOutput(kTopkN, &cfgs[c], &cap), scSuccess);
      scTopkState_t st = nullptr;
      ASSERT_EQ(scTopkStateCreate(&st, kTopkN, scFloat32, dev), scSuccess) << scGetLastError(nullptr);
      for (int t = 0; t < steps; ++t) {
        const scSparseAlgo_t algo = algos[(c * steps + size_t(t)) % std::size(algos)];
        SCOPED_TRACE(testing::Message() << scTopkMethodName(cfgs[c].method) << " step " << t << " "
                                        << scSparseAlgoName(algo));
        const std::vector<float> g = tk::pipelineGradient(rank, t, kTopkN);
        upload(grad.get(), g.data(), g.size() * 4, s.get());
        scTopkInfo_t info{};
        ASSERT_EQ(scTopkSelectFeedback(st, grad.get(), &cfgs[c], idx.get(), val.get(), cap, &info, s), scSuccess)
            << scGetLastError(nullptr);
        ASSERT_EQ(scSparseAllReduce(idx.get(), val.get(), info.nnz, kTopkN, cfgs[c].indexType, scFloat32, scSum, algo,
                                    out.get(), comm, s),
                  scSuccess)
            << scGetLastError(comm);
        const Bytes got = download(out.get(), kTopkN * 4, s.get());
        EXPECT_EQ(0, std::memcmp(got.data(), expected[c][t].data(), kTopkN * 4)) << "rank " << rank;
      }
      scTopkStateDestroy(st);
    }
  });
}

}  // namespace
