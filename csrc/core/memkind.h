// What kind of memory a pointer refers to, where that can be known. A
// ToolkitFn (core/toolkit.h): core/cuda/memkind.cpp asks the CUDA runtime;
// without a CUDA build every pointer is host memory (memkind.cpp).
#pragma once

#include "core/toolkit.h"

namespace sc {

enum class PtrKind { Host, Device, Managed };

extern ToolkitFn<PtrKind(const void* p)> pointerKind;

}  // namespace sc
