// Element-wise device reductions: the CUDA side of the compute backend.
//
// Host launchers (sc::kern::reduce / divide), usable from plain C++ (g++) and
// from CUDA (.cu) files: enqueue a grid-stride, 16-byte-vectorised kernel on a
// stream; the caller has set the device (error checks and the device scope:
// core/cuda_util.h).
//
// The element operators are not here: the kernels run the host's own
// functions, sc::ReduceOp<T, op> and sc::DivideBy<T> of core/reduce_op.h
// (semantics there), on the storage types Half/BFloat16 of core/numeric.h,
// so results are the CPU backend's bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sparcoll/sparcoll.h"

namespace sc {
struct DirectSpec;  // transport/local/direct.h
}

namespace sc::kern {

// dst[i] = a[i] op b[i], i < n, enqueued on `stream` of the current device.
// dst may alias a or b exactly (not partially). avg reduces as sum. Pointers of
// any alignment: the kernel peels a head so the body uses 16-byte accesses
// whenever dst, a and b share their alignment modulo 16. `smCount` sizes the
// grid (multiprocessors of the current device). Returns the launch status.
cudaError_t reduce(void* dst, const void* a, const void* b, size_t n, scDataType_t dt, scRedOp_t op,
                   cudaStream_t stream, int smCount);

// buf[i] = buf[i] / divisor (avg's final step; integers truncate toward zero,
// float16/bfloat16 divide in float32 and round once). Same launch rules.
cudaError_t divide(void* buf, size_t n, scDataType_t dt, int divisor, cudaStream_t stream, int smCount);

// The direct collective over every rank's buffers on this device: one
// kernel, the spec's jobs side by side, each element folded in registers as
// directHost folds it (the specification). 16-byte accesses for a job whose
// addresses are all 16-byte aligned.
cudaError_t direct(const DirectSpec& spec, cudaStream_t stream, int smCount);

}  // namespace sc::kern
