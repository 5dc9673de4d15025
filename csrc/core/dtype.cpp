#include "core/dtype.h"

#include <cmath>
#include <string>

namespace sc {

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "dtypeSize's table: the 16-bit types' storage");

void unknownDtype(int t) { SC_THROW(scInvalidArgument, "unknown data type ", t); }

const char* dtypeName(scDataType_t t) {
  static const char* names[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                "uint64", "half",  "float", "double", "bfloat16"};
  return (t >= 0 && t < scNumTypes) ? names[t] : "?";
}

const char* opName(scRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return (op >= 0 && op < scNumOps) ? names[op] : "?";
}

bool dtypeIsFloat(scDataType_t t) { return t == scFloat16 || t == scFloat32 || t == scFloat64 || t == scBfloat16; }

bool parseDtype(const char* s, scDataType_t* out) {
  static const struct {
    const char* name;
    scDataType_t t;
  } table[] = {{"int8", scInt8},       {"char", scInt8},         {"uint8", scUint8},     {"int32", scInt32},
               {"int", scInt32},       {"uint32", scUint32},     {"int64", scInt64},     {"uint64", scUint64},
               {"float16", scFloat16}, {"half", scFloat16},      {"f16", scFloat16},     {"float32", scFloat32},
               {"float", scFloat32},   {"f32", scFloat32},       {"float64", scFloat64}, {"double", scFloat64},
               {"f64", scFloat64},     {"bfloat16", scBfloat16}, {"bf16", scBfloat16}};
  for (const auto& e : table)
    if (std::string(s) == e.name) {
      *out = e.t;
      return true;
    }
  return false;
}

bool parseOp(const char* s, scRedOp_t* out) {
  for (int i = 0; i < scNumOps; ++i)
    if (std::string(s) == opName(scRedOp_t(i))) {
      *out = scRedOp_t(i);
      return true;
    }
  return false;
}

}  // namespace sc
