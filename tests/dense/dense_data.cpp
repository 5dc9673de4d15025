#include "dense_data.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace dtest {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

enum class Kind { Signed, Unsigned, Float };

struct TypeInfo {
  size_t size;
  Kind kind;
  i128 lo, hi;  // max/min test range: every integer in it is exact in the type
  int64_t B;    // sum/avg magnitude bound: P * B stays exact for P <= 8
};

TypeInfo info(scDataType_t dt) {
  const i128 i64min = INT64_MIN, i64max = INT64_MAX, u64max = UINT64_MAX;
  switch (dt) {
    case scInt8: return {1, Kind::Signed, -128, 127, 15};
    case scUint8: return {1, Kind::Unsigned, 0, 255, 15};
    case scInt32: return {4, Kind::Signed, INT32_MIN, INT32_MAX, 1 << 20};
    case scUint32: return {4, Kind::Unsigned, 0, UINT32_MAX, 1 << 20};
    case scInt64: return {8, Kind::Signed, i64min, i64max, int64_t(1) << 40};
    case scUint64: return {8, Kind::Unsigned, 0, u64max, int64_t(1) << 40};
    case scFloat16: return {2, Kind::Float, -2048, 2048, 255};
    case scFloat32: return {4, Kind::Float, -(i128(1) << 24), i128(1) << 24, 1 << 20};
    case scFloat64: return {8, Kind::Float, -(i128(1) << 53), i128(1) << 53, int64_t(1) << 40};
    case scBfloat16: return {2, Kind::Float, -256, 256, 31};
    default: throw std::logic_error("test: unknown dtype");
  }
}

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
uint64_t hash3(uint64_t salt, uint64_t r, uint64_t i) { return mix(salt * 0xD1B54A32D192ED03ull ^ (r << 56) ^ i); }

// Uniform integer in [0, n) from 64 random bits (multiply-shift, no division).
uint64_t below(uint64_t h, uint64_t n) { return uint64_t((u128(h) * n) >> 64); }

// Uniform integer in [lo, hi] from 64 random bits.
i128 uniform(uint64_t h, i128 lo, i128 hi) {
  const u128 span = u128(hi - lo) + 1;
  if (span == (u128(1) << 64)) return lo + i128(h);
  return lo + i128(below(h, uint64_t(span)));
}

struct Gen {
  scDataType_t dt;
  scRedOp_t op;
  int P;
  TypeInfo t;
  uint64_t salt;
  Gen(scDataType_t dt, scRedOp_t op, int P)
      : dt(dt), op(op), P(P), t(info(dt)), salt(uint64_t(dt) * 16 + uint64_t(op) + 1) {}

  i128 value(int r, size_t i) const {
    const uint64_t h = hash3(salt, uint64_t(r), i);
    const bool hasSign = t.kind != Kind::Unsigned;
    switch (op) {
      case scSum: return hasSign ? uniform(h, -t.B, t.B) : uniform(h, 0, 2 * t.B);
      case scAvg:
        if (t.kind != Kind::Float) return hasSign ? uniform(h, -t.B, t.B) : uniform(h, 0, 2 * t.B);
        {  // a(i) + d(r, i), sum over r of d(r, i) = 0
          const i128 a = uniform(hash3(salt, 99, i), -(t.B / 2), t.B / 2);
          const i128 d = i128((i + size_t(r)) % size_t(P)) - i128((i + size_t(r) + 1) % size_t(P));
          return a + d;
        }
      case scProd: {
        if ((h & 63) == 0) return 0;
        i128 f = 1;
        if ((i + size_t(r)) % 4 == 0 && r < 8) f = ((i / 4 + size_t(r)) % 2) ? 3 : 2;
        if (hasSign && below(h, 3) == 0) f = -f;
        return f;
      }
      case scMax:
      case scMin: return uniform(h, t.lo, t.hi);
      default: throw std::logic_error("test: unknown op");
    }
  }

  // Writes v (exact in the type) as one element; negZero: a float zero with the sign bit.
  void encode(i128 v, bool negZero, uint8_t* out) const {
    switch (dt) {
      case scInt8:
      case scInt32:
      case scInt64: {
        const int64_t x = int64_t(v);
        std::memcpy(out, &x, t.size);  // little-endian: the low bytes
        return;
      }
      case scUint8:
      case scUint32:
      case scUint64: {
        const uint64_t x = uint64_t(v);
        std::memcpy(out, &x, t.size);
        return;
      }
      case scFloat32: {
        const int64_t x = int64_t(v);
        float f = float(x);
        if (x == 0 && negZero) f = -0.0f;
        if (int64_t(f) != x) throw std::logic_error("test: float32 value not exact");
        std::memcpy(out, &f, 4);
        return;
      }
      case scFloat64: {
        const int64_t x = int64_t(v);
        double d = double(x);
        if (x == 0 && negZero) d = -0.0;
        if (int64_t(d) != x) throw std::logic_error("test: float64 value not exact");
        std::memcpy(out, &d, 8);
        return;
      }
      case scFloat16: {
        const uint16_t b = halfBits(int64_t(v), negZero);
        std::memcpy(out, &b, 2);
        return;
      }
      case scBfloat16: {
        const uint16_t b = bf16Bits(int64_t(v), negZero);
        std::memcpy(out, &b, 2);
        return;
      }
      default: throw std::logic_error("test: unknown dtype");
    }
  }
};

// IEEE binary16/bfloat16 bits of an integer: 1 sign, `ebits` exponent, `mbits` mantissa.
uint16_t smallFloatBits(int64_t v, bool negZero, int mbits, int bias, int maxExp, const char* name) {
  if (v == 0) return negZero ? 0x8000 : 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  const uint64_t m = v < 0 ? uint64_t(-v) : uint64_t(v);
  const int e = 63 - __builtin_clzll(m);
  if (e > maxExp) throw std::logic_error(std::string("test: integer too large for ") + name);
  const uint64_t frac = m - (uint64_t(1) << e);
  uint64_t mant;
  if (e <= mbits) {
    mant = frac << (mbits - e);
  } else {
    if (frac & ((uint64_t(1) << (e - mbits)) - 1))
      throw std::logic_error(std::string("test: integer not exact in ") + name);
    mant = frac >> (e - mbits);
  }
  return uint16_t(sign | (uint64_t(e + bias) << mbits) | mant);
}

}  // namespace

const scDataType_t kAllTypes[10] = {scInt8,   scUint8,   scInt32,   scUint32,  scInt64,
                                    scUint64, scFloat16, scFloat32, scFloat64, scBfloat16};
const scRedOp_t kAllOps[5] = {scSum, scProd, scMax, scMin, scAvg};

size_t elemSize(scDataType_t dt) { return info(dt).size; }

const char* typeStr(scDataType_t dt) {
  static const char* n[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                            "uint64", "float16", "float32", "float64", "bfloat16"};
  return dt >= 0 && dt < 10 ? n[dt] : "?";
}
const char* opStr(scRedOp_t op) {
  static const char* n[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < 5 ? n[op] : "?";
}
const char* algoStr(scAlgo_t a) {
  static const char* n[] = {"auto", "ring", "rabenseifner", "recdbl", "native", "binomial", "scatter_allgather"};
  static_assert(sizeof(n) / sizeof(n[0]) == scNumAlgos, "n follows scAlgo_t");
  return a >= 0 && a < scNumAlgos ? n[a] : "?";
}

uint16_t halfBits(int64_t v, bool negZero) { return smallFloatBits(v, negZero, 10, 15, 15, "float16"); }
uint16_t bf16Bits(int64_t v, bool negZero) { return smallFloatBits(v, negZero, 7, 127, 127, "bfloat16"); }

Bytes makeInput(scDataType_t dt, scRedOp_t op, int P, int r, size_t first, size_t n) {
  const Gen g(dt, op, P);
  Bytes out(n * g.t.size);
  for (size_t k = 0; k < n; ++k) g.encode(g.value(r, first + k), false, out.data() + k * g.t.size);
  return out;
}

Bytes makeExpected(scDataType_t dt, scRedOp_t op, int P, size_t first, size_t n) {
  const Gen g(dt, op, P);
  Bytes out(n * g.t.size);
  for (size_t k = 0; k < n; ++k) {
    const size_t i = first + k;
    i128 acc = g.value(0, i);
    int negatives = acc < 0;
    for (int r = 1; r < P; ++r) {
      const i128 v = g.value(r, i);
      negatives += v < 0;
      switch (op) {
        case scSum:
        case scAvg: acc += v; break;
        case scProd: acc *= v; break;
        case scMax: acc = v > acc ? v : acc; break;
        case scMin: acc = v < acc ? v : acc; break;
        default: throw std::logic_error("test: unknown op");
      }
    }
    if (op == scAvg) {
      if (g.t.kind == Kind::Float && acc % P != 0) throw std::logic_error("test: float avg data not divisible");
      acc /= P;  // truncates toward zero, as sparcoll.h documents for integers
    }
    const bool negZero = op == scProd && g.t.kind == Kind::Float && acc == 0 && (negatives % 2) == 1;
    g.encode(acc, negZero, out.data() + k * g.t.size);
  }
  return out;
}

Bytes makePayload(int r, size_t bytes, uint64_t salt) {
  Bytes out(bytes);
  for (size_t k = 0; k < bytes; k += 8) {
    const uint64_t h = hash3(salt + 1000, uint64_t(r), k / 8);
    std::memcpy(out.data() + k, &h, std::min<size_t>(8, bytes - k));
  }
  return out;
}

std::string firstMismatch(const uint8_t* got, const uint8_t* want, size_t n, size_t esz) {
  if (n == 0 || std::memcmp(got, want, n * esz) == 0) return {};
  size_t first = n, count = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(got + i * esz, want + i * esz, esz) != 0) {
      if (first == n) first = i;
      ++count;
    }
  auto hex = [&](const uint8_t* p) {
    std::ostringstream os;
    os << "0x" << std::hex << std::setfill('0');
    for (size_t b = esz; b-- > 0;) os << std::setw(2) << int(p[b]);
    return os.str();
  };
  std::ostringstream os;
  os << count << " of " << n << " elements differ; first at index " << first << ": got " << hex(got + first * esz)
     << ", expected " << hex(want + first * esz);
  return os.str();
}

std::vector<size_t> smallCounts(int P) {
  std::vector<size_t> c = {0, 1};
  if (P - 1 > 1) c.push_back(size_t(P - 1));
  c.push_back(1000);
  return c;
}

Share share(size_t n, int P, int r) {
  const size_t q = n / size_t(P), m = n % size_t(P), ur = size_t(r);
  return {ur * q + std::min(ur, m), q + (ur < m ? 1 : 0)};
}

uint64_t digest(const void* p, size_t bytes) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  uint64_t h = 0xCBF29CE484222325ull ^ bytes;
  size_t k = 0;
  for (; k + 8 <= bytes; k += 8) {
    uint64_t w;
    std::memcpy(&w, b + k, 8);
    h = mix(h ^ w);
  }
  for (; k < bytes; ++k) h = (h ^ b[k]) * 0x100000001B3ull;
  return h;
}

}  // namespace dtest
