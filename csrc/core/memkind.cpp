#include "core/memkind.h"

namespace sc {
namespace {

PtrKind alwaysHost(const void*) { return PtrKind::Host; }

}  // namespace

ToolkitFn<PtrKind(const void*)> pointerKind{alwaysHost};

}  // namespace sc
