// One sparse allreduce call: its arguments, the local checks, and the header
// round that turns them into a validated input stream on every rank.
#pragma once

#include <exception>
#include <vector>

#include "sparse/engine.h"
#include "sparse/result.h"

namespace sc::sp {

struct CallArgs {
  const void* idx = nullptr;
  const void* val = nullptr;
  size_t nnz = 0;
  uint64_t dim = 0;
  scIndexType_t it = scIndexU32;
  scDataType_t vt = scFloat32;
  scRedOp_t op = scSum;
  scSparseAlgo_t algo = scSparseAuto;
  scSparseOptions_t opt = SC_SPARSE_OPTIONS_INITIALIZER;
  void* denseOut = nullptr;          // dense result ...
  scSparseResult* result = nullptr;  // ... or sparse result
  bool wantSparse = false;
  void* stream = nullptr;
};

// The call's stream operations (CPU or CUDA, by the communicator's memory),
// with temporaries in the communicator's SparseOps scratch slots.
std::unique_ptr<SparseOps> makeOps(scComm& comm, scIndexType_t it, scDataType_t vt, void* stream, const Deadline& dl);

// Options from the caller (NULL: defaults); throws on a malformed struct.
scSparseOptions_t readOptions(const scSparseOptions_t* opts);
// Every check that needs no peer; throws sc::Error.
void localChecks(const scComm& comm, const CallArgs& a);

struct Prepared {
  std::vector<Header> hdr;  // every rank's header
  Stream in;                // this rank's validated input over [0, dim)
};
// Validates (or sorts + coalesces) the input and runs the header round (an
// allgather of 40 bytes per rank). localError: what localChecks threw here, if
// anything. Any error or mismatch on any rank throws on every rank
// (scInvalidArgument; this rank's own error with its own message).
Prepared headerRound(SpCtx& s, const CallArgs& a, const std::exception_ptr& localError);

}  // namespace sc::sp
