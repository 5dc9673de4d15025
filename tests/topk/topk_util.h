// Helpers shared by the top-k tests: typed buffers built from doubles, a call
// wrapper that reads a selection back, and the thesis's selection
// probabilities computed independently in double precision (straight from the
// formulas of §2.4.1, not from the library's integer arithmetic).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "sparcoll/sparcoll.h"

namespace tk {

inline size_t esz(scDataType_t dt) { return sc::dtypeSize(dt); }

// One element of dtype dt from a double (16-bit types through the library's
// independent core/dtype.cpp conversions).
inline void store(void* buf, size_t i, double x, scDataType_t dt) {
  char* b = static_cast<char*>(buf);
  switch (dt) {
    case scFloat32: {
      float f = float(x);
      std::memcpy(b + 4 * i, &f, 4);
      break;
    }
    case scFloat64: std::memcpy(b + 8 * i, &x, 8); break;
    case scFloat16: {
      uint16_t h = sc::floatToHalf(float(x));
      std::memcpy(b + 2 * i, &h, 2);
      break;
    }
    case scBfloat16: {
      uint16_t h = sc::floatToBf16(float(x));
      std::memcpy(b + 2 * i, &h, 2);
      break;
    }
    default: ADD_FAILURE() << "bad dtype";
  }
}

inline double load(const void* buf, size_t i, scDataType_t dt) {
  const char* b = static_cast<const char*>(buf);
  switch (dt) {
    case scFloat32: {
      float f;
      std::memcpy(&f, b + 4 * i, 4);
      return f;
    }
    case scFloat64: {
      double d;
      std::memcpy(&d, b + 8 * i, 8);
      return d;
    }
    case scFloat16: {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      return sc::halfToFloat(h);
    }
    case scBfloat16: {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      return sc::bf16ToFloat(h);
    }
    default: ADD_FAILURE() << "bad dtype"; return 0;
  }
}

inline uint64_t bitsAt(const void* buf, size_t i, scDataType_t dt) {
  uint64_t u = 0;
  std::memcpy(&u, static_cast<const char*>(buf) + esz(dt) * i, esz(dt));
  return u;
}

// The independent definition of acc = g + r: IEEE add in the dtype (16-bit
// types: float32 add, rounded by core/dtype.cpp), as bits.
inline uint64_t addBits(uint64_t g, uint64_t r, scDataType_t dt) {
  switch (dt) {
    case scFloat32: {
      float a, b;
      uint32_t ga = uint32_t(g), rb = uint32_t(r);
      std::memcpy(&a, &ga, 4);
      std::memcpy(&b, &rb, 4);
      const float s = a + b;
      uint32_t o;
      std::memcpy(&o, &s, 4);
      return o;
    }
    case scFloat64: {
      double a, b;
      std::memcpy(&a, &g, 8);
      std::memcpy(&b, &r, 8);
      const double s = a + b;
      uint64_t o;
      std::memcpy(&o, &s, 8);
      return o;
    }
    case scFloat16: return sc::floatToHalf(sc::halfToFloat(uint16_t(g)) + sc::halfToFloat(uint16_t(r)));
    case scBfloat16: return sc::floatToBf16(sc::bf16ToFloat(uint16_t(g)) + sc::bf16ToFloat(uint16_t(r)));
    default: ADD_FAILURE() << "bad dtype"; return 0;
  }
}

struct Buf {
  scDataType_t dt;
  std::vector<char> bytes;
  Buf(size_t n, scDataType_t t) : dt(t), bytes(n * esz(t)) {}
  Buf(const std::vector<double>& v, scDataType_t t) : Buf(v.size(), t) {
    for (size_t i = 0; i < v.size(); ++i) store(bytes.data(), i, v[i], t);
  }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  size_t size() const { return bytes.size() / esz(dt); }
  double at(size_t i) const { return load(bytes.data(), i, dt); }
  uint64_t bits(size_t i) const { return bitsAt(bytes.data(), i, dt); }
};

inline scTopkConfig_t config(scTopkMethod_t m, size_t k, size_t bucket = 512, uint64_t seed = 1, uint64_t step = 0) {
  scTopkConfig_t c = SC_TOPK_CONFIG_INITIALIZER;
  c.method = m;
  c.k = k;
  c.bucket = bucket;
  c.seed = seed;
  c.step = step;
  return c;
}

// A selection read back: indices as uint64, values as bits.
struct Sel {
  scResult_t rc = scSuccess;
  scTopkInfo_t info{};
  std::vector<uint64_t> idx, bits;
};

inline Sel readBack(const void* idx, const void* val, size_t nnz, scTopkIndex_t it, scDataType_t dt) {
  Sel s;
  for (size_t j = 0; j < nnz; ++j) {
    s.idx.push_back(it == scTopkIndexU32 ? static_cast<const uint32_t*>(idx)[j] : static_cast<const uint64_t*>(idx)[j]);
    s.bits.push_back(bitsAt(val, j, dt));
  }
  return s;
}

// Value bits with every NaN replaced by one pattern: where values are computed
// (error feedback adds the residual), a NaN's payload is the arithmetic's own
// (x86 propagates an operand's payload, the GPU returns its canonical NaN), as
// the top-k header says; everything else must match bit for bit.
inline uint64_t nanCanonical(uint64_t bits, scDataType_t dt) {
  switch (dt) {
    case scFloat16: return (bits & 0x7fffu) > 0x7c00u ? 0x7e00u : bits;
    case scBfloat16: return (bits & 0x7fffu) > 0x7f80u ? 0x7fc0u : bits;
    case scFloat32: return (bits & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : bits;
    case scFloat64: return (bits & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : bits;
    default: return bits;
  }
}
inline std::vector<uint64_t> nanCanonical(std::vector<uint64_t> bits, scDataType_t dt) {
  for (auto& b : bits) b = nanCanonical(b, dt);
  return bits;
}

// scTopkSelect on host buffers; capacity 0 = scTopkMaxOutput.
inline Sel select(const Buf& v, const scTopkConfig_t& cfg, size_t capacity = 0) {
  if (capacity == 0) EXPECT_EQ(scTopkMaxOutput(v.size(), &cfg, &capacity), scSuccess) << scGetLastError(nullptr);
  std::vector<uint64_t> idx(capacity + 1);
  Buf val(capacity + 1, v.dt);
  scTopkInfo_t info{};
  const scResult_t rc = scTopkSelect(v.data(), v.size(), v.dt, &cfg, idx.data(), val.data(), capacity, &info, nullptr);
  Sel s = readBack(idx.data(), val.data(), rc == scSuccess || rc == scInvalidUsage ? info.nnz : 0, cfg.indexType, v.dt);
  s.rc = rc;
  s.info = info;
  return s;
}

inline void expectSortedUnique(const std::vector<uint64_t>& idx, size_t n) {
  for (size_t j = 0; j < idx.size(); ++j) {
    ASSERT_LT(idx[j], n) << "index out of range at " << j;
    if (j) ASSERT_LT(idx[j - 1], idx[j]) << "indices not strictly increasing at " << j;
  }
}

// Thesis §2.4.1, per bucket with the integer share k_b = floor(k e/n) - floor(k s/n).
inline std::vector<double> probabilities(const std::vector<double>& v, size_t k, size_t bucket, bool atMost) {
  const size_t n = v.size();
  std::vector<double> p(n, 0.0);
  for (size_t s = 0; s < n; s += bucket) {
    const size_t e = std::min(n, s + bucket), L = e - s;
    const double kb = double((unsigned __int128)k * e / n - (unsigned __int128)k * s / n);
    double l1 = 0, linf = 0;
    for (size_t i = s; i < e; ++i) {
      l1 += std::fabs(v[i]);
      linf = std::max(linf, std::fabs(v[i]));
    }
    if (l1 == 0) continue;  // all-zero bucket: nothing to select
    if (kb >= double(L)) {
      std::fill(p.begin() + s, p.begin() + e, 1.0);
      continue;
    }
    for (size_t i = s; i < e; ++i) {
      if (atMost || linf <= l1 / kb) {
        p[i] = std::min(1.0, kb * std::fabs(v[i]) / l1);
      } else {
        const double eps = (kb * linf - l1) / double(L - kb);
        p[i] = kb * (std::fabs(v[i]) + eps) / (l1 + L * eps);
      }
    }
  }
  return p;
}

inline std::vector<double> randomVector(size_t n, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace tk
