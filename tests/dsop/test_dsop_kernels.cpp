// The host DSOP kernel against a naive triple loop (every type, rectangle
// offsets, strides, accumulate, K around the unroll width), the element-range
// decomposition of the fused ring, and the layout arithmetic at sizes beyond
// 2^32 elements (no allocation: the arithmetic is what could overflow).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "algo/ctx.h"
#include "dsop/kernels.h"
#include "dsop_util.h"

using namespace dsoptest;
using sc::dsop::Pairs;
using sc::dsop::Rect;

namespace {

struct Operands {
  size_t K, n, m, lda, ldb;
  std::vector<double> A, B;  // K vectors each, with strides lda / ldb
};

Operands makeOperands(size_t K, size_t n, size_t m, size_t pad) {
  Operands o{K, n, m, n + pad, m + 2 * pad, {}, {}};
  o.A.assign(K * o.lda, 1e9);  // padding must never be read into a result
  o.B.assign(K * o.ldb, 1e9);
  for (size_t q = 0; q < K; ++q) {
    for (size_t x = 0; x < n; ++x) o.A[q * o.lda + x] = aValue(int(q), x);
    for (size_t y = 0; y < m; ++y) o.B[q * o.ldb + y] = bValue(int(q), y);
  }
  return o;
}

}  // namespace

TEST(DsopKernel, HostRectMatchesNaive) {
  std::mt19937 rng(7);
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16})
    for (size_t K : {1, 2, 3, 4, 5, 8, 9, 17})
      for (auto [n, m] : {std::pair<size_t, size_t>{1, 1}, {13, 1}, {1, 2100}, {37, 1500}, {64, 64}}) {
        const Operands o = makeOperands(K, n, m, 3);
        const auto A = encode(o.A, dt), B = encode(o.B, dt);
        for (int trial = 0; trial < 3; ++trial) {
          const size_t r0 = rng() % n, c0 = rng() % m;
          const size_t rows = 1 + rng() % (n - r0), cols = 1 + rng() % (m - c0), ldd = cols + rng() % 5;
          for (bool acc : {false, true}) {
            SCOPED_TRACE(testing::Message() << "dt=" << int(dt) << " K=" << K << " rect " << r0 << "+" << rows << " x "
                                            << c0 << "+" << cols << " ldd=" << ldd << " acc=" << acc);
            std::vector<double> init(rows * ldd);
            for (size_t i = 0; i < init.size(); ++i) init[i] = double(int(i % 7) - 3);
            std::vector<char> dst = encode(init, outSize(dt) == 8 ? scFloat64 : scFloat32);
            sc::dsop::hostRect(dt, Pairs{A.data(), o.lda, B.data(), o.ldb, K}, Rect{r0, rows, c0, cols}, dst.data(),
                               ldd, acc);
            const auto got = decodeOut(dst.data(), rows * ldd, dt);
            size_t bad = 0;
            for (size_t i = 0; i < rows; ++i)
              for (size_t j = 0; j < ldd; ++j) {
                double want = init[i * ldd + j];
                if (j < cols) {
                  double s = 0;
                  for (size_t q = 0; q < K; ++q) s += o.A[q * o.lda + r0 + i] * o.B[q * o.ldb + c0 + j];
                  want = acc ? want + s : s;
                }
                if (got[i * ldd + j] != want && bad++ < 3)
                  ADD_FAILURE() << "dst[" << i << "][" << j << "] = " << got[i * ldd + j] << ", want " << want;
              }
            EXPECT_EQ(bad, 0u);
          }
        }
      }
}

// Real-valued operands (normal, rounded to the dtype): the host kernel stays
// within the documented rounding bound of the exact sum, with and without an
// initial value. (Integer data, above, is exact; this is where engines may
// differ in the last bits, and the bound is the contract they share.)
TEST(DsopKernel, HostRealValuedWithinRoundingBound) {
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16})
    for (size_t K : {1, 2, 5, 64, 300}) {
      SCOPED_TRACE(testing::Message() << "dt=" << int(dt) << " K=" << K);
      const size_t n = 37, m = 129;
      const RealOperands o = realOperands(dt, K, n, m, 11 + K);
      const scDataType_t odt = outSize(dt) == 8 ? scFloat64 : scFloat32;
      for (bool acc : {false, true}) {
        std::vector<double> init;  // exact in the output type
        if (acc)
          for (size_t i = 0; i < n * m; ++i) init.push_back(std::ldexp(double(int(i % 17) - 8), -3));
        std::vector<char> dst = encode(acc ? init : std::vector<double>(n * m, 7.0), odt);
        sc::dsop::hostRect(dt, Pairs{o.a.data(), n, o.b.data(), m, K}, Rect{0, n, 0, m}, dst.data(), m, acc);
        EXPECT_EQ(withinRoundingBound(o, dt, init, decodeOut(dst.data(), n * m, dt)), "") << "acc=" << acc;
      }
    }
}

// forEachRect covers [e0, e0+len) exactly once, in order, with valid rectangles.
TEST(DsopKernel, ElementRangeDecomposition) {
  for (size_t m : {1, 2, 7, 100})
    for (size_t e0 = 0; e0 < 3 * m + 2; ++e0)
      for (size_t len = 0; len < 4 * m + 3; ++len) {
        size_t next = e0, calls = 0;
        sc::dsop::forEachRect(m, e0, len, [&](const Rect& r, size_t off) {
          ++calls;
          EXPECT_EQ(e0 + off, next);
          EXPECT_EQ(r.r0 * m + r.c0, next);
          EXPECT_LE(r.c0 + r.cols, m);
          EXPECT_GE(r.rows, 1u);
          EXPECT_GE(r.cols, 1u);
          if (r.rows > 1) EXPECT_EQ(r.cols, m);
          next += r.rows * r.cols;
        });
        EXPECT_EQ(next, e0 + len) << "m=" << m << " e0=" << e0 << " len=" << len;
        EXPECT_LE(calls, 3u);
      }
}

// 64-bit sizes: G of n*m > 2^32 elements. Row blocks (Blocks with a row unit)
// and element blocks tile G exactly, are balanced to one row / one element,
// and the element-range rectangles of the fused ring address the right rows.
TEST(DsopKernel, LayoutsBeyond32Bits) {
  const size_t n = 300000, m = 100003;  // 3.0e10 elements
  for (size_t P : {1, 3, 7, 64}) {
    const sc::Blocks rowsB{n, P, m}, elems{n * m, P};
    size_t nextRow = 0, nextElem = 0;
    for (size_t i = 0; i < P; ++i) {
      EXPECT_EQ(rowsB.off(i), nextRow);
      EXPECT_EQ(rowsB.len(i) % m, 0u);
      EXPECT_LE(rowsB.len(i) / m, n / P + 1);
      EXPECT_GE(rowsB.len(i) / m, n / P);
      nextRow += rowsB.len(i);
      EXPECT_EQ(elems.off(i), nextElem);
      nextElem += elems.len(i);
      size_t covered = 0;
      sc::dsop::forEachRect(m, elems.off(i), elems.len(i), [&](const Rect& r, size_t off) {
        EXPECT_EQ(r.r0 * m + r.c0, elems.off(i) + off);
        covered += r.rows * r.cols;
      });
      EXPECT_EQ(covered, elems.len(i));
    }
    EXPECT_EQ(nextRow, n * m);
    EXPECT_EQ(nextElem, n * m);
  }
}

TEST(DsopKernel, DeviceEngineRule) {
  EXPECT_EQ(sc::dsop::deviceEngine(1), sc::dsop::Engine::Custom);
  EXPECT_EQ(sc::dsop::deviceEngine(sc::dsop::kBlasMinK), sc::dsop::Engine::Custom);
  EXPECT_EQ(sc::dsop::deviceEngine(sc::dsop::kBlasMinK + 1), sc::dsop::Engine::Blas);
}
