// Device top-k without host waits (label gpu): the stream-ordered calls
// (scTopkSelectAsync, scTopkSelectFeedbackAsync) leave the same selection and
// counts as the waiting ones, and every method, with and without error
// feedback, can be captured into a CUDA graph (a call that waited for the
// stream or synchronized would break the capture) and replayed 100 times with
// the results of eager calls; a state's captured call allocates nothing, a
// stateless one less than a byte per element. Skips with a message without a
// CUDA device.
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "common/harness.h"
#include "topk_util.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu_compare.h"
#endif

using namespace tk;

#ifdef SPARCOLL_HAVE_CUDA
namespace {

struct Method {
  scTopkMethod_t m;
  scTopkOutput_t out;
};
constexpr Method kMethods[] = {{scTopkBracket, scTopkVariable},
                               {scTopkExact, scTopkVariable},
                               {scTopkThreshold, scTopkVariable},
                               {scTopkApprox, scTopkVariable},
                               {scTopkApprox, scTopkFixedPerBucket}};

std::vector<double> gradient(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (auto& e : x) e = normal(rng) * (rng() % 16 == 0 ? 10 : 1);
  return x;
}

// The bytes of every memory-allocation node of a captured graph.
std::vector<size_t> allocations(cudaGraph_t g) {
  size_t count = 0;
  EXPECT_EQ(cudaGraphGetNodes(g, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(count);
  EXPECT_EQ(cudaGraphGetNodes(g, nodes.data(), &count), cudaSuccess);
  std::vector<size_t> bytes;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t;
    EXPECT_EQ(cudaGraphNodeGetType(node, &t), cudaSuccess);
    if (t != cudaGraphNodeTypeMemAlloc) continue;
    cudaMemAllocNodeParams params{};
    EXPECT_EQ(cudaGraphMemAllocNodeGetParams(node, &params), cudaSuccess);
    bytes.push_back(params.bytesize);
  }
  return bytes;
}

std::vector<char> fetch(const void* dev, size_t bytes) {
  std::vector<char> h(bytes);
  EXPECT_EQ(cudaMemcpy(h.data(), dev, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

}  // namespace
#endif

TEST(TopkGpuAsync, StreamOrderedCallsMatchTheWaitingOnes) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t n = (size_t(1) << 20) + 5;
  const Buf v(gradient(n, 1), scFloat32);
  Dev in(v.data(), n * 4, s), counts(sizeof(scTopkCounts_t));
  for (const Method& me : kMethods) {
    scTopkConfig_t c = config(me.m, n / 1000, 0, 7, 2);
    c.output = me.out;
    size_t cap = 0;
    ASSERT_EQ(scTopkMaxOutput(n, &c, &cap), scSuccess);
    Dev i1(cap * 4), v1(cap * 4), i2(cap * 4), v2(cap * 4);
    scTopkInfo_t info{};
    ASSERT_EQ(scTopkSelect(in.p, n, scFloat32, &c, i1.p, v1.p, cap, &info, s), scSuccess) << scGetLastError(nullptr);
    auto* cnt = static_cast<scTopkCounts_t*>(counts.p);
    ASSERT_EQ(scTopkSelectAsync(in.p, n, scFloat32, &c, i2.p, v2.p, cap, cnt, s), scSuccess) << scGetLastError(nullptr);
    CUDA_OK(cudaStreamSynchronize(s));
    scTopkCounts_t h{};
    std::memcpy(&h, fetch(counts.p, sizeof h).data(), sizeof h);
    EXPECT_EQ(h.nnz, info.nnz) << scTopkMethodName(me.m);
    EXPECT_EQ(h.selected, info.selected);
    EXPECT_EQ(h.deferred, info.deferred);
    EXPECT_EQ(fetch(i1.p, info.nnz * 4), fetch(i2.p, info.nnz * 4));
    EXPECT_EQ(fetch(v1.p, info.nnz * 4), fetch(v2.p, info.nnz * 4));
  }
  // A stateless variable-output call that could overflow unseen is refused.
  scTopkConfig_t c = config(scTopkApprox, 100, 0, 1);
  Dev i(200 * 4), val(200 * 4);
  EXPECT_EQ(scTopkSelectAsync(in.p, n, scFloat32, &c, i.p, val.p, 200, static_cast<scTopkCounts_t*>(counts.p), s),
            scInvalidArgument);
  // A device state with nothing to select zeroes its device counts on the stream.
  scTopkState_t empty = nullptr;
  ASSERT_EQ(scTopkStateCreate(&empty, 0, scFloat32, 0), scSuccess);
  CUDA_OK(cudaMemsetAsync(counts.p, 0xff, sizeof(scTopkCounts_t), s));
  EXPECT_EQ(scTopkSelectFeedbackAsync(empty, nullptr, &c, nullptr, nullptr, 0, static_cast<scTopkCounts_t*>(counts.p),
                                      s),
            scSuccess)
      << scGetLastError(nullptr);
  CUDA_OK(cudaStreamSynchronize(s));
  EXPECT_EQ(fetch(counts.p, sizeof(scTopkCounts_t)), std::vector<char>(sizeof(scTopkCounts_t), 0));
  scTopkStateDestroy(empty);
  CUDA_OK(cudaStreamDestroy(s));
#endif
}

TEST(TopkGpuAsync, FeedbackCallsReplayFromACudaGraph) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t n = (size_t(1) << 20) + 3, vb = n * 4;
  const Buf g0(gradient(n, 2), scFloat32), g1(gradient(n, 3), scFloat32);
  Dev d0(g0.data(), vb, s), d1(g1.data(), vb, s);
  for (const Method& me : kMethods) {
    SCOPED_TRACE(scTopkMethodName(me.m));
    scTopkConfig_t c = config(me.m, n / 100, 0, 11);
    c.output = me.out;
    const size_t cap = c.k;  // feedback: what does not fit stays in the residual
    // Two device states, warmed by the same first call (which sizes their scratch).
    scTopkState_t eager = nullptr, graphed = nullptr;
    ASSERT_EQ(scTopkStateCreate(&eager, n, scFloat32, 0), scSuccess);
    ASSERT_EQ(scTopkStateCreate(&graphed, n, scFloat32, 0), scSuccess);
    Dev ei(cap * 4), ev(cap * 4), gi(cap * 4), gv(cap * 4), ec(sizeof(scTopkCounts_t)), gc(sizeof(scTopkCounts_t));
    auto* ecnt = static_cast<scTopkCounts_t*>(ec.p);
    auto* gcnt = static_cast<scTopkCounts_t*>(gc.p);
    ASSERT_EQ(scTopkSelectFeedbackAsync(eager, d0.p, &c, ei.p, ev.p, cap, ecnt, s), scSuccess);
    ASSERT_EQ(scTopkSelectFeedbackAsync(graphed, d0.p, &c, gi.p, gv.p, cap, gcnt, s), scSuccess);
    // Capture one call; the graph replays it with the step of the capture (1).
    cudaGraph_t graph = nullptr;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    const scResult_t rc = scTopkSelectFeedbackAsync(graphed, d1.p, &c, gi.p, gv.p, cap, gcnt, s);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    ASSERT_EQ(rc, scSuccess) << scGetLastError(nullptr);
    // The state's scratch was sized by its first call: the captured one allocates nothing.
    EXPECT_TRUE(allocations(graph).empty()) << allocations(graph).size() << " allocations in a state's call";
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    void *er = nullptr, *gr = nullptr;
    scTopkStateResidual(eager, &er);
    scTopkStateResidual(graphed, &gr);
    for (int rep = 0; rep < 100; ++rep) {
      CUDA_OK(cudaGraphLaunch(exec, s));
      ASSERT_EQ(scTopkStateSetStep(eager, 1), scSuccess);
      ASSERT_EQ(scTopkSelectFeedbackAsync(eager, d1.p, &c, ei.p, ev.p, cap, ecnt, s), scSuccess);
      if (rep % 33 != 0 && rep != 99) continue;
      CUDA_OK(cudaStreamSynchronize(s));
      scTopkCounts_t a{}, b{};
      std::memcpy(&a, fetch(ec.p, sizeof a).data(), sizeof a);
      std::memcpy(&b, fetch(gc.p, sizeof b).data(), sizeof b);
      ASSERT_EQ(a.nnz, b.nnz) << "replay " << rep;
      ASSERT_EQ(a.selected, b.selected);
      ASSERT_EQ(fetch(ei.p, a.nnz * 4), fetch(gi.p, a.nnz * 4)) << "replay " << rep;
      ASSERT_EQ(fetch(ev.p, a.nnz * 4), fetch(gv.p, a.nnz * 4));
      ASSERT_EQ(fetch(er, vb), fetch(gr, vb)) << "residual after replay " << rep;
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    scTopkStateDestroy(eager);
    scTopkStateDestroy(graphed);
  }
  CUDA_OK(cudaStreamDestroy(s));
#endif
}

TEST(TopkGpuAsync, StatelessCallsReplayFromACudaGraph) {
  SC_REQUIRE_GPU();
#ifdef SPARCOLL_HAVE_CUDA
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t n = (size_t(1) << 22) + 1;
  const Buf v(gradient(n, 4), scFloat32);
  Dev in(v.data(), n * 4, s), counts(sizeof(scTopkCounts_t));
  auto* cnt = static_cast<scTopkCounts_t*>(counts.p);
  for (const Method& me : kMethods) {
    SCOPED_TRACE(scTopkMethodName(me.m));
    scTopkConfig_t c = config(me.m, n / 1000, 0, 13, 5);
    c.output = me.out;
    size_t cap = 0;
    ASSERT_EQ(scTopkMaxOutput(n, &c, &cap), scSuccess);
    const Sel host = select(v, c, cap);
    Dev i(cap * 4), val(cap * 4);
    // Captured on a new thread: a thread's stateless calls take one chunk of
    // its largest earlier scratch, and this one must show only its own.
    cudaGraph_t graph = nullptr;
    scResult_t rc = scInternalError;
    std::string err;
    std::thread([&] {
      if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return;
      rc = scTopkSelectAsync(in.p, n, scFloat32, &c, i.p, val.p, cap, cnt, s);
      err = scGetLastError(nullptr);
      if (cudaStreamEndCapture(s, &graph) != cudaSuccess) graph = nullptr;
    }).join();
    ASSERT_EQ(rc, scSuccess) << err;
    ASSERT_NE(graph, nullptr) << "the capture failed";
    // Scratch is not per element: bracket, exact and threshold keep a list of
    // about 2k entries and the sample; approx per bucket or chunk counts.
    size_t scratch = 0;
    for (size_t b : allocations(graph)) scratch += b;
    EXPECT_LT(scratch, n) << "scratch grows with n";
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 100; ++rep) {
      CUDA_OK(cudaMemsetAsync(i.p, 0xff, cap * 4, s));
      CUDA_OK(cudaGraphLaunch(exec, s));
    }
    CUDA_OK(cudaStreamSynchronize(s));
    scTopkCounts_t h{};
    std::memcpy(&h, fetch(counts.p, sizeof h).data(), sizeof h);
    ASSERT_EQ(h.nnz, host.info.nnz);
    const Sel dev =
        readBack(fetch(i.p, h.nnz * 4).data(), fetch(val.p, h.nnz * 4).data(), h.nnz, c.indexType, scFloat32);
    EXPECT_EQ(dev.idx, host.idx);
    EXPECT_EQ(dev.bits, host.bits);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
  }
  CUDA_OK(cudaStreamDestroy(s));
#endif
}
