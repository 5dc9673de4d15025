// dsop_perf: the DSOP algorithms with the methodology of Enderlin et al.
// ("Optimization of Distributed Sum of Outer Products", Sec. 5.1), on the
// shared driver (bench/common/driver.h):
//  - a barrier (scBarrier) before every iteration; an iteration's time is from
//    the barrier's exit to the end of the call on each rank (device: after the
//    stream is synchronised), and the run's time is the maximum over ranks;
//  - the first iteration of every repetition is a warm-up and is discarded;
//  - a repetition's observation is the median of its iterations; statistics
//    (median, 10th and 90th percentile) are over the repetitions, with 95 %
//    percentile-bootstrap confidence intervals (2000 resamples);
//  - speedup of each algorithm over the allreduce baseline, paired by
//    repetition (the algorithms of one repetition run back to back, in an
//    order rotated every repetition so no algorithm always runs first);
//  - one JSON line per iteration (-J), a markdown summary (-S).
// The allreduce baseline is scDsopAllReduce on a communicator whose dense
// algorithm is -B (default native: MPI_Allreduce, as in the paper).
//
// Kernel mode (-K): the local kernel alone, without ranks -- host, and on a
// GPU both the custom kernel and cuBLAS -- as written GB/s next to memset's.
//
//   mpirun -np 4 bench/dsop_perf -n 1000,2000,4000 -r 10 -i 25 -J out.jsonl -S out.md
//   bench/dsop_perf -t local -p 4 -D 1 ...          (device buffers, local transport)
//   bench/dsop_perf -K -n 8192 -k 1,4,8,64,256       (kernel bandwidth)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "common/driver.h"
#include "common/json.h"
#include "common/table.h"
#include "common/timing.h"
#include "dsop/kernels.h"

namespace {

using namespace scbench;

// The allreduce baselines -B accepts (scAlgoName spellings).
constexpr scAlgo_t kBaselines[] = {scAlgoNative, scAlgoRing, scAlgoRabenseifner, scAlgoRecDbl, scAlgoAuto};

std::vector<std::string> dsopAlgos() {
  std::vector<std::string> v;
  for (auto a :
       {scDsopAllReduce, scDsopAllGather, scDsopAllReduceRing, scDsopGRabenseifner, scDsopAllScatter, scDsopAuto})
    v.emplace_back(scDsopAlgoName(a));
  return v;
}

scDsopAlgo_t dsopAlgo(const std::string& name) {
  for (int k = 0; k < scNumDsopAlgos; ++k)
    if (name == scDsopAlgoName(scDsopAlgo_t(k))) return scDsopAlgo_t(k);
  return scDsopAuto;
}

// numpy's default (linear) percentile, p in [0, 1].
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double h = double(v.size() - 1) * p;
  const size_t lo = size_t(std::floor(h)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - double(lo)) * (v[hi] - v[lo]);
}

struct Stat {
  double value, lo, hi;  // statistic and its 95 % percentile-bootstrap interval
};

Stat bootstrap(const std::vector<double>& obs, double p) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, obs.size() - 1);
  std::vector<double> stats(2000), sample(obs.size());
  for (auto& s : stats) {
    for (auto& x : sample) x = obs[pick(rng)];
    s = percentile(sample, p);
  }
  return {percentile(obs, p), percentile(stats, 0.025), percentile(stats, 0.975)};
}

// Inputs: small integers, so every sum of products is exact in the output type.
double aValue(int r, size_t x) { return double(int((size_t(r) * 7 + x * 3 + 1) % 9) - 4); }
double bValue(int r, size_t y) { return double(int((size_t(r) * 5 + y * 11 + 2) % 7) - 3); }

struct Sample {
  size_t n;
  scDsopAlgo_t algo;
  int rep, iter;
  double seconds;
};

struct Checked {
  size_t n;
  scDsopAlgo_t algo, resolved;
  double wrong, sentMax;
};

const Table kSummary({{"N"},
                      {"M"},
                      {"algorithm"},
                      {"median ms [95% CI]"},
                      {"p10 ms"},
                      {"p90 ms"},
                      {"speedup median [95% CI]"},
                      {"speedup p10"},
                      {"speedup p90"},
                      {"sent MB/rank"},
                      {"wrong"}});

class Dsop final : public Tool {
 public:
  ToolSpec spec() const override {
    return {"dsop_perf",
            "DSOP",
            dsopAlgos(),
            /*hasOp=*/true,
            "allreduce",
            /*flags=*/"tpDdcJA",
            {scTransportMpi, scTransportLocal},
            {scFloat16, scFloat32, scFloat64, scBfloat16},
            /*oneType=*/true,
            "(distributed sum of outer products; sizes accept K/M/G)"};
  }

  void addFlags(FlagSet& f, Options& o) override {
    o.iters = 25;
    o.sizeList = {1000, 2000, 4000};
    o.algorithms = dsopAlgos();
    f.add({'c', "", "<0|1>", "check each algorithm's result once per size (default 1)", nullptr});
    f.add({'J', "", "", "JSON lines, one per iteration (or per kernel run with -K)", nullptr});
    f.add({'A', "", "",
           "comma-separated; allreduce (the baseline) always runs; accepted:\n"
           "allreduce allgather allreduce_ring g_rabenseifner all_scatter auto (default: all)",
           nullptr});
    f.section("DSOP options:");
    f.add({'n', "sizes", "<list>", "N, the length of each rank's vector a (default 1000,2000,4000)",
           [&o](const std::string& v) {
             o.sizeList.clear();
             for (const auto& s : splitList(v)) o.sizeList.push_back(parseSize(s, "-n (sizes)"));
             if (o.sizeList.empty() || *std::min_element(o.sizeList.begin(), o.sizeList.end()) == 0)
               throw UsageError{"-n needs sizes of at least 1"};
           }});
    f.add({'m', "cols", "<M>", "M, the length of b (default: M = N)", [this](const std::string& v) {
             m_ = parseSize(v, "-m (cols)");
             if (m_ == 0) throw UsageError{"-m needs M >= 1"};
           }});
    f.add({'i', "iters", "<n>", "iterations per repetition, after one warm-up (default 25)",
           [&o](const std::string& v) { o.iters = int(parseInt(v, "-i (iters)", 2, 1 << 30)); }});
    f.add({'r', "reps", "<n>", "repetitions (default 10)",
           [this](const std::string& v) { reps_ = int(parseInt(v, "-r (reps)", 1, 1 << 20)); }});
    f.add({'B', "baseline", "<algo>",
           "dense algorithm of the allreduce baseline:\nnative ring rabenseifner recdbl auto (default native)",
           [this](const std::string& v) {
             scAlgo_t a = scAlgoAuto;
             if (scAlgoFromName(v.c_str(), &a) != scSuccess ||
                 std::find(std::begin(kBaselines), std::end(kBaselines), a) == std::end(kBaselines))
               throw UsageError{"-B takes native, ring, rabenseifner, recdbl or auto, got '" + v + "'"};
             baseline_ = a;
           }});
    f.add({'S', "summary", "<file>", "also write the markdown summary to this file",
           [this](const std::string& v) { summaryFile_ = v; }});
    f.add({'K', "kernel", "", "kernel mode: the local kernel's bandwidth, no ranks",
           [this](const std::string&) { kernel_ = true; }});
    f.add({'k', "kernel_k", "<list>", "kernel mode: K, the number of outer products summed (default 1,4,8,64,256)",
           [this](const std::string& v) {
             kernelK_.clear();
             for (const auto& s : splitList(v)) kernelK_.push_back(parseSize(s, "-k (kernel_k)"));
             if (kernelK_.empty() || *std::min_element(kernelK_.begin(), kernelK_.end()) == 0)
               throw UsageError{"-k needs K >= 1"};
           }});
  }

  void validate(Options& o) override {
    o.noComm = kernel_;
    // The baseline comes first: speedups are paired with its repetitions.
    auto& a = o.algorithms;
    a.erase(std::remove(a.begin(), a.end(), std::string("allreduce")), a.end());
    a.insert(a.begin(), "allreduce");
  }

  void configure(scConfig_t& cfg, const Options&) const override { cfg.algo = baseline_; }

  double hostBytesPerRank(const Options& o, int) const override {
    const auto sizes = sweepSizes(o);
    const double n = double(*std::max_element(sizes.begin(), sizes.end())), m = m_ ? double(m_) : n;
    const double so = o.dtypes[0] == scFloat64 ? 8 : 4;
    if (kernel_) return n * m * so + double(*std::max_element(kernelK_.begin(), kernelK_.end())) * (n + m) * 16;
    return n * m * so * (o.deviceBuffers ? 1 : 2);  // the result (host ranks) and its copy for the check
  }

  long long runRank(Group& g, RankState& rs, const Context& ctx) override {
    if (kernel_) {
      kernelMode(ctx);
      return 0;
    }
    std::vector<Sample> samples;
    std::vector<Checked> checks;
    measure(g, rs, ctx, samples, checks);
    long long wrong = 0;
    for (const Checked& c : checks) wrong += c.wrong != 0;
    if (g.rank() == 0) report(ctx, samples, checks);
    return wrong;
  }

 private:
  void measure(Group& g, RankState& rs, const Context& ctx, std::vector<Sample>& samples, std::vector<Checked>& checks);
  void report(const Context& ctx, const std::vector<Sample>& samples, const std::vector<Checked>& checks) const;
  void kernelMode(const Context& ctx) const;

  size_t m_ = 0;  // 0: m = n
  int reps_ = 10;
  scAlgo_t baseline_ = scAlgoNative;
  std::string summaryFile_;
  bool kernel_ = false;
  std::vector<size_t> kernelK_{1, 4, 8, 64, 256};
};

void Dsop::measure(Group& g, RankState& rs, const Context& ctx, std::vector<Sample>& samples,
                   std::vector<Checked>& checks) {
  const Options& o = ctx.o;
  const int P = g.size(), r = g.rank();
  const scDataType_t dt = o.dtypes[0];
  scDataType_t odt = scFloat32;
  if (const scResult_t rc = scDsopOutputType(dt, &odt); rc != scSuccess) callFailed(rs, "scDsopOutputType", rc);
  const size_t so = sc::dtypeSize(odt);
  for (size_t n : sweepSizes(o)) {
    const size_t m = m_ ? m_ : n;
    Buffer a = rs.alloc(n * sc::dtypeSize(dt)), b = rs.alloc(m * sc::dtypeSize(dt)), G = rs.alloc(n * m * so);
    rs.write(a.data(), n, dt, [&](uint64_t x) { return aValue(r, x); });
    rs.write(b.data(), m, dt, [&](uint64_t y) { return bValue(r, y); });
    auto call = [&](scDsopAlgo_t algo) {
      if (const scResult_t rc = scDsop(a.data(), n, b.data(), m, G.data(), dt, algo, rs.comm, rs.stream);
          rc != scSuccess)
        callFailed(rs, std::string("scDsop (") + scDsopAlgoName(algo) + ")", rc);
    };
    for (int rep = 0; rep < reps_; ++rep) {
      for (size_t k = 0; k < o.algorithms.size(); ++k) {
        const scDsopAlgo_t algo = dsopAlgo(o.algorithms[(k + size_t(rep)) % o.algorithms.size()]);
        for (int it = 0; it <= o.iters; ++it) {  // iteration 0: warm-up, discarded
          if (const scResult_t rc = scBarrier(rs.comm, rs.stream); rc != scSuccess) callFailed(rs, "scBarrier", rc);
          rs.sync();
          const double t0 = now();
          call(algo);
          rs.sync();
          const double tmax = g.max(now() - t0);
          if (r == 0) samples.push_back({n, algo, rep, it, tmax});
        }
        if (rep == 0 && o.check) {  // correctness and traffic, outside the timed loop
          scCommResetStats(rs.comm);
          call(algo);
          rs.sync();
          scStats_t st{};
          scCommGetStats(rs.comm, &st);
          // G = sum over ranks of a_q b_q^T; by value, since -4 * 0 may leave a -0.0.
          const uint64_t wrong = rs.countWrong(
              G.data(), n * m, odt,
              [&](uint64_t i) {
                double want = 0;
                for (int q = 0; q < P; ++q) want += aValue(q, i / m) * bValue(q, i % m);
                return want;
              },
              Match::Value);
          scDsopAlgo_t resolved = algo;
          scDsopAlgoFor(rs.comm, n, m, dt, &resolved);
          const double wrongAll = g.sum(double(wrong)), sent = g.max(double(st.bytesSent));
          checks.push_back({n, algo, algo == scDsopAuto ? resolved : algo, wrongAll, sent});
        }
      }
    }
  }
}

void Dsop::report(const Context& ctx, const std::vector<Sample>& samples, const std::vector<Checked>& checks) const {
  const Options& o = ctx.o;
  const std::string baseName = scAlgoName(baseline_), transport = transportName(ctx.info.transport);
  if (!o.jsonFile.empty()) {
    std::vector<JsonObject> lines;
    for (const Sample& s : samples) {
      JsonObject j;
      j.add("bench", "dsop_perf").add("transport", transport).add("device", ctx.info.device);
      j.add("P", ctx.info.nranks).add("n", s.n).add("m", m_ ? m_ : s.n).add("dtype", typeName(o.dtypes[0]));
      j.add("algo", scDsopAlgoName(s.algo)).add("dense_algo", baseName).add("rep", s.rep).add("iter", s.iter);
      j.add("warmup", s.iter == 0).add("seconds", s.seconds);
      lines.push_back(std::move(j));
    }
    std::string err;
    if (!writeJsonLines(o.jsonFile, lines, &err)) fatal(err);
  }
  std::string md = "# dsop_perf: P = " + std::to_string(ctx.info.nranks) + " (" + transport +
                   (ctx.info.device ? ", device buffers" : ", host buffers") + "), dtype " + typeName(o.dtypes[0]) +
                   ", " + std::to_string(reps_) + " repetitions x " + std::to_string(o.iters) +
                   " iterations (+1 warm-up), allreduce baseline = scDsopAllReduce over dense '" + baseName + "'\n\n" +
                   "Times: max over ranks from barrier exit to completion; per repetition the median of its "
                   "iterations; statistics over repetitions with 95 % bootstrap CIs. Speedup = baseline / algorithm "
                   "per repetition.\n\n" +
                   kSummary.markdownHeader() + "\n";
  int bad = 0;
  auto ms = [](double s) { return fmt("%.3f", s * 1e3); };
  auto x = [](double v) { return fmt("%.2f", v); };
  for (size_t n : sweepSizes(o)) {
    auto perRep = [&](scDsopAlgo_t algo) {
      std::vector<double> obs;
      for (int rep = 0; rep < reps_; ++rep) {
        std::vector<double> it;
        for (const Sample& s : samples)
          if (s.n == n && s.algo == algo && s.rep == rep && s.iter > 0) it.push_back(s.seconds);
        obs.push_back(percentile(it, 0.5));
      }
      return obs;
    };
    const auto base = perRep(scDsopAllReduce);
    for (const auto& name : o.algorithms) {
      const scDsopAlgo_t algo = dsopAlgo(name);
      const auto obs = perRep(algo);
      std::vector<double> sp(obs.size());
      for (size_t i = 0; i < obs.size(); ++i) sp[i] = base[i] / obs[i];
      const Stat med = bootstrap(obs, 0.5), p10 = bootstrap(obs, 0.1), p90 = bootstrap(obs, 0.9);
      const Stat smed = bootstrap(sp, 0.5), s10 = bootstrap(sp, 0.1), s90 = bootstrap(sp, 0.9);
      std::string label = name, sent = "-", wrong = "-";
      for (const Checked& c : checks)
        if (c.n == n && c.algo == algo) {
          if (algo == scDsopAuto) label += std::string(" (") + scDsopAlgoName(c.resolved) + ")";
          sent = x(c.sentMax / 1e6);
          wrong = std::to_string(int64_t(c.wrong));
          bad += c.wrong != 0;
        }
      md += Table::markdownRow({std::to_string(n), std::to_string(m_ ? m_ : n), label,
                                ms(med.value) + " [" + ms(med.lo) + ", " + ms(med.hi) + "]", ms(p10.value),
                                ms(p90.value), x(smed.value) + " [" + x(smed.lo) + ", " + x(smed.hi) + "]",
                                x(s10.value), x(s90.value), sent, wrong}) +
            "\n";
    }
  }
  std::fputs(md.c_str(), stdout);
  if (!summaryFile_.empty() && !(std::ofstream(summaryFile_) << md))
    fatal("cannot write the summary to '" + summaryFile_ + "' (-S)");
  if (bad) std::fprintf(stderr, "dsop_perf: %d configurations gave WRONG results\n", bad);
}

// Written GB/s of the local kernel (hostRect / deviceRect) for K outer
// products, next to memset's bandwidth on the same output.
void Dsop::kernelMode(const Context& ctx) const {
  const Options& o = ctx.o;
  const scDataType_t dt = o.dtypes[0];
  scDataType_t odt = scFloat32;
  scDsopOutputType(dt, &odt);
  const size_t si = sc::dtypeSize(dt), so = sc::dtypeSize(odt);
  JsonLines js;
  std::string err;
  if (!o.jsonFile.empty() && !js.open(o.jsonFile, &err)) fatal(err);
  auto line = [&](const char* where, const char* engine, size_t n, size_t m, size_t K, double s, double ref) {
    const double gbs = double(n) * double(m) * double(so) / s / 1e9;
    std::printf("%-6s %-7s n=%-6zu m=%-6zu K=%-4zu %9.3f ms %8.1f GB/s written  (%5.1f %% of memset's %.1f GB/s)\n",
                where, engine, n, m, K, s * 1e3, gbs, 100 * gbs / ref, ref);
    if (o.jsonFile.empty()) return;
    JsonObject j;
    j.add("bench", "dsop_kernel").add("where", where).add("engine", engine).add("n", n).add("m", m).add("K", K);
    j.add("dtype", typeName(dt)).add("seconds", s).add("written_GBps", gbs).add("memset_GBps", ref);
    js.write(j);
  };
  auto bestOf = [](int times, bool device, const std::function<void()>& f) {
    double best = INFINITY;
    for (int i = 0; i < times; ++i) best = std::min(best, secondsOf(device, nullptr, f));
    return best;
  };
  for (size_t n : sweepSizes(o)) {
    const size_t m = m_ ? m_ : n, K = *std::max_element(kernelK_.begin(), kernelK_.end());
    // K ranks' vectors side by side: pair q is (a_q, b_q).
    std::vector<char> ha(K * n * si), hb(K * m * si);
    fillValues(ha.data(), K * n, dt, [&](uint64_t i) { return aValue(int(i / n), i % n); });
    fillValues(hb.data(), K * m, dt, [&](uint64_t i) { return bValue(int(i / m), i % m); });
    for (bool device : {false, true}) {
      if (device && deviceCount() == 0) {
        std::printf("device: no CUDA device present, device kernels not measured\n");
        continue;
      }
      const int dev = device ? 0 : -1;
      Buffer G(n * m * so, dev), da(ha.size(), dev), db(hb.size(), dev);
      copyToBuffer(da.data(), ha.data(), ha.size(), device);
      copyToBuffer(db.data(), hb.data(), hb.size(), device);
      const double fill = bestOf(device ? 10 : 5, device, [&] { setBytes(G.data(), 1, n * m * so, device, nullptr); });
      const double ref = double(n * m * so) / fill / 1e9;  // memset's GB/s
      for (size_t k : kernelK_) {
        const sc::dsop::Pairs pairs{da.data(), n, db.data(), m, k};
        if (!device) {
          if (k * (n + m) * si > size_t(1) << 31) continue;
          const double s = bestOf(5, false, [&] { sc::dsop::hostRect(dt, pairs, {0, n, 0, m}, G.data(), m, false); });
          line("host", "loop", n, m, k, s, ref);
          continue;
        }
        for (auto e : {sc::dsop::Engine::Custom, sc::dsop::Engine::Blas})
          line("device", sc::dsop::engineName(e), n, m, k,
               bestOf(10, true,
                      [&] {
                        sc::dsop::deviceRect(dt, pairs, {0, n, 0, m}, G.data(), m, false, nullptr, e);
                      }),
               ref);
      }
    }
  }
  if (!o.jsonFile.empty() && !js.close(&err)) fatal(err);
}

}  // namespace

int main(int argc, char** argv) {
  Dsop tool;
  return scbench::run(argc, argv, tool);
}
