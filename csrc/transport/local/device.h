// The CUDA pieces the local transport needs for device buffers: events that
// order a receiver's copy after the sender's stream and the sender after the
// copy. ToolkitFns (core/toolkit.h): transport/local/cuda/device.cpp provides
// them; in a build without CUDA they throw (local/device.cpp), but no
// device-local communicator exists there to call them (the CUDA backend
// throws first).
#pragma once

#include <cstddef>

#include "core/toolkit.h"

namespace sc::localdev {

extern ToolkitFn<void*(int device, void* stream)> recordEvent;          // new event recorded on stream
extern ToolkitFn<void(int device, void* stream, void* ev)> streamWait;  // stream waits for ev
extern ToolkitFn<void(void* ev)> destroyEvent;                          // never throws
extern ToolkitFn<void(int device, void* dst, const void* src, size_t bytes, void* stream)> copyAsync;
extern ToolkitFn<void(int device, void* stream)> synchronize;
// The transport's own non-blocking stream for its copies, and its release
// (never throws; pending copies finish first).
extern ToolkitFn<void*(int device)> createStream;
extern ToolkitFn<void(void* stream)> destroyStream;

}  // namespace sc::localdev
