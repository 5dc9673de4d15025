#include "probe.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "common/driver.h"
#include "fit.h"

namespace sctune {

double probeSeconds(const CostModel& m, const Point& p, int except) {
  scNbrCostTerms_t terms = p.terms;
  if (except >= 0) terms.extraMessages[except] = 0;
  double seconds = 0;
  if (const scResult_t rc = scCostModelNeighborTime(m.get(), &terms, size_t(std::llround(p.bytes)), &seconds);
      rc != scSuccess)
    scbench::fatal("scCostModelNeighborTime(" + p.algorithm + ", " + humanBytes(p.bytes) +
                   ") failed: " + scGetErrorString(rc) + ": " + scGetLastError(nullptr));
  return seconds;
}

namespace {

// The probe's naive and combining points, paired by block size.
std::vector<std::pair<const Point*, const Point*>> probePairs(const std::vector<Point>& pts) {
  std::map<double, std::pair<const Point*, const Point*>> by;
  for (const Point& p : pts)
    if (p.collective == "neighbor_allgather" && p.hasTerms)
      (p.algorithm == "naive" ? by[p.bytes].first : by[p.bytes].second) = &p;
  std::vector<std::pair<const Point*, const Point*>> out;
  for (const auto& [b, pr] : by)
    if (pr.first && pr.second) out.push_back(pr);
  return out;
}

}  // namespace

void fitOverhead(const std::vector<Point>& pts, const std::string& level, std::vector<ModelEntry>& models,
                 const Source& src, scTransport_t transport) {
  const auto pairs = probePairs(pts);
  if (pairs.empty()) return;
  const int l = level == "inter" ? 1 : 0;
  // The models without o yet: the library prices the fitted level's extra
  // messages with its default overhead, left out below, and the other
  // level's (a round without inter-node blocks on several machines) with it.
  const CostModel m(tuningJson(src, models, {}), transport, src.memory == "device", src.ranks, src.machines);
  std::vector<OverheadRow> rows;
  for (const auto& [naive, comb] : pairs) {
    const double known = probeSeconds(m, *comb, l) - probeSeconds(m, *naive, l);
    rows.push_back({comb->seconds - naive->seconds, known, comb->terms.extraMessages[l] - naive->terms.extraMessages[l],
                    naive->seconds});
  }
  const OverheadFit o = fitMessageOverhead(rows);
  if (std::isnan(o.o)) return;
  const double saved = pairs.front().first->terms.extraMessages[l] - pairs.front().second->terms.extraMessages[l];
  std::printf(
      "# fit, neighbourhood message overhead (%s): o %s, from combining against naive on the complete graph\n"
      "#   (%d block size%s; combining saves %g messages on the busiest rank; weights 1/t², o >= 0)\n",
      level.c_str(), humanTime(o.o).c_str(), o.points, o.points == 1 ? "" : "s", saved);
  for (size_t i = 0; i < pairs.size(); ++i)
    std::printf("#   %-8s naive %10s  combining %10s  combining - naive: measured %+9.1f us, model %+9.1f us\n",
                humanBytes(pairs[i].first->bytes).c_str(), humanTime(pairs[i].first->seconds).c_str(),
                humanTime(pairs[i].second->seconds).c_str(), 1e6 * rows[i].diff, 1e6 * o.predictedDiff[i]);
  for (ModelEntry& m : models)
    if (m.level == level) {
      m.p.messageOverhead = o.o;
      m.overheadPoints = o.points;
      m.overheadSaved = saved;
    }
}

}  // namespace sctune
