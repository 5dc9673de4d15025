// Test data and references for the sparse allreduce. Inputs are deterministic
// functions of (distribution, N, k, rank, P, seed), so every rank (thread or
// MPI process) can rebuild every other rank's input and the exact reference:
// integer values in [-8, 8] \ {0} (positive for unsigned types), summed in
// double (exact) and encoded once to the element type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace sptest {

enum class Dist {
  Uniform,        // k distinct indices, uniform over [0, N)
  PowerLaw,       // skewed towards low indices (x = N u^3), k distinct
  Disjoint,       // rank r: indices = r (mod P): no two ranks share one (K = P k)
  Identical,      // the same k indices on every rank (K = k)
  EvenIdentical,  // identical, exactly k/P indices in each range of Blocks{N, P}
  Elsewhere,      // disjoint, all of rank r's indices inside range (r + 1) % P of Blocks{N, P}
};
const char* distName(Dist d);

struct Input {
  std::vector<uint64_t> idx;  // sorted, unique
  std::vector<int> val;       // non-zero integers
};

Input makeInput(Dist d, uint64_t N, uint64_t k, int rank, int P, uint64_t seed, bool nonNegative);
std::vector<Input> makeAll(Dist d, uint64_t N, uint64_t k, int P, uint64_t seed, bool nonNegative);
// k for density d (at least 1 when d > 0 and N > 0).
uint64_t kFor(uint64_t N, double density);

size_t typeSize(scDataType_t t);
bool isUnsigned(scDataType_t t);
const char* typeStr(scDataType_t t);
std::vector<uint8_t> packIndices(const std::vector<uint64_t>& idx, scIndexType_t it);
std::vector<uint8_t> packValues(const std::vector<int>& val, scDataType_t t);
// One element of type t from an exactly representable integer.
void encode(double v, scDataType_t t, void* dst);

// The exact dense result (sum, or avg = sum / P with the type's division) as bytes.
std::vector<uint8_t> expectedDense(const std::vector<Input>& all, uint64_t N, scDataType_t t, scRedOp_t op);

// "" when got (dense, N elements) equals want bit for bit; else the first mismatch.
std::string compareDense(const void* got, const std::vector<uint8_t>& want, uint64_t N, scDataType_t t);
// Checks a sparse result against the dense reference: indices sorted, unique,
// < N; listed values equal; every unlisted index zero in the reference.
std::string compareSparse(const void* idx, const void* val, size_t nnz, scIndexType_t it,
                          const std::vector<uint8_t>& want, uint64_t N, scDataType_t t);

uint64_t digest(const void* p, size_t bytes);

}  // namespace sptest
