#include "core/dtype.h"

#include <cmath>
#include <string>

namespace sc {

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "dtypeSize's table: the 16-bit types' storage");

void unknownDtype(int t) { SC_THROW(scInvalidArgument, "unknown data type ", t); }

bool dtypeIsFloat(scDataType_t t) { return t == scFloat16 || t == scFloat32 || t == scFloat64 || t == scBfloat16; }

}  // namespace sc
