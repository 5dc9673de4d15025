// Device-local ranks spread over two GPUs. A message between GPUs is a
// cudaMemcpyAsync that goes peer to peer when cudaDeviceCanAccessPeer allows
// it (the library enables peer access once per pair) and is staged by CUDA
// through the host otherwise: a different path. The test runs on a pair of
// GPUs without peer access in either direction when the machine has one;
// when every pair has it (NVLink/NVSwitch machines), it runs on GPUs 0 and 1
// and says in its output (and the test property copy_path) that it exercised
// the peer path: peer access cannot be withheld from a pair whose hardware
// offers it, so the staged path is not imitated. Needs 2 GPUs.
#include <iostream>

#include "common/harness.h"
#include "dense/dense_data.h"
#include "dsop/dsop_util.h"
#include "gpu/gpu_util.h"
#include "sparse/sparse_util.h"

namespace {

using dtest::Bytes;
using gputest::DevBuf;
using gputest::download;
using gputest::upload;

struct Pair {
  int a, b;
  bool peer;  // peer access in both directions
};

// The first pair lacking peer access in some direction, else (0, 1) with it.
Pair choosePair() {
  const int n = sctest::gpuCount();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      int ij = 0, ji = 0;
      GPU_CHECK(cudaDeviceCanAccessPeer(&ij, i, j));
      GPU_CHECK(cudaDeviceCanAccessPeer(&ji, j, i));
      if (!ij || !ji) return {i, j, false};
    }
  return {0, 1, true};
}

TEST(MultiGpu, LocalRanksAcrossTwoGpus) {
  SC_REQUIRE_GPU();
  SC_REQUIRE_GPUS(2);
  const Pair pair = choosePair();
  const char* path = pair.peer ? "peer" : "staged";
  RecordProperty("copy_path", path);
  std::cout << "GPUs " << pair.a << " and " << pair.b << ": "
            << (pair.peer ? "every GPU pair has peer access, so this run exercises the peer-to-peer copy path"
                          : "no peer access between them: copies are staged through the host")
            << std::endl;
  const int P = 4;  // ranks alternate between the two GPUs: every ring step crosses
  const std::vector<int> devices = {pair.a, pair.b, pair.a, pair.b};
  scConfig_t cfg = sctest::testConfig();
  cfg.pipelineBytes = 256 << 10;  // several slices per block
  const size_t count = (size_t(1) << 20) + 3, bytes = count * 4;
  // The sparse and DSOP references, shared by the ranks.
  const uint64_t N = 100003;
  const std::vector<sptest::Input> sp = sptest::makeAll(sptest::Dist::Uniform, N, sptest::kFor(N, 0.02), P, 5, false);
  const std::vector<uint8_t> spWant = sptest::expectedDense(sp, N, scFloat32, scSum);
  const size_t dn = 301, dm = 257;
  const std::vector<double> dsopWant = dsoptest::reference(P, dn, dm);
  gputest::runOnDevices(
      P, cfg,
      [&](scComm_t comm, int rank, cudaStream_t s) {
        SCOPED_TRACE(path);
        DevBuf send(bytes * P, devices[rank]), recv(bytes * P, devices[rank]);
        const Bytes in = dtest::makeInput(scFloat32, scSum, P, rank, 0, count * P);
        const Bytes whole = dtest::makeExpected(scFloat32, scSum, P, 0, count * P);
        for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl}) {
          SCOPED_TRACE(testing::Message() << "allreduce " << dtest::algoStr(algo));
          upload(send.get(), in.data(), in.size(), s);
          gputest::poison(recv.get(), in.size(), s);
          SC_OK(comm, scAllReduce(send.get(), recv.get(), count * P, scFloat32, scSum, algo, comm, s));
          EXPECT_TRUE(download(recv.get(), in.size(), s) == whole);
        }
        for (scAlgo_t algo : {scAlgoRing, scAlgoRabenseifner}) {
          SCOPED_TRACE(testing::Message() << "reduce-scatter " << dtest::algoStr(algo));
          upload(send.get(), in.data(), in.size(), s);
          SC_OK(comm, scReduceScatter(send.get(), recv.get(), count, scFloat32, scSum, algo, comm, s));
          EXPECT_TRUE(download(recv.get(), bytes, s) ==
                      Bytes(whole.begin() + rank * bytes, whole.begin() + (rank + 1) * bytes));
        }
        Bytes gathered;
        for (int q = 0; q < P; ++q) {
          const Bytes b = dtest::makePayload(q, bytes, 3);
          gathered.insert(gathered.end(), b.begin(), b.end());
        }
        for (scAlgo_t algo : {scAlgoRing, scAlgoRecDbl}) {
          SCOPED_TRACE(testing::Message() << "allgather " << dtest::algoStr(algo));
          upload(send.get(), gathered.data() + rank * bytes, bytes, s);
          SC_OK(comm, scAllGather(send.get(), recv.get(), count, scFloat32, algo, comm, s));
          EXPECT_TRUE(download(recv.get(), bytes * P, s) == gathered);
        }
        for (scAlgo_t algo : {scAlgoBinomial, scAlgoScatterAllGather}) {
          SCOPED_TRACE(testing::Message() << "broadcast " << dtest::algoStr(algo));
          const int root = 1;  // on the second GPU
          const Bytes src = dtest::makePayload(root, bytes, 4);
          if (rank == root) upload(recv.get(), src.data(), bytes, s);
          else gputest::poison(recv.get(), bytes, s);
          SC_OK(comm, scBroadcast(recv.get(), count, scFloat32, root, algo, comm, s));
          EXPECT_TRUE(download(recv.get(), bytes, s) == src);
        }
        // Sparse allreduce, every algorithm, dense result.
        const std::vector<uint8_t> si = sptest::packIndices(sp[rank].idx, scIndexU32);
        const std::vector<uint8_t> sv = sptest::packValues(sp[rank].val, scFloat32);
        DevBuf di(si.size() + 1, devices[rank]), dv(sv.size() + 1, devices[rank]);
        upload(di.get(), si.data(), si.size(), s);
        upload(dv.get(), sv.data(), sv.size(), s);
        for (scSparseAlgo_t algo : {scSparseAuto, scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather,
                                    scDsarEarlySwitch, scSparseDense}) {
          SCOPED_TRACE(scSparseAlgoName(algo));
          SC_OK(comm, scSparseAllReduce(di.get(), dv.get(), sp[rank].idx.size(), N, scIndexU32, scFloat32, scSum, algo,
                                        recv.get(), comm, s));
          EXPECT_EQ(sptest::compareDense(download(recv.get(), N * 4, s).data(), spWant, N, scFloat32), "");
        }
        // DSOP, every algorithm.
        const std::vector<char> a = dsoptest::encode(dsoptest::vecA(rank, dn), scFloat32);
        const std::vector<char> b = dsoptest::encode(dsoptest::vecB(rank, dm), scFloat32);
        DevBuf da(a.size(), devices[rank]), db(b.size(), devices[rank]);
        upload(da.get(), a.data(), a.size(), s);
        upload(db.get(), b.data(), b.size(), s);
        for (scDsopAlgo_t algo : dsoptest::kAlgos) {
          SCOPED_TRACE(scDsopAlgoName(algo));
          gputest::poison(recv.get(), dn * dm * 4, s);
          SC_OK(comm, scDsop(da.get(), dn, db.get(), dm, recv.get(), scFloat32, algo, comm, s));
          const Bytes G = download(recv.get(), dn * dm * 4, s);
          EXPECT_EQ(dsoptest::compare(dsoptest::decodeOut(G.data(), dn * dm, scFloat32), dsopWant, dm), "");
        }
      },
      devices);
}

}  // namespace
