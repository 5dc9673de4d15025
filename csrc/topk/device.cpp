// The device side of top-k as a build without CUDA has it: every pointer is
// host memory, so a device state or a device call cannot arise; asking for
// one explicitly says why it fails.
#include "topk/device.h"

#include "core/error.h"

namespace sc {
namespace topk {
namespace {

int noDevice(const void*) { return -1; }
void* noAlloc(int device, size_t) {
  SC_THROW(scInvalidUsage, "device ", device, " requested but sparcoll was built without CUDA");
}
void noFree(int, void*) {}
void noZero(int, void*, size_t, void*) { SC_THROW(scInvalidUsage, "sparcoll was built without CUDA"); }
Outcome noSelect(const Params&, const Buffers&, const DeviceCall&) {
  SC_THROW(scInternalError, "device buffers in a build without CUDA");
}

}  // namespace

ToolkitFn<int(const void*)> deviceOf{noDevice};
ToolkitFn<void*(int, size_t)> deviceAlloc{noAlloc};
ToolkitFn<void(int, void*)> deviceFree{noFree};
ToolkitFn<void(int, void*, size_t, void*)> deviceZero{noZero};
ToolkitFn<Outcome(const Params&, const Buffers&, const DeviceCall&)> selectDevice{noSelect};

}  // namespace topk
}  // namespace sc
