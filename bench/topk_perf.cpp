// topk_perf: speed and quality of the top-k selection (sparcoll/topk.h), on
// the GPU when one is present and on the CPU; a tool without ranks on the
// shared driver (bench/common/driver.h).
//
// For every input (-I: synthetic distributions at every N of the sweep -b..-e,
// x -f, and the shipped real gradients at their own N), k = fraction * N (-k
// list), method (-m), output mode (-o) and bucket (-B, 0 = derived from k/N)
// it reports the median time of -n calls (after -w warm-ups; each call draws a
// new step of the random stream), GB/s and the fraction of the bandwidth
// bound, and the selection's quality averaged over the timed calls
// (tests/topk/eval/topk_eval.h): the share of exact top-k's sum of squares it
// sends (energy), the share of exact top-k's entries it sends (recall), the
// entries it returns and, for fixed output, the share of them that are zero
// pads. The bound is the bytes a selection cannot avoid -- read N values,
// write the selected (index, value) pairs; with --feedback also read and
// write the residual -- at the peak bandwidth: a measured device-to-device (or
// host) memcpy, or --peak-gbs. With --torch (default: python3 when torch
// imports) torch.topk(|x|, k) runs on the same data through
// bench/topk_torch.py and a speedup column is printed. --check (default on)
// compares the device result of step 0 with the CPU reference bit for bit; any
// difference makes the exit status 1. -J writes one JSON object per row.
//
//   bench/topk_perf                                   (GPU if present, else CPU)
//   bench/topk_perf --where cpu -b 1M -e 16M -f 4 -I normal,laplace,student-t3,sparse99,gradients
//   bench/topk_perf -b 64M -e 64M -k 0.001,0.01 -m bracket,exact --peak-gbs 3350
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "common/driver.h"
#include "common/json.h"
#include "common/table.h"
#include "common/timing.h"
#include "common/verify.h"
#include "topk/params.h"  // defaultBucket: the bucket column shows the one used
#include "topk_eval.h"

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

// n elements of dtype dt (host memory) as doubles.
std::vector<double> toDoubles(const void* src, size_t n, scDataType_t dt) {
  std::vector<double> out(n);
  sc::dispatchDtype(dt, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < n; ++i) out[i] = sc::toDouble<T>(static_cast<const T*>(src)[i]);
  });
  return out;
}

// One input vector: its values in the run's dtype, and as doubles for judging.
struct Case {
  std::string input;
  size_t n;
  std::vector<char> host;
  std::vector<double> values;
};

struct Row {
  std::string where, input, method, output;
  size_t bucket, n, k;
  double seconds, bytes;
  tkeval::Quality q;  // averaged over the timed calls
  long long wrong;    // -1: not checked
  double bound;       // the bandwidth bound, GB/s
  double torch = 0;   // torch.topk seconds on the same data, 0: not run
};

// An input written for bench/topk_torch.py.
struct TorchFile {
  std::string path, input;
  size_t n;
};

const Table kTable({{"where", 5, 0, true},
                    {"input", 17, 1, true},
                    {"method", 14, 1, true},
                    {"output", 8, 1, true},
                    {"bucket", 8},
                    {"N", 10},
                    {"k", 8},
                    {"time_us", 10},
                    {"GB/s", 8},
                    {"%bound", 7},
                    {"returned", 10},
                    {"energy%", 8},
                    {"recall%", 8},
                    {"pad%", 6},
                    {"x_torch", 8},
                    {"wrong", 6}});

class Topk final : public Tool {
 public:
  ToolSpec spec() const override {
    return {"topk_perf",
            "TopK",
            /*algorithms: no -A*/ {},
            /*hasOp=*/true,
            "native",
            /*flags=*/"befnwdJ",
            /*transports: one process, no ranks*/ {},
            {scFloat16, scFloat32, scFloat64, scBfloat16},
            /*oneType=*/true,
            "(top-k selection: speed against the bandwidth bound, quality against exact top-k)"};
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
    f.add({'m', "methods", "<list>", "bracket,exact,threshold,approx,approx-at-most (default all)",
           [this](const std::string& v) { methods_ = parseList(v, "-m", parseMethod); }});
    f.add({'B', "buckets", "<list>", "bucket sizes of the bucketed methods, 0 = derived from k/N (default 0)",
           [this](const std::string& v) {
             buckets_ = parseList(v, "-B", [](const std::string& s) {
               const size_t b = parseSize(s, "-B (buckets)");
               if (b > (size_t(1) << 32))  // what scTopkConfig_t.bucket accepts
                 throw UsageError{"invalid bucket size '" + s + "' for -B (expected 0 to 4G)"};
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
    f.add({'I', "inputs", "<list>", "normal,laplace,student-t3,sparse99 (at every N), gradients (default normal)",
           [this](const std::string& v) {
             inputs_.clear();
             gradients_ = false;
             for (const std::string& s : parseList(v, "-I", [](const std::string& x) { return x; })) {
               tkeval::Input in;
               if (s == "gradients") gradients_ = true;
               else if (tkeval::parseInput(s, &in)) inputs_.push_back(in);
               else
                 throw UsageError{"unknown input '" + s +
                                  "' for -I (normal, laplace, student-t3, sparse99, gradients)"};
             }
           }});
    f.add({0, "gradients", "<DIR>", "the real gradients' folder (default: tests/data/topk/gradients of the source)",
           [this](const std::string& v) { gradientDir_ = v; }});
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
    f.add({0, "torch-threads", "<T>", "torch's CPU threads (default: torch's own choice)",
           [this](const std::string& v) { torchThreads_ = int(parseNumber(v, "--torch-threads", 1, 4096)); }});
    f.add({0, "torch-script", "<PATH>", "default bench/topk_torch.py (relative to the working directory)",
           [this](const std::string& v) { torchScript_ = v; }});
    f.add({0, "no-check", "", "skip the bit-for-bit comparison with the CPU reference",
           [this](const std::string&) { check_ = false; }});
  }

  void validate(Options& o) override {
    if (o.minBytes < 1) throw UsageError{"-b: N must be at least 1"};
    if (!o.jsonFile.empty() && !JsonLines::available()) throw UsageError{"-J needs a build with nlohmann_json"};
    if (gradients_) try {  // read before any measurement, so a bad folder costs nothing
        grads_ = tkeval::realGradients(gradientDir_);
      } catch (const std::exception& e) {
        throw UsageError{std::string("-I gradients: ") + e.what()};
      }
  }

  double hostBytesPerRank(const Options& o, int) const override {
    const double esz = double(sc::dtypeSize(o.dtypes[0])), n = double(o.maxBytes);
    const double k = n * *std::max_element(kfrac_.begin(), kfrac_.end());
    // First memcpy's two peak buffers; then the input's host copy, its doubles
    // and the magnitudes of the exact top-k, the buffer (+ the feedback state),
    // the selection and the CPU reference's.
    return std::max(2 * std::max(n * esz, double(64 << 20)), n * (esz * (feedback_ ? 3 : 2) + 16) + 4 * k * (16 + esz));
  }

  long long runRank(Group&, RankState& rs, const Context& ctx) override;

 private:
  static scTopkMethod_t parseMethod(const std::string& s) {
    for (int m = 0; m < scTopkNumMethods; ++m)
      if (s == scTopkMethodName(scTopkMethod_t(m))) return scTopkMethod_t(m);
    throw UsageError{"unknown method '" + s + "' for -m (bracket, exact, threshold, approx, approx-at-most)"};
  }
  std::vector<Case> cases(const Options& o, size_t n) const;
  void measure(RankState& rs, const Options& o, const Case& c, double peak, std::vector<Row>& rows) const;
  void runTorch(const Options& o, bool gpu, const std::vector<TorchFile>& files, std::vector<Row>& rows) const;
  double measurePeak(bool gpu, size_t bytes) const;
  void writeJson(const Options& o, const std::vector<Row>& rows) const;

  std::vector<double> kfrac_{0.001};
  std::vector<scTopkMethod_t> methods_{scTopkBracket, scTopkExact, scTopkThreshold, scTopkApprox, scTopkApproxAtMost};
  std::vector<size_t> buckets_{0};
  std::vector<scTopkOutput_t> outputs_{scTopkVariable};
  std::vector<tkeval::Input> inputs_{tkeval::Input::Normal};
  bool gradients_ = false, feedback_ = false, check_ = true;
  std::string gradientDir_ = tkeval::defaultGradientDir();
  std::vector<tkeval::Vector> grads_;  // -I gradients: read by validate()
  std::string where_ = "auto";         // auto | gpu | cpu | both
  double peakGbs_ = 0;
  std::string torch_ = "auto", torchScript_ = "bench/topk_torch.py";
  int torchThreads_ = 0;
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

// The synthetic inputs at length n, or (n = 0) the real gradients, stored in the run's dtype.
std::vector<Case> Topk::cases(const Options& o, size_t n) const {
  const scDataType_t dt = o.dtypes[0];
  std::vector<tkeval::Vector> vecs;
  if (n)
    for (tkeval::Input in : inputs_) vecs.push_back({tkeval::inputName(in), tkeval::synthetic(in, n, n)});
  else vecs = grads_;
  std::vector<Case> out;
  for (const tkeval::Vector& v : vecs) {
    Case c{v.name, v.values.size(), std::vector<char>(v.values.size() * sc::dtypeSize(dt)), {}};
    fillValues(c.host.data(), c.n, dt, [&](uint64_t i) { return double(v.values[i]); });
    c.values = toDoubles(c.host.data(), c.n, dt);  // judged on the values as stored
    out.push_back(std::move(c));
  }
  return out;
}

// Every (k, method, output, bucket) row of one input.
void Topk::measure(RankState& rs, const Options& o, const Case& cs, double peak, std::vector<Row>& rows) const {
  const scDataType_t dt = o.dtypes[0];
  const size_t esz = sc::dtypeSize(dt), n = cs.n;
  Buffer in = rs.alloc(n * esz);
  copyToBuffer(in.data(), cs.host.data(), cs.host.size(), rs.device);
  const scTopkIndex_t itype = n <= (size_t(1) << 32) ? scTopkIndexU32 : scTopkIndexU64;
  const size_t isz = itype == scTopkIndexU32 ? 4 : 8;
  for (double kf : kfrac_) {
    const size_t k = std::max<size_t>(1, size_t(kf * double(n)));
    const tkeval::ExactTopk exact(cs.values, k);
    for (scTopkMethod_t m : methods_)
      for (scTopkOutput_t out : outputs_)
        for (size_t bucket : buckets_) {
          const bool bucketed = sc::topk::bucketed(m);
          if (!bucketed && (out != scTopkVariable || bucket != buckets_.front())) continue;
          scTopkConfig_t cfg = SC_TOPK_CONFIG_INITIALIZER;
          cfg.method = m;
          cfg.k = k;
          cfg.bucket = bucket;
          cfg.output = out;
          cfg.indexType = itype;
          cfg.seed = 42;
          size_t cap = 0;
          if (const scResult_t r = scTopkMaxOutput(n, &cfg, &cap); r != scSuccess) callFailed(rs, "scTopkMaxOutput", r);
          Buffer idx = rs.alloc(cap * isz), val = rs.alloc(cap * esz);
          scTopkState_t state = nullptr;
          if (feedback_)
            if (const scResult_t r = scTopkStateCreate(&state, n, dt, rs.cudaDevice); r != scSuccess)
              callFailed(rs, "scTopkStateCreate", r);
          std::vector<double> secs;
          tkeval::Quality sum;
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
            const std::vector<char> di = rs.toHost(idx.data(), info.nnz * isz),
                                    dv = rs.toHost(val.data(), info.nnz * esz);
            if (it == 0 && rs.device && check_ && !feedback_) {
              // Step 0 against the CPU reference on the same data, bit for bit.
              std::vector<char> ri(cap * isz), rv(cap * esz);
              scTopkInfo_t hinfo{};
              scTopkSelect(cs.host.data(), n, dt, &cfg, ri.data(), rv.data(), cap, &hinfo, nullptr);
              wrong = (long long)(std::max(info.nnz, hinfo.nnz) - std::min(info.nnz, hinfo.nnz));
              for (size_t j = 0; j < std::min(info.nnz, hinfo.nnz); ++j)
                wrong += std::memcmp(&di[j * isz], &ri[j * isz], isz) != 0 ||
                         std::memcmp(&dv[j * esz], &rv[j * esz], esz) != 0;
            }
            if (it < o.warmupIters) continue;
            secs.push_back(s);
            // With feedback the state's first calls send what is left of the
            // earlier ones too: judged against the input alone all the same.
            std::vector<uint64_t> ix(info.nnz);
            for (size_t j = 0; j < info.nnz; ++j)
              ix[j] = isz == 4 ? reinterpret_cast<const uint32_t*>(di.data())[j]
                               : reinterpret_cast<const uint64_t*>(di.data())[j];
            const std::vector<double> vx = toDoubles(dv.data(), info.nnz, dt);
            const uint64_t pads = out == scTopkFixedPerBucket ? info.nnz - (info.selected - info.deferred) : 0;
            const tkeval::Quality q = tkeval::judge(exact, ix.data(), vx.data(), info.nnz, pads);
            sum.energy += q.energy, sum.recall += q.recall, sum.padShare += q.padShare;
            sum.returned += q.returned;
          }
          if (state) scTopkStateDestroy(state);
          const double calls = o.iters;
          tkeval::Quality q{sum.energy / calls, sum.recall / calls, sum.padShare / calls,
                            uint64_t(double(sum.returned) / calls + 0.5)};
          const double bytes = double(n) * double(esz) * (feedback_ ? 3 : 1) + double(q.returned) * double(isz + esz);
          const size_t usedBucket = bucketed ? (bucket ? bucket : sc::topk::defaultBucket(n, k)) : 0;
          rows.push_back(Row{rs.device ? "gpu" : "cpu", cs.input, scTopkMethodName(m),
                             bucketed ? (out == scTopkFixedPerBucket ? "fixed" : "variable") : "-", usedBucket, n, k,
                             median(secs), bytes, q, wrong, peak});
          std::fprintf(stderr, "  %s %s %s n=%zu k=%zu bucket=%zu: %.1f us, energy %.1f %%\n",
                       rows.back().where.c_str(), cs.input.c_str(), rows.back().method.c_str(), n, k, usedBucket,
                       rows.back().seconds * 1e6, 100 * q.energy);
        }
  }
}

// torch.topk(|x|, k) on the same data, into every row of that data.
void Topk::runTorch(const Options& o, bool gpu, const std::vector<TorchFile>& files, std::vector<Row>& rows) const {
  if (files.empty()) return;
  std::string cmd = (torch_ == "auto" ? "python3" : torch_) + " " + torchScript_ + " --device " +
                    (gpu ? "cuda" : "cpu") + " --iters " + std::to_string(o.iters) + " --warmup " +
                    std::to_string(o.warmupIters) + " --threads " + std::to_string(torchThreads_) + " --kfrac ";
  for (size_t i = 0; i < kfrac_.size(); ++i) cmd += fmt("%s%.17g", i ? "," : "", kfrac_[i]);
  for (const TorchFile& f : files) cmd += " " + f.path + ":" + std::to_string(f.n);
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return;
  char line[1024], path[512];
  while (std::fgets(line, sizeof line, p)) {
    size_t n = 0, k = 0;
    double us = 0;
    if (std::sscanf(line, "torch.topk %511s %zu %zu %lf", path, &n, &k, &us) != 4) {
      std::printf("# %s", line);  // the script's own notes (threads, or torch not importable)
      continue;
    }
    for (const TorchFile& f : files)
      if (f.path == path)
        for (Row& r : rows)
          if (r.input == f.input && r.n == n && r.k == k) r.torch = us * 1e-6;
  }
  pclose(p);
}

void Topk::writeJson(const Options& o, const std::vector<Row>& rows) const {
  std::vector<JsonObject> lines;
  for (const Row& r : rows)
    lines.push_back(JsonObject()
                        .add("tool", "topk_perf")
                        .add("where", r.where)
                        .add("input", r.input)
                        .add("dtype", typeName(o.dtypes[0]))
                        .add("feedback", feedback_)
                        .add("method", r.method)
                        .add("output", r.output)
                        .add("bucket", uint64_t(r.bucket))
                        .add("n", uint64_t(r.n))
                        .add("k", uint64_t(r.k))
                        .add("time_us", r.seconds * 1e6)
                        .add("gbs", r.bytes / r.seconds / 1e9)
                        .add("bound_gbs", r.bound)
                        .add("returned", r.q.returned)
                        .add("energy", r.q.energy)
                        .add("recall", r.q.recall)
                        .add("pad_share", r.q.padShare)
                        .add("torch_us", r.torch * 1e6)
                        .add("torch_threads", int64_t(torchThreads_))
                        .add("wrong", int64_t(r.wrong)));
  std::string err;
  if (!writeJsonLines(o.jsonFile, lines, &err)) fatal(err);
}

long long Topk::runRank(Group&, RankState& rs, const Context& ctx) {
  const Options& o = ctx.o;
  const bool haveGpu = deviceCount() > 0;
  if (where_ == "gpu" && !haveGpu) throw UsageError{"--where gpu: no CUDA device"};
  std::vector<bool> targets;
  if (where_ == "gpu" || where_ == "both" || (where_ == "auto" && haveGpu)) targets.push_back(true);
  if (where_ == "cpu" || where_ == "both" || (where_ == "auto" && !haveGpu)) targets.push_back(false);
  long long wrong = 0;
  std::vector<Row> all;
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
    std::printf(
        "# median time of %d calls; quality (energy, recall, returned, pads) averaged over them against\n"
        "# exact top-k of the same vector; bucket: the one used (-B 0 derives it from k/N)\n",
        o.iters);
    std::vector<Row> rows;
    std::vector<TorchFile> files;
    std::vector<size_t> sizes = sweepSizes(o);
    sizes.push_back(0);  // the real gradients, at their own N
    for (size_t n : sizes)
      for (const Case& c : cases(o, n)) {
        measure(rs, o, c, peak, rows);
        if (torch_ == "none" || o.dtypes[0] != scFloat32) continue;
        files.push_back({"/tmp/topk_perf_" + std::to_string(files.size()) + ".f32", c.input, c.n});
        std::ofstream(files.back().path, std::ios::binary).write(c.host.data(), std::streamsize(c.host.size()));
      }
    runTorch(o, gpu, files, rows);
    for (const TorchFile& f : files) std::remove(f.path.c_str());
    std::printf("%s\n", kTable.titles().c_str());
    for (const Row& r : rows) {
      const double gbs = r.bytes / r.seconds / 1e9;
      std::printf("%s\n", kTable
                              .row({r.where, r.input, r.method, r.output, fmt("%zu", r.bucket), fmt("%zu", r.n),
                                    fmt("%zu", r.k), fmt("%.1f", r.seconds * 1e6), fmt("%.1f", gbs),
                                    fmt("%.1f%%", 100.0 * gbs / r.bound), fmt("%llu", (unsigned long long)r.q.returned),
                                    fmt("%.2f", 100 * r.q.energy), fmt("%.2f", 100 * r.q.recall),
                                    r.output == "fixed" ? fmt("%.1f", 100 * r.q.padShare) : "-",
                                    r.torch > 0 ? fmt("%.2f", r.torch / r.seconds) : "-",
                                    r.wrong < 0 ? "-" : fmt("%lld", r.wrong)})
                              .c_str());
      wrong += std::max(0LL, r.wrong);
    }
    for (const Row& r : rows)
      if (r.torch > 0 && r.method == rows.front().method)
        std::printf("# torch.topk(|x|) %s N=%zu k=%zu: %.1f us\n", r.input.c_str(), r.n, r.k, r.torch * 1e6);
    all.insert(all.end(), rows.begin(), rows.end());
    destroyStream(rs.stream);
    rs.stream = nullptr;
  }
  if (!o.jsonFile.empty()) writeJson(o, all);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  Topk tool;
  return scbench::run(argc, argv, tool);
}
