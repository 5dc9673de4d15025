// Bad input gets a clear error (scInvalidArgument with a message naming the
// problem), never a crash or a silent wrong answer; n = 0 is a no-op.
#include <string>

#include "topk_util.h"

using namespace tk;

namespace {

// Runs scTopkSelect on a small valid setup with one thing changed.
struct Call {
  std::vector<float> v = std::vector<float>(100, 1.0f);
  size_t n = 100;
  scDataType_t dt = scFloat32;
  scTopkConfig_t cfg = config(scTopkApprox, 10, 32);
  std::vector<uint64_t> idx = std::vector<uint64_t>(200);
  std::vector<double> val = std::vector<double>(200);
  size_t capacity = 100;
  const void* in() const { return v.data(); }
  scResult_t run(const void* input, void* indices, void* values) {
    return scTopkSelect(input, n, dt, &cfg, indices, values, capacity, nullptr, nullptr);
  }
  scResult_t run() { return run(in(), idx.data(), val.data()); }
};

void expectError(scResult_t rc, scResult_t want, const std::string& fragment) {
  EXPECT_EQ(rc, want) << scGetErrorString(rc);
  const std::string msg = scGetLastError(nullptr);
  EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg;
  EXPECT_NE(msg.find("csrc/topk/"), std::string::npos) << "no file:line in: " << msg;
}

}  // namespace

TEST(TopkApi, ValidCallSucceeds) {
  Call c;
  EXPECT_EQ(c.run(), scSuccess) << scGetLastError(nullptr);
}

TEST(TopkApi, RejectsBadSizes) {
  {
    Call c;
    c.cfg.k = 0;
    expectError(c.run(), scInvalidArgument, "k = 0");
  }
  {
    Call c;
    c.cfg.k = 101;
    expectError(c.run(), scInvalidArgument, "exceeds n");
  }
  {
    Call c;
    c.cfg.bucket = 0;
    EXPECT_EQ(c.run(), scSuccess) << "bucket 0 is derived from k/n";
  }
  {
    Call c;
    c.cfg.bucket = (size_t(1) << 32) + 1;
    expectError(c.run(), scInvalidArgument, "2^32");
  }
  {
    Call c;
    c.capacity = 9;
    expectError(c.run(), scInvalidArgument, "capacity");
  }
  {
    Call c;
    c.cfg.method = scTopkThreshold;
    c.cfg.samples = 101;
    expectError(c.run(), scInvalidArgument, "samples");
  }
  {
    Call c;
    c.cfg.step = uint64_t(1) << 63;
    expectError(c.run(), scInvalidArgument, "2^63");
  }
}

TEST(TopkApi, RejectsNullPointers) {
  Call c;
  expectError(c.run(nullptr, c.idx.data(), c.val.data()), scInvalidArgument, "v is NULL");
  expectError(c.run(c.in(), nullptr, c.val.data()), scInvalidArgument, "indices is NULL");
  expectError(c.run(c.in(), c.idx.data(), nullptr), scInvalidArgument, "values is NULL");
  expectError(scTopkSelect(c.in(), c.n, c.dt, nullptr, c.idx.data(), c.val.data(), 100, nullptr, nullptr),
              scInvalidArgument, "config is NULL");
  size_t cap = 0;
  expectError(scTopkMaxOutput(10, &c.cfg, nullptr), scInvalidArgument, "capacity is NULL");
  EXPECT_EQ(scTopkMaxOutput(10, &c.cfg, &cap), scSuccess);
}

// Out-of-range enum values stay within the enums' value ranges (UBSan's enum check).
TEST(TopkApi, RejectsUnsupportedTypesAndModes) {
  {
    Call c;
    c.dt = scInt32;
    expectError(c.run(), scInvalidArgument, "int32");
  }
  {
    Call c;
    c.dt = scDataType_t(12);
    expectError(c.run(), scInvalidArgument, "unknown data type");
  }
  {
    Call c;
    c.cfg.method = scTopkMethod_t(7);
    expectError(c.run(), scInvalidArgument, "unknown top-k method");
  }
  {
    Call c;
    c.cfg.output = scTopkOutput_t(3);
    expectError(c.run(), scInvalidArgument, "output mode");
  }
  {
    Call c;
    c.cfg.indexType = scTopkIndex_t(3);
    expectError(c.run(), scInvalidArgument, "index type");
  }
  {
    Call c;
    c.cfg.size = 8;
    expectError(c.run(), scInvalidArgument, "SC_TOPK_CONFIG_INITIALIZER");
  }
  {
    Call c;
    c.cfg.method = scTopkExact;
    c.cfg.output = scTopkFixedPerBucket;
    expectError(c.run(), scInvalidArgument, "needs a bucketed method");
  }
}

TEST(TopkApi, RejectsStreamWithHostBuffersAndTooManyBuckets) {
  Call c;
  int dummy = 0;
  expectError(scTopkSelect(c.in(), c.n, c.dt, &c.cfg, c.idx.data(), c.val.data(), 100, nullptr, &dummy),
              scInvalidArgument, "stream must be NULL");
  // 2^31 buckets of one element (no memory is touched: validation comes first).
  scTopkConfig_t cfg = config(scTopkApprox, 1, 1);
  cfg.indexType = scTopkIndexU64;
  size_t cap = 0;
  expectError(scTopkMaxOutput(size_t(1) << 31, &cfg, &cap), scInvalidArgument, "buckets");
  cfg.indexType = scTopkIndexU32;
  cfg.bucket = 1 << 20;
  expectError(scTopkMaxOutput((size_t(1) << 32) + 1, &cfg, &cap), scInvalidArgument, "uint32 indices");
}

TEST(TopkApi, EmptyVectorIsANoOp) {
  scTopkConfig_t cfg = config(scTopkApprox, 0);
  scTopkInfo_t info{};
  info.nnz = 7;
  EXPECT_EQ(scTopkSelect(nullptr, 0, scFloat32, &cfg, nullptr, nullptr, 0, &info, nullptr), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_EQ(info.nnz, 0u);
  cfg.k = 1;
  expectError(scTopkSelect(nullptr, 0, scFloat32, &cfg, nullptr, nullptr, 0, &info, nullptr), scInvalidArgument,
              "exceeds n = 0");
}

TEST(TopkApi, StateErrors) {
  scTopkState_t st = nullptr;
  expectError(scTopkStateCreate(nullptr, 10, scFloat32, -1), scInvalidArgument, "state pointer is NULL");
  expectError(scTopkStateCreate(&st, 10, scInt8, -1), scInvalidArgument, "int8");
  EXPECT_EQ(st, nullptr);
#ifndef SPARCOLL_HAVE_CUDA
  EXPECT_EQ(scTopkStateCreate(&st, 10, scFloat32, 0), scInvalidUsage);
#endif
  ASSERT_EQ(scTopkStateCreate(&st, 10, scFloat32, -1), scSuccess);
  std::vector<float> g(10, 1.0f), val(10);
  std::vector<uint32_t> idx(10);
  scTopkConfig_t cfg = config(scTopkExact, 3);
  expectError(scTopkSelectFeedback(st, nullptr, &cfg, idx.data(), val.data(), 10, nullptr, nullptr), scInvalidArgument,
              "grad is NULL");
  expectError(scTopkSelectFeedback(nullptr, g.data(), &cfg, idx.data(), val.data(), 10, nullptr, nullptr),
              scInvalidArgument, "state is NULL");
  cfg.k = 11;
  expectError(scTopkSelectFeedback(st, g.data(), &cfg, idx.data(), val.data(), 10, nullptr, nullptr), scInvalidArgument,
              "exceeds n");
  // A failed call leaves the state untouched: residual zero, step 0.
  uint64_t step = 9;
  EXPECT_EQ(scTopkStateGetStep(st, &step), scSuccess);
  EXPECT_EQ(step, 0u);
  expectError(scTopkStateSetStep(st, ~uint64_t(0)), scInvalidArgument, "2^63");
  void* r = nullptr;
  expectError(scTopkStateResidual(st, nullptr), scInvalidArgument, "NULL");
  EXPECT_EQ(scTopkStateResidual(st, &r), scSuccess);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(static_cast<float*>(r)[i], 0.0f);
  EXPECT_EQ(scTopkStateDestroy(st), scSuccess);
  EXPECT_EQ(scTopkStateDestroy(nullptr), scSuccess);
}

TEST(TopkApi, MethodNames) {
  EXPECT_STREQ(scTopkMethodName(scTopkApprox), "approx");
  EXPECT_STREQ(scTopkMethodName(scTopkThreshold), "threshold");
  EXPECT_STREQ(scTopkMethodName(scTopkMethod_t(7)), "unknown");
}

TEST(TopkApi, StreamOrderedCallsOnHostBuffersWriteTheirCounts) {
  Call c;
  c.cfg = config(scTopkBracket, 10);
  scTopkCounts_t counts{99, 99, 99};
  for (size_t i = 0; i < c.v.size(); ++i) c.v[i] = float(i % 17) - 8.0f;
  EXPECT_EQ(scTopkSelectAsync(c.in(), c.n, c.dt, &c.cfg, c.idx.data(), c.val.data(), 100, &counts, nullptr), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_EQ(counts.nnz, 10u);
  EXPECT_EQ(counts.selected, 10u);
  EXPECT_EQ(counts.deferred, 0u);
  expectError(scTopkSelectAsync(c.in(), c.n, c.dt, &c.cfg, c.idx.data(), c.val.data(), 100, nullptr, nullptr),
              scInvalidArgument, "counts is NULL");
  // Variable output that could overflow unseen: capacity must be scTopkMaxOutput's.
  c.cfg = config(scTopkApprox, 10, 32);
  expectError(scTopkSelectAsync(c.in(), c.n, c.dt, &c.cfg, c.idx.data(), c.val.data(), 50, &counts, nullptr),
              scInvalidArgument, "could overflow unseen");
  EXPECT_EQ(scTopkSelectAsync(c.in(), c.n, c.dt, &c.cfg, c.idx.data(), c.val.data(), 100, &counts, nullptr), scSuccess);
  EXPECT_GT(counts.nnz, 0u);
  // With a state, capacity k suffices: the rest is deferred to the residual.
  scTopkState_t st = nullptr;
  ASSERT_EQ(scTopkStateCreate(&st, c.n, c.dt, -1), scSuccess);
  c.cfg = config(scTopkApprox, 10, 100);
  EXPECT_EQ(scTopkSelectFeedbackAsync(st, c.in(), &c.cfg, c.idx.data(), c.val.data(), 10, &counts, nullptr), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_LE(counts.nnz, 10u);
  EXPECT_EQ(counts.selected - counts.deferred, counts.nnz);
  expectError(scTopkSelectFeedbackAsync(st, c.in(), &c.cfg, c.idx.data(), c.val.data(), 10, nullptr, nullptr),
              scInvalidArgument, "counts is NULL");
  scTopkStateDestroy(st);
}

TEST(TopkApi, EmptyStreamOrderedCallsZeroTheirCounts) {
  scTopkConfig_t c = config(scTopkBracket, 0);
  scTopkCounts_t counts{7, 7, 7};
  EXPECT_EQ(scTopkSelectAsync(nullptr, 0, scFloat32, &c, nullptr, nullptr, 0, &counts, nullptr), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_EQ(counts.nnz + counts.selected + counts.deferred, 0u);
  scTopkState_t st = nullptr;
  ASSERT_EQ(scTopkStateCreate(&st, 0, scFloat32, -1), scSuccess);
  counts = scTopkCounts_t{7, 7, 7};
  EXPECT_EQ(scTopkSelectFeedbackAsync(st, nullptr, &c, nullptr, nullptr, 0, &counts, nullptr), scSuccess)
      << scGetLastError(nullptr);
  EXPECT_EQ(counts.nnz + counts.selected + counts.deferred, 0u);
  scTopkStateDestroy(st);
}
