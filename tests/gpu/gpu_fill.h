// Device-side test data and checks for the suites with billions of elements
// (tests/gpu/gpu_fill.cu): uploading or downloading such vectors would take
// longer than the calls under test, so the data is a pattern written by a
// kernel (a constant, an arithmetic sequence, a few scattered values) and the
// checks are counted on the device; only the counts and a few spot values
// travel. Elements are handled as their bits (esz = 1, 2, 4 or 8 bytes), so
// one set of kernels serves every dtype and index type. Every call is ordered
// on `s`; the ones that return a value wait for it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gputest {

// dst[i] = bits (the low esz bytes), i < n.
void fillBits(void* dst, size_t n, size_t esz, uint64_t bits, cudaStream_t s);
// dst[i] = start + i * step (modulo 2^(8 esz)), i < n: index sequences.
void fillIota(void* dst, size_t n, size_t esz, uint64_t start, uint64_t step, cudaStream_t s);
// dst[pos[j]] = bits[j] for every j (pos and bits are host arrays).
void scatterBits(void* dst, size_t esz, const std::vector<uint64_t>& pos, const std::vector<uint64_t>& bits,
                 cudaStream_t s);
// The bits of src[pos[j]] for every j.
std::vector<uint64_t> gatherBits(const void* src, size_t esz, const std::vector<uint64_t>& pos, cudaStream_t s);

// How many of n elements differ from what was expected, and the first of
// them (n when none).
struct Mismatch {
  uint64_t count = 0, first = 0;
};
// Elements i < n whose bits differ from `bits`.
Mismatch countNotEqual(const void* src, size_t n, size_t esz, uint64_t bits, cudaStream_t s);
// Elements i < n other than start + i * step.
Mismatch countNotIota(const void* src, size_t n, size_t esz, uint64_t start, uint64_t step, cudaStream_t s);
// Elements of the row-major n x m matrix G (float32, or float64 when f64)
// other than sum over q < K of A[q * n + r] * B[q * m + c], summed in q order
// in G's type (A, B: device arrays of G's type). Exact for small integers,
// whatever order the library summed in.
Mismatch countNotOuterSum(const void* G, bool f64, const void* A, const void* B, size_t K, size_t n, size_t m,
                          cudaStream_t s);

}  // namespace gputest
