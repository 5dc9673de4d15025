// NaN and signed zeros in max/min (core/reduce_op.h): IEEE 754-2019
// maximum/minimum, so the result does not depend on the algorithm. Before,
// `a < b ? b : a` kept a NaN only when it came first: ring kept it, Rabenseifner
// and recdbl dropped it on some ranks' operand orders, and MPI_MAX differed
// again. Every algorithm (ring, rabenseifner, recdbl, native) on the local
// transport and, in the _mpi binary, on MPI must give the reference's bits:
//  - a position where one rank holds a NaN: that NaN, payload and all;
//  - two or more NaNs: the type's quiet NaN (payload 0, sign clear);
//  - no NaN: the largest / smallest value, -0 < +0.
// The reference is computed here from that definition, with the test's own
// float16/bfloat16 encoders; its bits are checked on every rank, so every
// rank and every algorithm agree bit for bit.
#include <cmath>
#include <cstring>
#include <tuple>

#include "dense_check.h"

namespace dtest {
namespace {

struct FloatType {
  scDataType_t dt;
  uint64_t quietNan;  // the canonical result of two NaNs
  uint64_t signBit;
};
const FloatType kFloatTypes[] = {{scFloat32, 0x7fc00000u, 0x80000000u},
                                 {scFloat64, 0x7ff8000000000000ull, 0x8000000000000000ull},
                                 {scFloat16, 0x7e00u, 0x8000u},
                                 {scBfloat16, 0x7fc0u, 0x8000u}};

// One element of one rank's input: its bits, and (when not NaN) its value.
struct Elem {
  uint64_t bits;
  bool nan;
  double v;
};

uint64_t encode(scDataType_t dt, int64_t v, bool negZero) {
  switch (dt) {
    case scFloat32: {
      const float f = negZero ? -0.0f : float(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case scFloat64: {
      const double d = negZero ? -0.0 : double(v);
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    case scFloat16: return halfBits(v, negZero);
    default: return bf16Bits(v, negZero);
  }
}

// Rank r's element i. Positions (i mod 7): 1: a NaN on one rank, 3: NaNs on
// two ranks (payloads differ, signs too), 5: only zeros of both signs; every
// 11th: a NaN on every rank. NaN payloads carry the rank, so a result that
// took the wrong NaN shows. Other values are small integers, exact in every
// type, that differ between ranks.
Elem element(const FloatType& t, int P, int r, size_t i) {
  const size_t blk = i / 7;
  const bool one = i % 7 == 1 && int(blk % size_t(P)) == r;
  const bool two = i % 7 == 3 && (int(blk % size_t(P)) == r || int((blk + 1) % size_t(P)) == r);
  if (one || two || i % 11 == 0) {
    const uint64_t payload = uint64_t(r + 1) | (uint64_t(i & 3) << 1);
    return {t.quietNan | payload | (r % 2 ? t.signBit : 0), true, 0};
  }
  if (i % 7 == 5) {
    const bool neg = (size_t(r) + i) % 2 == 1;
    return {encode(t.dt, 0, neg), false, neg ? -0.0 : 0.0};
  }
  const int64_t v = int64_t((size_t(r) * 29 + i * 13) % 61) - 30;
  return {encode(t.dt, v, false), false, double(v)};
}

// The reference of element i over ranks 0..P-1, from the definition.
uint64_t expected(const FloatType& t, int P, size_t i, bool max) {
  int nans = 0;
  uint64_t nanBits = 0;
  Elem best{};
  bool have = false;
  for (int r = 0; r < P; ++r) {
    const Elem e = element(t, P, r, i);
    if (e.nan) {
      ++nans;
      nanBits = e.bits;
      continue;
    }
    // e beats best: larger (max) / smaller (min), and -0 < +0.
    const bool beats = !have || (max ? e.v > best.v : e.v < best.v) ||
                       (e.v == best.v && std::signbit(e.v) != std::signbit(best.v) && std::signbit(e.v) != max);
    if (beats) best = e;
    have = true;
  }
  if (nans == 1) return nanBits;
  if (nans > 1) return t.quietNan;
  return best.bits;
}

size_t esize(scDataType_t dt) { return elemSize(dt); }

Bytes makeIn(const FloatType& t, int P, int r, size_t n) {
  const size_t esz = esize(t.dt);
  Bytes b(n * esz);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = element(t, P, r, i).bits;
    std::memcpy(b.data() + i * esz, &bits, esz);  // little-endian: the low bytes
  }
  return b;
}

// Empty when got (n elements from global index first) has the reference's bits.
std::string compare(const FloatType& t, int P, bool max, const uint8_t* got, size_t first, size_t n) {
  const size_t esz = esize(t.dt);
  Bytes want(n * esz);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t bits = expected(t, P, first + k, max);
    std::memcpy(want.data() + k * esz, &bits, esz);
  }
  return firstMismatch(got, want.data(), n, esz);
}

class NanMaxMin : public testing::TestWithParam<std::tuple<int, scAlgo_t>> {};

// scAllReduce max and min, out of place and in place; 1000 elements with a
// 64-byte ring slice, so ring runs many slices and every rank owns NaNs.
TEST_P(NanMaxMin, AllReduce) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  const size_t n = 1000;
  const scConfig_t cfg = config(30, 64);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        for (const FloatType& t : kFloatTypes)
          for (scRedOp_t op : {scMax, scMin})
            for (bool inPlace : {false, true}) {
              SCOPED_TRACE(testing::Message() << typeStr(t.dt) << " " << opStr(op) << (inPlace ? " in place" : ""));
              const Bytes in = makeIn(t, P, rank, n);
              Bytes out = inPlace ? in : Bytes(in.size(), 0xAB);
              ASSERT_EQ(scAllReduce(inPlace ? out.data() : in.data(), out.data(), n, t.dt, op, algo, comm, nullptr),
                        scSuccess)
                  << scGetLastError(comm);
              const std::string bad = compare(t, P, op == scMax, out.data(), 0, n);
              ASSERT_TRUE(bad.empty()) << "rank " << rank << ": " << bad;
            }
      },
      &cfg);
}

// scReduceScatter max and min: each rank's block of a vector with NaNs on
// every rank (recvcount 37, so blocks start at odd positions).
TEST_P(NanMaxMin, ReduceScatter) {
  const int P = std::get<0>(GetParam());
  const scAlgo_t algo = std::get<1>(GetParam());
  DT_SKIP_UNLESS_RUNS(P);
  if (algo == scAlgoRecDbl) GTEST_SKIP() << "reduce-scatter offers ring, rabenseifner and native";
  const size_t rc = 37;
  const scConfig_t cfg = config(30, 64);
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        for (const FloatType& t : kFloatTypes)
          for (scRedOp_t op : {scMax, scMin}) {
            SCOPED_TRACE(testing::Message() << typeStr(t.dt) << " " << opStr(op));
            const size_t esz = esize(t.dt);
            const Bytes in = makeIn(t, P, rank, size_t(P) * rc);
            Bytes out(rc * esz, 0xAB);
            ASSERT_EQ(scReduceScatter(in.data(), out.data(), rc, t.dt, op, algo, comm, nullptr), scSuccess)
                << scGetLastError(comm);
            const std::string bad = compare(t, P, op == scMax, out.data(), size_t(rank) * rc, rc);
            ASSERT_TRUE(bad.empty()) << "rank " << rank << ": " << bad;
          }
      },
      &cfg);
}

INSTANTIATE_TEST_SUITE_P(Dense, NanMaxMin,
                         testing::Combine(testing::Values(2, 3, 4),
                                          testing::Values(scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoNative)),
                         PAlgoName());

}  // namespace
}  // namespace dtest
