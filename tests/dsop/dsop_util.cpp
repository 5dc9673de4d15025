#include "dsop_util.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "core/dtype.h"

namespace dsoptest {

double aValue(int rank, size_t x) { return double(int((rank * 7 + x * 3 + 1) % 9) - 4); }
double bValue(int rank, size_t y) { return double(int((rank * 5 + y * 11 + 2) % 7) - 3); }

size_t inSize(scDataType_t dt) { return sc::dtypeSize(dt); }
size_t outSize(scDataType_t dt) { return dt == scFloat64 ? 8 : 4; }

std::vector<char> encode(const std::vector<double>& v, scDataType_t dt) {
  std::vector<char> out(v.size() * inSize(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    char* p = out.data() + i * inSize(dt);
    switch (dt) {
      case scFloat32: {
        const float f = float(v[i]);
        std::memcpy(p, &f, 4);
        break;
      }
      case scFloat64: std::memcpy(p, &v[i], 8); break;
      case scFloat16: {
        const uint16_t h = sc::floatToHalf(float(v[i]));
        std::memcpy(p, &h, 2);
        break;
      }
      case scBfloat16: {
        const uint16_t h = sc::floatToBf16(float(v[i]));
        std::memcpy(p, &h, 2);
        break;
      }
      default: throw std::runtime_error("encode: unsupported dtype");
    }
  }
  return out;
}

std::vector<double> decodeOut(const void* p, size_t n, scDataType_t dt) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (dt == scFloat64) {
      std::memcpy(&out[i], static_cast<const char*>(p) + i * 8, 8);
    } else {
      float f;
      std::memcpy(&f, static_cast<const char*>(p) + i * 4, 4);
      out[i] = f;
    }
  }
  return out;
}

std::vector<double> vecA(int rank, size_t n) {
  std::vector<double> v(n);
  for (size_t x = 0; x < n; ++x) v[x] = aValue(rank, x);
  return v;
}

std::vector<double> vecB(int rank, size_t m) {
  std::vector<double> v(m);
  for (size_t y = 0; y < m; ++y) v[y] = bValue(rank, y);
  return v;
}

std::vector<double> reference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  const size_t n = a[0].size(), m = b[0].size();
  std::vector<double> G(n * m, 0.0);
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t x = 0; x < n; ++x)
      for (size_t y = 0; y < m; ++y) G[x * m + y] += a[i][x] * b[i][y];
  return G;
}

std::vector<double> reference(int P, size_t n, size_t m) {
  std::vector<std::vector<double>> a, b;
  for (int i = 0; i < P; ++i) {
    a.push_back(vecA(i, n));
    b.push_back(vecB(i, m));
  }
  return reference(a, b);
}

std::string compare(const std::vector<double>& got, const std::vector<double>& want, size_t m) {
  std::ostringstream os;
  if (got.size() != want.size()) return "size differs";
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) continue;
    if (bad++ < 5) os << " G[" << i / m << "][" << i % m << "] = " << got[i] << " (want " << want[i] << ")";
  }
  if (bad) os << " — " << bad << " of " << got.size() << " elements differ";
  return os.str();
}

namespace {
// The value an encoded input element holds.
double decodeIn(const char* p, scDataType_t dt) {
  switch (dt) {
    case scFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case scFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case scFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return sc::halfToFloat(h);
    }
    default: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return sc::bf16ToFloat(h);
    }
  }
}
}  // namespace

RealOperands realOperands(scDataType_t dt, size_t K, size_t n, size_t m, uint64_t seed) {
  RealOperands o{K, n, m, {}, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  std::vector<double> a(K * n), b(K * m);
  for (double& x : a) x = nd(rng);
  for (double& y : b) y = nd(rng);
  o.a = encode(a, dt);
  o.b = encode(b, dt);
  const size_t s = inSize(dt);
  for (size_t i = 0; i < a.size(); ++i) o.A.push_back(decodeIn(o.a.data() + i * s, dt));
  for (size_t i = 0; i < b.size(); ++i) o.B.push_back(decodeIn(o.b.data() + i * s, dt));
  return o;
}

std::string withinRoundingBound(const RealOperands& o, scDataType_t dt, const std::vector<double>& init,
                                const std::vector<double>& got) {
  const double u = outSize(dt) == 8 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  std::ostringstream os;
  size_t bad = 0;
  for (size_t x = 0; x < o.n; ++x)
    for (size_t y = 0; y < o.m; ++y) {
      const double c = init.empty() ? 0.0 : init[x * o.m + y];
      // The exact value: products of two 24-bit (53-bit) significands are exact
      // in long double's 64 bits only for float inputs; for float64 the error
      // of this reference is far below the bound's u * sum |.|.
      long double s = c, mag = std::fabs(c);
      for (size_t q = 0; q < o.K; ++q) {
        const long double p = (long double)o.A[q * o.n + x] * (long double)o.B[q * o.m + y];
        s += p;
        mag += std::fabs(p);
      }
      const double bound = 1.01 * double(o.K + 1) * u * double(mag);  // 1.01: gamma's higher-order terms
      const double err = std::fabs(double((long double)got[x * o.m + y] - s));
      if (!(err <= bound) && bad++ < 5)
        os << " G[" << x << "][" << y << "] = " << got[x * o.m + y] << ", exact " << double(s) << ", error " << err
           << " > bound " << bound << ";";
    }
  if (bad) os << " " << bad << " of " << o.n * o.m << " elements outside the rounding bound";
  return os.str();
}

uint64_t expectedBytes(scDsopAlgo_t algo, int P, int r, size_t n, size_t m, scDataType_t dt) {
  if (P == 1) return 0;
  const uint64_t si = inSize(dt), so = outSize(dt), nm = uint64_t(n) * m;
  const size_t next = size_t((r + 1) % P);
  const uint64_t vectors = uint64_t(P - 1) * (n + m) * si;
  const uint64_t blocks = (nm - blockLen(n, P, next) * m) * so;  // ring allgather of row blocks
  const uint64_t ring = (2 * nm - blockLen(nm, P, r) - blockLen(nm, P, next)) * so;
  switch (algo) {
    case scDsopAllGather: return vectors;
    case scDsopAllReduce:
    case scDsopAllReduceRing: return ring;
    case scDsopGRabenseifner: return vectors + blocks;
    case scDsopAllScatter: return ((n - blockLen(n, P, r)) + uint64_t(P - 1) * m) * si + blocks;
    default: return ~uint64_t(0);
  }
}

uint64_t hashBytes(const void* p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= static_cast<const unsigned char*>(p)[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace dsoptest
