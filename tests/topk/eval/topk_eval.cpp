// Inputs and quality measures of top-k selections (topk_eval.h).
#include "topk_eval.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

namespace tkeval {

namespace {

struct Named {
  Input in;
  const char* name;
};
constexpr Named kNames[] = {{Input::Normal, "normal"},
                            {Input::Laplace, "laplace"},
                            {Input::StudentT3, "student-t3"},
                            {Input::Sparse99, "sparse99"}};

}  // namespace

const char* inputName(Input in) {
  for (const Named& n : kNames)
    if (n.in == in) return n.name;
  return "unknown";
}

bool parseInput(const std::string& name, Input* in) {
  for (const Named& n : kNames)
    if (name == n.name) return *in = n.in, true;
  return false;
}

std::vector<float> synthetic(Input in, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::exponential_distribution<float> expo;
  std::student_t_distribution<float> t3(3.0f);
  std::uniform_real_distribution<float> unit;
  std::vector<float> v(n);
  for (float& x : v) {
    switch (in) {
      case Input::Normal: x = normal(rng); break;
      case Input::Laplace: x = (rng() & 1) ? expo(rng) : -expo(rng); break;
      case Input::StudentT3: x = t3(rng); break;
      case Input::Sparse99: x = unit(rng) < 0.01f ? normal(rng) : 0.0f; break;
    }
  }
  return v;
}

std::string defaultGradientDir() { return SPARCOLL_TOPK_GRADIENTS; }

std::vector<Vector> realGradients(const std::string& dir) {
  const std::string manifest = dir + "/manifest.json";
  std::ifstream mf(manifest);
  if (!mf) throw std::runtime_error("cannot open " + manifest + " (made by scripts/make-topk-gradients)");
  nlohmann::json j;
  try {
    mf >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error(manifest + ": " + e.what());
  }
  std::vector<Vector> out;
  for (const auto& e : j.at("vectors")) {
    const std::string file = e.at("file").get<std::string>();
    const uint64_t n = e.at("n").get<uint64_t>();
    const std::string path = dir + "/" + file;
    std::ifstream f(path, std::ios::binary);
    Vector v{"grad:" + file.substr(0, file.rfind('.')), std::vector<float>(n)};
    if (!f.read(reinterpret_cast<char*>(v.values.data()), std::streamsize(n * sizeof(float))) || f.peek() != EOF)
      throw std::runtime_error(path + ": not " + std::to_string(n) + " float32 values as " + manifest + " says");
    out.push_back(std::move(v));
  }
  if (out.empty()) throw std::runtime_error(manifest + " lists no vectors");
  return out;
}

ExactTopk::ExactTopk(const std::vector<double>& v, uint64_t k) : v_(v), k_(std::min<uint64_t>(k, v.size())) {
  if (k_ == 0) return;
  std::vector<double> mag(v.size());
  for (size_t i = 0; i < v.size(); ++i) mag[i] = std::fabs(v[i]);
  std::nth_element(mag.begin(), mag.begin() + int64_t(k_ - 1), mag.end(), std::greater<double>());
  T_ = mag[k_ - 1];
  uint64_t greater = 0;
  for (uint64_t j = 0; j < k_; ++j) {
    energy_ += mag[j] * mag[j];
    greater += mag[j] > T_;
  }
  // Ties at T go to the smaller index: the (k - greater)-th index with |v| == T is the last one in.
  uint64_t ties = 0;
  lastTie_ = 0;
  for (size_t i = 0; i < v.size() && ties < k_ - greater; ++i)
    if (std::fabs(v[i]) == T_) lastTie_ = i, ++ties;
  members_ = T_ > 0 ? k_ : greater;  // zeros are not members
}

bool ExactTopk::contains(uint64_t i) const {
  if (i >= v_.size()) return false;
  const double m = std::fabs(v_[i]);
  return m > 0 && (m > T_ || (m == T_ && i <= lastTie_));
}

Quality judge(const ExactTopk& exact, const uint64_t* idx, const double* val, uint64_t nnz, uint64_t pads) {
  Quality q;
  q.returned = nnz;
  double sent = 0;
  uint64_t hits = 0;
  for (uint64_t j = 0; j < nnz; ++j) {
    sent += val[j] * val[j];
    hits += val[j] != 0 && exact.contains(idx[j]);
  }
  q.energy = exact.energy() > 0 ? sent / exact.energy() : 1.0;
  q.recall = exact.nonzeroCount() ? double(hits) / double(exact.nonzeroCount()) : 1.0;
  q.padShare = nnz ? double(pads) / double(nnz) : 0.0;
  return q;
}

}  // namespace tkeval
