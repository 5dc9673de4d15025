// Argument checks and the header round. A bad argument on one rank must not
// leave the others waiting in a schedule, so local failures are not thrown at
// once: they travel in the header (an error word), every rank learns them in
// the allgather, and every rank throws the same code — the failing rank with
// its own detailed message, the others naming it.
#include "sparse/call.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "algo/dense.h"
#include "core/overlap.h"
#include "sparse/schedules.h"

namespace sc::sp {
namespace {

uint64_t packConfig(const CallArgs& a) {
  return uint64_t(a.it) | uint64_t(a.vt) << 4 | uint64_t(a.op) << 8 | uint64_t(a.algo) << 12 |
         uint64_t(a.opt.flags & 0xffff) << 16 | uint64_t(uint32_t(a.opt.earlyGroupSize)) << 32;
}

const char* errText(uint64_t kind) {
  switch (kind) {
    case kErrRange: return "an index >= dim";
    case kErrDuplicate: return "a duplicate index";
    case kErrUnsorted: return "unsorted indices";
    default: return "an invalid argument";
  }
}

// The detailed message for this rank's own data error (reads two indices back).
[[noreturn]] void throwDataError(SpCtx& s, const void* idx, uint64_t err, bool sorted, uint64_t dim) {
  const uint64_t pos = err >> 4, kind = err & 15;
  uint64_t v[2] = {0, 0};
  const size_t isz = s.isz;
  auto read = [&](uint64_t i, uint64_t* dst) {
    s.read(dst, static_cast<const char*>(idx) + i * isz, isz);  // little endian: low bytes
  };
  read(pos, &v[1]);
  if (kind == kErrRange)
    SC_THROW(scInvalidArgument, "sparse allreduce: indices[", pos, "] = ", v[1], " is not below dim = ", dim);
  read(pos - 1, &v[0]);
  SC_THROW(scInvalidArgument, "sparse allreduce: indices[", pos, "] = ", v[1],
           kind == kErrDuplicate ? " repeats" : " is below", " indices[", pos - 1, "] = ", v[0],
           ": indices must be sorted and unique", sorted ? "" : " (or pass scSparseSortInput to sort and sum them)");
}

void checkAgreement(const std::vector<Header>& h) {
  const Header& z = h[0];
  for (size_t r = 1; r < h.size(); ++r) {
    auto differ = [&](const char* what, uint64_t a, uint64_t b) {
      if (a != b)
        SC_THROW(scInvalidArgument, "sparse allreduce: ", what, " differs across ranks (rank 0: ", a, ", rank ", r,
                 ": ", b, "); every rank must pass the same dim, types, op, algorithm and options");
    };
    differ("dim", z.dim, h[r].dim);
    differ("index type", z.config & 15, h[r].config & 15);
    differ("value type", z.config >> 4 & 15, h[r].config >> 4 & 15);
    differ("reduction op", z.config >> 8 & 15, h[r].config >> 8 & 15);
    differ("algorithm", z.config >> 12 & 15, h[r].config >> 12 & 15);
    differ("options.flags", z.config >> 16 & 0xffff, h[r].config >> 16 & 0xffff);
    differ("options.earlyGroupSize", z.config >> 32, h[r].config >> 32);
    differ("options.switchDensity (bits)", z.density, h[r].density);
  }
}

}  // namespace

scSparseOptions_t readOptions(const scSparseOptions_t* opts) {
  scSparseOptions_t o = SC_SPARSE_OPTIONS_INITIALIZER;
  if (!opts) return o;
  SC_ARG(opts->size >= sizeof(scSparseOptions_t), "scSparseOptions_t.size is ", opts->size, ", expected ",
         sizeof(scSparseOptions_t), " (initialise it with SC_SPARSE_OPTIONS_INITIALIZER)");
  o = *opts;
  o.size = sizeof(scSparseOptions_t);
  return o;
}

void localChecks(const scComm& comm, const CallArgs& a) {
  if (!comm.device()) SC_ARG(a.stream == nullptr, "stream must be NULL on a host communicator");
  SC_ARG(a.it == scIndexU32 || a.it == scIndexU64, "unknown index type ", int(a.it), " (scIndexU32 or scIndexU64)");
  checkDtype(a.vt);
  checkOp(a.op);
  SC_ARG(a.op == scSum || a.op == scAvg, "sparse allreduce supports sum and avg only (the neutral element is 0), got ",
         opName(a.op));
  SC_ARG(a.algo >= 0 && a.algo < scNumSparseAlgos, "unknown sparse algorithm ", int(a.algo));
  (void)ownerSumBySort(comm.device());  // a bad SPARCOLL_SPARSE_OWNER_SUM fails here, before any message
  SC_ARG((a.opt.flags & ~unsigned(scSparseSortInput)) == 0, "unknown bits in scSparseOptions_t.flags: ", a.opt.flags);
  SC_ARG(std::isfinite(a.opt.switchDensity) && a.opt.switchDensity >= 0 && a.opt.switchDensity <= 1,
         "scSparseOptions_t.switchDensity must be in [0, 1], got ", a.opt.switchDensity);
  const int g = a.opt.earlyGroupSize;
  SC_ARG(g >= 0 && (g & (g - 1)) == 0, "scSparseOptions_t.earlyGroupSize must be 0 or a power of two, got ", g);
  SC_ARG(a.it == scIndexU64 || a.dim <= (uint64_t(1) << 32), "dim = ", a.dim,
         " needs 64-bit indices (scIndexU64); uint32 indices address dim <= 2^32");
  const bool sorting = a.opt.flags & scSparseSortInput;
  SC_ARG(a.nnz <= a.dim || sorting, "nnz = ", a.nnz, " exceeds dim = ", a.dim,
         " (duplicates are allowed only with scSparseSortInput)");
  const size_t isz = indexSize(a.it), vsz = dtypeSize(a.vt);
  // No object spans more than PTRDIFF_MAX bytes: a larger nnz or dim is a bad
  // argument (a 1-byte type let dim = 2^63 through to the densify's memset).
  SC_ARG(a.nnz <= size_t(PTRDIFF_MAX) / 8 && a.dim <= size_t(PTRDIFF_MAX) / vsz, "nnz = ", a.nnz, " or dim = ", a.dim,
         " of ", dtypeName(a.vt), " exceeds the largest possible buffer");
  if (a.nnz) {
    SC_ARG(a.idx != nullptr, "indices is NULL with nnz = ", a.nnz);
    SC_ARG(a.val != nullptr, "values is NULL with nnz = ", a.nnz);
    comm.backend->checkPointer(a.idx, "indices");
    comm.backend->checkPointer(a.val, "values");
  }
  if (a.wantSparse) {
    SC_ARG(a.result != nullptr, "sparse result handle is NULL");
    SC_ARG(a.result->device == comm.device() && (!comm.device() || a.result->deviceId == comm.cfg.device),
           "the sparse result was created for ", a.result->device ? "device" : "host", " memory",
           a.result->device ? " of device " + std::to_string(a.result->deviceId) : std::string(),
           " but the communicator works on ", comm.device() ? "device" : "host", " memory");
  } else if (a.dim) {
    SC_ARG(a.denseOut != nullptr, "denseOut is NULL with dim = ", a.dim);
    comm.backend->checkPointer(a.denseOut, "denseOut");
    SC_ARG(!overlaps(a.denseOut, a.dim * vsz, a.val, a.nnz * vsz) &&
               !overlaps(a.denseOut, a.dim * vsz, a.idx, a.nnz * isz),
           "denseOut overlaps the input indices or values");
  }
}

Prepared headerRound(SpCtx& s, const CallArgs& a, const std::exception_ptr& localError) {
  const int P = s.size, me = s.rank;
  const bool sorting = a.opt.flags & scSparseSortInput;
  Header mine{a.nnz, a.dim, packConfig(a), 0, localError ? errWord(0, kErrArgument) : kNoError};
  std::memcpy(&mine.density, &a.opt.switchDensity, 8);
  char* header = s.c.comm.scratch(Scratch::SparseHeader, size_t(P + 1) * sizeof(Header), s.c.stream);
  uint64_t* hb = reinterpret_cast<uint64_t*>(header);
  Header* dev = reinterpret_cast<Header*>(hb);
  s.ops.fromHost(hb, &mine, sizeof mine);
  Stream in;
  in.lo = 0;
  in.len = a.dim;
  if (!localError) {
    if (sorting) {  // range check on the raw input, then sort + coalesce into the input buffers
      s.ops.validate(a.idx, a.nnz, a.dim, true, &dev->err);
      const SpCtx::Arrays b = s.buffer(kInput, a.nnz, a.nnz);
      if (a.nnz) s.ops.sortCoalesce(a.idx, a.val, a.nnz, b.idx, b.val, &dev->nnz);
      in.idx = b.idx;
      in.val = b.val;
      in.home = kInput;
      in.writable = true;
    } else {
      s.ops.validate(a.idx, a.nnz, a.dim, false, &dev->err);
      in.idx = const_cast<void*>(a.idx);
      in.val = const_cast<void*>(a.val);
      in.home = kUser;
    }
  }
  // The round: the foundation's recursive-doubling allgather of the headers.
  if (P > 1) {
    Ctx cu(s.c.comm, scUint64, scSum, s.c.stream);
    doublingAllGather(cu, hb, hb + kHeaderWords, kHeaderWords);
  }
  Prepared p;
  p.hdr.resize(P);
  std::vector<Header> all(P + 1);
  s.read(all.data(), hb, all.size() * sizeof(Header));
  if (P > 1) std::copy(all.begin() + 1, all.end(), p.hdr.begin());
  else p.hdr[0] = all[0];

  // Errors first: this rank's own with its message, else the others'.
  if (localError) std::rethrow_exception(localError);
  if (p.hdr[me].err != kNoError) throwDataError(s, a.idx, p.hdr[me].err, sorting, a.dim);
  std::ostringstream others;
  for (int r = 0; r < P; ++r)
    if (p.hdr[r].err != kNoError)
      others << (others.tellp() > 0 ? "; " : "") << "rank " << r << ": " << errText(p.hdr[r].err & 15)
             << ((p.hdr[r].err & 15) == kErrArgument ? "" : " at position " + std::to_string(p.hdr[r].err >> 4));
  if (others.tellp() > 0)
    SC_THROW(scInvalidArgument, "sparse allreduce: invalid input on another rank (", others.str(),
             "); see that rank's error message");
  checkAgreement(p.hdr);
  in.n = p.hdr[me].nnz;
  p.in = in;
  return p;
}

}  // namespace sc::sp
