// kernel_perf: the device kernels alone, each beside its baseline in the same
// run (GPU builds only):
//   reduce   out = a op b for every dtype (sc::kern::reduce, the kernel the
//            device backend runs), out-of-place and in-place, as GB/s moved
//            (2 reads + 1 write) and as a fraction of a device-to-device
//            cudaMemcpy measured in the same run (1 read + 1 write);
//   sparse   the CUDA sparse stream ops (kernels/sparse_ops.cu): sort+coalesce,
//            merge-sum and densify, against cub::DeviceRadixSort::SortPairs of
//            the same (index, value) pairs.
// Every timing is the median of -n event-timed runs after -w warm-ups; inputs
// are larger than the L2 cache. Each result is checked once against a host
// computation (reduce: float32/int32 sums bit for bit; sparse: counts and sums).
//
//   bench/kernel_perf                       (both, default sizes)
//   bench/kernel_perf --only reduce -s 256M  (bytes per operand)
//   bench/kernel_perf --only sparse -N 16M   (entries)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "common/options.h"
#include "core/dtype.h"
#include "reduce.cuh"
#include "sparse/ops.h"

namespace {

using scbench::UsageError;

#define CK(x)                                                                                   \
  do {                                                                                          \
    const cudaError_t rc_ = (x);                                                                \
    if (rc_ != cudaSuccess) throw UsageError{std::string(#x) + ": " + cudaGetErrorString(rc_)}; \
  } while (0)

struct Opts {
  size_t operandBytes = size_t(256) << 20;  // reduce: bytes per operand
  size_t entries = size_t(1) << 24;         // sparse: entries per stream
  int iters = 20, warmup = 3;
  bool reduce = true, sparse = true;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of f() on `stream`, event-timed.
double timeIt(cudaStream_t stream, const Opts& o, const std::function<void()>& f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    CK(cudaEventRecord(a, stream));
    f();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (i >= o.warmup) t.push_back(ms * 1e-3);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return median(t);
}

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t bytes) { CK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

void fillRandom(void* dev, size_t bytes, uint64_t seed) {
  std::vector<uint32_t> h((bytes + 3) / 4);
  std::mt19937 rng{uint32_t(seed)};
  for (auto& x : h) x = rng();
  CK(cudaMemcpy(dev, h.data(), bytes, cudaMemcpyHostToDevice));
}

// --- reduce ---------------------------------------------------------------------

int runReduce(const Opts& o, cudaStream_t s, int sms) {
  const size_t bytes = o.operandBytes;
  DevBuf a(bytes), b(bytes), d(bytes);
  // Random bits: every dtype sees finite and non-finite patterns alike; the
  // kernel's speed does not depend on the values.
  fillRandom(a.p, bytes, 1);
  fillRandom(b.p, bytes, 2);
  const double copy = timeIt(s, o, [&] { CK(cudaMemcpyAsync(d.p, a.p, bytes, cudaMemcpyDeviceToDevice, s)); });
  const double copyGbs = 2.0 * double(bytes) / copy / 1e9;
  std::printf("# reduce kernel: %zu MiB per operand, %d SMs; copy (cudaMemcpy D2D, read+write) %.1f GB/s\n",
              bytes >> 20, sms, copyGbs);
  std::printf("%-9s %-5s %-8s %10s %9s %9s\n", "dtype", "op", "place", "time_us", "GB/s", "of_copy");

  // One exact check: float32 sums of small integers, out-of-place.
  {
    const size_t n = bytes / 4;
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) x[i] = float(i % 1001), y[i] = float((i * 7) % 999);
    CK(cudaMemcpy(a.p, x.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.p, y.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(d.p, 0xff, bytes));  // poison: every element must be written
    CK(sc::kern::reduce(d.p, a.p, b.p, n, scFloat32, scSum, s, sms));
    CK(cudaStreamSynchronize(s));
    std::vector<float> z(n);
    CK(cudaMemcpy(z.data(), d.p, bytes, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) wrong += z[i] != x[i] + y[i];
    std::printf("# check float32 sum: %zu wrong of %zu\n", wrong, n);
    if (wrong) return 1;
    fillRandom(a.p, bytes, 1);
    fillRandom(b.p, bytes, 2);
  }
  for (int t = 0; t < scNumTypes; ++t) {
    const auto dt = scDataType_t(t);
    const size_t n = bytes / sc::dtypeSize(dt);
    for (scRedOp_t op : {scSum, scMax}) {
      for (int inPlace = 0; inPlace < 2; ++inPlace) {
        void* dst = inPlace ? a.p : d.p;
        const double sec = timeIt(s, o, [&] { CK(sc::kern::reduce(dst, a.p, b.p, n, dt, op, s, sms)); });
        const double gbs = 3.0 * double(bytes) / sec / 1e9;
        std::printf("%-9s %-5s %-8s %10.1f %9.1f %8.1f%%\n", sc::dtypeName(dt), sc::opName(op), inPlace ? "in" : "out",
                    sec * 1e6, gbs, 100 * gbs / copyGbs);
      }
    }
  }
  return 0;
}

// --- sparse ops -------------------------------------------------------------------

struct Scratch {
  std::vector<void*> slot = std::vector<void*>(sc::sp::kOpsSlots, nullptr);
  std::vector<size_t> size = std::vector<size_t>(sc::sp::kOpsSlots, 0);
  char* get(int i, size_t bytes) {
    if (bytes > size[i]) {
      cudaFree(slot[i]);
      CK(cudaMalloc(&slot[i], bytes));
      size[i] = bytes;
    }
    return static_cast<char*>(slot[i]);
  }
  ~Scratch() {
    for (void* p : slot) cudaFree(p);
  }
};

int runSparse(const Opts& o, cudaStream_t s) {
  const size_t n = o.entries;
  const uint64_t dim = uint64_t(n) * 8;  // indices drawn from 8n: some duplicates, mostly unique
  std::mt19937_64 rng(7);
  std::vector<uint32_t> idx(n);
  std::vector<float> val(n);
  for (size_t i = 0; i < n; ++i) idx[i] = uint32_t(rng() % dim), val[i] = float(int(rng() % 17) - 8);
  DevBuf di(n * 4), dv(n * 4), oi(2 * n * 4), ov(2 * n * 4), ti(n * 4), tv(n * 4), cnt(8), dense(dim * 4);
  CK(cudaMemcpy(di.p, idx.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv.p, val.data(), n * 4, cudaMemcpyHostToDevice));
  Scratch scratch;
  sc::sp::OpsEnv env;
  env.stream = s;
  CK(cudaGetDevice(&env.device));
  env.scratch = [&](int slot, size_t bytes) { return scratch.get(slot, bytes); };
  auto ops = sc::sp::makeCudaOps(scIndexU32, scFloat32, env);

  // Baseline: CUB radix sort of the same pairs, all 32 key bits.
  size_t tmpBytes = 0;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, tmpBytes, di.as<uint32_t>(), ti.as<uint32_t>(), dv.as<float>(),
                                     tv.as<float>(), int64_t(n), 0, 32, s));
  DevBuf tmp(tmpBytes);
  const double radix = timeIt(s, o, [&] {
    CK(cub::DeviceRadixSort::SortPairs(tmp.p, tmpBytes, di.as<uint32_t>(), ti.as<uint32_t>(), dv.as<float>(),
                                       tv.as<float>(), int64_t(n), 0, 32, s));
  });
  std::printf("# sparse ops: %zu entries (uint32 index, float32 value), indices in [0, %llu)\n", n,
              (unsigned long long)dim);
  std::printf("%-26s %10s %12s %10s\n", "op", "time_us", "Mentries/s", "vs_radix");
  auto row = [&](const char* name, double sec, size_t entries) {
    std::printf("%-26s %10.1f %12.1f %9.2fx\n", name, sec * 1e6, double(entries) / sec / 1e6, sec / radix);
  };
  row("cub radix sort (baseline)", radix, n);

  // sort + coalesce, checked: count of distinct indices and the total sum.
  const double sc_ = timeIt(s, o, [&] { ops->sortCoalesce(di.p, dv.p, n, oi.p, ov.p, cnt.as<uint64_t>()); });
  uint64_t m = 0;
  CK(cudaMemcpy(&m, cnt.p, 8, cudaMemcpyDeviceToHost));
  {
    std::vector<uint32_t> u(idx);
    std::sort(u.begin(), u.end());
    const uint64_t want = uint64_t(std::unique(u.begin(), u.end()) - u.begin());
    std::vector<float> got(m);
    CK(cudaMemcpy(got.data(), ov.p, m * 4, cudaMemcpyDeviceToHost));
    double sg = 0, sw = 0;
    for (float x : got) sg += x;
    for (float x : val) sw += x;
    std::printf("# check sort+coalesce: %llu unique (want %llu), sum %.0f (want %.0f)\n", (unsigned long long)m,
                (unsigned long long)want, sg, sw);
    if (m != want || sg != sw) return 1;
  }
  row("sort+coalesce", sc_, n);

  // merge-sum of two sorted unique streams of about n/2 entries each: the
  // coalesced stream split in two halves by parity of position.
  const size_t half = size_t(m / 2);
  DevBuf ai(half * 4), av(half * 4), bi(half * 4), bv(half * 4);
  {
    std::vector<uint32_t> ui(m);
    std::vector<float> uv(m);
    CK(cudaMemcpy(ui.data(), oi.p, m * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(uv.data(), ov.p, m * 4, cudaMemcpyDeviceToHost));
    std::vector<uint32_t> xi, yi;
    std::vector<float> xv, yv;
    for (size_t i = 0; i < 2 * half; ++i) (i % 2 ? yi : xi).push_back(ui[i]), (i % 2 ? yv : xv).push_back(uv[i]);
    CK(cudaMemcpy(ai.p, xi.data(), half * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(av.p, xv.data(), half * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bi.p, yi.data(), half * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(bv.p, yv.data(), half * 4, cudaMemcpyHostToDevice));
  }
  const double merge =
      timeIt(s, o, [&] { ops->mergeSum(ai.p, av.p, half, bi.p, bv.p, half, oi.p, ov.p, cnt.as<uint64_t>()); });
  uint64_t mm = 0;
  CK(cudaMemcpy(&mm, cnt.p, 8, cudaMemcpyDeviceToHost));
  std::printf("# check merge-sum: %llu entries (want %llu)\n", (unsigned long long)mm, (unsigned long long)(2 * half));
  if (mm != 2 * half) return 1;
  row("merge-sum (2 x n/2)", merge, 2 * half);

  // densify the coalesced stream into [0, dim).
  const double dens = timeIt(s, o, [&] { ops->densify(ai.p, av.p, half, 0, size_t(dim), dense.p); });
  row("densify (n/2 into 8n)", dens, half);
  std::printf("# densify writes %.1f GB/s (dense zeroing + scatter)\n", double(dim * 4 + half * 8) / dens / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Opts o;
    scbench::FlagSet flags;
    flags.add({0, "only", "<reduce|sparse>", "one part (default both)", [&o](const std::string& v) {
                 if (v != "reduce" && v != "sparse") throw UsageError{"--only takes reduce or sparse, got '" + v + "'"};
                 o.reduce = v == "reduce";
                 o.sparse = v == "sparse";
               }});
    flags.add({'s', "", "<bytes>", "reduce: bytes per operand, at least 16 (default 256M)", [&o](const std::string& v) {
                 o.operandBytes = scbench::parseSize(v, "-s");
                 if (o.operandBytes < 16) throw UsageError{"-s needs at least 16 bytes per operand"};
               }});
    flags.add({'N', "", "<entries>", "sparse: entries, at least 2 (default 16M)", [&o](const std::string& v) {
                 o.entries = scbench::parseSize(v, "-N");
                 if (o.entries < 2) throw UsageError{"-N needs at least 2 entries"};
               }});
    flags.add({'n', "", "<n>", "timed runs; the median is reported (default 20)",
               [&o](const std::string& v) { o.iters = int(scbench::parseInt(v, "-n", 1, 1 << 30)); }});
    flags.add({'w', "", "<n>", "warm-up runs (default 3)",
               [&o](const std::string& v) { o.warmup = int(scbench::parseInt(v, "-w", 0, 1 << 30)); }});
    if (!flags.parse(argc, argv)) {
      std::fputs(flags.usage("USAGE: kernel_perf [options]   (GPU builds; device 0)").c_str(), stdout);
      return 0;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      std::fprintf(stderr, "kernel_perf: no CUDA device is visible\n");
      return 2;
    }
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# kernel_perf on %s (%d SMs, %.0f MB L2)\n", prop.name, sms, prop.l2CacheSize / 1e6);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int rc = 0;
    if (o.reduce) rc |= runReduce(o, s, sms);
    if (o.sparse) rc |= runSparse(o, s);
    CK(cudaStreamDestroy(s));
    if (rc) std::printf("FAILED: a result check failed\n");
    return rc;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kernel_perf: %s\n", e.msg.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "kernel_perf: cannot allocate host memory (lower -s or -N)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_perf: %s\n", e.what());
    return 2;
  }
}
