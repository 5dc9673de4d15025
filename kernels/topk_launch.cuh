// Host-side entry points of the top-k kernels (kernels/topk_approx.cu,
// kernels/topk_exact.cu). Plain C++ declarations, so csrc/topk/cuda/device.cpp
// can put them in the topk::selectDevice slot without nvcc.
#pragma once

#include "topk/device.h"  // DeviceCall
#include "topk/params.h"

namespace sc {
namespace topk {

// Bucketed methods. Without readCounts only nnz is meaningful, and only for
// fixed output (= k); variable output always reads its count back.
Outcome approxDevice(const Params& p, const Buffers& b, const DeviceCall& call);
// The split design of the bucketed methods (a warp per small bucket, blocks
// per chunk of a large one), which approxDevice runs unless
// SPARCOLL_TOPK_KERNEL=block.
Outcome approxDeviceSplit(const Params& p, const Buffers& b, const DeviceCall& call);
// Exact and threshold. Exact knows its count (k) without waiting; threshold
// always reads the candidate count back.
Outcome exactDevice(const Params& p, const Buffers& b, const DeviceCall& call);

}  // namespace topk
}  // namespace sc
