// scSparseAuto: predicted seconds of every sparse algorithm (Table 3.1's
// latency and bandwidth terms, with the expected sizes of a uniform index
// model) on the cost model's alpha-beta-gamma parameters (model/model.h), against the
// foundation's prediction for the dense allreduce. Comm-free: a Model of any P.
#pragma once

#include <vector>

#include "model/model.h"
#include "sparse/stream.h"

namespace sc::sp {

struct ModelInput {
  const model::Model* model = nullptr;  // P = model->P; k has P entries
  uint64_t N = 0;
  std::vector<uint64_t> k;  // measured non-zeros per rank (header round)
  size_t isz = 4, vsz = 4;
  SwitchRule rule;
  bool denseOutput = true;  // the caller wants a dense vector (a sparse result is densified)
};

// Sparse summation costs this many times a dense element's gamma per entry
// (the thesis's Figure 5.6: equal cost near 1/16 density with two inputs).
constexpr double kSparseEntryCost = 8.0;
// Scattering one sorted entry into a dense vector (densify, scatter-add).
constexpr double kScatterEntryCost = 2.0;
// A sparse algorithm must be predicted at least this much faster than dense.
constexpr double kSparseMargin = 0.9;

// Expected size of the union of the index sets of `ranks` under the uniform
// model: N (1 - prod_i (1 - k_i / N)) — the thesis's f(k, N, P) with measured k_i.
double expectedUnion(const ModelInput& in, const std::vector<int>& ranks);

// Predicted seconds of algo (scDsarEarlySwitch with group size G; G = 0: best G).
double predictSparse(const ModelInput& in, scSparseAlgo_t algo, int groupSize = 0);
// The early-switch group size with the least predicted time.
int bestGroupSize(const ModelInput& in);
// What scSparseAuto runs: the tuning file's first matching rule (bytes = N x
// value size, density = the mean of k_i / N), else the fastest prediction,
// and dense unless a sparse algorithm is predicted faster than kSparseMargin
// times dense.
scSparseAlgo_t chooseSparse(const ModelInput& in);
// The static-size path (scSparseAllReduceStatic) with capacity in.k[0] on
// every rank: scAllGather's prediction for P blocks, plus summing the P x
// capacity slots (a sparse entry's cost each) and densifying them.
double predictStatic(const ModelInput& in);
// Whether it beats the dense allreduce (densify + scAllReduce's auto) by the
// sparse algorithms' margin (kSparseMargin): scSparseStaticAdvised.
bool staticAdvised(const ModelInput& in);
// The density rules match: the mean non-zeros per rank over N.
double meanDensity(const ModelInput& in);

}  // namespace sc::sp
