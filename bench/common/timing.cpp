#include "common/timing.h"

#include <algorithm>
#include <chrono>

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace scbench {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Timing timeCalls(Group& g, RankState& rs, long calls, Combine how, const std::function<void()>& call) {
  g.barrier();
  scCommResetStats(rs.comm);
  const double t0 = now();
  for (long i = 0; i < calls; ++i) call();
  const double cpu = now() - t0;
  rs.sync();
  const double wall = now() - t0;
  scStats_t st{};
  scCommGetStats(rs.comm, &st);

  const double n = double(calls);
  Timing t;
  t.timeUs = g.combine(wall / n, how) * 1e6;
  t.cpuTimeUs = g.combine(cpu / n, how) * 1e6;
  t.sentAvg = g.combine(double(st.bytesSent) / n, Combine::Avg);
  t.sentMax = g.max(double(st.bytesSent) / n);
  t.msgsMax = g.max(double(st.msgsSent) / n);
  t.msgsReducedMax = g.max(double(st.msgsReduced) / n);
  t.roundsMax = g.max(double(st.rounds) / n);
  t.rendezvousMax = g.max(double(st.rendezvous) / n);
  t.hostSyncsMax = g.max(double(st.hostSyncs) / n);
  t.eventsMax = g.max(double(st.eventsCreated) / n);
  return t;
}

double secondsOf(bool device, void* stream, const std::function<void()>& f) {
#ifdef SPARCOLL_HAVE_CUDA
  if (device) {
    const auto s = static_cast<cudaStream_t>(stream);
    cudaEvent_t a, b;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
      throw UsageError{std::string("cudaEventCreate failed: ") + cudaGetErrorString(cudaGetLastError())};
    cudaEventRecord(a, s);
    f();
    cudaEventRecord(b, s);
    const cudaError_t e = cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (e != cudaSuccess) throw UsageError{std::string("cudaEventSynchronize failed: ") + cudaGetErrorString(e)};
    return ms * 1e-3;
  }
#else
  (void)device, (void)stream;
#endif
  const double t0 = now();
  f();
  return now() - t0;
}

}  // namespace scbench
