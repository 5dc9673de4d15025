// Shared pieces of the DSOP suites: integer-valued inputs (exact in every
// supported type, so every algorithm must match the sequential reference bit
// for bit), the reference, result comparison, and the per-rank traffic of each
// schedule computed from the same layouts the schedules use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace dsoptest {

constexpr scDsopAlgo_t kAlgos[] = {scDsopAuto,          scDsopAllGather,     scDsopAllReduce,
                                   scDsopAllReduceRing, scDsopGRabenseifner, scDsopAllScatter};

// Values of rank i's vectors: small integers in [-4, 4] and [-3, 3].
double aValue(int rank, size_t x);
double bValue(int rank, size_t y);

// Input bytes (dtype) and output element size.
size_t inSize(scDataType_t dt);
size_t outSize(scDataType_t dt);
// Encodes doubles as dtype (float16/bfloat16 as 16-bit patterns).
std::vector<char> encode(const std::vector<double>& v, scDataType_t dt);
// Decodes n output elements (float32 or float64) to doubles.
std::vector<double> decodeOut(const void* p, size_t n, scDataType_t dt);

std::vector<double> vecA(int rank, size_t n);
std::vector<double> vecB(int rank, size_t m);
// G = sum_{i<P} a_i b_i^T from vectors a[i], b[i].
std::vector<double> reference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);
std::vector<double> reference(int P, size_t n, size_t m);

// "" when equal, else a description of the first mismatches.
std::string compare(const std::vector<double>& got, const std::vector<double>& want, size_t m);

// Real-valued operands: K normal vectors a_q (n) and b_q (m), rounded to dt and
// read back, so a reference computed from them sees exactly what a kernel sees.
struct RealOperands {
  size_t K, n, m;
  std::vector<double> A, B;  // [q * n + x], [q * m + y], values exact in dt
  std::vector<char> a, b;    // the same, encoded as dt
};
RealOperands realOperands(scDataType_t dt, size_t K, size_t n, size_t m, uint64_t seed);
// The rounding contract of every DSOP engine (host loop, CUDA kernel, cuBLAS):
// each output element is within (K + 1) * u * (|init| + sum_q |a_q[x] b_q[y]|)
// (to first order)
// of the exact value (u: unit roundoff of the output type, 2^-24 or 2^-53), the
// classic bound for a K-term sum, whatever the order, fusing or placement of
// the initial value. "" when every element of got (rows x m, init when
// accumulating, else 0) holds, else the first violations.
std::string withinRoundingBound(const RealOperands& o, scDataType_t dt, const std::vector<double>& init,
                                const std::vector<double>& got);

// Balanced blocks, as the library's Blocks.
inline size_t blockOff(size_t count, size_t parts, size_t i) {
  return i * (count / parts) + (i < count % parts ? i : count % parts);
}
inline size_t blockLen(size_t count, size_t parts, size_t i) { return count / parts + (i < count % parts ? 1 : 0); }

// Bytes rank r sends in one call of `algo`, with the ring allgather / ring
// allreduce for the dense parts (scConfig_t.algo = scAlgoRing).
uint64_t expectedBytes(scDsopAlgo_t algo, int P, int r, size_t n, size_t m, scDataType_t dt);

// A 64-bit FNV-1a hash of a buffer (bit-identity across ranks).
uint64_t hashBytes(const void* p, size_t bytes);

}  // namespace dsoptest
