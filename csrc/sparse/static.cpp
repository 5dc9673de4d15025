// The static-size sparse allreduce (sparse.h, scSparseAllReduceStatic): pack
// this rank's block, one dense allgather of the P blocks, then one local sum of
// all P x capacity slots (ops: slots -> stable sort + in-order sum per index ->
// densify). The count rides in the block, so unlike the other sparse calls
// there is no header round and no count read on the host: the only reads are
// the host communicator's error word (host memory, no wait) and, on a device
// without a status word, the one the contract names.
#include <algorithm>
#include <cstring>

#include "algo/dense.h"
#include "core/api_guard.h"
#include "core/overlap.h"
#include "sparse/call.h"
#include "sparse/model.h"

namespace sc::sp {
namespace {

struct StaticArgs {
  const void* idx;
  const void* val;
  size_t nnz;
  const uint64_t* nnzPtr;
  uint64_t cap, dim;
  scIndexType_t it;
  scDataType_t vt;
  scRedOp_t op;
  void* out;
  uint64_t* status;
  void* stream;
};

// What every rank must pass alike and what the block size depends on: a rank
// that fails here cannot even size its block, so it fails at once (as the
// dense collectives do).
void shapeChecks(const scComm& comm, const StaticArgs& a) {
  if (!comm.device()) SC_ARG(a.stream == nullptr, "stream must be NULL on a host communicator");
  SC_ARG(a.it == scIndexU32 || a.it == scIndexU64, "unknown index type ", int(a.it), " (scIndexU32 or scIndexU64)");
  checkDtype(a.vt);
  checkOp(a.op);
  SC_ARG(a.op == scSum || a.op == scAvg, "static sparse allreduce supports sum and avg only, got ", opName(a.op));
  SC_ARG(a.cap >= 1 && a.cap <= kStaticMaxCapacity, "capacity = ", a.cap, " is out of range: 1 to 2^40");
  SC_ARG(comm.size() <= kStaticMaxRanks, "static sparse allreduce supports up to ", kStaticMaxRanks, " ranks");
  // ~I(0) marks the slots that take no part, so it must not be an index (static_block.h).
  SC_ARG(a.it == scIndexU64 || a.dim < (uint64_t(1) << 32), "dim = ", a.dim,
         " needs 64-bit indices (scIndexU64): static uint32 indices address dim < 2^32");
  const size_t vsz = dtypeSize(a.vt);
  SC_ARG(a.dim <= size_t(PTRDIFF_MAX) / vsz, "dim = ", a.dim, " of ", dtypeName(a.vt),
         " exceeds the largest possible buffer");
  const StaticLayout L{a.cap, indexSize(a.it), vsz};
  SC_ARG(L.bytes() <= size_t(PTRDIFF_MAX) / size_t(comm.size()), "capacity = ", a.cap, " gives ", comm.size(),
         " blocks of ", L.bytes(), " bytes, more than the largest possible buffer");
}

// Checks a rank can fail alone; its failure travels in its block (kStaticBadArgMark).
void pointerChecks(const scComm& comm, const StaticArgs& a) {
  const size_t isz = indexSize(a.it), vsz = dtypeSize(a.vt);
  const uint64_t n = a.nnzPtr ? a.cap : std::min<uint64_t>(a.nnz, a.cap);  // the entries the pack reads
  if (a.nnzPtr) comm.backend->checkPointer(a.nnzPtr, "nnzPtr");
  if (n) {
    SC_ARG(a.idx != nullptr, "indices is NULL with ", a.nnzPtr ? "capacity = " : "nnz = ", n);
    SC_ARG(a.val != nullptr, "values is NULL with ", a.nnzPtr ? "capacity = " : "nnz = ", n);
    comm.backend->checkPointer(a.idx, "indices");
    comm.backend->checkPointer(a.val, "values");
  }
  if (a.status) comm.backend->checkPointer(a.status, "status");
  if (a.dim) {
    SC_ARG(a.out != nullptr, "denseOut is NULL with dim = ", a.dim);
    comm.backend->checkPointer(a.out, "denseOut");
    SC_ARG(!overlaps(a.out, a.dim * vsz, a.val, n * vsz) && !overlaps(a.out, a.dim * vsz, a.idx, n * isz),
           "denseOut overlaps the input indices or values");
  }
}

// The allgather of the P blocks (in place: this rank's block is packed at its
// slot), with scAllGather's schedule for the same bytes.
void allGatherBlocks(Ctx& c, scAlgo_t algo, void* blocks, size_t words) {
  void* own = c.at(blocks, size_t(c.rank) * words);
  switch (algo) {
    case scAlgoRing: ringAllGather(c, blocks, Blocks{words * size_t(c.size), size_t(c.size)}); break;
    case scAlgoRecDbl: doublingAllGather(c, own, blocks, words); break;
    case scAlgoNative: c.comm.transport->nativeAllGather(own, blocks, words, scUint64, c.stream, c.dl); break;
    default: SC_THROW(scInternalError, "unresolved allgather algorithm ", int(algo));
  }
}

// The message every rank gives for status word `err` (the same on every rank:
// the bad count or index is read from the gathered blocks, which all ranks hold).
[[noreturn]] void throwStatus(scComm& comm, SparseOps& ops, const unsigned char* blocks, const StaticLayout& L,
                              const StaticArgs& a, uint64_t err) {
  const int r = SC_STATIC_STATUS_RANK(err);
  const uint64_t j = SC_STATIC_STATUS_POS(err);
  const unsigned char* b = blocks + uint64_t(r) * L.bytes();
  auto peek = [&](const void* src, size_t bytes) {  // little endian: an index's low bytes
    uint64_t v = 0;
    ops.toHost(&v, src, bytes);
    if (comm.device()) {
      ++comm.stats.hostReads;
      ++comm.stats.hostSyncs;  // toHost waits for the stream
    }
    return v;
  };
  switch (SC_STATIC_STATUS_KIND(err)) {
    case scStaticBadArgument:
      SC_THROW(scInvalidArgument, "static sparse allreduce: invalid arguments on rank ", r,
               " (see that rank's error message)");
    case scStaticCountOverCapacity:
      SC_THROW(scInvalidArgument, "static sparse allreduce: rank ", r, "'s count ", peek(b, 8),
               " exceeds capacity = ", L.cap, " (its entries were skipped)");
    default:
      SC_THROW(scInvalidArgument, "static sparse allreduce: rank ", r, "'s indices[", j,
               "] = ", peek(b + L.idxOff() + j * L.isz, L.isz), " is not below dim = ", a.dim,
               " (the entry was skipped)");
  }
}

void staticAllReduce(scComm* comm, const StaticArgs& a) {
  checkComm(comm);
  shapeChecks(*comm, a);
  std::exception_ptr localError;
  try {
    pointerChecks(*comm, a);
  } catch (...) {
    localError = std::current_exception();
  }
  const int P = comm->size(), me = comm->rank();
  const StaticLayout L{a.cap, indexSize(a.it), dtypeSize(a.vt)};
  const size_t B = L.bytes();
  const scAlgo_t ag = P > 1 ? chooseAlgo(*comm, Coll::AllGather, scAlgoAuto, size_t(P) * B) : scAlgoRing;
  // Capacity, dim and the index type are in the signature: ranks that differ
  // make different calls, caught like any mismatched collective.
  setCall(*comm, {"scSparseAllReduceStatic", a.cap, int(a.vt), int(a.op), algoName(ag),
                  a.dim << 1 | uint64_t(a.it == scIndexU64)});
  void* stream = a.stream;
  // The allgather's steps are fixed by the capacity: a planned call where
  // the transport plans (one meeting on device-local ranks).
  Ctx c(*comm, scUint64, scSum, stream, P > 1 && ag != scAlgoNative);
  std::unique_ptr<SparseOps> ops = makeOps(*comm, a.it, a.vt, stream, c.dl);

  // Pack: [count | indices | values] at this rank's slot; unused slots stay
  // as they are (the sum never reads past a block's count).
  auto* blocks = reinterpret_cast<unsigned char*>(comm->scratch(Scratch::SparseArrays, size_t(P) * B, stream));
  unsigned char* mine = blocks + size_t(me) * B;
  if (localError) {
    ops->fromHost(mine, &kStaticBadArgMark, 8);
  } else {
    if (a.nnzPtr) comm->backend->copy(mine, a.nnzPtr, 8, stream);
    else ops->fromHost(mine, &a.nnz, 8);
    const uint64_t n = a.nnzPtr ? a.cap : std::min<uint64_t>(a.nnz, a.cap);
    if (n) {
      comm->backend->copy(mine + L.idxOff(), a.idx, n * L.isz, stream);
      comm->backend->copy(mine + L.valOff(), a.val, n * L.vsz, stream);
    }
  }
  if (P > 1) allGatherBlocks(c, ag, blocks, B / 8);
  c.run();
  if (localError) std::rethrow_exception(localError);

  // Sum: every slot as a sort pair, the stable sort + in-order sum of each
  // index's run (rank order, then list order), densified into the output.
  const uint64_t n = uint64_t(P) * a.cap;
  void* keys = comm->scratch(Scratch::SparseArrays + 2, n * L.isz, stream);
  void* vals = comm->scratch(Scratch::SparseArrays + 3, n * L.vsz, stream);
  void* sumIdx = comm->scratch(Scratch::SparseArrays + 4, n * L.isz, stream);
  void* sumVal = comm->scratch(Scratch::SparseArrays + 5, n * L.vsz, stream);
  auto* words = reinterpret_cast<uint64_t*>(comm->scratch(Scratch::SparseMeta, 16, stream));  // error, runs
  ops->staticSlots(blocks, P, L, a.dim, keys, vals, &words[0]);
  ops->sortCoalesce(keys, vals, n, sumIdx, sumVal, &words[1]);
  ops->densifyCounted(sumIdx, sumVal, &words[1], n, a.dim, a.out);
  if (a.op == scAvg && P > 1 && a.dim) comm->backend->divide(a.out, a.dim, a.vt, P, stream);
  if (a.status) ops->keepStatus(a.status, &words[0]);

  uint64_t err = kStaticOk;
  if (!comm->device()) {
    err = words[0];  // host memory, written before staticSlots returned
  } else if (!a.status) {
    ops->toHost(&err, &words[0], 8);
    ++comm->stats.hostReads;
    ++comm->stats.hostSyncs;  // toHost waits for the stream
  }
  if (err != kStaticOk) throwStatus(*comm, *ops, blocks, L, a, err);
}

}  // namespace
}  // namespace sc::sp

using namespace sc;
using namespace sc::sp;

extern "C" scResult_t scSparseAllReduceStatic(const void* indices, const void* values, size_t nnz,
                                              const uint64_t* nnzPtr, size_t capacity, size_t dim, scIndexType_t itype,
                                              scDataType_t vtype, scRedOp_t op, void* denseOut, uint64_t* status,
                                              scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    staticAllReduce(comm, StaticArgs{indices, values, nnz, nnzPtr, capacity, dim, itype, vtype, op, denseOut, status,
                                     stream});
  });
}

extern "C" scResult_t scSparseStaticAdvised(scComm_t comm, size_t capacity, size_t dim, scIndexType_t itype,
                                            scDataType_t vtype, int* useStatic) {
  return scGuard(comm, [&] {
    checkComm(comm);
    SC_ARG(useStatic != nullptr, "useStatic is NULL");
    SC_ARG(itype == scIndexU32 || itype == scIndexU64, "unknown index type ", int(itype));
    checkDtype(vtype);
    SC_ARG(capacity >= 1 && capacity <= kStaticMaxCapacity, "capacity = ", capacity, " is out of range: 1 to 2^40");
    ModelInput mi;
    mi.model = &comm->model;
    mi.N = dim;
    mi.k.assign(size_t(comm->size()), capacity);
    mi.isz = indexSize(itype);
    mi.vsz = dtypeSize(vtype);
    mi.rule = SwitchRule{mi.isz, mi.vsz, 0.0};
    *useStatic = staticAdvised(mi) ? 1 : 0;
  });
}
