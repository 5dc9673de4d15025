// pointerKind from the CUDA runtime's pointer attributes, asked only when a
// device pointer can exist at all.
//
// cudaPointerGetAttributes initialises the runtime and creates the primary
// context of the current device (GPU 0 by default): about 300 MB of device
// memory and a few hundred milliseconds, for every host-buffer MPI rank of a
// CUDA build that lands on a GPU node, and a driver call on every collective.
// Yet device (or managed) memory exists only inside a context: when the
// process has no context at all — none current on this thread, no primary
// context active on any device — the pointer is host memory, and nothing is
// created to learn it. The driver is reached through the runtime's entry
// point lookup, not by linking libcuda, so a CUDA build still loads on a
// machine without a driver (where every pointer is host memory).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "core/memkind.h"

namespace sc {
namespace {

struct Driver {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*deviceGetCount)(int*) = nullptr;
  CUresult (*primaryCtxGetState)(CUdevice, unsigned*, int*) = nullptr;
  enum { Ok, NoDriver, Unknown } state = Unknown;

  template <class F>
  bool find(const char* name, F* fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    // 12000: the ABI of these four calls, unchanged since CUDA 7.
    const cudaError_t rc = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q);
    if (rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice) state = NoDriver;
    if (rc != cudaSuccess || q != cudaDriverEntryPointSuccess || !p) {
      (void)cudaGetLastError();
      return false;
    }
    *fn = reinterpret_cast<F>(p);
    return true;
  }

  Driver() {
    if (find("cuInit", &init) && find("cuCtxGetCurrent", &ctxGetCurrent) && find("cuDeviceGetCount", &deviceGetCount) &&
        find("cuDevicePrimaryCtxGetState", &primaryCtxGetState))
      state = init(0) == CUDA_SUCCESS ? Ok : NoDriver;  // cuInit creates no context
  }
};

// false only when no context exists in this process (so no device memory
// does); true when one may, or when that cannot be told.
bool contextMayExist() {
  static const Driver d;
  if (d.state == Driver::NoDriver) return false;
  if (d.state != Driver::Ok) return true;
  CUcontext current = nullptr;
  if (d.ctxGetCurrent(&current) == CUDA_SUCCESS && current) return true;
  int n = 0;
  if (d.deviceGetCount(&n) != CUDA_SUCCESS) return true;
  for (int dev = 0; dev < n; ++dev) {
    unsigned flags = 0;
    int active = 0;
    if (d.primaryCtxGetState(CUdevice(dev), &flags, &active) != CUDA_SUCCESS || active) return true;
  }
  // A context created with cuCtxCreate and current on another thread only is
  // not seen here; its memory is then taken for host memory, and the host
  // backend's first access to it faults as it would without this check.
  return false;
}

PtrKind kindFromAttributes(const void* p) {
  if (!contextMayExist()) return PtrKind::Host;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // unregistered pointer: plain host memory
    return PtrKind::Host;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: return PtrKind::Device;
    case cudaMemoryTypeManaged: return PtrKind::Managed;
    default: return PtrKind::Host;
  }
}

}  // namespace

SC_PROVIDE(pointerKind, kindFromAttributes);

}  // namespace sc
