// The local operations on sparse streams (thesis §4.1.3), implemented once for
// the CPU (ops_cpu.cpp, the reference) and once for CUDA with CUB
// (kernels/sparse_ops.cu). Pointers are in the ops' memory (host or device);
// counts that depend on the data are written to a uint64_t in that memory and
// read by the host with toHost() — on a GPU that read is the one device-to-host
// wait of a step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/deadline.h"
#include "core/dtype.h"
#include "core/toolkit.h"
#include "sparse/static_block.h"
#include "sparse/stream.h"

namespace sc::sp {

// What the operations need from the call.
struct OpsEnv {
  void* stream = nullptr;  // cudaStream_t on a device communicator
  int device = -1;         // CUDA device, -1 for host memory
  Deadline dl = Deadline::in(300);
  // Grow-only temporary buffer number slot (an OpsSlot) in the ops' memory.
  std::function<char*(int slot, size_t bytes)> scratch;
};
// The temporary buffers of the device operations.
enum OpsSlot : int {
  kOpsCubTemp,  // CUB's temporary storage
  kOpsKeys,     // sorted or merged indices
  kOpsValues,   // their values
  kOpsWords,    // small words: split bounds, run starts, a second count
  kOpsSlots
};

class SparseOps {
 public:
  SparseOps(scIndexType_t it, scDataType_t vt) : it(it), vt(vt), isz(indexSize(it)), vsz(dtypeSize(vt)) {}
  virtual ~SparseOps() = default;
  const scIndexType_t it;
  const scDataType_t vt;
  const size_t isz, vsz;

  virtual bool onDevice() const = 0;

  // Input check: *err = kNoError, or errWord(first bad position, kind) for an
  // index >= dim (kErrRange), equal to (kErrDuplicate) or below (kErrUnsorted)
  // its predecessor. rangeOnly: only the first check (input to sortCoalesce).
  virtual void validate(const void* idx, size_t n, uint64_t dim, bool rangeOnly, uint64_t* err) = 0;
  // Stable sort by index, then duplicates summed in input order. oi/ov hold n
  // entries (must not alias the input); the entry count goes to *cnt.
  virtual void sortCoalesce(const void* idx, const void* val, size_t n, void* oi, void* ov, uint64_t* cnt) = 0;
  // Sparse + sparse: merge of two sorted unique streams, equal indices summed
  // (a's value first). oi/ov hold na + nb entries; the count goes to *cnt.
  virtual void mergeSum(const void* ai, const void* av, size_t na, const void* bi, const void* bv, size_t nb, void* oi,
                        void* ov, uint64_t* cnt) = 0;
  // Sparse into dense: dense[idx[i] - lo] += val[i] (indices unique).
  virtual void scatterAdd(const void* idx, const void* val, size_t n, uint64_t lo, void* dense) = 0;
  // dense[0, len) = 0, then dense[idx[i] - lo] = val[i].
  virtual void densify(const void* idx, const void* val, size_t n, uint64_t lo, size_t len, void* dense) = 0;
  // Split of sorted indices into parts ranges [bounds[p], bounds[p+1]) (bounds on
  // the host; every index lies in [bounds[0], bounds[parts])): counts[p] entries
  // per part (counts[parts] = 0) and offs[0..parts] their exclusive prefix sums.
  // counts and offs are parts + 1 words of ops memory. The entry count is n, or,
  // when nIn is not null, the word *nIn of ops memory, read in stream order: a
  // count a previous operation left there needs no host read first. nIn must
  // not be one of the counts/offs words.
  virtual void split(const void* idx, size_t n, const uint64_t* nIn, const uint64_t* bounds, int parts,
                     uint64_t* counts, uint64_t* offs) = 0;
  // Dense to sparse: the entries != 0 of dense[0, len) as indices lo + i and
  // values (oi/ov hold len entries); the count goes to *cnt.
  virtual void sparsify(const void* dense, size_t len, uint64_t lo, void* oi, void* ov, uint64_t* cnt) = 0;

  // --- the static-size allreduce (sparse/static_block.h) ----------------------
  // The P blocks of layout L as sort input: keys/vals get P * L.cap entries,
  // slot order (a slot that takes no part: key ~I(0), value 0), and *err the
  // minimum of the slots' status words (kStaticOk when all are good).
  virtual void staticSlots(const void* blocks, int P, const StaticLayout& L, uint64_t dim, void* keys, void* vals,
                           uint64_t* err) = 0;
  // dense[0, dim) = 0, then dense[idx[i]] = val[i] for i < *cnt (ops memory,
  // read in stream order; at most nMax) whose idx[i] < dim: sortCoalesce's
  // output, densified.
  virtual void densifyCounted(const void* idx, const void* val, const uint64_t* cnt, uint64_t nMax, uint64_t dim,
                              void* dense) = 0;
  // *status = *err when *err != kStaticOk and *status == 0 (stream order).
  virtual void keepStatus(uint64_t* status, const uint64_t* err) = 0;

  // Small transfers between the host and ops memory. toHost waits for the work
  // queued before it (device: bounded by the deadline); fromHost is
  // stream-ordered and returns at once.
  virtual void toHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void fromHost(void* dst, const void* src, size_t bytes) = 0;
};

std::unique_ptr<SparseOps> makeCpuOps(scIndexType_t it, scDataType_t vt, const OpsEnv& env);
// The device ops: a ToolkitFn (core/toolkit.h) that kernels/sparse_ops.cu
// provides; a build without CUDA throws scInvalidUsage (ops_cpu.cpp).
extern ToolkitFn<std::unique_ptr<SparseOps>(scIndexType_t it, scDataType_t vt, const OpsEnv& env)> makeCudaOps;

// Calls f(I{}) with I the index storage type.
template <typename F>
decltype(auto) dispatchIndex(scIndexType_t t, F&& f) {
  if (t == scIndexU64) return f(uint64_t{});
  return f(uint32_t{});
}

}  // namespace sc::sp
