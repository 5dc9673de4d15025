#include "sparse_check.h"

#include <vector>

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sptest {

const scSparseAlgo_t kAllAlgos[6] = {scSparseAuto,         scSsarRecDbl,      scSsarSplitAllGather,
                                     scDsarSplitAllGather, scDsarEarlySwitch, scSparseDense};

std::vector<int> gridP(std::vector<int> local) {
  if (sctest::mode() == sctest::Mode::Mpi) return {sctest::mpiWorldSize()};
  return local;
}

std::string describe(const Call& c) {
  std::ostringstream os;
  os << scSparseAlgoName(c.algo) << (c.sparseOut ? " sparse-out" : " dense-out") << " "
     << (c.it == scIndexU64 ? "u64" : "u32") << " " << typeStr(c.dt) << (c.op == scAvg ? " avg" : " sum")
     << " N=" << c.N;
  return os.str();
}

bool sameOnAllRanks(scComm_t comm, uint64_t value) {
  int P = 0, onDevice = 0;
  scCommSize(comm, &P);
  scCommIsDevice(comm, &onDevice);
  std::vector<uint64_t> all(P, 0);
  scResult_t rc;
  if (!onDevice) {
    rc = scAllGather(&value, all.data(), 1, scUint64, scAlgoRing, comm, nullptr);
  } else {
#ifdef SPARCOLL_HAVE_CUDA
    // A device communicator takes device buffers: stage the digests.
    uint64_t* d = nullptr;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), (P + 1) * sizeof(uint64_t)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, &value, sizeof value, cudaMemcpyHostToDevice), cudaSuccess);
    rc = scAllGather(d, d + 1, 1, scUint64, scAlgoRing, comm, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(all.data(), d + 1, P * sizeof(uint64_t), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(d);
#else
    rc = scInvalidUsage;
#endif
  }
  EXPECT_EQ(rc, scSuccess) << scGetLastError(comm);
  for (uint64_t v : all)
    if (v != value) return false;
  return true;
}

bool checkCall(scComm_t comm, int rank, const Call& c, const Input& in, const std::vector<uint8_t>& want,
               scSparseResult_t result) {
  SCOPED_TRACE(describe(c));
  const std::vector<uint8_t> idx = packIndices(in.idx, c.it), val = packValues(in.val, c.dt);
  const size_t esz = typeSize(c.dt);
  std::string err;
  uint64_t dig = 0;
  scResult_t rc;
  if (!c.sparseOut) {
    std::vector<uint8_t> out(c.N * esz, 0xA5);  // garbage: every element must be written
    rc = scSparseAllReduceEx(idx.data(), val.data(), in.idx.size(), c.N, c.it, c.dt, c.op, c.algo, c.opts, out.data(),
                             comm, nullptr);
    if (rc == scSuccess) {
      err = compareDense(out.data(), want, c.N, c.dt);
      dig = digest(out.data(), out.size());
    }
  } else {
    rc = scSparseAllReduceToSparse(idx.data(), val.data(), in.idx.size(), c.N, c.it, c.dt, c.op, c.algo, c.opts, result,
                                   comm, nullptr);
    if (rc == scSuccess) {
      int dense = -1;
      size_t nnz = 0, dim = 0;
      const void *ri = nullptr, *rv = nullptr;
      scSparseAlgo_t used = scSparseAuto;
      EXPECT_EQ(scSparseResultIsDense(result, &dense), scSuccess);
      EXPECT_EQ(scSparseResultNnz(result, &nnz), scSuccess);
      EXPECT_EQ(scSparseResultDim(result, &dim), scSuccess);
      EXPECT_EQ(scSparseResultIndices(result, &ri), scSuccess);
      EXPECT_EQ(scSparseResultValues(result, &rv), scSuccess);
      EXPECT_EQ(scSparseResultAlgo(result, &used), scSuccess);
      EXPECT_EQ(dim, c.N);
      EXPECT_NE(used, scSparseAuto);
      if (c.algo != scSparseAuto) EXPECT_EQ(used, c.algo);
      if (dense) {
        EXPECT_EQ(nnz, c.N);
        EXPECT_EQ(ri, nullptr);
        err = compareDense(rv, want, c.N, c.dt);
        dig = digest(rv, c.N * esz) ^ 1;
      } else {
        const size_t isz = c.it == scIndexU64 ? 8 : 4;
        err = compareSparse(ri, rv, nnz, c.it, want, c.N, c.dt);
        dig = digest(ri, nnz * isz) * 31 + digest(rv, nnz * esz);
      }
    }
  }
  EXPECT_EQ(rc, scSuccess) << "rank " << rank << ": " << scGetLastError(comm);
  EXPECT_EQ(err, "") << "rank " << rank;
  const bool same = sameOnAllRanks(comm, rc == scSuccess ? dig : uint64_t(rank) + 1);
  EXPECT_TRUE(same) << "rank " << rank << ": results differ across ranks";
  return rc == scSuccess && err.empty() && same;
}

}  // namespace sptest
