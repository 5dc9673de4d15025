// TopK SGD's communication step end to end through the C API (thesis §2.4,
// Algorithm 2): every rank selects from gradient + residual with error
// feedback, and the selection goes straight into the sparse allreduce
// (cfg.indexType is the sparse index type: no cast, no copy). Integer-valued
// gradients make every sum exact, so the allreduced vector must equal, bit for
// bit on every rank, the sum of what each rank sent -- recomputed here for all
// ranks from the same seeds -- and over the steps nothing is lost:
// sum of sent + final residual == sum of gradients, element by element.
// Runs on local threads and under mpirun.
#include <cstring>
#include <vector>

#include "common/harness.h"
#include "pipeline_trace.h"

using namespace tk;

namespace {

constexpr size_t kN = 10007;
constexpr int kSteps = 3;

std::vector<float> gradient(int r, int t) { return pipelineGradient(r, t, kN); }
RankTrace trace(int r, const scTopkConfig_t& cfg) { return pipelineTrace(r, cfg, kN, kSteps); }

void runPipeline(int P, scTopkConfig_t cfg, scSparseAlgo_t algo) {
  // The reference: every rank's trace, recomputed on every rank.
  std::vector<RankTrace> ref;
  for (int r = 0; r < P; ++r) ref.push_back(trace(r, cfg));
  for (int r = 0; r < P; ++r) {  // conservation per rank, exact in integers
    std::vector<float> sent(kN, 0.0f), grad(kN, 0.0f);
    for (int t = 0; t < kSteps; ++t) {
      const std::vector<float> g = gradient(r, t);
      for (size_t i = 0; i < kN; ++i) {
        sent[i] += ref[r].sent[t][i];
        grad[i] += g[i];
      }
    }
    for (size_t i = 0; i < kN; ++i)
      ASSERT_EQ(sent[i] + ref[r].residual[i], grad[i]) << "rank " << r << " element " << i;
  }
  const scConfig_t ccfg = sctest::testConfig();
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        scTopkState_t st = nullptr;
        SC_OK(comm, scTopkStateCreate(&st, kN, scFloat32, -1));
        size_t cap = 0;
        SC_OK(comm, scTopkMaxOutput(kN, &cfg, &cap));
        std::vector<uint64_t> idx(cap);
        std::vector<float> val(cap), out(kN);
        for (int t = 0; t < kSteps; ++t) {
          const std::vector<float> g = gradient(rank, t);
          scTopkInfo_t info{};
          SC_OK(comm, scTopkSelectFeedback(st, g.data(), &cfg, idx.data(), val.data(), cap, &info, nullptr));
          SC_OK(comm, scSparseAllReduce(idx.data(), val.data(), info.nnz, kN, cfg.indexType, scFloat32, scSum, algo,
                                        out.data(), comm, nullptr));
          for (size_t i = 0; i < kN; ++i) {
            float want = 0;
            for (int r = 0; r < P; ++r) want += ref[r].sent[t][i];
            ASSERT_EQ(out[i], want) << "rank " << rank << " step " << t << " element " << i;
          }
        }
        scTopkStateDestroy(st);
      },
      &ccfg);
}

}  // namespace

static_assert(scTopkIndexU32 == scIndexU32 && scTopkIndexU64 == scIndexU64, "one index type for both APIs");

TEST(TopkPipeline, ExactTopkThenSparseAllReduce) {
  for (int P : {1, 2, 3, 4}) {
    SCOPED_TRACE(P);
    runPipeline(P, config(scTopkExact, 50), scSparseAuto);
  }
}

TEST(TopkPipeline, ApproxTopkThenEverySparseAlgorithm) {
  scTopkConfig_t cfg = config(scTopkApprox, 100, 512, 2024);
  for (scSparseAlgo_t algo :
       {scSparseAuto, scSsarRecDbl, scSsarSplitAllGather, scDsarSplitAllGather, scDsarEarlySwitch, scSparseDense}) {
    SCOPED_TRACE(scSparseAlgoName(algo));
    runPipeline(3, cfg, algo);
  }
  cfg.output = scTopkFixedPerBucket;  // zero pads: listed entries of value 0
  runPipeline(3, cfg, scSparseAuto);
}

TEST(TopkPipeline, ThresholdTopkWithWideIndices) {
  scTopkConfig_t cfg = config(scTopkThreshold, 200, 512, 5);
  cfg.indexType = scTopkIndexU64;
  runPipeline(2, cfg, scSparseAuto);
  runPipeline(4, cfg, scSsarSplitAllGather);
}
