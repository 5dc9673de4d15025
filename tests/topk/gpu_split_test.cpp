// GPU top-k, the split design of the approx kernels (SPARCOLL_TOPK_KERNEL=split,
// kernels/topk_approx_split.cu; label gpu): bit for bit the CPU reference's
// selection, values, counts and residual, on both of its paths — a warp per
// bucket of at most 512 elements (buckets 1, 3, 100, 511, 512) and chunks of
// 1024 over larger ones (513, 1024, 1025, 5000, 2^16, and one bucket as long
// as the vector) — variable and fixed output, capacity overflow, a misaligned
// input, and error feedback with NaN and Inf. Skips without a CUDA device.
#include <cstdlib>

#include "common/harness.h"
#include "topk_util.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu_compare.h"
#endif

using namespace tk;

namespace {

// Selects the split design for the scope, restoring the default after.
struct SplitDesign {
  SplitDesign() { setenv("SPARCOLL_TOPK_KERNEL", "split", 1); }
  ~SplitDesign() { unsetenv("SPARCOLL_TOPK_KERNEL"); }
};

}  // namespace

TEST(TopkGpuSplit, MatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  const SplitDesign split;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (scDataType_t dt : {scFloat32, scFloat64, scFloat16, scBfloat16}) {
    for (size_t n : {size_t(1), size_t(1000), size_t(70001), (size_t(1) << 20) + 3}) {
      const Buf v(adversarial(n, n + dt), dt);
      for (size_t bucket : {size_t(1), size_t(3), size_t(100), size_t(511), size_t(512), size_t(513), size_t(1024),
                            size_t(1025), size_t(5000), size_t(1) << 16, n}) {
        if (bucket > n && bucket != 512) continue;
        for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost}) {
          for (int fixed = 0; fixed < 2; ++fixed) {
            for (size_t k : {size_t(1), n / 50 + 1, n}) {
              Case c{config(m, k, bucket, 99 + k, 5), dt, n};
              c.cfg.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
              c.cfg.indexType = (k & 1) ? scTopkIndexU32 : scTopkIndexU64;
              size_t cap = 0;
              ASSERT_EQ(scTopkMaxOutput(n, &c.cfg, &cap), scSuccess);
              compareStateless(c, v, cap, stream);
              if (!fixed) compareStateless(c, v, k, stream);                // overflow: scInvalidUsage on both
              if (k == n / 50 + 1) compareStateless(c, v, cap, stream, 1);  // misaligned by one element
            }
          }
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

TEST(TopkGpuSplit, FeedbackMatchesTheCpuReference) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  const SplitDesign split;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  const size_t n = 30011;
  for (scDataType_t dt : {scFloat32, scFloat16, scFloat64, scBfloat16}) {
    const std::vector<Buf> grads = feedbackGradients(n, dt);
    for (scTopkMethod_t m : {scTopkApprox, scTopkApproxAtMost})
      for (int fixed = 0; fixed < 2; ++fixed)
        for (size_t bucket : {size_t(512), size_t(3000), n}) {
          Case c{config(m, 300, bucket, 77), dt, n};
          c.cfg.output = fixed ? scTopkFixedPerBucket : scTopkVariable;
          compareFeedback(c, grads, n, stream);
          if (!fixed) compareFeedback(c, grads, 300, stream);  // deferral to the residual
        }
  }
  CUDA_OK(cudaStreamDestroy(stream));
#endif
}

// A bad SPARCOLL_TOPK_KERNEL is a clear error, not a silent default.
TEST(TopkGpuSplit, BadDesignNameIsAnError) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  setenv("SPARCOLL_TOPK_KERNEL", "warp", 1);
  const Buf v(adversarial(1000, 1), scFloat32);
  const Dev d(v.data(), v.bytes.size(), nullptr);
  const scTopkConfig_t cfg = config(scTopkApprox, 10);
  size_t cap = 0;
  ASSERT_EQ(scTopkMaxOutput(1000, &cfg, &cap), scSuccess);
  const Dev idx(cap * 8), val(cap * 4);
  scTopkInfo_t info{};
  EXPECT_EQ(scTopkSelect(d.p, 1000, scFloat32, &cfg, idx.p, val.p, cap, &info, nullptr), scInvalidArgument);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("SPARCOLL_TOPK_KERNEL"), std::string::npos);
  unsetenv("SPARCOLL_TOPK_KERNEL");
#endif
}
