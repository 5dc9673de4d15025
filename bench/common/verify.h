// Verifiable data for result checking (-c). Inputs are small integers chosen
// so that every partial result of the reduction, in any order, is an integer
// of magnitude <= 120: exact in every type (int8 ... bfloat16, whose integers
// are exact up to 256) and free of overflow. The expected result is therefore
// one exact value per element, and a check compares bit patterns. The
// exception is sum on int8 and uint8, which must wrap modulo 256: there every
// rank's input spans the whole type, so sums over 2 or more ranks leave its
// range, and the expected value is the exact sum wrapped the same way (exact
// as well: wrapping addition is associative, so every order gives it).
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/reduce_ops.h"  // sc::fromDouble, sc::dispatchDtype (Half/BFloat16 storage)
#include "sparcoll/sparcoll.h"

namespace scbench {

// Per-element pseudo-random bits from (index, seed).
inline uint64_t mix(uint64_t i, uint64_t seed) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// v modulo 256 as the 8-bit type dt stores it: [0, 255] for uint8, [-128, 127]
// for int8 (two's complement).
inline double wrap8(int64_t v, scDataType_t dt) {
  const int64_t u = v & 0xff;
  return double(dt == scInt8 && u >= 128 ? u - 256 : u);
}

// Dense reductions over P ranks: rank r holds input(r, i); every rank's result
// is reduced(i). Correct for P <= 120 (larger P would leave the exact range of
// bfloat16; sum then degenerates to zeros, which is still exact).
struct DenseData {
  scRedOp_t op;
  int P;
  uint64_t seed;
  scDataType_t dtype = scFloat32;  // int8/uint8 sums wrap (see above)

  static constexpr int kMax = 120;

  bool wraps() const { return op == scSum && (dtype == scInt8 || dtype == scUint8); }

  double input(int rank, uint64_t i) const {
    const uint64_t h = mix(i, seed);
    switch (op) {
      case scSum: {
        if (wraps()) return wrap8(int64_t(mix(i, seed ^ (uint64_t(rank) << 32)) & 0xff), dtype);  // uniform, per rank
        // [0, kMax/P]: the sum stays <= kMax
        const uint64_t q = uint64_t(kMax / P);
        return double((h + 3u * uint64_t(rank)) % (q + 1));
      }
      case scProd: {  // 1 or 2, with at most 6 twos per element across ranks
        const uint64_t k = uint64_t(P <= 12 ? 2 : (P + 5) / 6);
        return (h + uint64_t(rank)) % k == 0 ? 2.0 : 1.0;
      }
      case scAvg: {  // a(i) on every rank, +1 on one rank and -1 on another: sum = P a(i)
        const uint64_t q = uint64_t(kMax / P > 2 ? kMax / P - 1 : 1);
        double v = double(1 + h % q);
        if (P >= 2 && uint64_t(rank) == i % uint64_t(P)) v += 1;
        if (P >= 2 && uint64_t(rank) == (i + 1) % uint64_t(P)) v -= 1;
        return v;
      }
      default:  // max, min (and data for non-reducing collectives): [0, kMax]
        return double((h + 37u * uint64_t(rank)) % (kMax + 1));
    }
  }

  double reduced(uint64_t i) const {
    double acc = input(0, i);
    for (int r = 1; r < P; ++r) {
      const double x = input(r, i);
      switch (op) {
        case scProd: acc *= x; break;
        case scMax: acc = x > acc ? x : acc; break;
        case scMin: acc = x < acc ? x : acc; break;
        default: acc += x; break;  // sum, avg
      }
    }
    if (wraps()) return wrap8(int64_t(acc), dtype);  // |acc| <= 255 P: exact in a double
    return op == scAvg ? acc / P : acc;              // exact: the sum is a multiple of P
  }
};

// dst[i] = value(i) stored as `dt`, i < n (host memory).
template <typename F>
void fillValues(void* dst, uint64_t n, scDataType_t dt, F value) {
  sc::dispatchDtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(dst);
    for (uint64_t i = 0; i < n; ++i) p[i] = sc::fromDouble<T>(value(i));
  });
}

// How a result element is compared with the expected value: bit for bit (the
// dense checks: one exact answer), or by value (-0.0 == 0.0, as when products
// of signed inputs may leave a negative zero the reference does not).
enum class Match { Bits, Value };

// Number of i < n whose stored element differs from want(i) converted to `dt` (host memory).
template <typename F>
uint64_t countWrong(const void* got, uint64_t n, scDataType_t dt, F want, Match m = Match::Bits) {
  return sc::dispatchDtype(dt, [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(got);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (m == Match::Value) {
        wrong += sc::toDouble<T>(p[i]) != want(i);
        continue;
      }
      const T w = sc::fromDouble<T>(want(i));
      // The object representations, on purpose: Match::Bits compares bit for bit.
      wrong += std::memcmp(&w, p + i, sizeof(T)) != 0;  // NOLINT(bugprone-suspicious-memory-comparison)
    }
    return wrong;
  });
}

// Number of the n elements of `esz` bytes in which a and b differ (host memory):
// a result against a reference computed by another algorithm.
inline uint64_t countDiffering(const void* a, const void* b, uint64_t n, size_t esz) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i) wrong += std::memcmp(x + i * esz, y + i * esz, esz) != 0;
  return wrong;
}

}  // namespace scbench
