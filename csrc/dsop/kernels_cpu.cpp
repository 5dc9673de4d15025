// Host DSOP kernel: a GEMM with a tiny inner dimension K is bound by writing
// the result, so the loop is organised to write each result element once:
// columns are cut into tiles that stay in L1 together with the K slices of b
// they need, and for every row the K products are summed four at a time in
// registers before the tile row is stored. The inner loops are plain
// unit-stride loops over __restrict pointers that GCC/Clang vectorise at -O2+.
// OpenBLAS (sgemm with k = K) was not measurably faster for K <= 64 and is not
// a dependency.
#include <algorithm>
#include <vector>

#include "core/dtype.h"
#include "dsop/kernels.h"
#include "dsop/tile_math.h"

namespace sc::dsop {
namespace {

constexpr size_t kTile = 1024;  // columns per tile: 4 KiB of float32 output

// d[j] (+)= sum_{g<G} s[g] * b[g][j]: G products summed in a register per
// element, so the tile row is loaded and stored once per G pairs.
template <int G, typename Out>
void addRow(Out* __restrict d, size_t n, bool acc, const Out* s, const Out* const* b) {
  Out c[G];
  const Out* __restrict v[G];
  for (int g = 0; g < G; ++g) {
    c[g] = s[g];
    v[g] = b[g];
  }
  if (acc) {
    for (size_t j = 0; j < n; ++j) {
      Out t = d[j];
      for (int g = 0; g < G; ++g) t += c[g] * v[g][j];
      d[j] = t;
    }
  } else {
    for (size_t j = 0; j < n; ++j) {
      Out t = c[0] * v[0][j];
      for (int g = 1; g < G; ++g) t += c[g] * v[g][j];
      d[j] = t;
    }
  }
}

template <typename In>
void run(const Pairs& p, const Rect& r, void* dstv, size_t ldd, bool accumulate) {
  using Out = Acc<In>;
  const In* A = static_cast<const In*>(p.a);
  const In* B = static_cast<const In*>(p.b);
  Out* dst = static_cast<Out*>(dstv);
  const size_t K = p.K;
  constexpr bool native = std::is_same_v<In, Out>;
  // 16-bit inputs: the b slices of a tile are widened once per tile.
  std::vector<Out> wide(native ? 0 : K * std::min(kTile, r.cols));
  std::vector<const Out*> bq(K);
  std::vector<Out> coef(K);
  for (size_t c = 0; c < r.cols; c += kTile) {
    const size_t w = std::min(kTile, r.cols - c);
    for (size_t q = 0; q < K; ++q) {
      const In* src = B + q * p.ldb + r.c0 + c;
      if constexpr (native) {
        bq[q] = src;
      } else {
        Out* t = wide.data() + q * w;
        for (size_t j = 0; j < w; ++j) t[j] = widen(src[j]);
        bq[q] = t;
      }
    }
    for (size_t i = 0; i < r.rows; ++i) {
      for (size_t q = 0; q < K; ++q) coef[q] = widen(A[q * p.lda + r.r0 + i]);
      Out* d = dst + i * ldd + c;
      for (size_t q = 0; q < K; q += 4) {
        const bool acc = accumulate || q > 0;
        switch (std::min<size_t>(4, K - q)) {
          case 1: addRow<1>(d, w, acc, &coef[q], &bq[q]); break;
          case 2: addRow<2>(d, w, acc, &coef[q], &bq[q]); break;
          case 3: addRow<3>(d, w, acc, &coef[q], &bq[q]); break;
          default: addRow<4>(d, w, acc, &coef[q], &bq[q]); break;
        }
      }
    }
  }
}

}  // namespace

void hostRect(scDataType_t in, const Pairs& p, const Rect& r, void* dst, size_t ldd, bool accumulate) {
  if (r.rows == 0 || r.cols == 0) return;
  if (p.K == 0) {
    if (!accumulate)
      for (size_t i = 0; i < r.rows; ++i)
        std::fill_n(static_cast<char*>(dst) + i * ldd * dtypeSize(outputType(in)), r.cols * dtypeSize(outputType(in)),
                    char(0));
    return;
  }
  switch (in) {
    case scFloat32: run<float>(p, r, dst, ldd, accumulate); break;
    case scFloat64: run<double>(p, r, dst, ldd, accumulate); break;
    case scFloat16: run<Half>(p, r, dst, ldd, accumulate); break;
    case scBfloat16: run<BFloat16>(p, r, dst, ldd, accumulate); break;
    default: SC_THROW(scInvalidArgument, "DSOP does not support data type ", dtypeName(in));
  }
}

}  // namespace sc::dsop
