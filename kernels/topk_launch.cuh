// Host-side entry points of the top-k kernels (kernels/topk_approx*.cu,
// kernels/topk_select.cu). Each enqueues the whole call on the stream and
// leaves its counts in device memory (DeviceCall::counts, or scratch); it
// waits for the stream only when DeviceCall::readCounts asks for them. Plain
// C++ declarations, so csrc/topk/cuda/device.cpp can put them in the
// topk::selectDevice slot without nvcc.
#pragma once

#include "topk/device.h"  // DeviceCall
#include "topk/params.h"

namespace sc {
namespace topk {

// Bucketed methods.
Outcome approxDevice(const Params& p, const Buffers& b, const DeviceCall& call);
// The split design of the bucketed methods (a warp per small bucket, blocks
// per chunk of a large one), which approxDevice runs unless
// SPARCOLL_TOPK_KERNEL=block.
Outcome approxDeviceSplit(const Params& p, const Buffers& b, const DeviceCall& call);
// Bracket, exact and threshold: the sampled selection (kernels/topk_select.cu).
Outcome selectSampledDevice(const Params& p, const Buffers& b, const DeviceCall& call);

}  // namespace topk
}  // namespace sc
