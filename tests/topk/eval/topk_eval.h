// What a top-k selection is worth, measured: the inputs it is judged on and
// its quality against the exact top-k of the same vector. Shared by the
// top-k tests (tests/topk/quality_test.cpp) and bench/topk_perf, so the
// figures the README states and the ones the tests assert are computed by one
// definition.
//
// Quality of a selection (indices, sent values) of a vector v for a given k:
//   energy   sum of the sent values' squares / the sum of squares of the k
//            largest |v_i| (1 when those are all 0): the share of what exact
//            top-k would send that this selection sends;
//   recall   the share of exact top-k's nonzero entries (ties to the smaller
//            index) that the selection sends with a nonzero value;
//   returned entries written (nnz);
//   pads     entries written with the value 0 that the method did not select
//            (fixed-per-bucket output), as a share of the entries written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tkeval {

// Synthetic inputs, float32, i.i.d.: N(0, 1); Laplace(0, 1); Student's t
// with 3 degrees of freedom (heavy tails); natural sparsity, 99 % exact zeros
// and N(0, 1) elsewhere.
enum class Input { Normal, Laplace, StudentT3, Sparse99 };
constexpr Input kSynthetic[] = {Input::Normal, Input::Laplace, Input::StudentT3, Input::Sparse99};
// "normal", "laplace", "student-t3", "sparse99".
const char* inputName(Input in);
// Parses a name of inputName; false if unknown.
bool parseInput(const std::string& name, Input* in);
std::vector<float> synthetic(Input in, uint64_t n, uint64_t seed);

// A vector to judge a selector on.
struct Vector {
  std::string name;  // e.g. "normal" or "grad:mlp-step020"
  std::vector<float> values;
};

// The real gradients shipped in tests/data/topk/gradients (made by
// scripts/make-topk-gradients): every vector its manifest.json lists, named
// "grad:<file without .f32>". Throws std::runtime_error naming the file when
// the manifest or a vector cannot be read or has the wrong size.
std::string defaultGradientDir();
std::vector<Vector> realGradients(const std::string& dir = defaultGradientDir());

// The exact top-k of one vector, computed once (independently of the library:
// a partial sort of the magnitudes in double precision) and then used to judge
// any number of selections in O(nnz) each. v must outlive it.
class ExactTopk {
 public:
  ExactTopk(const std::vector<double>& v, uint64_t k);
  uint64_t k() const { return k_; }
  double energy() const { return energy_; }  // sum of squares of the k largest |v_i|
  // Whether i is in the exact top-k of the nonzero entries.
  bool contains(uint64_t i) const;
  uint64_t nonzeroCount() const { return members_; }

 private:
  const std::vector<double>& v_;
  uint64_t k_ = 0, members_ = 0, lastTie_ = 0;
  double T_ = 0, energy_ = 0;
};

struct Quality {
  double energy = 0, recall = 0, padShare = 0;
  uint64_t returned = 0;
};

// The quality of nnz entries (idx[j], val[j]) of which `pads` are unselected
// zero pads.
Quality judge(const ExactTopk& exact, const uint64_t* idx, const double* val, uint64_t nnz, uint64_t pads = 0);

}  // namespace tkeval
