// topk_perf: throughput of the top-k selection (sparcoll/topk.h) against the
// memory-bandwidth bound, on the GPU when one is present and on the CPU; a
// tool without ranks on the shared driver (bench/common/driver.h).
//
// For every N (sweep -b..-e, x -f), k = fraction * N (-k list), method (-m),
// output mode (-o) and bucket size (-B) it reports the median time of -n calls
// (after -w warm-ups; each call draws a new step of the random stream), elements
// per second, GB/s and the fraction of the bandwidth bound. The bound is the
// bytes a selection cannot avoid -- read N values, write the selected (index,
// value) pairs; with --feedback also read and write the residual -- at the peak
// bandwidth: a measured device-to-device (or host) memcpy, or --peak-gbs.
// The exact method is a radix select of the k-th largest magnitude (one pass
// over the data per 11-bit digit) and one select pass, on both sides. With
// --torch (default: python3 when torch imports) torch.topk(|x|, k) runs on the
// same data through bench/topk_torch.py and a speedup column is printed.
// --check (default on) compares the device result of step 0 with the CPU
// reference bit for bit and reports the number of differing entries; any
// difference makes the exit status 1.
//
//   bench/topk_perf                                   (GPU if present, else CPU)
//   bench/topk_perf --where cpu -b 64K -e 16M -f 4 -m approx,exact
//   bench/topk_perf -b 64M -e 64M -k 0.001 -m approx,exact --peak-gbs 3350
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include "common/driver.h"
#include "common/table.h"
#include "common/timing.h"

namespace {

using namespace scbench;

// "a,b" -> {parse(a), parse(b)}; an empty list is an error.
template <typename F>
auto parseList(const std::string& s, const char* what, F parse) {
  std::vector<decltype(parse(s))> out;
  for (const auto& item : splitList(s)) out.push_back(parse(item));
  if (out.empty()) throw UsageError{std::string(what) + " needs a non-empty list"};
  return out;
}

struct Row {
  std::string where, method, output;
  size_t bucket, n, k;
  double seconds, bytes, nnz;
  long long wrong;  // -1: not checked
};

const Table kTable({{"where", 5, 0, true}, {"method", 14, 1, true}, {"output", 8, 1, true}, {"bucket", 6},
                    {"N", 11}, {"k", 9}, {"time_us", 11}, {"Gelem/s", 9}, {"GB/s", 9}, {"%bound", 7},
                    {"nnz(mean)", 11}, {"x_torch", 9}, {"wrong", 6}});

class Topk final : public Tool {
 public:
  ToolSpec spec() const override {
    return {"topk_perf", "TopK", /*algorithms: no -A*/ {}, /*hasOp=*/true, "native", /*flags=*/"befnwd",
            /*transports: one process, no ranks*/ {}, {scFloat16, scFloat32, scFloat64, scBfloat16},
            /*oneType=*/true, "(top-k selection against the bandwidth bound; N in elements, K/M/G accepted)"};
  }

  void addFlags(FlagSet& f, Options& o) override {
    o.minBytes = size_t(1) << 20;
    o.maxBytes = size_t(1) << 26;
    o.stepFactor = 4;
    o.warmupIters = 3;
    f.add({'b', "", "<N>", "smallest vector length N in elements (default 1M)", nullptr});
    f.add({'e', "", "<N>", "largest vector length N in elements (default 64M)", nullptr});
    f.add({'n', "", "", "timed calls, the median is reported (default 20)", nullptr});
    f.add({'w', "", "", "warm-up calls (default 3)", nullptr});
    f.add({'d', "", "", "float (default), double, half, bfloat16", nullptr});
    f.section("top-k options:");
    f.add({'k', "kfrac", "<list>", "k as fractions of N (default 0.001)", [this](const std::string& v) {
             kfrac_ = parseList(v, "-k", [](const std::string& s) { return parseNumber(s, "-k (kfrac)", 1e-12, 1); });
           }});
    f.add({'m', "methods", "<list>", "approx,approx-at-most,exact,threshold (default all)",
           [this](const std::string& v) { methods_ = parseList(v, "-m", parseMethod); }});
    f.add({'B', "buckets", "<list>", "bucket sizes of the bucketed methods (default 512)",
           [this](const std::string& v) {
             buckets_ = parseList(v, "-B", [](const std::string& s) {
               const size_t b = parseSize(s, "-B (buckets)");
               if (b < 1 || b > (size_t(1) << 32))  // what scTopkConfig_t.bucket accepts
                 throw UsageError{"invalid bucket size '" + s + "' for -B (expected 1 to 4G)"};
               return b;
             });
           }});
    f.add({'o', "outputs", "<list>", "output modes: variable,fixed (default variable)", [this](const std::string& v) {
             outputs_ = parseList(v, "-o", [](const std::string& s) {
               if (s == "variable") return scTopkVariable;
               if (s == "fixed") return scTopkFixedPerBucket;
               throw UsageError{"unknown output mode '" + s + "' for -o (variable, fixed)"};
             });
           }});
    f.add({0, "feedback", "", "fused error feedback (scTopkSelectFeedback with a state)",
           [this](const std::string&) { feedback_ = true; }});
    f.add({0, "where", "<W>", "gpu, cpu, both, auto (= gpu if present, else cpu)", [this](const std::string& v) {
             if (v != "gpu" && v != "cpu" && v != "both" && v != "auto")
               throw UsageError{"--where takes gpu, cpu, both or auto, got '" + v + "'"};
             where_ = v;
           }});
    f.add({0, "peak-gbs", "<X>", "bandwidth bound in GB/s instead of the measured memcpy",
           [this](const std::string& v) { peakGbs_ = parseNumber(v, "--peak-gbs", 1e-3, 1e9); }});
    f.add({0, "torch", "<PY|none>", "python for bench/topk_torch.py (default auto: python3 if torch imports)",
           [this](const std::string& v) { torch_ = v; }});
    f.add({0, "torch-script", "<PATH>", "default bench/topk_torch.py (relative to the working directory)",
           [this](const std::string& v) { torchScript_ = v; }});
    f.add({0, "no-check", "", "skip the bit-for-bit comparison with the CPU reference",
           [this](const std::string&) { check_ = false; }});
  }

  void validate(Options& o) override {
    if (o.minBytes < 1) throw UsageError{"-b: N must be at least 1"};
  }

  double hostBytesPerRank(const Options& o, int) const override {
    const double esz = double(sc::dtypeSize(o.dtypes[0])), n = double(o.maxBytes);
    const double k = n * *std::max_element(kfrac_.begin(), kfrac_.end());
    // First memcpy's two peak buffers; then the input's host copy and buffer
    // (+ the feedback state), the selection and the CPU reference's.
    return std::max(2 * std::max(n * esz, double(64 << 20)), n * esz * (feedback_ ? 3 : 2) + 4 * k * (8 + esz));
  }

  long long runRank(Group&, RankState& rs, const Context& ctx) override;

 private:
  static scTopkMethod_t parseMethod(const std::string& s) {
    for (int m = 0; m < scTopkNumMethods; ++m)
      if (s == scTopkMethodName(scTopkMethod_t(m))) return scTopkMethod_t(m);
    throw UsageError{"unknown method '" + s + "' for -m (approx, approx-at-most, exact, threshold)"};
  }
  std::vector<Row> sweep(RankState& rs, const Options& o, std::map<size_t, std::string>* dataFiles) const;
  std::map<std::pair<size_t, size_t>, double> runTorch(const Options& o, bool gpu,
                                                        const std::map<size_t, std::string>& files) const;
  double measurePeak(bool gpu, size_t bytes) const;

  std::vector<double> kfrac_{0.001};
  std::vector<scTopkMethod_t> methods_{scTopkApprox, scTopkApproxAtMost, scTopkExact, scTopkThreshold};
  std::vector<size_t> buckets_{512};
  std::vector<scTopkOutput_t> outputs_{scTopkVariable};
  bool feedback_ = false, check_ = true;
  std::string where_ = "auto";  // auto | gpu | cpu | both
  double peakGbs_ = 0;
  std::string torch_ = "auto", torchScript_ = "bench/topk_torch.py";
};

// Peak bandwidth (read + write bytes per second) of a large memcpy.
double Topk::measurePeak(bool gpu, size_t bytes) const {
  bytes = std::max<size_t>(bytes, size_t(64) << 20);
  Buffer a(bytes, gpu ? 0 : -1), b(bytes, gpu ? 0 : -1);
  std::vector<double> t;
  for (int r = 0; r < 6; ++r)
    t.push_back(secondsOf(gpu, nullptr, [&] { copyWithin(b.data(), a.data(), bytes, gpu, nullptr); }));
  return 2.0 * double(bytes) / median(t) / 1e9;
}

std::vector<Row> Topk::sweep(RankState& rs, const Options& o, std::map<size_t, std::string>* dataFiles) const {
  std::vector<Row> rows;
  const scDataType_t dt = o.dtypes[0];
  const size_t esz = sc::dtypeSize(dt);
  for (size_t n : sweepSizes(o)) {
    // Input: normal(0, 1) values, the same on both sides (and for torch).
    std::vector<char> host(n * esz);
    std::mt19937_64 rng(n);
    std::normal_distribution<float> normal;
    fillValues(host.data(), n, dt, [&](uint64_t) { return double(normal(rng)); });
    if (dataFiles && dt == scFloat32 && !dataFiles->count(n)) {
      const std::string f = "/tmp/topk_perf_" + std::to_string(n) + ".f32";
      std::ofstream(f, std::ios::binary).write(host.data(), std::streamsize(host.size()));
      (*dataFiles)[n] = f;
    }
    Buffer in = rs.alloc(n * esz);
    copyToBuffer(in.data(), host.data(), host.size(), rs.device);
    const scTopkIndex_t itype = n <= (size_t(1) << 32) ? scTopkIndexU32 : scTopkIndexU64;
    const size_t isz = itype == scTopkIndexU32 ? 4 : 8;
    for (double kf : kfrac_)
      for (scTopkMethod_t m : methods_)
        for (scTopkOutput_t out : outputs_)
          for (size_t bucket : buckets_) {
            const bool bucketed = m == scTopkApprox || m == scTopkApproxAtMost;
            if (!bucketed && (out != scTopkVariable || bucket != buckets_.front())) continue;
            scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
            cfg.method = m;
            cfg.k = std::max<size_t>(1, size_t(kf * double(n)));
            cfg.bucket = bucket;
            cfg.output = out;
            cfg.indexType = itype;
            cfg.seed = 42;
            size_t cap = 0;
            if (const scResult_t r = scTopkMaxOutput(n, &cfg, &cap); r != scSuccess)
              callFailed(rs, "scTopkMaxOutput", r);
            Buffer idx = rs.alloc(cap * isz), val = rs.alloc(cap * esz);
            scTopkState_t state = nullptr;
            if (feedback_)
              if (const scResult_t r = scTopkStateCreate(&state, n, dt, rs.cudaDevice); r != scSuccess)
                callFailed(rs, "scTopkStateCreate", r);
            std::vector<double> secs;
            double nnzSum = 0;
            long long wrong = -1;
            for (int it = 0; it < o.warmupIters + o.iters; ++it) {
              cfg.step = uint64_t(it);
              scTopkInfo_t info{};
              scResult_t rc = scSuccess;
              const double s = secondsOf(rs.device, rs.stream, [&] {
                rc = state ? scTopkSelectFeedback(state, in.data(), &cfg, idx.data(), val.data(), cap, &info, rs.stream)
                           : scTopkSelect(in.data(), n, dt, &cfg, idx.data(), val.data(), cap, &info, rs.stream);
              });
              if (rc != scSuccess) callFailed(rs, "top-k", rc);
              if (it == 0 && rs.device && check_ && !feedback_) {
                // Step 0 against the CPU reference on the same data, bit for bit.
                std::vector<char> ri(cap * isz), rv(cap * esz);
                scTopkInfo_t hinfo{};
                scTopkSelect(host.data(), n, dt, &cfg, ri.data(), rv.data(), cap, &hinfo, nullptr);
                const std::vector<char> di = rs.toHost(idx.data(), info.nnz * isz),
                                        dv = rs.toHost(val.data(), info.nnz * esz);
                wrong = (long long)(std::max(info.nnz, hinfo.nnz) - std::min(info.nnz, hinfo.nnz));
                for (size_t j = 0; j < std::min(info.nnz, hinfo.nnz); ++j)
                  wrong += std::memcmp(&di[j * isz], &ri[j * isz], isz) != 0 ||
                           std::memcmp(&dv[j * esz], &rv[j * esz], esz) != 0;
              }
              if (it >= o.warmupIters) {
                secs.push_back(s);
                nnzSum += double(info.nnz);
              }
            }
            if (state) scTopkStateDestroy(state);
            const double nnz = nnzSum / o.iters;
            const double bytes = double(n) * double(esz) * (feedback_ ? 3 : 1) + nnz * double(isz + esz);
            rows.push_back(Row{rs.device ? "gpu" : "cpu", scTopkMethodName(m),
                               bucketed ? (out == scTopkFixedPerBucket ? "fixed" : "variable") : "-",
                               bucketed ? bucket : 0, n, cfg.k, median(secs), bytes, nnz, wrong});
            std::fprintf(stderr, "  %s %s n=%zu k=%zu bucket=%zu: %.1f us\n", rows.back().where.c_str(),
                         rows.back().method.c_str(), n, cfg.k, bucket, rows.back().seconds * 1e6);
          }
  }
  return rows;
}

// torch.topk(|x|, k) on the same files; returns (n, k) -> seconds. Empty when skipped.
std::map<std::pair<size_t, size_t>, double> Topk::runTorch(const Options& o, bool gpu,
                                                            const std::map<size_t, std::string>& files) const {
  std::map<std::pair<size_t, size_t>, double> out;
  if (torch_ == "none" || files.empty()) return out;
  std::string cmd = (torch_ == "auto" ? "python3" : torch_) + " " + torchScript_ + " --device " +
                    (gpu ? "cuda" : "cpu") + " --iters " + std::to_string(o.iters) + " --warmup " +
                    std::to_string(o.warmupIters) + " --kfrac ";
  for (size_t i = 0; i < kfrac_.size(); ++i) cmd += fmt("%s%.17g", i ? "," : "", kfrac_[i]);
  for (const auto& [n, f] : files) cmd += " " + f + ":" + std::to_string(n);
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    size_t n = 0, k = 0;
    double us = 0;
    if (std::sscanf(line, "torch.topk %zu %zu %lf", &n, &k, &us) == 3) out[{n, k}] = us * 1e-6;
    else std::printf("# %s", line);  // the script's own notes (e.g. torch not importable)
  }
  pclose(p);
  return out;
}

long long Topk::runRank(Group&, RankState& rs, const Context& ctx) {
  const Options& o = ctx.o;
  const bool haveGpu = deviceCount() > 0;
  if (where_ == "gpu" && !haveGpu) throw UsageError{"--where gpu: no CUDA device"};
  std::vector<bool> targets;
  if (where_ == "gpu" || where_ == "both" || (where_ == "auto" && haveGpu)) targets.push_back(true);
  if (where_ == "cpu" || where_ == "both" || (where_ == "auto" && !haveGpu)) targets.push_back(false);
  long long wrong = 0;
  for (bool gpu : targets) {
    rs.device = gpu;  // this rank's memory: the target's
    rs.cudaDevice = gpu ? 0 : -1;
    if (gpu) setDevice(0);
    rs.stream = gpu ? createStream() : nullptr;
    const size_t esz = sc::dtypeSize(o.dtypes[0]);
    const double peak = peakGbs_ > 0 ? peakGbs_ : measurePeak(gpu, o.maxBytes * esz);
    int bus = 0;
    std::printf("# topk_perf on %s: %s; dtype %s; %s; bound = %.1f GB/s (%s)\n", gpu ? "GPU" : "CPU (1 thread)",
                gpu ? deviceName(0, &bus).c_str() : "host", typeName(o.dtypes[0]),
                feedback_ ? "error feedback" : "stateless", peak,
                peakGbs_ > 0 ? "--peak-gbs" : (gpu ? "measured D2D memcpy" : "measured memcpy"));
    std::printf("# exact = %s; bucket 0 = not bucketed; median of %d calls\n",
                gpu ? "radix select of the k-th key (11-bit digits) + one DeviceSelect pass"
                    : "radix select of the k-th key (11-bit digits) + index-order scan (CPU reference)",
                o.iters);
    std::map<size_t, std::string> files;
    const std::vector<Row> rows = sweep(rs, o, torch_ == "none" ? nullptr : &files);
    const auto torch = runTorch(o, gpu, files);
    for (const auto& [n, f] : files) std::remove(f.c_str());
    std::printf("%s\n", kTable.titles().c_str());
    for (const Row& r : rows) {
      const auto t = torch.find({r.n, r.k});
      const double gbs = r.bytes / r.seconds / 1e9;
      std::printf("%s\n", kTable.row({r.where, r.method, r.output, fmt("%zu", r.bucket), fmt("%zu", r.n),
                                      fmt("%zu", r.k), fmt("%.1f", r.seconds * 1e6),
                                      fmt("%.3f", double(r.n) / r.seconds / 1e9), fmt("%.1f", gbs),
                                      fmt("%.1f%%", 100.0 * gbs / peak), fmt("%.1f", r.nnz),
                                      t == torch.end() ? "-" : fmt("%.2f", t->second / r.seconds),
                                      r.wrong < 0 ? "-" : fmt("%lld", r.wrong)})
                              .c_str());
      wrong += std::max(0LL, r.wrong);
    }
    for (const auto& [nk, s] : torch)
      std::printf("# torch.topk(|x|) N=%zu k=%zu: %.1f us\n", nk.first, nk.second, s * 1e6);
    destroyStream(rs.stream);
    rs.stream = nullptr;
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  Topk tool;
  return scbench::run(argc, argv, tool);
}
