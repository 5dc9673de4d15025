#include "probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "fit.h"

namespace sctune {

Params paramsAt(const std::vector<ModelEntry>& models, const std::string& level, double b) {
  std::vector<const ModelEntry*> bands;
  for (const ModelEntry& m : models)
    if (m.level == level) bands.push_back(&m);
  if (bands.empty())
    for (const ModelEntry& m : models) bands.push_back(&m);
  const ModelEntry *below = nullptr, *above = nullptr;
  for (const ModelEntry* m : bands) {
    const double lo = m->hasBytes ? double(m->bytesLo) : 0, hi = m->hasBytes ? double(m->bytesHi) : INFINITY;
    if (lo > b) {
      if (!above || lo < double(above->bytesLo)) above = m;
    } else if (b <= hi) {
      return m->p;
    } else if (!below || hi > double(below->bytesHi)) {
      below = m;
    }
  }
  if (!below) return above->p;
  if (!above) return below->p;
  return double(above->bytesLo) / std::max(b, 1.0) < std::max(b, 1.0) / std::max(double(below->bytesHi), 1.0)
             ? above->p
             : below->p;
}

namespace {

// The library's message overhead where a file gives none, as a share of
// alpha (model/model.h, kDefaultMessageOverhead): the probe's fit prices the
// other level's extra messages (a round without inter-node blocks on several
// machines) with it.
constexpr double kDefaultOverheadShare = 1.0 / 12;

double overheadOf(const Params& p) {
  return std::isnan(p.messageOverhead) ? p.alpha * kDefaultOverheadShare : p.messageOverhead;
}

}  // namespace

double probeSeconds(const std::vector<ModelEntry>& models, const Point& p, int except) {
  double t = 0;
  for (int l = 0; l < 2; ++l) {
    const Params q = paramsAt(models, l ? "inter" : "intra", p.bytes);
    t += p.terms.rounds[l] * q.alpha + p.bytes * (p.terms.blocks[l] * q.beta + p.terms.sharedBlocks[l] * q.betaShared);
    if (l != except) t += p.terms.extraMessages[l] * overheadOf(q);
  }
  return t;
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

void fitOverhead(const std::vector<Point>& pts, const std::string& level, std::vector<ModelEntry>& models) {
  const auto pairs = probePairs(pts);
  if (pairs.empty()) return;
  const int l = level == "inter" ? 1 : 0;
  std::vector<OverheadRow> rows;
  for (const auto& [naive, comb] : pairs) {
    const double known = probeSeconds(models, *comb, l) - probeSeconds(models, *naive, l);
    rows.push_back({comb->seconds - naive->seconds, known,
                    comb->terms.extraMessages[l] - naive->terms.extraMessages[l], naive->seconds});
  }
  const OverheadFit o = fitMessageOverhead(rows);
  if (std::isnan(o.o)) return;
  const double saved = pairs.front().first->terms.extraMessages[l] - pairs.front().second->terms.extraMessages[l];
  std::printf("# fit, neighbourhood message overhead (%s): o %s, from combining against naive on the complete graph\n"
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
