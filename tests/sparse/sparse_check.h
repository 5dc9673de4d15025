// One checked sparse allreduce: the rank's input goes in, the result is
// compared with the exact reference, and every rank's result digest is
// allgathered (over the same communicator) to prove the ranks agree bit for bit.
#pragma once

#include <gtest/gtest.h>

#include "common/harness.h"
#include "sparse_util.h"

namespace sptest {

extern const scSparseAlgo_t kAllAlgos[6];

// P values to run: `local` in local mode, the world size under mpirun.
std::vector<int> gridP(std::vector<int> local);

struct Call {
  scSparseAlgo_t algo = scSparseAuto;
  bool sparseOut = false;  // scSparseAllReduceToSparse instead of a dense vector
  scIndexType_t it = scIndexU32;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;
  uint64_t N = 0;
  const scSparseOptions_t* opts = nullptr;
};
std::string describe(const Call& c);

// Runs the call with `in` on this rank and checks it (gtest EXPECTs, never
// returns early: every rank makes the same calls). `result` is a reusable
// handle for sparseOut calls. Returns false on a failure.
bool checkCall(scComm_t comm, int rank, const Call& c, const Input& in, const std::vector<uint8_t>& want,
               scSparseResult_t result);

// True when every rank passed the same 64-bit value (allgather over comm).
bool sameOnAllRanks(scComm_t comm, uint64_t value);

}  // namespace sptest
