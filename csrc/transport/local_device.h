// The CUDA pieces the local transport needs for device buffers: events that
// order a receiver's copy after the sender's stream and the sender after the
// copy. Implemented in local_device_cuda.cpp; CPU-only builds throw.
#pragma once

#include <cstddef>

namespace sc::localdev {

void* recordEvent(int device, void* stream);          // new event recorded on stream
void streamWait(int device, void* stream, void* ev);  // stream waits for ev
void destroyEvent(void* ev) noexcept;
void copyAsync(int device, void* dst, const void* src, size_t bytes, void* stream);
void synchronize(int device, void* stream);

}  // namespace sc::localdev
