// A simulated device for CPU tests of the device paths: the toolkit slots a
// CUDA build fills (core/toolkit.h) are filled instead with host code, so a
// device-local communicator runs its device code paths — the CUDA backend's
// place, the local transport's events, side stream, copies and direct kernel, the sparse
// device ops' place — on host memory, synchronously. Its streams are in-order
// by construction (every operation is done when enqueued), so what the tests
// check is the structure of a call (rounds, handshakes, host syncs, events,
// allocations) and its results, not the device's timing.
//
// Linked into a test binary, it takes over at load (after the library's own
// providers, which run first as the library loads before the program).
#pragma once

#include <cstdint>

namespace simdev {

// Events and streams that exist now (created and not yet destroyed).
int64_t liveEvents();
int64_t liveStreams();
// Operations enqueued since load: event records, stream waits, copies.
int64_t records();
int64_t waits();
int64_t copies();
// Direct kernels (native calls on one device) enqueued since load.
int64_t directs();

// A stream handle to pass to calls on simulated devices (never dereferenced).
void* stream();

}  // namespace simdev
