// The local transport's device operations as a build without CUDA has them:
// device-local communicators cannot be created there, so these only say why.
#include "transport/local/device.h"

#include "core/error.h"

namespace sc::localdev {
namespace {

[[noreturn]] void noCuda() { SC_THROW(scInvalidUsage, "device buffers need a CUDA build of sparcoll"); }
void* noCreateEvent(int) { noCuda(); }
void noRecordEvent(int, void*, void*) { noCuda(); }
void noStreamWait(int, void*, void*) { noCuda(); }
void noDestroyEvent(void*) {}
void noCopyAsync(int, void*, const void*, int, size_t, void*) { noCuda(); }
void* noCreateStream(int) { noCuda(); }
void noDestroyStream(void*) {}
void noDirect(int, const DirectSpec&, void*) { noCuda(); }

}  // namespace

ToolkitFn<void*(int)> createEvent{noCreateEvent};
ToolkitFn<void(int, void*, void*)> recordEvent{noRecordEvent};
ToolkitFn<void(int, void*, void*)> streamWait{noStreamWait};
ToolkitFn<void(void*)> destroyEvent{noDestroyEvent};
ToolkitFn<void(int, void*, const void*, int, size_t, void*)> copyAsync{noCopyAsync};
ToolkitFn<void*(int)> createStream{noCreateStream};
ToolkitFn<void(void*)> destroyStream{noDestroyStream};
ToolkitFn<void(int, const DirectSpec&, void*)> direct{noDirect};

}  // namespace sc::localdev
