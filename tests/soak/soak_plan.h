// The soak's call plans: call number i of a run with seed s is a pure function
// of (s, i, P), so every rank (thread or MPI process) derives the same call
// without communicating, and a failing call replays alone from its number.
#pragma once

#include <cstdint>
#include <string>

#include "sparcoll/sparcoll.h"

namespace soak {

enum class Api { AllReduce, ReduceScatter, AllGather, Barrier, Sparse, Dsop, DsopSparse, Topk, Neighbor, Broadcast };
const char* apiName(Api a);

// splitmix64: the stream of one call (independent of the C++ library's
// distributions, which differ between implementations).
struct Rng {
  uint64_t s;
  uint64_t next();
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  double unit() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  bool chance(double p) { return unit() < p; }
  template <typename T, size_t N>
  T pick(const T (&a)[N]) {
    return a[below(N)];
  }
};
uint64_t mix2(uint64_t a, uint64_t b);

struct Plan {
  uint64_t index = 0;
  Api api = Api::Barrier;
  scDataType_t dt = scFloat32;
  scRedOp_t op = scSum;
  int algo = 0;      // the API's own algorithm enum
  size_t count = 0;  // dense count / sparse dim / top-k n / neighbour count
  bool inPlace = false;
  int root = 0;  // broadcast
  // sparse allreduce
  int dist = 0;
  double density = 0;
  bool sparseOut = false;
  scIndexType_t it = scIndexU32;
  bool withOpts = false, shuffled = false;  // shuffled: unsorted input with split duplicates (scSparseSortInput)
  double switchDensity = 0;
  int earlyGroup = 0;
  // DSOP (dense and sparse)
  size_t n = 0, m = 0;
  bool real = false;  // real-valued operands, checked against the rounding bound
  double da = 0, db = 0;
  // top-k with error feedback
  int method = 0, steps = 1;
  size_t k = 0, bucket = 512;
  bool fixedOut = false;
  // neighbour allgather
  int graphKind = 0, nbrCalls = 1;
  uint64_t graphSeed = 0;
  bool v = false;

  std::string sig() const;  // one line naming every parameter above that the API uses
};

// maxCount bounds every element count (and DSOP's n*m).
Plan planCall(uint64_t seed, uint64_t index, int P, size_t maxCount);

// The communicator configuration of batch b (calls [b*B, (b+1)*B) share one
// communicator): check mode and ring slice size vary with the seed.
scConfig_t batchConfig(uint64_t seed, uint64_t batch);

}  // namespace soak
