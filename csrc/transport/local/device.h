// The CUDA pieces the local transport needs for device buffers: events that
// order a receiver's copy after the sender's stream and the sender after the
// copy, the copy itself, and the one-device direct collective's kernel. ToolkitFns (core/toolkit.h):
// transport/local/cuda/device.cpp provides them; in a build without CUDA they
// throw (local/device.cpp), but no device-local communicator exists there to
// call them (the CUDA backend throws first).
#pragma once

#include <cstddef>

#include "core/toolkit.h"

namespace sc {
struct DirectSpec;  // transport/local/direct.h
}

namespace sc::localdev {

extern ToolkitFn<void*(int device)> createEvent;                         // an event of device, timing off
extern ToolkitFn<void(int device, void* stream, void* ev)> recordEvent;  // ev marks stream's current point
extern ToolkitFn<void(int device, void* stream, void* ev)> streamWait;   // stream waits for ev
extern ToolkitFn<void(void* ev)> destroyEvent;                           // never throws
// bytes from src (memory of srcDevice) to dst (memory of device), on stream
// (of device). The devices are the communicators' own, known to the
// transport, so no pointer is asked what it is.
extern ToolkitFn<void(int device, void* dst, const void* src, int srcDevice, size_t bytes, void* stream)> copyAsync;
// The transport's own non-blocking stream for its copies, and its release
// (never throws; pending copies finish first).
extern ToolkitFn<void*(int device)> createStream;
extern ToolkitFn<void(void* stream)> destroyStream;
// The direct collective (transport/local/direct.h) on `stream` of `device`,
// which holds every buffer of the spec.
extern ToolkitFn<void(int device, const DirectSpec& spec, void* stream)> direct;

}  // namespace sc::localdev
