// CPU-only builds: device-local communicators cannot be created (the CUDA
// backend throws first); these exist so the transport links.
#ifndef SPARCOLL_HAVE_CUDA
#include "core/error.h"
#include "transport/local_device.h"

namespace sc::localdev {

[[noreturn]] static void noCuda() { SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll"); }
void* recordEvent(int, void*) { noCuda(); }
void streamWait(int, void*, void*) { noCuda(); }
void destroyEvent(void*) noexcept {}
void copyAsync(int, void*, const void*, size_t, void*) { noCuda(); }
void synchronize(int, void*) { noCuda(); }

}  // namespace sc::localdev
#endif
