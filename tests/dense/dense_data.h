// Test data and references for the dense collectives, computed independently
// of the library (no sparcoll internals): every input element is an integer
// chosen so that each dtype/op combination is exact in any reduction order,
// and the expected result is folded in 128-bit integer arithmetic, then
// encoded to the element type with the test's own float16/bfloat16 encoders.
//
//   sum, avg (integers)  small values, |v| <= B with P*B representable exactly
//                        (B per dtype: int8 15, bfloat16 31, float16 255, ...);
//                        integer avg truncates toward zero (sparcoll.h)
//   avg (floats)         v = a(i) + d(r, i) with sum_r d(r, i) = 0, so the sum
//                        is P*a(i) and the average a(i) is exact
//   prod                 factors in {0, ±1, ±2, ±3}, at most two of them > 1
//                        per element, |product| <= 9 (zero sign tracked)
//   max, min             the type's whole exactly-representable integer range
//                        (full int64/uint64 range included)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace dtest {

using Bytes = std::vector<uint8_t>;

extern const scDataType_t kAllTypes[10];
extern const scRedOp_t kAllOps[5];

size_t elemSize(scDataType_t dt);
const char* typeStr(scDataType_t dt);
const char* opStr(scRedOp_t op);
const char* algoStr(scAlgo_t algo);

// Rank r's input for a reduction over P ranks: elements [first, first + n) of
// the global index space.
Bytes makeInput(scDataType_t dt, scRedOp_t op, int P, int r, size_t first, size_t n);
// The exact reduction over ranks 0..P-1 of elements [first, first + n).
Bytes makeExpected(scDataType_t dt, scRedOp_t op, int P, size_t first, size_t n);
// Arbitrary bytes (any bit pattern, NaNs included) for rank r: payload of the
// allgather tests, where nothing is computed.
Bytes makePayload(int r, size_t bytes, uint64_t salt);

// Empty when a == b over n elements; otherwise a description of the first
// mismatching element (index, both bit patterns) and the number of mismatches.
std::string firstMismatch(const uint8_t* got, const uint8_t* want, size_t n, size_t esz);

// The element counts {0, 1, P-1, 1000} without duplicates, ascending.
std::vector<size_t> smallCounts(int P);
// Rank r's share [first, first + len) of n elements split over P ranks
// (balanced: the first n % P shares are one larger).
struct Share {
  size_t first, len;
};
Share share(size_t n, int P, int r);

// The big count of the grid: 2^20 + 3.
constexpr size_t kBigCount = (size_t(1) << 20) + 3;

// 64-bit digest of a buffer (cross-rank identity checks).
uint64_t digest(const void* p, size_t bytes);

// Independent float16 / bfloat16 encoders of exactly representable integers
// (throw std::logic_error on a value that is not representable).
uint16_t halfBits(int64_t v, bool negZero = false);
uint16_t bf16Bits(int64_t v, bool negZero = false);

}  // namespace dtest
