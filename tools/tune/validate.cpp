// --validate: the measured sweep again, on a communicator that loaded the
// tuning file, against what the library now does. Per collective, size (and
// density): auto's pick, every algorithm's time, auto's regret (the pick's
// time / the best time - 1) and the model's prediction error
// (predicted / measured - 1). Native algorithms are left out of the error
// statistics: the model prices them as ring.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "common/driver.h"
#include "common/table.h"
#include "common/timing.h"
#include "fit.h"
#include "tune.h"

namespace sctune {

using scbench::fmt;

namespace {

// The file's facts against this run's, as notes (rank 0).
void describeFile(const Setup& s) {
  Source file;
  std::string err;
  if (!readSource(s.validate, &file, &err)) scbench::fatal(err);
  std::printf("# %s: measured on %d ranks, %d machine%s, %s transport, %s memory%s\n", s.validate.c_str(), file.ranks,
              file.machines, file.machines == 1 ? "" : "s", file.transport.c_str(), file.memory.c_str(),
              file.quick ? ", --quick" : "");
  if (file.transport != s.src.transport || file.memory != s.src.memory)
    std::printf("# note: the file's models are for %s/%s, this run is %s/%s: the library's defaults apply\n",
                file.transport.c_str(), file.memory.c_str(), s.src.transport.c_str(), s.src.memory.c_str());
  if (file.ranks != s.src.ranks)
    std::printf("# note: the file's rules are for %d ranks, this run has %d\n", file.ranks, s.src.ranks);
}

}  // namespace

long long runValidate(scbench::Group& g, scbench::RankState& rs, const Setup& s) {
  const bool root = g.rank() == 0;
  const double t0 = scbench::now();
  if (root) {
    printHeader(s, "validation");
    describeFile(s);
  }
  Sweep sw(g, rs, s.plan);
  std::vector<Point> pts;
  sw.collectives(pts);
  if (!root) return 0;
  // rs.comm read the file at creation: its estimates are the library's.
  reportValidation(
      s, pts,
      [&](const std::string& coll, const std::string& algo, size_t count, double density, std::string* pick) {
        return estimate(rs.comm, coll, algo, count, density, pick);
      },
      t0);
  return 0;
}

void validatePoints(const Setup& s, const std::vector<Point>& pts) {
  const double t0 = scbench::now();
  std::printf("# sparcoll-tune (validation of recorded points): %d ranks on %d machine%s, %s transport, %s memory\n",
              s.src.ranks, s.src.machines, s.src.machines == 1 ? "" : "s", s.src.transport.c_str(),
              s.src.memory.c_str());
  describeFile(s);
  // The model a communicator of the recorded run would hold with the file.
  std::ifstream in(s.validate);
  std::ostringstream text;
  text << in.rdbuf();
  const CostModel m(text.str(), s.transport, s.src.memory == "device", s.src.ranks, s.src.machines);
  // The neighbourhood probe's predictions need its topology, on a
  // communicator that loaded the file: a live --validate run reports them.
  std::vector<Point> collectives;
  for (const Point& p : pts)
    if (p.collective != "pingpong" && p.collective != "neighbor_allgather") collectives.push_back(p);
  reportValidation(
      s, collectives,
      [&](const std::string& coll, const std::string& algo, size_t count, double density, std::string* pick) {
        return estimate(m, coll, algo, count, density, pick);
      },
      t0);
}

void reportValidation(const Setup& s, const std::vector<Point>& pts, const Estimator& est, double t0) {
  std::map<std::string, std::map<double, std::map<double, std::vector<const Point*>>>> groups;
  for (const Point& p : pts) groups[p.collective][p.density][p.bytes].push_back(&p);
  std::vector<double> regrets, errDense, errAll;
  std::vector<std::string> raw;
  std::string worst;
  double worstRegret = -1;
  int within = 0;
  std::printf("# per collective and size: auto's pick, its regret, then every algorithm's time (prediction error)\n");
  for (const auto& [coll, byDensity] : groups)
    for (const auto& [density, bySize] : byDensity)
      for (const auto& [bytes, algos] : bySize) {
        const Point* best = *std::min_element(algos.begin(), algos.end(),
                                              [](const Point* a, const Point* b) { return a->seconds < b->seconds; });
        // The probe's topology is gone: its prediction and pick were taken
        // when it was measured.
        const bool probe = coll == "neighbor_allgather";
        std::string pick = probe ? best->autoPick : "";
        if (!probe) est(coll, "auto", best->count, density, &pick);
        const Point* picked = nullptr;
        for (const Point* a : algos)
          if (a->algorithm == pick) picked = a;
        const double regret = picked ? picked->seconds / best->seconds - 1 : NAN;
        const std::string where = humanBytes(bytes) + (coll == "sparse_allreduce" ? fmt(" d=%g", density) : "");
        if (picked) {
          regrets.push_back(regret);
          within += regret <= 0.10;
          if (regret > worstRegret) worstRegret = regret, worst = coll + " " + where;
        }
        std::string line = fmt("  %-16s %-20s auto %-20s regret %7s |", coll.c_str(), where.c_str(), pick.c_str(),
                               picked ? fmt("%.1f %%", 100 * regret).c_str() : "n/a");
        for (const Point* a : algos) {
          const double pred = probe ? a->predicted : est(coll, a->algorithm, a->count, density, nullptr);
          const double e = pred / a->seconds - 1;
          const bool native = a->algorithm == "native";
          if (!native) {
            errAll.push_back(std::fabs(e));
            if (coll != "sparse_allreduce" && coll != "dsop" && !probe) errDense.push_back(std::fabs(e));
          }
          line += " " + a->algorithm + " " + humanTime(a->seconds) + (native ? "" : fmt(" (%+.0f%%)", 100 * e));
          raw.push_back(
              fmt("{\"collective\":\"%s\",\"algorithm\":\"%s\",\"count\":%zu,\"bytes\":%.0f,\"density\":%g,"
                  "\"seconds\":%.9g,\"predicted\":%s,\"auto\":\"%s\",\"best\":\"%s\",\"regret\":%s}",
                  coll.c_str(), a->algorithm.c_str(), a->count, bytes, density, a->seconds, jsonNumber(pred).c_str(),
                  pick.c_str(), best->algorithm.c_str(), jsonNumber(regret).c_str()));
        }
        std::printf("%s\n", line.c_str());
      }
  std::printf(
      "# regret of auto over %zu collective/size points: max %.1f %% (%s), median %.1f %%; "
      "%d of %zu within 10 %%\n",
      regrets.size(), 100 * worstRegret, worst.c_str(), 100 * median(regrets), within, regrets.size());
  std::printf(
      "# model's median |prediction error| (native excluded): dense %.1f %% over %zu points, "
      "all %.1f %% over %zu points\n",
      100 * median(errDense), errDense.size(), 100 * median(errAll), errAll.size());
  if (!s.raw.empty()) writeRaw(s.raw, raw, s.src);
  std::printf("# validation took %.1f s\n", scbench::now() - t0);
}

}  // namespace sctune
