// Element types and reduction operators: sizes, names, validation, and a
// dispatcher that maps scDataType_t to a C++ storage type. float16/bfloat16 are
// stored as 16-bit patterns (Half/BFloat16) and computed in float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/numeric.h"

namespace sc {

// The 16-bit storage types Half/BFloat16 and their conversions (round to
// nearest even; NaN sign and payload kept): core/numeric.h, host and device.
using num::bf16ToFloat;
using num::floatToBf16;
using num::floatToHalf;
using num::halfToFloat;

// Bytes per element; an unknown type throws. Inline, a table: every call
// takes it (twice in a neighbour allgather).
[[noreturn]] void unknownDtype(int t);
inline size_t dtypeSize(scDataType_t t) {
  static_assert(scInt8 == 0 && scUint8 == 1 && scInt32 == 2 && scUint32 == 3 && scInt64 == 4 && scUint64 == 5 &&
                    scFloat16 == 6 && scFloat32 == 7 && scFloat64 == 8 && scBfloat16 == 9 && scNumTypes == 10,
                "the table follows scDataType_t");
  constexpr unsigned char kBytes[scNumTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  if (unsigned(t) >= unsigned(scNumTypes)) unknownDtype(int(t));
  return kBytes[t];
}
// The names (core/names.cpp: scDataTypeName, scRedOpName).
const char* dtypeName(scDataType_t t);
const char* opName(scRedOp_t op);
bool dtypeIsFloat(scDataType_t t);
// The parsers of scDataTypeFromName ("float", "float32", "f32", ...) and scRedOpFromName.
bool parseDtype(const char* s, scDataType_t* out);
bool parseOp(const char* s, scRedOp_t* out);

inline void checkDtype(int t) { SC_ARG(t >= 0 && t < scNumTypes, "unknown data type ", t); }
inline void checkOp(int op) { SC_ARG(op >= 0 && op < scNumOps, "unknown reduction op ", op); }

// Calls f(T{}) with T the storage type of `t`.
template <typename F>
decltype(auto) dispatchDtype(scDataType_t t, F&& f) {
  switch (t) {
    case scInt8: return f(int8_t{});
    case scUint8: return f(uint8_t{});
    case scInt32: return f(int32_t{});
    case scUint32: return f(uint32_t{});
    case scInt64: return f(int64_t{});
    case scUint64: return f(uint64_t{});
    case scFloat16: return f(Half{});
    case scFloat32: return f(float{});
    case scFloat64: return f(double{});
    case scBfloat16: return f(BFloat16{});
    default: SC_THROW(scInvalidArgument, "unknown data type ", int(t));
  }
}

}  // namespace sc
