// pointerKind from the CUDA runtime's pointer attributes.
#include <cuda_runtime_api.h>

#include "core/memkind.h"

namespace sc {
namespace {

PtrKind kindFromAttributes(const void* p) {
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
}

}  // namespace

SC_PROVIDE(pointerKind, kindFromAttributes);

}  // namespace sc
