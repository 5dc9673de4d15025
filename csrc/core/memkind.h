// What kind of memory a pointer refers to, where that can be known. Without a
// CUDA build every pointer is host memory.
#pragma once

namespace sc {

enum class PtrKind { Host, Device, Managed };

PtrKind pointerKind(const void* p);

}  // namespace sc
