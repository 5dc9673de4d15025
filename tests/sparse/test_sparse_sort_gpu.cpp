// scSparseSortInput through the device schedules, bit for bit against the host
// communicator (label gpu; skips without a device). The inputs are unsorted,
// with duplicate indices on every rank, and real values of mixed magnitudes,
// so the sums round: the result depends on the order of every addition. The
// contract (sparse.h) fixes that order: duplicates are summed in input order
// (a stable sort, then one left-to-right fold per run), and the schedules sum
// across ranks in their own fixed order, the same on host and device memory.
// So the device result must equal the host result bit for bit, for every
// algorithm, index and value type, dense and sparse results. What the library
// could choose differently on host and device is pinned: the dense allreduce
// (scConfig_t.algo = ring) and the early switch's group size.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "common/harness.h"
#include "sparse_util.h"

namespace sptest {
namespace {

using Bytes = std::vector<uint8_t>;

struct Case {
  scIndexType_t it;
  scDataType_t vt;
  uint64_t N, span;  // indices drawn from [0, span): span < nnz gives many duplicates
  size_t nnz;        // per rank (may exceed N: duplicates are summed first)
  int maxExp;        // values up to 2^maxExp (float16 overflows past 2^15)
};
const Case kCases[] = {{scIndexU32, scFloat32, 20011, 2500, 4000, 24},
                       {scIndexU64, scFloat64, 20011, 20011, 4000, 60},
                       {scIndexU32, scFloat16, 3001, 3001, 4000, 8},  // dense streams (nnz > dim)
                       {scIndexU64, scBfloat16, 50021, 6000, 5000, 30}};
const scSparseAlgo_t kAlgos[] = {scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch,
                                 scSparseDense};

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Rank r's pairs: unsorted indices with duplicates, values m * 2^e with a
// 10-bit mantissa m and exponents spread over [-12, maxExp], either sign.
void makePairs(const Case& c, int r, size_t ci, Bytes* idx, Bytes* val) {
  const size_t isz = c.it == scIndexU64 ? 8 : 4, vsz = typeSize(c.vt);
  idx->assign(c.nnz * isz, 0);
  val->assign(c.nnz * vsz, 0);
  for (size_t j = 0; j < c.nnz; ++j) {
    const uint64_t h = mix((uint64_t(r) << 40) ^ (uint64_t(ci) << 32) ^ j);
    const uint64_t x = h % c.span;
    std::memcpy(idx->data() + j * isz, &x, isz);
    const int e = int((h >> 20) % uint64_t(c.maxExp + 13)) - 12;
    const double m = double(1024 + (h >> 40) % 1024) / 1024.0;
    encode(((h >> 32) & 1 ? -m : m) * std::ldexp(1.0, e), c.vt, val->data() + j * vsz);
  }
}

// What a rank got back: the dense vector, and the sparse result's form.
struct Got {
  Bytes dense;
  int isDense = -1;
  Bytes idx, val;
};
using Key = std::tuple<size_t, size_t, int>;  // case, algorithm, rank

scConfig_t pinnedConfig() {
  scConfig_t c = sctest::testConfig();
  c.algo = scAlgoRing;         // what auto (the dense fallback) runs, on both memories
  c.pipelineBytes = 64 << 10;  // the same slices on both (host and device defaults differ)
  return c;
}

scSparseOptions_t sortOptions() {
  scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
  o.flags = scSparseSortInput;
  o.earlyGroupSize = 2;  // 0 lets the model pick, from the memory kind's costs
  return o;
}

// One rank's calls on `comm`; `dev` = device memory (stream s), else host.
void rankCalls(scComm_t comm, int rank, bool dev, cudaStream_t s, std::map<Key, Got>* out, std::mutex* mu) {
  const scSparseOptions_t opts = sortOptions();
  scSparseResult_t res = nullptr;
  ASSERT_EQ(scSparseResultCreate(comm, &res), scSuccess) << scGetLastError(comm);
  auto toMem = [&](const Bytes& b) {
    void* p = nullptr;
    if (!dev) return static_cast<void*>(const_cast<uint8_t*>(b.data()));
    EXPECT_EQ(cudaMalloc(&p, b.size() + 1), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(p, b.data(), b.size(), cudaMemcpyHostToDevice, s), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    return p;
  };
  auto fromMem = [&](const void* p, size_t bytes) {
    Bytes b(bytes);
    if (!bytes) return b;
    if (!dev) std::memcpy(b.data(), p, bytes);
    else {
      EXPECT_EQ(cudaMemcpyAsync(b.data(), p, bytes, cudaMemcpyDeviceToHost, s), cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    }
    return b;
  };
  for (size_t ci = 0; ci < std::size(kCases); ++ci) {
    const Case& c = kCases[ci];
    const size_t isz = c.it == scIndexU64 ? 8 : 4, vsz = typeSize(c.vt);
    Bytes hi, hv, hout(c.N * vsz, 0xA5);
    makePairs(c, rank, ci, &hi, &hv);
    void *di = toMem(hi), *dv = toMem(hv), *dout = toMem(hout);
    for (size_t ai = 0; ai < std::size(kAlgos); ++ai) {
      SCOPED_TRACE(testing::Message() << (dev ? "device " : "host ") << scSparseAlgoName(kAlgos[ai]) << " "
                                      << typeStr(c.vt) << (c.it == scIndexU64 ? " u64" : " u32") << " N=" << c.N);
      Got g;
      ASSERT_EQ(scSparseAllReduceEx(di, dv, c.nnz, c.N, c.it, c.vt, scSum, kAlgos[ai], &opts, dout, comm,
                                    dev ? s : nullptr),
                scSuccess)
          << scGetLastError(comm);
      g.dense = fromMem(dout, c.N * vsz);
      ASSERT_EQ(scSparseAllReduceToSparse(di, dv, c.nnz, c.N, c.it, c.vt, scSum, kAlgos[ai], &opts, res, comm,
                                          dev ? s : nullptr),
                scSuccess)
          << scGetLastError(comm);
      size_t nnz = 0;
      const void *ri = nullptr, *rv = nullptr;
      scSparseResultIsDense(res, &g.isDense);
      scSparseResultNnz(res, &nnz);
      scSparseResultIndices(res, &ri);
      scSparseResultValues(res, &rv);
      if (!g.isDense) g.idx = fromMem(ri, nnz * isz);
      g.val = fromMem(rv, nnz * vsz);
      std::lock_guard<std::mutex> lk(*mu);
      (*out)[Key{ci, ai, rank}] = std::move(g);
    }
    if (dev) {
      cudaFree(di);
      cudaFree(dv);
      cudaFree(dout);
    }
  }
  scSparseResultDestroy(res);
}

std::string firstDiff(const Bytes& got, const Bytes& want, size_t esz) {
  if (got.size() != want.size())
    return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return "first difference in element " + std::to_string(i / esz);
  return {};
}

class SparseSortGpu : public testing::TestWithParam<int> {};

TEST_P(SparseSortGpu, DeviceMatchesHostBitForBit) {
  SC_REQUIRE_GPU();
  const int P = GetParam();
  const scConfig_t cfg = pinnedConfig();
  std::map<Key, Got> host, device;
  std::mutex mu;
  sctest::run(
      P, [&](scComm_t comm, int rank) { rankCalls(comm, rank, false, nullptr, &host, &mu); }, &cfg);
  const std::vector<int> devices(size_t(P), 0);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        cudaStream_t s = nullptr;
        ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
        rankCalls(comm, rank, true, s, &device, &mu);
        cudaStreamDestroy(s);
      },
      &cfg, devices.data());
  ASSERT_EQ(device.size(), host.size()) << "some calls did not complete";
  for (const auto& [key, h] : host) {
    const auto& [ci, ai, rank] = key;
    SCOPED_TRACE(testing::Message() << scSparseAlgoName(kAlgos[ai]) << " " << typeStr(kCases[ci].vt)
                                    << " N=" << kCases[ci].N << " rank " << rank);
    const Got& d = device.at(key);
    const size_t vsz = typeSize(kCases[ci].vt), isz = kCases[ci].it == scIndexU64 ? 8 : 4;
    EXPECT_EQ(firstDiff(d.dense, h.dense, vsz), "") << "dense result";
    EXPECT_EQ(d.isDense, h.isDense) << "sparse result's form";
    EXPECT_EQ(firstDiff(d.idx, h.idx, isz), "") << "sparse result's indices";
    EXPECT_EQ(firstDiff(d.val, h.val, vsz), "") << "sparse result's values";
  }
}

INSTANTIATE_TEST_SUITE_P(P, SparseSortGpu, testing::Values(1, 2, 3, 4),
                         [](const testing::TestParamInfo<int>& i) { return "P" + std::to_string(i.param); });

}  // namespace
}  // namespace sptest
