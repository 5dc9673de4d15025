// topk_perf: throughput of the top-k selection (sparcoll/topk.h) against the
// memory-bandwidth bound, on the GPU when one is present and on the CPU.
//
// For every N (sweep -b..-e, x -f), k = fraction * N (-k list), method (-m),
// output mode (-o) and bucket size (-B) it reports the median time of -n calls
// (after -w warm-ups; each call draws a new step of the random stream), elements
// per second, GB/s and the fraction of the bandwidth bound. The bound is the
// bytes a selection cannot avoid -- read N values, write the selected (index,
// value) pairs; with --feedback also read and write the residual -- at the peak
// bandwidth: a measured device-to-device (or host) memcpy, or --peak-gbs.
// The exact method here is the CUB radix-sort-based exact top-k (cub::DeviceTopK
// is not in CCCL 3.0; the code switches to it where the CCCL has it). With
// --torch (default: python3 when torch imports) torch.topk(|x|, k) runs on the
// same data through bench/topk_torch.py and a speedup column is printed.
// --check (default on) compares the device result of step 0 with the CPU
// reference bit for bit and reports the number of differing entries.
//
//   bench/topk_perf                                   (GPU if present, else CPU)
//   bench/topk_perf --where cpu -b 64K -e 16M -f 4 -m approx,exact
//   bench/topk_perf -b 64M -e 64M -k 0.001 -m approx,exact --peak-gbs 3350
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/options.h"
#include "core/dtype.h"
#include "sparcoll/sparcoll.h"

#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using scbench::UsageError;

struct Opts {
  size_t minN = size_t(1) << 20, maxN = size_t(1) << 26, factor = 4;
  std::vector<double> kfrac{0.001};
  std::vector<scTopkMethod_t> methods{scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold};
  std::vector<size_t> buckets{512};
  std::vector<scTopkOutput_t> outputs{scTopkVariable};
  scDataType_t dtype = scFloat32;
  bool feedback = false, check = true;
  int iters = 20, warmup = 3;
  std::string where = "auto";  // auto | gpu | cpu | both
  double peakGbs = 0;
  std::string torch = "auto", torchScript = "bench/topk_torch.py";
};

template <typename T, typename F>
std::vector<T> parseList(const std::string& s, F parse) {
  std::vector<T> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(parse(item));
  if (out.empty()) throw UsageError{"empty list '" + s + "'"};
  return out;
}

scTopkMethod_t parseMethod(const std::string& s) {
  for (int m = 0; m < scTopkNumMethods; ++m)
    if (s == scTopkMethodName(scTopkMethod_t(m))) return scTopkMethod_t(m);
  throw UsageError{"unknown method '" + s + "' (approx, approx-at-most, exact, threshold)"};
}

const char* usage =
    "topk_perf [options]\n"
    "  -b N / -e N / -f F     vector sizes min/max/factor (default 1M..64M x4; K/M/G suffixes)\n"
    "  -k list                k as fractions of N (default 0.001)\n"
    "  -m list                methods: approx,approx-at-most,exact,threshold (default all)\n"
    "  -B list                bucket sizes of the bucketed methods (default 512)\n"
    "  -o list                output modes: variable,fixed (default variable)\n"
    "  -d dtype               float32 (default), float64, float16, bfloat16\n"
    "  -n iters / -w warmup   timed calls (median reported) / warm-up calls (20 / 3)\n"
    "  --feedback             fused error feedback (scTopkSelectFeedback with a state)\n"
    "  --where W              gpu, cpu, both, auto (= gpu if present, else cpu)\n"
    "  --peak-gbs X           bandwidth bound in GB/s instead of the measured memcpy\n"
    "  --torch PY|none        python for bench/topk_torch.py (default auto: python3 if torch imports)\n"
    "  --torch-script PATH    default bench/topk_torch.py (relative to the working directory)\n"
    "  --no-check             skip the bit-for-bit comparison with the CPU reference\n";

Opts parse(int argc, char** argv) {
  Opts o;
  static const option longopts[] = {{"feedback", no_argument, nullptr, 1},     {"where", required_argument, nullptr, 2},
                                    {"peak-gbs", required_argument, nullptr, 3}, {"torch", required_argument, nullptr, 4},
                                    {"torch-script", required_argument, nullptr, 5},
                                    {"no-check", no_argument, nullptr, 6},       {"help", no_argument, nullptr, 'h'},
                                    {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "b:e:f:k:m:B:o:d:n:w:h", longopts, nullptr)) != -1;) {
    switch (c) {
      case 'b': o.minN = scbench::parseSize(optarg, "-b"); break;
      case 'e': o.maxN = scbench::parseSize(optarg, "-e"); break;
      case 'f': o.factor = std::max<size_t>(2, std::strtoull(optarg, nullptr, 10)); break;
      case 'k': o.kfrac = parseList<double>(optarg, [](const std::string& s) { return std::stod(s); }); break;
      case 'm': o.methods = parseList<scTopkMethod_t>(optarg, parseMethod); break;
      case 'B': o.buckets = parseList<size_t>(optarg, [](const std::string& s) { return scbench::parseSize(s, "-B"); }); break;
      case 'o':
        o.outputs = parseList<scTopkOutput_t>(optarg, [](const std::string& s) {
          if (s == "variable") return scTopkVariable;
          if (s == "fixed") return scTopkFixedPerBucket;
          throw UsageError{"unknown output mode '" + s + "' (variable, fixed)"};
        });
        break;
      case 'd':
        if (!sc::parseDtype(optarg, &o.dtype)) throw UsageError{std::string("unknown dtype ") + optarg};
        break;
      case 'n': o.iters = std::max(1, std::atoi(optarg)); break;
      case 'w': o.warmup = std::max(0, std::atoi(optarg)); break;
      case 1: o.feedback = true; break;
      case 2: o.where = optarg; break;
      case 3: o.peakGbs = std::atof(optarg); break;
      case 4: o.torch = optarg; break;
      case 5: o.torchScript = optarg; break;
      case 6: o.check = false; break;
      case 'h': std::fputs(usage, stdout); std::exit(0);
      default: throw UsageError{"bad option (see -h)"};
    }
  }
  if (o.minN < 1 || o.maxN < o.minN) throw UsageError{"need 1 <= -b <= -e"};
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Row {
  std::string where, method, output;
  size_t bucket, n, k;
  double seconds, bytes, nnz;
  long long wrong;  // -1: not checked
};

// One configuration's calls on `where`'s buffers. Returns the per-call seconds
// and the mean nnz; fills idx/val of the step-0 call (the first warm-up).
struct Runner {
  bool gpu;
  void* stream;
  scDataType_t dt;
  size_t n;
  void *in, *idx, *val;
  size_t capacity;
  scTopkState_t state = nullptr;

  scResult_t call(const scTopkConfig_t& cfg, scTopkInfo_t* info) {
    if (state) return scTopkSelectFeedback(state, in, &cfg, idx, val, capacity, info, stream);
    return scTopkSelect(in, n, dt, &cfg, idx, val, capacity, info, stream);
  }

  double timeOne(const scTopkConfig_t& cfg, scTopkInfo_t* info) {
#ifdef SPARCOLL_HAVE_CUDA
    if (gpu) {
      cudaEvent_t a, b;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      cudaEventRecord(a, static_cast<cudaStream_t>(stream));
      const scResult_t rc = call(cfg, info);
      cudaEventRecord(b, static_cast<cudaStream_t>(stream));
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      cudaEventDestroy(a);
      cudaEventDestroy(b);
      if (rc != scSuccess) throw UsageError{std::string("top-k failed: ") + scGetLastError(nullptr)};
      return ms * 1e-3;
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    const scResult_t rc = call(cfg, info);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != scSuccess) throw UsageError{std::string("top-k failed: ") + scGetLastError(nullptr)};
    return s;
  }
};

// Peak bandwidth (read + write bytes per second) of a large memcpy.
double measurePeak(bool gpu, size_t bytes) {
  bytes = std::max<size_t>(bytes, size_t(64) << 20);
  scbench::Buffer a(bytes, gpu ? 0 : -1), b(bytes, gpu ? 0 : -1);
  std::vector<double> t;
  for (int r = 0; r < 6; ++r) {
#ifdef SPARCOLL_HAVE_CUDA
    if (gpu) {
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      cudaEventRecord(e0);
      cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      cudaEventDestroy(e0);
      cudaEventDestroy(e1);
      t.push_back(ms * 1e-3);
      continue;
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * double(bytes) / median(t) / 1e9;
}

// Host copy of a device selection, or the host arrays themselves.
std::vector<char> fetch(const void* p, size_t bytes, bool gpu) {
  std::vector<char> h(bytes);
  scbench::copyFromBuffer(h.data(), p, bytes, gpu);
  return h;
}

std::vector<Row> sweep(const Opts& o, bool gpu, std::map<size_t, std::string>* dataFiles) {
  std::vector<Row> rows;
  const size_t esz = sc::dtypeSize(o.dtype);
  void* stream = gpu ? scbench::createStream() : nullptr;
  for (size_t n = o.minN; n <= o.maxN; n *= o.factor) {
    // Input: normal(0, 1) values, the same on both sides (and for torch).
    std::vector<char> host(n * esz);
    {
      std::mt19937_64 rng(n);
      std::normal_distribution<float> d;
      for (size_t i = 0; i < n; ++i) {
        const float x = d(rng);
        switch (o.dtype) {
          case scFloat64: { const double v = x; std::memcpy(&host[i * 8], &v, 8); break; }
          case scFloat16: { const uint16_t h = sc::floatToHalf(x); std::memcpy(&host[i * 2], &h, 2); break; }
          case scBfloat16: { const uint16_t h = sc::floatToBf16(x); std::memcpy(&host[i * 2], &h, 2); break; }
          default: std::memcpy(&host[i * 4], &x, 4);
        }
      }
    }
    if (dataFiles && o.dtype == scFloat32 && !dataFiles->count(n)) {
      const std::string f = "/tmp/topk_perf_" + std::to_string(n) + ".f32";
      std::ofstream(f, std::ios::binary).write(host.data(), std::streamsize(host.size()));
      (*dataFiles)[n] = f;
    }
    scbench::Buffer in(n * esz, gpu ? 0 : -1);
    scbench::copyToBuffer(in.data(), host.data(), host.size(), gpu);
    const scTopkIndex_t itype = n <= (size_t(1) << 32) ? scTopkIndexU32 : scTopkIndexU64;
    const size_t isz = itype == scTopkIndexU32 ? 4 : 8;
    for (double kf : o.kfrac)
      for (scTopkMethod_t m : o.methods)
        for (scTopkOutput_t out : o.outputs)
          for (size_t bucket : o.buckets) {
            const bool bucketed = m == scTopkApprox || m == scTopkApproxAtMost;
            if (!bucketed && (out != scTopkVariable || bucket != o.buckets.front())) continue;
            scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
            cfg.method = m;
            cfg.k = std::max<size_t>(1, size_t(kf * double(n)));
            cfg.bucket = bucket;
            cfg.output = out;
            cfg.indexType = itype;
            cfg.seed = 42;
            size_t cap = 0;
            if (scTopkMaxOutput(n, &cfg, &cap) != scSuccess) throw UsageError{scGetLastError(nullptr)};
            scbench::Buffer idx(cap * isz, gpu ? 0 : -1), val(cap * esz, gpu ? 0 : -1);
            Runner r{gpu, stream, o.dtype, n, in.data(), idx.data(), val.data(), cap};
            if (o.feedback && scTopkStateCreate(&r.state, n, o.dtype, gpu ? 0 : -1) != scSuccess)
              throw UsageError{scGetLastError(nullptr)};
            std::vector<double> secs;
            double nnzSum = 0;
            long long wrong = -1;
            for (int it = 0; it < o.warmup + o.iters; ++it) {
              cfg.step = uint64_t(it);
              scTopkInfo_t info{};
              const double s = r.timeOne(cfg, &info);
              if (it == 0 && gpu && o.check && !o.feedback) {
                // Step 0 against the CPU reference on the same data, bit for bit.
                std::vector<char> ri(cap * isz), rv(cap * esz);
                scTopkInfo_t hinfo{};
                scTopkSelect(host.data(), n, o.dtype, &cfg, ri.data(), rv.data(), cap, &hinfo, nullptr);
                const std::vector<char> di = fetch(idx.data(), info.nnz * isz, true),
                                        dv = fetch(val.data(), info.nnz * esz, true);
                wrong = (long long)(std::max(info.nnz, hinfo.nnz) - std::min(info.nnz, hinfo.nnz));
                for (size_t j = 0; j < std::min(info.nnz, hinfo.nnz); ++j)
                  wrong += std::memcmp(&di[j * isz], &ri[j * isz], isz) != 0 ||
                           std::memcmp(&dv[j * esz], &rv[j * esz], esz) != 0;
              }
              if (it >= o.warmup) {
                secs.push_back(s);
                nnzSum += double(info.nnz);
              }
            }
            if (r.state) scTopkStateDestroy(r.state);
            const double nnz = nnzSum / o.iters;
            const double bytes = double(n) * esz * (o.feedback ? 3 : 1) + nnz * double(isz + esz);
            rows.push_back(Row{gpu ? "gpu" : "cpu", scTopkMethodName(m),
                               bucketed ? (out == scTopkFixedPerBucket ? "fixed" : "variable") : "-",
                               bucketed ? bucket : 0, n, cfg.k, median(secs), bytes, nnz, wrong});
            std::fprintf(stderr, "  %s %s n=%zu k=%zu bucket=%zu: %.1f us\n", rows.back().where.c_str(),
                         rows.back().method.c_str(), n, cfg.k, bucket, rows.back().seconds * 1e6);
          }
    if (n > o.maxN / o.factor) break;  // no overflow of n *= factor
  }
  if (stream) scbench::destroyStream(stream);
  return rows;
}

// torch.topk(|x|, k) on the same files; returns (n, k) -> seconds. Empty when skipped.
std::map<std::pair<size_t, size_t>, double> runTorch(const Opts& o, bool gpu,
                                                      const std::map<size_t, std::string>& files) {
  std::map<std::pair<size_t, size_t>, double> out;
  if (o.torch == "none" || files.empty()) return out;
  const std::string py = o.torch == "auto" ? "python3" : o.torch;
  std::string cmd = py + " " + o.torchScript + " --device " + (gpu ? "cuda" : "cpu") + " --iters " +
                    std::to_string(o.iters) + " --warmup " + std::to_string(o.warmup) + " --kfrac ";
  for (size_t i = 0; i < o.kfrac.size(); ++i) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s%.17g", i ? "," : "", o.kfrac[i]);
    cmd += buf;
  }
  for (const auto& [n, f] : files) cmd += " " + f + ":" + std::to_string(n);
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    size_t n = 0, k = 0;
    double us = 0;
    if (std::sscanf(line, "torch.topk %zu %zu %lf", &n, &k, &us) == 3)
      out[{n, k}] = us * 1e-6;
    else
      std::printf("# %s", line);  // the script's own notes (e.g. torch not importable)
  }
  pclose(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Opts o = parse(argc, argv);
    const bool haveGpu = scbench::deviceCount() > 0;
    std::vector<bool> targets;
    if (o.where == "gpu" || o.where == "both" || (o.where == "auto" && haveGpu)) {
      if (!haveGpu) throw UsageError{"--where gpu: no CUDA device"};
      targets.push_back(true);
    }
    if (o.where == "cpu" || o.where == "both" || (o.where == "auto" && !haveGpu)) targets.push_back(false);
    if (targets.empty()) throw UsageError{"--where must be gpu, cpu, both or auto"};
    for (bool gpu : targets) {
      if (gpu) scbench::setDevice(0);
      const size_t esz = sc::dtypeSize(o.dtype);
      const double peak = o.peakGbs > 0 ? o.peakGbs : measurePeak(gpu, o.maxN * esz);
      int bus = 0;
      std::printf("# topk_perf on %s: %s; dtype %s; %s; bound = %.1f GB/s (%s)\n", gpu ? "GPU" : "CPU (1 thread)",
                  gpu ? scbench::deviceName(0, &bus).c_str() : "host", sc::dtypeName(o.dtype),
                  o.feedback ? "error feedback" : "stateless", peak,
                  o.peakGbs > 0 ? "--peak-gbs" : (gpu ? "measured D2D memcpy" : "measured memcpy"));
      std::printf("# exact = %s; bucket 0 = not bucketed; median of %d calls\n",
                  gpu ? "CUB radix-sort-based exact top-k (cub::DeviceTopK not in this CCCL)"
                      : "k-th key by nth_element + index-order scan (CPU reference)",
                  o.iters);
      std::map<size_t, std::string> files;
      const std::vector<Row> rows = sweep(o, gpu, o.torch == "none" ? nullptr : &files);
      const auto torch = runTorch(o, gpu, files);
      for (const auto& [n, f] : files) std::remove(f.c_str());
      std::printf("%-5s %-14s %-8s %6s %11s %9s %11s %9s %9s %7s %11s %9s %6s\n", "where", "method", "output",
                  "bucket", "N", "k", "time_us", "Gelem/s", "GB/s", "%bound", "nnz(mean)", "x_torch", "wrong");
      for (const Row& r : rows) {
        const auto t = torch.find({r.n, r.k});
        char tcol[32] = "-", wcol[32] = "-";
        if (t != torch.end()) std::snprintf(tcol, sizeof tcol, "%.2f", t->second / r.seconds);
        if (r.wrong >= 0) std::snprintf(wcol, sizeof wcol, "%lld", r.wrong);
        std::printf("%-5s %-14s %-8s %6zu %11zu %9zu %11.1f %9.3f %9.1f %6.1f%% %11.1f %9s %6s\n", r.where.c_str(),
                    r.method.c_str(), r.output.c_str(), r.bucket, r.n, r.k, r.seconds * 1e6,
                    double(r.n) / r.seconds / 1e9, r.bytes / r.seconds / 1e9, 100.0 * r.bytes / r.seconds / 1e9 / peak,
                    r.nnz, tcol, wcol);
      }
      for (const auto& [nk, s] : torch)
        std::printf("# torch.topk(|x|) N=%zu k=%zu: %.1f us\n", nk.first, nk.second, s * 1e6);
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "topk_perf: %s\n", e.msg.c_str());
    return 2;
  }
}
