// Tuning mode: sweep, fit (ping-pong alpha-beta per level; the model's
// alpha, beta, gamma jointly from the dense collectives), rules where the
// fitted model picks a slow algorithm, and the tuning file.
#include "tune.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "common/driver.h"
#include "common/table.h"
#include "common/timing.h"
#include "fit.h"
#include "probe.h"

namespace sctune {

using scbench::fmt;

void writeRaw(const std::string& path, const std::vector<std::string>& lines, const Source& src) {
  std::ofstream f(path, std::ios::trunc);
  f << sourceLine(src) << '\n';
  for (const auto& l : lines) f << l << '\n';
  if (!f.flush()) scbench::fatal("cannot write '" + path + "' (--raw)");
}

std::string jsonNumber(double v) { return std::isfinite(v) ? fmt("%.9g", v) : "null"; }

void printHeader(const Setup& s, const char* mode) {
  const Plan& p = s.plan;
  std::printf("# sparcoll-tune (%s): %d ranks on %d machine%s, %s transport, %s memory%s\n", mode, s.src.ranks,
              s.src.machines, s.src.machines == 1 ? "" : "s", s.src.transport.c_str(), s.src.memory.c_str(),
              s.src.quick ? ", --quick" : "");
  std::printf(
      "# timing: per point a warm-up, then runs of back-to-back calls for %.3g s (%d to %d runs);\n"
      "#         a run's time per call is the max over ranks, the point's the median over runs\n",
      p.budget, p.minRuns, p.maxRuns);
  std::printf("# dense: %s .. %s (x%zu), float32 sum\n", humanBytes(double(p.sizes.front())).c_str(),
              humanBytes(double(p.sizes.back())).c_str(), s.src.factor);
  if (p.denseOnly) return;
  std::string sp, d, ds;
  for (size_t b : p.sparseSizes) sp += (sp.empty() ? "" : ", ") + humanBytes(double(b));
  for (double x : p.densities) d += (d.empty() ? "" : ", ") + fmt("%g", x);
  for (size_t n : p.dsopSizes) ds += (ds.empty() ? "" : ", ") + std::to_string(n);
  std::printf("# sparse allreduce: N x 4 B in %s at densities %s; DSOP: n = m in %s (float32)\n", sp.c_str(), d.c_str(),
              ds.c_str());
}

namespace {

std::string pct(double x) { return fmt("%+.1f %%", 100 * x); }
std::string nsPerByte(double beta) { return beta > 0 ? fmt("%.4g ns/B (%.3g GB/s)", beta * 1e9, 1e-9 / beta) : "0"; }
bool isDense(const std::string& c) {
  return c == "allreduce" || c == "reduce_scatter" || c == "allgather" || c == "broadcast";
}

struct PingFit {
  bool has = false;
  FitResult f;
};

// t = alpha + beta n on the one-way times of one level.
PingFit fitPingpong(const std::vector<Point>& pts, const std::string& level) {
  std::vector<const Point*> rows;
  for (const Point& p : pts)
    if (p.collective == "pingpong" && p.algorithm == level) rows.push_back(&p);
  PingFit r;
  if (rows.size() < 2) return r;
  Eigen::MatrixXd A(long(rows.size()), 2);
  Eigen::VectorXd t(long(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    A.row(long(i)) << 1.0, rows[i]->bytes;
    t(long(i)) = rows[i]->seconds;
  }
  r.has = true;
  r.f = fitLinear(A, t);
  return r;
}

// The coefficient of one parameter in each point's predicted time: the
// library's estimate under a model that holds that parameter at 1 and every
// other at 0.
Eigen::VectorXd column(const Setup& s, const std::vector<const Point*>& pts, Params intra, Params inter) {
  ModelEntry mi{"intra", intra}, me{"inter", inter};
  const CostModel m(tuningJson(s.src, {mi, me}, {}), s.transport, s.src.memory == "device", s.src.ranks,
                    s.src.machines);
  Eigen::VectorXd v(long(pts.size()));
  for (size_t i = 0; i < pts.size(); ++i)
    v(long(i)) = estimate(m, pts[i]->collective, pts[i]->algorithm, pts[i]->count, pts[i]->density);
  return v;
}

void printPingFit(const PingFit& pf, const std::string& level) {
  if (!pf.has) return;
  std::printf("# fit, ping-pong %s: alpha %s, beta %s; R² %.4f, median |rel err| %.1f %%, %d points, %d dropped\n",
              level.c_str(), humanTime(pf.f.params(0)).c_str(), nsPerByte(pf.f.params(1)).c_str(), pf.f.r2,
              100 * pf.f.medianAbsRelError, pf.f.points, pf.f.nDropped);
}

ModelEntry pingEntry(const std::string& level, const PingFit& pf, double gamma) {
  ModelEntry m{level,        {pf.f.params(0), pf.f.params(1), gamma}, pf.f.r2, pf.f.medianAbsRelError, pf.f.points,
               pf.f.nDropped};
  m.hasPingpong = true;
  m.ppAlpha = pf.f.params(0);
  m.ppBeta = pf.f.params(1);
  m.ppR2 = pf.f.r2;
  return m;
}

// Rules: per collective (and density), per measured size, the measured best
// against the model's pick; sizes where the pick is > 10 % slower get a rule.
// dense: the dense collectives, else sparse allreduce and DSOP.
std::vector<RuleEntry> makeRules(const std::vector<Point>& pts, const CostModel& model, int P, bool dense, bool print) {
  std::map<std::string, std::map<double, std::map<double, std::vector<const Point*>>>> groups;
  for (const Point& p : pts)
    if (p.collective != "pingpong" && p.collective != "neighbor_allgather" && isDense(p.collective) == dense)
      groups[p.collective][p.density][p.bytes].push_back(&p);
  std::vector<RuleEntry> rules;
  for (const auto& [coll, byDensity] : groups) {
    std::vector<double> densities;
    for (const auto& kv : byDensity) densities.push_back(kv.first);
    for (size_t di = 0; di < densities.size(); ++di) {
      std::vector<SizeVerdict> verdicts;
      for (const auto& [bytes, algos] : byDensity.at(densities[di])) {
        const Point* best = *std::min_element(algos.begin(), algos.end(),
                                              [](const Point* a, const Point* b) { return a->seconds < b->seconds; });
        std::string pick;
        estimate(model, coll, "auto", best->count, best->density, &pick);
        const Point* picked = nullptr;
        for (const Point* a : algos)
          if (a->algorithm == pick) picked = a;
        const bool need = !picked || pickTooSlow(picked->seconds, best->seconds);
        verdicts.push_back({bytes, best->algorithm, need});
        if (need && print)
          std::printf("  %-16s %-22s model picks %s (%s), best %s %s\n", coll.c_str(),
                      (humanBytes(bytes) + (coll == "sparse_allreduce" ? fmt(" d=%g", densities[di]) : "")).c_str(),
                      pick.c_str(), picked ? pct(picked->seconds / best->seconds - 1).c_str() : "not measured",
                      best->algorithm.c_str(), humanTime(best->seconds).c_str());
      }
      double dlo = 0, dhi = 0;
      if (coll == "sparse_allreduce") {
        geometricCell(densities, di, &dlo, &dhi);
        dhi = std::min(dhi, 1.0);
      }
      for (const ByteRule& b : emitRules(verdicts))
        rules.push_back({coll, P, P, b.lo, b.hi, coll == "sparse_allreduce", dlo, dhi, b.algorithm});
    }
  }
  return rules;
}

}  // namespace

namespace {

// The fits of one run: ping-pong per level, and the collectives' joint fit
// with the points it used (dense, native excluded), in order.
struct Fits {
  PingFit intra, inter;
  std::vector<const Point*> points;
  BandedFit fit;
  std::vector<ModelEntry> models;

  // The fit's index of p, or -1 when p was not fitted.
  long indexOf(const Point& p) const {
    const auto it = std::find(points.begin(), points.end(), &p);
    return it == points.end() ? -1 : long(it - points.begin());
  }
};

Fits fitAll(const std::vector<Point>& pts, const Setup& s) {
  Fits f;
  f.intra = fitPingpong(pts, "intra");
  f.inter = fitPingpong(pts, "inter");
  printPingFit(f.intra, "intra");
  printPingFit(f.inter, "inter");
  // Native is left out: the model prices it as ring, which it is not.
  for (const Point& p : pts)
    if (isDense(p.collective) && p.algorithm != "native") f.points.push_back(&p);
  const long n = long(f.points.size());
  if (n < 4) scbench::fatal("too few dense points to fit alpha, beta and gamma (widen -b/-e)");
  // Coefficient columns: intra alpha, intra beta, inter alpha, inter beta,
  // gamma (one local reduction rate on both levels), intra and inter
  // beta_shared.
  Eigen::MatrixXd C(n, 7);
  C.col(0) = column(s, f.points, {1, 0, 0, 0}, {});
  C.col(1) = column(s, f.points, {0, 1, 0, 0}, {});
  C.col(2) = column(s, f.points, {}, {1, 0, 0, 0});
  C.col(3) = column(s, f.points, {}, {0, 1, 0, 0});
  C.col(4) = column(s, f.points, {0, 0, 1, 0}, {0, 0, 1, 0});
  C.col(5) = column(s, f.points, {0, 0, 0, 1}, {});
  C.col(6) = column(s, f.points, {}, {0, 0, 0, 1});
  auto used = [&](int c) { return C.col(c).cwiseAbs().maxCoeff() > 0; };
  Eigen::VectorXd t(n), off = Eigen::VectorXd::Zero(n);
  for (long i = 0; i < n; ++i) t(i) = f.points[size_t(i)]->seconds;
  // The level the collectives' fit belongs to: inter when the model prices
  // this communicator's steps with inter parameters (it does when the ranks
  // span machines). Should it mix levels, the intra part is held at the intra
  // ping-pong's values (no shared term) and only the inter part is fitted.
  // Columns of A: alpha, beta, gamma, beta_shared.
  const bool multi = s.src.machines > 1, interUsed = used(2) || used(3) || used(6);
  std::string level = multi && interUsed ? "inter" : "intra";
  Eigen::MatrixXd A(n, 4);
  if (multi && interUsed && (used(0) || used(1)) && f.intra.has) {
    A << C.col(2), C.col(3), C.col(4), C.col(6);
    off = f.intra.f.params(0) * C.col(0) + f.intra.f.params(1) * C.col(1);
  } else if (multi && !interUsed) {
    A << C.col(0), C.col(1), C.col(4), C.col(5);
  } else {
    A << C.col(0) + C.col(2), C.col(1) + C.col(3), C.col(4), C.col(5) + C.col(6);
  }
  std::vector<double> x;
  for (const Point* p : f.points) x.push_back(p->bytes);
  f.fit = fitBands(A, t, off, x);
  const BandedFit& r = f.fit;
  const auto bytes = bandBytes(r.bands);
  std::printf(
      "# fit, collectives (%s): %d points (native excluded), weights 1/t², parameters >= 0, in %zu band%s\n"
      "#   of sizes (at least 2 sizes each; more bands only where they predict left-out sizes 10 %% better);\n"
      "#   beta_shared prices every rank's bytes together (a shared medium; 0 on a switched fabric);\n"
      "#   sizes below 1 KiB are kept: they are alpha-dominated and are what fixes alpha\n",
      level.c_str(), int(n), r.bands.size(), r.bands.size() == 1 ? "" : "s");
  const PingFit& same = level == "intra" ? f.intra : f.inter;
  Params last{};
  for (size_t b = 0; b < r.bands.size(); ++b) {
    const FitResult& br = r.bands[b].fit;
    const Params fit{br.params(0), br.params(1), br.params(2), br.params(3)};
    last = fit;
    if (r.bands.size() > 1)
      std::printf("#   band %zu: %s .. %s measured (bytes [%llu, %llu])\n", b + 1, humanBytes(r.bands[b].lo).c_str(),
                  humanBytes(r.bands[b].hi).c_str(), (unsigned long long)bytes[b].first,
                  (unsigned long long)bytes[b].second);
    std::printf(
        "#   alpha %s, beta %s, gamma %s, beta_shared %s\n"
        "#   R² %.4f, median |rel err| %.1f %%, %d points, %d dropped (|rel residual| > %.0f %% = max(3 MAD, "
        "50 %%))\n",
        humanTime(fit.alpha).c_str(), nsPerByte(fit.beta).c_str(), nsPerByte(fit.gamma).c_str(),
        nsPerByte(fit.betaShared).c_str(), br.r2, 100 * br.medianAbsRelError, br.points, br.nDropped, 100 * br.cut);
    ModelEntry m{level, fit, br.r2, br.medianAbsRelError, br.points, br.nDropped};
    if (r.bands.size() > 1) {
      m.hasBytes = true;
      m.bytesLo = bytes[b].first;
      m.bytesHi = bytes[b].second;
      m.hasMeasured = !s.stepBands;
      m.measuredLo = uint64_t(std::llround(r.bands[b].lo));
      m.measuredHi = uint64_t(std::llround(r.bands[b].hi));
    }
    if (same.has) {
      m.hasPingpong = true;
      m.ppAlpha = same.f.params(0);
      m.ppBeta = same.f.params(1);
      m.ppR2 = same.f.r2;
    }
    f.models.push_back(m);
  }
  if (r.bands.size() > 1)
    std::printf("#   all bands: median |rel err| %.1f %% over %d points, %d dropped\n", 100 * r.medianAbsRelError,
                r.points, r.nDropped);
  // The other level, when there are several machines: its ping-pong's alpha
  // and beta with the fitted gamma.
  const PingFit& other = level == "intra" ? f.inter : f.intra;
  // (gamma: the largest band's, the streaming rate of big reductions)
  if (multi && other.has) f.models.push_back(pingEntry(level == "intra" ? "inter" : "intra", other, last.gamma));
  fitOverhead(pts, level, f.models, s.src, s.transport);
  std::stable_sort(f.models.begin(), f.models.end(),
                   [](const ModelEntry& a, const ModelEntry& b) { return a.level > b.level; });
  return f;
}

// Every point measured against the fitted model, then the median error per
// collective and algorithm.
void printComparison(const std::vector<Point>& pts, const std::vector<double>& pred, const Fits& f) {
  std::printf("#   %-16s %-20s %16s %11s %11s %9s\n", "collective", "algorithm", "bytes", "measured", "predicted",
              "rel err");
  std::map<std::string, std::vector<double>> perAlgo;
  for (size_t i = 0; i < pts.size(); ++i) {
    const Point& p = pts[i];
    if (p.collective == "pingpong") continue;
    const long k = f.indexOf(p);
    const double e = pred[i] / p.seconds - 1;
    if (k >= 0 && std::fabs(f.fit.predicted[size_t(k)] - pred[i]) > 1e-6 * pred[i])
      std::printf("# warning: the model is not linear in alpha, beta, gamma here (%s %s): %g vs %g\n",
                  p.collective.c_str(), p.algorithm.c_str(), pred[i], f.fit.predicted[size_t(k)]);
    perAlgo[p.collective + " " + p.algorithm].push_back(std::fabs(e));
    std::printf("    %-16s %-20s %16s %11s %11s %9s%s\n", p.collective.c_str(), p.algorithm.c_str(),
                (humanBytes(p.bytes) + (p.collective == "sparse_allreduce" ? fmt(" d=%g", p.density) : "")).c_str(),
                humanTime(p.seconds).c_str(), humanTime(pred[i]).c_str(), pct(e).c_str(),
                p.hasTerms                 ? "  (probe)"
                : k < 0                    ? "  (not fitted)"
                : f.fit.dropped[size_t(k)] ? "  dropped"
                                           : "");
  }
  std::printf("# median |rel err| per collective and algorithm:\n");
  for (const auto& [key, errs] : perAlgo) std::printf("    %-37s %6.1f %%\n", key.c_str(), 100 * median(errs));
}

// --raw: every point with its prediction (ping-pong: its level's fit).
std::vector<std::string> rawLines(const std::vector<Point>& pts, const std::vector<double>& pred, const Fits& f) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < pts.size(); ++i) {
    const Point& p = pts[i];
    double pr = pred[i];
    if (p.collective == "pingpong") {
      const PingFit& pf = p.algorithm == "intra" ? f.intra : f.inter;
      pr = pf.has ? pf.f.params(0) + pf.f.params(1) * p.bytes : NAN;
    }
    const long k = f.indexOf(p);
    std::string terms;
    if (p.hasTerms) {
      const scNbrCostTerms_t& c = p.terms;
      terms =
          fmt(",\"terms\":[%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g]", c.rounds[0], c.rounds[1],
              c.extraMessages[0], c.extraMessages[1], c.blocks[0], c.blocks[1], c.sharedBlocks[0], c.sharedBlocks[1]);
    }
    lines.push_back(
        fmt("{\"collective\":\"%s\",\"algorithm\":\"%s\",\"count\":%zu,\"bytes\":%.0f,\"density\":%g,"
            "\"seconds\":%.9g,\"runs\":%d,\"batch\":%ld,\"predicted\":%s,\"fitted\":%s,\"dropped\":%s%s}",
            p.collective.c_str(), p.algorithm.c_str(), p.count, p.bytes, p.density, p.seconds, p.runs, p.batch,
            jsonNumber(pr).c_str(), k >= 0 ? "true" : "false", k >= 0 && f.fit.dropped[size_t(k)] ? "true" : "false",
            terms.c_str()));
  }
  return lines;
}

}  // namespace

long long runTune(scbench::Group& g, scbench::RankState& rs, const Setup& s) {
  const bool root = g.rank() == 0;
  const int P = g.size();
  const double t0 = scbench::now();
  if (root) printHeader(s, "tuning");
  Sweep sw(g, rs, s.plan);
  std::vector<Point> pts;
  int intraPeer = -1, interPeer = -1;
  for (int r = 1; r < P; ++r) {
    if (s.machines[size_t(r)] == s.machines[0] && intraPeer < 0) intraPeer = r;
    if (s.machines[size_t(r)] != s.machines[0] && interPeer < 0) interPeer = r;
  }
  if (root) std::printf("# ping-pong (one way: half the round trip)\n");
  if (intraPeer > 0) sw.pingpong(0, intraPeer, "intra", pts);
  if (interPeer > 0) sw.pingpong(0, interPeer, "inter", pts);
  sw.collectives(pts);
  if (!root) return 0;  // rank 0 fits, alone: the model needs no communicator
  fitAndWrite(s, pts, scbench::now() - t0);
  return 0;
}

void fitAndWrite(const Setup& s, const std::vector<Point>& pts, double tSweep) {
  const double t0 = scbench::now();
  const int P = s.src.ranks;
  const Fits f = fitAll(pts, s);
  // The fitted model as the library will use it: predictions and picks.
  const bool device = s.src.memory == "device";
  const CostModel fitted(tuningJson(s.src, f.models, {}), s.transport, device, P, s.src.machines);
  std::vector<double> pred(pts.size(), NAN);
  for (size_t i = 0; i < pts.size(); ++i)
    if (pts[i].hasTerms) pred[i] = probeSeconds(fitted, pts[i]);
    else if (pts[i].collective != "pingpong" && pts[i].collective != "neighbor_allgather")
      pred[i] = estimate(fitted, pts[i].collective, pts[i].algorithm, pts[i].count, pts[i].density);
  printComparison(pts, pred, f);
  std::printf("# rules (the fitted model's pick more than 10 %% slower than the best measured):\n");
  // Dense rules first: sparse allreduce's "dense" and DSOP's "allreduce" run
  // the dense auto, so their prices (and picks) depend on the dense rules.
  std::vector<RuleEntry> rules = makeRules(pts, fitted, P, true, true);
  {
    const CostModel withDense(tuningJson(s.src, f.models, rules), s.transport, device, P, s.src.machines);
    const auto more = makeRules(pts, withDense, P, false, true);
    rules.insert(rules.end(), more.begin(), more.end());
  }
  for (const RuleEntry& r : rules)
    std::printf("    %-16s ranks [%d, %d] bytes [%llu, %llu]%s -> %s\n", r.collective.c_str(), r.ranksLo, r.ranksHi,
                (unsigned long long)r.bytesLo, (unsigned long long)r.bytesHi,
                r.hasDensity ? fmt(" density [%.4g, %.4g]", r.densityLo, r.densityHi).c_str() : "",
                r.algorithm.c_str());
  if (rules.empty()) std::printf("    none\n");

  // The file as written, read back by the library: every rule must now be
  // what auto picks at its sizes.
  const std::string text = tuningJson(s.src, f.models, rules);
  const CostModel loaded(text, s.transport, device, P, s.src.machines);
  auto recheck = makeRules(pts, loaded, P, true, false);
  for (const RuleEntry& r : makeRules(pts, loaded, P, false, false)) recheck.push_back(r);
  for (const RuleEntry& r : recheck)
    std::printf("# warning: with the rules loaded, auto still picks a slow algorithm for %s at [%llu, %llu] bytes%s\n",
                r.collective.c_str(), (unsigned long long)r.bytesLo, (unsigned long long)r.bytesHi,
                r.hasDensity ? fmt(", density [%.4g, %.4g]", r.densityLo, r.densityHi).c_str() : "");
  std::ofstream out(s.output, std::ios::trunc);
  if (!(out << text) || !out.flush()) scbench::fatal("cannot write the tuning file '" + s.output + "'");
  if (!s.raw.empty()) writeRaw(s.raw, rawLines(pts, pred, f), s.src);
  std::printf("# wrote %s: %zu model%s, %zu rule%s; sweep %.1f s, fit %.1f s\n", s.output.c_str(), f.models.size(),
              f.models.size() == 1 ? "" : "s", rules.size(), rules.size() == 1 ? "" : "s", tSweep, scbench::now() - t0);
}

}  // namespace sctune
