// The one-device direct collective: when every rank of a local world has its
// buffers on one GPU, a dense `native` call is one kernel over all ranks'
// buffers instead of a schedule of messages. The ranks meet once (each
// publishes its buffers and its stream's point), and one of them enqueues it.
//
// A spec is `blocks` jobs. Job b reads `len[b]` elements at `srcOff[b]` of
// the inputs, folds them when `reduce` (rank b's first, then every other
// rank's in rank order: the fold of the host path's LocalTransport
// reduceBlock, so both give the same bits) or takes input `src[b]` alone, and
// writes the result at `dstOff[b]` of every output (`allOut`) or of output b
// only. An output that is the very input it would copy is left alone. The
// host version (directHost) is the kernel's specification; the kernel is
// sc::kern::direct (kernels/reduce.cuh).
#pragma once

#include <cstddef>

#include "sparcoll/sparcoll.h"

namespace sc {

// Ranks of one direct call: the spec travels as a kernel parameter (under
// CUDA's 4 KiB), so no device memory holds it and nothing is copied per call.
constexpr int kDirectMaxRanks = 64;

struct DirectSpec {
  int P = 0;       // ranks: inputs and outputs
  int blocks = 0;  // jobs, at most P
  bool reduce = false;
  bool allOut = false;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;  // avg reduces as sum (the caller divides)
  const void* in[kDirectMaxRanks] = {};
  void* out[kDirectMaxRanks] = {};
  int src[kDirectMaxRanks] = {};  // copy jobs: the input read
  size_t srcOff[kDirectMaxRanks] = {}, dstOff[kDirectMaxRanks] = {}, len[kDirectMaxRanks] = {};  // elements
};

// The four dense collectives as specs, from every rank's buffers (send[q],
// recv[q]); counts as the C API's.
DirectSpec directAllReduce(int P, const void* const* send, void* const* recv, size_t count, scDataType_t dt,
                           scRedOp_t op);
DirectSpec directReduceScatter(int P, const void* const* send, void* const* recv, size_t recvcount, scDataType_t dt,
                               scRedOp_t op);
DirectSpec directAllGather(int P, const void* const* send, void* const* recv, size_t sendcount, scDataType_t dt);
DirectSpec directBroadcast(int P, void* const* buf, size_t count, scDataType_t dt, int root);

// The spec run on host memory: what the kernel computes, element for element.
void directHost(const DirectSpec& s);

}  // namespace sc
