// TopK SGD's step, replayed on the host: rank r's gradient at step t (small
// integers, different on every rank, so every sum is exact) and what a rank
// with its own host error-feedback state sends at each step (densified) and
// keeps in its residual. The pipeline tests (pipeline_test.cpp on the CPU,
// tests/gpu/nccl_pipeline_test.cpp on GPUs) compare the reduced vectors with
// these, since the CPU reference selects bit for bit what the GPU selects.
#pragma once

#include <vector>

#include "topk_util.h"

namespace tk {

inline std::vector<float> pipelineGradient(int r, int t, size_t n) {
  std::vector<float> g(n);
  for (size_t i = 0; i < n; ++i) g[i] = float(int((i * 7 + size_t(r) * 13 + size_t(t) * 5) % 17) - 8);
  for (size_t i = size_t(r) * 100; i < n; i += 997) g[i] = float(40 + r);  // a few dominant entries
  return g;
}

struct RankTrace {
  std::vector<std::vector<float>> sent;  // per step, dense
  std::vector<float> residual;           // after the last step
};

inline RankTrace pipelineTrace(int r, const scTopkConfig_t& cfg, size_t n, int steps) {
  RankTrace tr;
  scTopkState_t st = nullptr;
  EXPECT_EQ(scTopkStateCreate(&st, n, scFloat32, -1), scSuccess);
  size_t cap = 0;
  EXPECT_EQ(scTopkMaxOutput(n, &cfg, &cap), scSuccess);
  std::vector<uint64_t> idx(cap);  // wide enough for either index type
  std::vector<float> val(cap);
  for (int t = 0; t < steps; ++t) {
    const std::vector<float> g = pipelineGradient(r, t, n);
    scTopkInfo_t info{};
    EXPECT_EQ(scTopkSelectFeedback(st, g.data(), &cfg, idx.data(), val.data(), cap, &info, nullptr), scSuccess)
        << scGetLastError(nullptr);
    std::vector<float> dense(n, 0.0f);
    const Sel sel = readBack(idx.data(), val.data(), info.nnz, cfg.indexType, scFloat32);
    for (size_t j = 0; j < info.nnz; ++j) dense[sel.idx[j]] += val[j];
    tr.sent.push_back(dense);
  }
  void* res = nullptr;
  scTopkStateResidual(st, &res);
  tr.residual.assign(static_cast<float*>(res), static_cast<float*>(res) + n);
  scTopkStateDestroy(st);
  return tr;
}

}  // namespace tk
