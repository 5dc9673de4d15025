// Host-side entry points of the top-k kernels (kernels/topk_approx.cu,
// kernels/topk_exact.cu). Plain C++ declarations, so csrc/topk/api.cpp can
// call them in CUDA builds without nvcc.
#pragma once

#include "topk/params.h"

namespace sc {
namespace topk {

// How a device call reports back.
struct DeviceCall {
  int device;             // the CUDA device owning the buffers
  void* stream;           // cudaStream_t on that device
  bool readCounts;        // read selected/deferred/nnz back (waits for the stream)
  double timeoutSeconds;  // bound on that wait (scTimeout after it)
};

// Bucketed methods. Without readCounts only nnz is meaningful, and only for
// fixed output (= k); variable output always reads its count back.
Outcome approxDevice(const Params& p, const Buffers& b, const DeviceCall& call);
// Exact and threshold. Exact knows its count (k) without waiting; threshold
// always reads the candidate count back.
Outcome exactDevice(const Params& p, const Buffers& b, const DeviceCall& call);

inline Outcome selectDevice(const Params& p, const Buffers& b, const DeviceCall& call) {
  return bucketed(p.method) ? approxDevice(p, b, call) : exactDevice(p, b, call);
}

}  // namespace topk
}  // namespace sc
