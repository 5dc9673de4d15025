#include "sparse_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/dtype.h"

namespace sptest {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Rng {
  uint64_t s;
  uint64_t next() { return s = mix(s); }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
};

// Knuth's selection sampling: k of the n positions first + i*stride, sorted.
void selectSorted(Rng& g, uint64_t first, uint64_t stride, uint64_t n, uint64_t k, std::vector<uint64_t>* out) {
  k = std::min(k, n);
  for (uint64_t i = 0; i < n && k > 0; ++i)
    if (g.unit() * double(n - i) < double(k)) {
      out->push_back(first + i * stride);
      --k;
    }
}

struct Range {
  uint64_t off, len;
};
Range block(uint64_t N, int P, int p) {
  const uint64_t q = N / P, r = N % P;
  return {p * q + std::min<uint64_t>(p, r), q + (uint64_t(p) < r ? 1 : 0)};
}

}  // namespace

const char* distName(Dist d) {
  switch (d) {
    case Dist::Uniform: return "uniform";
    case Dist::PowerLaw: return "power-law";
    case Dist::Disjoint: return "disjoint";
    case Dist::Identical: return "identical";
    case Dist::EvenIdentical: return "even-identical";
    case Dist::Elsewhere: return "elsewhere";
  }
  return "?";
}

uint64_t kFor(uint64_t N, double density) {
  if (density <= 0 || N == 0) return 0;
  return std::min<uint64_t>(N, std::max<uint64_t>(1, uint64_t(std::llround(density * double(N)))));
}

Input makeInput(Dist d, uint64_t N, uint64_t k, int rank, int P, uint64_t seed, bool nonNegative) {
  const bool shared = d == Dist::Identical || d == Dist::EvenIdentical;
  Rng g{mix(seed * 1000003 + (shared ? 77777 : uint64_t(rank)))};
  Input in;
  switch (d) {
    case Dist::Uniform:
    case Dist::Identical: selectSorted(g, 0, 1, N, k, &in.idx); break;
    case Dist::Disjoint:
      if (uint64_t(rank) < N) selectSorted(g, rank, P, (N - rank + P - 1) / P, k, &in.idx);
      break;
    case Dist::EvenIdentical:
      for (int p = 0; p < P; ++p) {
        const Range b = block(N, P, p);
        const uint64_t per = std::min<uint64_t>(k / P, b.len);
        for (uint64_t j = 0; j < per; ++j) in.idx.push_back(b.off + j * (b.len / per));
      }
      break;
    case Dist::Elsewhere: {
      const Range b = block(N, P, (rank + 1) % P);
      selectSorted(g, b.off, 1, b.len, k, &in.idx);
      break;
    }
    case Dist::PowerLaw: {
      std::vector<char> mark(N, 0);
      uint64_t have = 0;
      for (uint64_t tries = 0; have < std::min(k, N) && tries < 20 * k + 1000; ++tries) {
        const double u = g.unit();
        const uint64_t x = std::min<uint64_t>(N - 1, uint64_t(double(N) * u * u * u));
        if (!mark[x]) {
          mark[x] = 1;
          ++have;
        }
      }
      for (uint64_t x = g.next() % std::max<uint64_t>(N, 1), n = 0; have < std::min(k, N) && n < N;
           ++n, x = (x + 1) % N)
        if (!mark[x]) {
          mark[x] = 1;
          ++have;
        }
      for (uint64_t x = 0; x < N; ++x)
        if (mark[x]) in.idx.push_back(x);
      break;
    }
  }
  Rng vg{mix(seed ^ (uint64_t(rank) << 40))};
  for (size_t i = 0; i < in.idx.size(); ++i) {
    const uint64_t h = vg.next();
    const int v = int(h % 8) + 1;
    in.val.push_back(!nonNegative && (h >> 20 & 1) ? -v : v);
  }
  return in;
}

std::vector<Input> makeAll(Dist d, uint64_t N, uint64_t k, int P, uint64_t seed, bool nonNegative) {
  std::vector<Input> all;
  for (int r = 0; r < P; ++r) all.push_back(makeInput(d, N, k, r, P, seed, nonNegative));
  return all;
}

size_t typeSize(scDataType_t t) { return sc::dtypeSize(t); }
bool isUnsigned(scDataType_t t) { return t == scUint8 || t == scUint32 || t == scUint64; }
const char* typeStr(scDataType_t t) { return sc::dtypeName(t); }

std::vector<uint8_t> packIndices(const std::vector<uint64_t>& idx, scIndexType_t it) {
  const size_t isz = it == scIndexU64 ? 8 : 4;
  std::vector<uint8_t> b(idx.size() * isz);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (isz == 8) std::memcpy(&b[i * 8], &idx[i], 8);
    else {
      const uint32_t v = uint32_t(idx[i]);
      std::memcpy(&b[i * 4], &v, 4);
    }
  }
  return b;
}

void encode(double v, scDataType_t t, void* dst) {
  switch (t) {
    case scInt8: {
      int8_t x = int8_t(v);
      std::memcpy(dst, &x, 1);
      break;
    }
    case scUint8: {
      uint8_t x = uint8_t(int64_t(v));
      std::memcpy(dst, &x, 1);
      break;
    }
    case scInt32: {
      int32_t x = int32_t(v);
      std::memcpy(dst, &x, 4);
      break;
    }
    case scUint32: {
      uint32_t x = uint32_t(int64_t(v));
      std::memcpy(dst, &x, 4);
      break;
    }
    case scInt64: {
      int64_t x = int64_t(v);
      std::memcpy(dst, &x, 8);
      break;
    }
    case scUint64: {
      uint64_t x = uint64_t(int64_t(v));
      std::memcpy(dst, &x, 8);
      break;
    }
    case scFloat16: {
      uint16_t x = sc::floatToHalf(float(v));
      std::memcpy(dst, &x, 2);
      break;
    }
    case scBfloat16: {
      uint16_t x = sc::floatToBf16(float(v));
      std::memcpy(dst, &x, 2);
      break;
    }
    case scFloat32: {
      float x = float(v);
      std::memcpy(dst, &x, 4);
      break;
    }
    case scFloat64: std::memcpy(dst, &v, 8); break;
    default: break;
  }
}

std::vector<uint8_t> packValues(const std::vector<int>& val, scDataType_t t) {
  const size_t esz = typeSize(t);
  std::vector<uint8_t> b(val.size() * esz);
  for (size_t i = 0; i < val.size(); ++i) encode(val[i], t, &b[i * esz]);
  return b;
}

std::vector<uint8_t> expectedDense(const std::vector<Input>& all, uint64_t N, scDataType_t t, scRedOp_t op) {
  std::vector<double> sum(N, 0.0);
  for (const Input& in : all)
    for (size_t i = 0; i < in.idx.size(); ++i) sum[in.idx[i]] += in.val[i];
  const size_t esz = typeSize(t);
  const int P = int(all.size());
  std::vector<uint8_t> out(N * esz);
  const bool integer = t != scFloat16 && t != scBfloat16 && t != scFloat32 && t != scFloat64;
  for (uint64_t i = 0; i < N; ++i) {
    double v = sum[i];
    if (op == scAvg && P > 1) {
      if (integer) v = double(int64_t(v) / P);  // truncation toward zero
      else if (t == scFloat64) v = v / P;
      else v = double(float(v) / float(P));  // float32 division, rounded once by encode
    }
    encode(v, t, &out[i * esz]);
  }
  return out;
}

std::string compareDense(const void* got, const std::vector<uint8_t>& want, uint64_t N, scDataType_t t) {
  const size_t esz = typeSize(t);
  const uint8_t* g = static_cast<const uint8_t*>(got);
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < N; ++i)
    if (std::memcmp(g + i * esz, &want[i * esz], esz) != 0 && bad++ == 0) first = i;
  if (!bad) return "";
  auto hex = [&](const uint8_t* p) {
    std::ostringstream os;
    os << std::hex;
    for (size_t b = esz; b-- > 0;) os << (p[b] >> 4) << (p[b] & 15);
    return os.str();
  };
  std::ostringstream os;
  os << bad << " of " << N << " elements differ; first at " << first << ": got 0x" << hex(g + first * esz)
     << ", want 0x" << hex(&want[first * esz]);
  return os.str();
}

std::string compareSparse(const void* idx, const void* val, size_t nnz, scIndexType_t it,
                          const std::vector<uint8_t>& want, uint64_t N, scDataType_t t) {
  const size_t isz = it == scIndexU64 ? 8 : 4, esz = typeSize(t);
  std::vector<uint8_t> dense(N * esz, 0);
  uint64_t prev = 0;
  for (size_t i = 0; i < nnz; ++i) {
    uint64_t x = 0;
    std::memcpy(&x, static_cast<const uint8_t*>(idx) + i * isz, isz);
    if (x >= N) return "index " + std::to_string(x) + " at " + std::to_string(i) + " >= dim";
    if (i > 0 && x <= prev) return "indices not strictly increasing at " + std::to_string(i);
    prev = x;
    std::memcpy(&dense[x * esz], static_cast<const uint8_t*>(val) + i * esz, esz);
  }
  return compareDense(dense.data(), want, N, t);
}

uint64_t digest(const void* p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

}  // namespace sptest
