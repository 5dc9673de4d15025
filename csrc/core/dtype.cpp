#include "core/dtype.h"

#include <cmath>
#include <string>

namespace sc {

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) { man <<= 1; --exp; }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | (absx > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN / Inf
  if (absx >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520 -> Inf
  if (absx < 0x38800000u) {                         // below the smallest normal half: subnormal
    float a;
    std::memcpy(&a, &absx, 4);
    // a * 2^24 is the subnormal mantissa; nearbyint rounds to nearest even.
    return sign | uint16_t(std::nearbyint(a * 16777216.0f));
  }
  // Normal: round the 13 dropped bits to nearest even.
  uint32_t r = absx + 0xfffu + ((absx >> 13) & 1u);
  return sign | uint16_t((r - (112u << 23)) >> 13);
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

size_t dtypeSize(scDataType_t t) {
  return dispatchDtype(t, [](auto v) { return sizeof(v); });
}

const char* dtypeName(scDataType_t t) {
  static const char* names[] = {"int8", "uint8", "int32", "uint32", "int64",
                                "uint64", "half", "float", "double", "bfloat16"};
  return (t >= 0 && t < scNumTypes) ? names[t] : "?";
}

const char* opName(scRedOp_t op) {
  static const char* names[] = {"sum", "prod", "max", "min", "avg"};
  return (op >= 0 && op < scNumOps) ? names[op] : "?";
}

bool dtypeIsFloat(scDataType_t t) {
  return t == scFloat16 || t == scFloat32 || t == scFloat64 || t == scBfloat16;
}

bool parseDtype(const char* s, scDataType_t* out) {
  static const struct { const char* name; scDataType_t t; } table[] = {
      {"int8", scInt8}, {"char", scInt8}, {"uint8", scUint8}, {"int32", scInt32}, {"int", scInt32},
      {"uint32", scUint32}, {"int64", scInt64}, {"uint64", scUint64}, {"float16", scFloat16},
      {"half", scFloat16}, {"f16", scFloat16}, {"float32", scFloat32}, {"float", scFloat32},
      {"f32", scFloat32}, {"float64", scFloat64}, {"double", scFloat64}, {"f64", scFloat64},
      {"bfloat16", scBfloat16}, {"bf16", scBfloat16}};
  for (const auto& e : table)
    if (std::string(s) == e.name) { *out = e.t; return true; }
  return false;
}

bool parseOp(const char* s, scRedOp_t* out) {
  for (int i = 0; i < scNumOps; ++i)
    if (std::string(s) == opName(scRedOp_t(i))) { *out = scRedOp_t(i); return true; }
  return false;
}

}  // namespace sc
