#include "core/memkind.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sc {

PtrKind pointerKind(const void* p) {
#ifdef SPARCOLL_HAVE_CUDA
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // no driver / unregistered pointer: plain host memory
    return PtrKind::Host;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: return PtrKind::Device;
    case cudaMemoryTypeManaged: return PtrKind::Managed;
    default: return PtrKind::Host;
  }
#else
  (void)p;
  return PtrKind::Host;
#endif
}

}  // namespace sc
