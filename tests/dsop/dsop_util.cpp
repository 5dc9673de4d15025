#include "dsop_util.h"

#include <cmath>
#include <cstring>
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
      case scFloat32: { const float f = float(v[i]); std::memcpy(p, &f, 4); break; }
      case scFloat64: std::memcpy(p, &v[i], 8); break;
      case scFloat16: { const uint16_t h = sc::floatToHalf(float(v[i])); std::memcpy(p, &h, 2); break; }
      case scBfloat16: { const uint16_t h = sc::floatToBf16(float(v[i])); std::memcpy(p, &h, 2); break; }
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

uint64_t expectedBytes(scDsopAlgo_t algo, int P, int r, size_t n, size_t m, scDataType_t dt) {
  if (P == 1) return 0;
  const uint64_t si = inSize(dt), so = outSize(dt), nm = uint64_t(n) * m;
  const size_t next = size_t((r + 1) % P);
  const uint64_t vectors = uint64_t(P - 1) * (n + m) * si;
  const uint64_t blocks = (nm - blockLen(n, P, next) * m) * so;  // ring allgather of row blocks
  const uint64_t ring = (2 * nm - blockLen(nm, P, r) - blockLen(nm, P, next)) * so;
  switch (algo) {
    case scDsopAllGather: return vectors;
    case scDsopAllReduce: case scDsopAllReduceRing: return ring;
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
