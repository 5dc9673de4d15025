// sparcoll-tune: measures this cluster's communication and fits sparcoll's
// cost model to it, then writes a tuning file (README, "Cost model") that
// communicators load through scConfig_t.tuningFile or SPARCOLL_TUNING_FILE.
//
//   sparcoll-tune --quick -t local -p 4 --output tuning.json
//   mpirun -np 16 sparcoll-tune --output tuning.json [--raw points.jsonl]
//   mpirun -np 8 sparcoll-tune -t nccl --output tuning-nccl.json
//   mpirun -np 16 sparcoll-tune --validate tuning.json [--raw check.jsonl]
//
// It runs on the shared benchmark driver (bench/common), so transports,
// ranks and device buffers are chosen as in the benchmark tools.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/driver.h"
#include "tune.h"

namespace {

using namespace scbench;

class TuneTool final : public Tool {
 public:
  ToolSpec spec() const override {
    ToolSpec s;
    s.name = "sparcoll-tune";
    s.collective = "tune";
    s.hasOp = false;
    s.baseline = "";
    s.flags = "beftpDT";
    s.types = {scFloat32};
    s.oneType = true;
    s.about = "--output FILE | --validate FILE   (fits the cost model; sizes accept K/M/G)";
    return s;
  }

  void addFlags(FlagSet& f, Options& o) override {
    o.minBytes = 1;
    o.maxBytes = size_t(256) << 20;
    o.stepFactor = 4;
    // -b/-e/-f of the shared set, re-declared to know whether they were given
    // (--quick changes only the defaults).
    f.add({'b', "minbytes", "<size>", "smallest dense size (default 1; --quick 1K)", [this, &o](const std::string& v) {
             o.minBytes = parseSize(v, "-b (minbytes)");
             sizesGiven_ = true;
           }});
    f.add(
        {'e', "maxbytes", "<size>", "largest dense size (default 256M; --quick 4M)", [this, &o](const std::string& v) {
           o.maxBytes = parseSize(v, "-e (maxbytes)");
           sizesGiven_ = true;
         }});
    f.add({'f', "stepfactor", "<n>", "factor between sizes (default 4)",
           [&o](const std::string& v) { o.stepFactor = size_t(parseInt(v, "-f (stepfactor)", 2, 1 << 20)); }});
    f.section("sparcoll-tune options:");
    f.add({'o', "output", "<file>", "the tuning file to write (JSON, schema v1)",
           [this](const std::string& v) { output_ = v; }});
    f.add({0, "quick", "", "small sweep: 1K..4M, at most 10 runs and 0.05 s per point,\nwell under a minute on 4 ranks",
           [this](const std::string&) { quick_ = true; }});
    f.add({0, "validate", "<file>", "load this tuning file and report auto's regret and the model's error",
           [this](const std::string& v) { validate_ = v; }});
    f.add({0, "raw", "<file>", "also write every measured point as JSON lines",
           [this](const std::string& v) { raw_ = v; }});
    f.add({0, "points", "<file>",
           "measure nothing: fit (--output) or check (--validate) the points\n"
           "an earlier run wrote with --raw (its ranks, transport, memory)",
           [this](const std::string& v) { points_ = v; }});
    f.add({0, "step-bands", "",
           "write bands without their measured sizes: each band then prices\n"
           "every size up to its bytes' edge (a step) instead of blending\n"
           "with its neighbour between their measured sizes",
           [this](const std::string&) { stepBands_ = true; }});
    f.add({0, "dense-only", "", "skip sparse allreduce and DSOP", [this](const std::string&) { denseOnly_ = true; }});
    f.add({0, "budget", "<s>", "time per point (default 0.25; --quick 0.05)",
           [this](const std::string& v) { budget_ = parseNumber(v, "--budget", 1e-4, 3600); }});
    f.add({0, "densities", "<list>", "sparse densities (default 0.001,0.01,0.1,0.5)", [this](const std::string& v) {
             densities_.clear();
             for (const auto& d : splitList(v)) densities_.push_back(parseNumber(d, "--densities", 1e-9, 1));
             if (densities_.empty()) throw UsageError{"--densities needs at least one density"};
           }});
    f.add({0, "dsop-sizes", "<list>", "DSOP n = m (default 1000,2000,4000; --quick 500,1000)",
           [this](const std::string& v) {
             dsopSizes_.clear();
             for (const auto& n : splitList(v)) dsopSizes_.push_back(parseSize(n, "--dsop-sizes"));
             for (size_t n : dsopSizes_)
               if (n == 0) throw UsageError{"--dsop-sizes needs sizes of at least 1"};
           }});
  }

  void validate(Options& o) override {
    if (output_.empty() == validate_.empty())
      throw UsageError{validate_.empty() ? "--output FILE is required (or --validate FILE)"
                                         : "--output and --validate exclude each other"};
    if (quick_ && !sizesGiven_) o.minBytes = 1024, o.maxBytes = size_t(4) << 20;
    if (o.minBytes == 0 || o.minBytes > o.maxBytes) throw UsageError{"-b must be at least 1 and at most -e"};
    if (budget_ <= 0) budget_ = quick_ ? 0.05 : 0.25;
    if (dsopSizes_.empty())
      dsopSizes_ = quick_ ? std::vector<size_t>{500, 1000} : std::vector<size_t>{1000, 2000, 4000};
  }

  void configure(scConfig_t& cfg, const Options&) const override {
    if (!validate_.empty()) cfg.tuningFile = validate_.c_str();
  }

  double hostBytesPerRank(const Options& o, int) const override {
    const double maxB = double(o.maxBytes), dsop = double(*std::max_element(dsopSizes_.begin(), dsopSizes_.end()));
    double need = 3 * maxB;  // send, receive, the library's scratch
    if (!denseOnly_) need = std::max({need, 6 * std::min(maxB, 64.0 * (1 << 20)), 3 * 4 * dsop * dsop});
    return need;
  }

  long long runRank(Group& g, RankState& rs, const Context& ctx) override {
    if (!points_.empty()) return g.rank() == 0 ? fromPoints() : 0;
    if (g.size() < 2) throw UsageError{"sparcoll-tune needs at least 2 ranks (-p, or mpirun -np)"};
    const Options& o = ctx.o;
    sctune::Setup s;
    s.transport = ctx.info.transport;
    s.output = output_;
    s.raw = raw_;
    s.stepBands = stepBands_;
    s.validate = validate_;
    s.machines = sctune::machinesOf(g, s.transport != scTransportLocal);
    sctune::Plan& p = s.plan;
    p.sizes = sweepSizes(o);
    p.densities = densities_;
    p.dsopSizes = dsopSizes_;
    p.denseOnly = denseOnly_;
    p.native = ctx.info.hasNative();
    p.budget = budget_;
    p.maxRuns = quick_ ? 10 : 20;
    // Sparse: a few N from the dense range, each 16 x the last, 16 KiB to 64 MiB.
    for (size_t b : p.sizes)
      if (b >= (16 << 10) && b <= (size_t(64) << 20) && (p.sparseSizes.empty() || b >= 16 * p.sparseSizes.back()))
        p.sparseSizes.push_back(b);
    if (p.sparseSizes.empty()) p.sparseSizes.push_back(std::max<size_t>(p.sizes.back() / 4 * 4, 4));
    sctune::Source& src = s.src;
    src.ranks = g.size();
    src.machines = *std::max_element(s.machines.begin(), s.machines.end()) + 1;
    src.transport = transportName(s.transport);
    src.memory = rs.device ? "device" : "host";
    src.quick = quick_;
    src.denseOnly = denseOnly_;
    src.budget = budget_;
    src.minBytes = o.minBytes;
    src.maxBytes = o.maxBytes;
    src.factor = o.stepFactor;
    return validate_.empty() ? sctune::runTune(g, rs, s) : sctune::runValidate(g, rs, s);
  }

 private:
  // --points: the recorded run's facts and points, no communicator used.
  long long fromPoints() const {
    sctune::Setup s;
    std::vector<sctune::Point> pts;
    std::string err;
    if (!sctune::readPoints(points_, &s.src, &pts, &err)) throw UsageError{err};
    s.transport = s.src.transport == "nccl"    ? scTransportNccl
                  : s.src.transport == "local" ? scTransportLocal
                                               : scTransportMpi;
    s.output = output_;
    s.raw = raw_;
    s.stepBands = stepBands_;
    s.validate = validate_;
    if (validate_.empty()) {
      std::printf("# sparcoll-tune (tuning from %s): %d ranks on %d machine%s, %s transport, %s memory, %zu points\n",
                  points_.c_str(), s.src.ranks, s.src.machines, s.src.machines == 1 ? "" : "s", s.src.transport.c_str(),
                  s.src.memory.c_str(), pts.size());
      sctune::fitAndWrite(s, pts, 0);
    } else {
      sctune::validatePoints(s, pts);
    }
    return 0;
  }

  std::string output_, validate_, raw_, points_;
  bool quick_ = false, denseOnly_ = false, sizesGiven_ = false, stepBands_ = false;
  double budget_ = 0;
  std::vector<double> densities_{0.001, 0.01, 0.1, 0.5};
  std::vector<size_t> dsopSizes_;
};

}  // namespace

int main(int argc, char** argv) {
  // The model's environment overrides beat tuning files, so they would replace
  // the unit parameters the fit reads its coefficients with (and the file
  // --validate checks); SPARCOLL_ALGO would change what auto runs; an earlier
  // tuning file would shape the neighbourhood probe's friend groups (--validate
  // names its file itself). Cleared before any thread starts.
  for (const char* v : {"SPARCOLL_ALPHA", "SPARCOLL_BETA", "SPARCOLL_GAMMA", "SPARCOLL_BETA_SHARED",
                        "SPARCOLL_MESSAGE_OVERHEAD", "SPARCOLL_ALGO", "SPARCOLL_TUNING_FILE"})
    if (std::getenv(v)) {
      const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
      if (!rank || std::atoi(rank) == 0) std::fprintf(stderr, "sparcoll-tune: ignoring %s\n", v);
      unsetenv(v);
    }
  TuneTool tool;
  return scbench::run(argc, argv, tool);
}
