// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy
// as 1, 2, 3", SC'11), the counter-based generator behind curand's Philox. One
// definition compiled for the host and, under nvcc, for the device: the top-k
// selection must draw the very same numbers on both, so the CPU reference and
// the kernels select identical elements for the same (seed, step, input).
// Integer-only: no rounding mode or FMA contraction can make the two differ.
#pragma once

#include <cstdint>

#include "core/numeric.h"  // SC_HD

namespace sc {
namespace topk {

struct Philox4 {
  uint32_t v[4];
};

SC_HD void mulhilo32(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  lo = a * b;
  hi = __umulhi(a, b);
#else
  const uint64_t p = uint64_t(a) * b;
  lo = uint32_t(p);
  hi = uint32_t(p >> 32);
#endif
}

// The ten rounds on counter c with key (k0, k1); constants from Random123.
SC_HD Philox4 philox4x32_10(Philox4 c, uint32_t k0, uint32_t k1) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo32(0xD2511F53u, c.v[0], hi0, lo0);
    mulhilo32(0xCD9E8D57u, c.v[2], hi1, lo1);
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// Word w (0..3) of a block. Selects instead of indexing, so the block stays in
// registers on the device (a dynamic index would spill it to local memory).
SC_HD uint32_t word(const Philox4& b, uint32_t w) {
  const uint32_t lo = (w & 1) ? b.v[1] : b.v[0];
  const uint32_t hi = (w & 1) ? b.v[3] : b.v[2];
  return (w & 2) ? hi : lo;
}

// Streams of the top-k selection: the high bit of the counter's last word
// separates the per-element selection draws from the threshold sampler.
enum class Domain : uint32_t { Select = 0, Sample = 1 };

// The counter block `group` of stream (seed, step, domain): four 32-bit words.
// step uses 63 bits (the API rejects step >= 2^63).
SC_HD Philox4 philoxBlock(uint64_t seed, uint64_t step, Domain d, uint64_t group) {
  const Philox4 ctr{{uint32_t(group), uint32_t(group >> 32), uint32_t(step),
                     (uint32_t(step >> 32) & 0x7fffffffu) | (uint32_t(d) << 31)}};
  return philox4x32_10(ctr, uint32_t(seed), uint32_t(seed >> 32));
}

// Element i's 32-bit uniform: word i % 4 of block i / 4.
SC_HD uint32_t selectBits(uint64_t seed, uint64_t step, uint64_t i) {
  return word(philoxBlock(seed, step, Domain::Select, i >> 2), uint32_t(i & 3));
}

// Sample j's 64-bit uniform: words 2(j%2), 2(j%2)+1 of block j / 2.
SC_HD uint64_t sampleBits(uint64_t seed, uint64_t step, uint64_t j) {
  const Philox4 b = philoxBlock(seed, step, Domain::Sample, j >> 1);
  return (j & 1) ? (uint64_t(b.v[3]) << 32) | b.v[2] : (uint64_t(b.v[1]) << 32) | b.v[0];
}

// floor(u * n / 2^64): an index uniform in [0, n) (exact integer arithmetic).
SC_HD uint64_t scaleToRange(uint64_t u, uint64_t n) { return uint64_t((unsigned __int128)u * n >> 64); }

}  // namespace topk
}  // namespace sc
