#include "sweep.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "common/driver.h"
#include "common/table.h"
#include "common/timing.h"
#include "fit.h"

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

namespace sctune {

using scbench::Buffer;
using scbench::callFailed;
using scbench::fmt;

std::vector<int> machinesOf(scbench::Group& g, bool mpi) {
  const int r = g.rank();
  std::string key;
  const char* virt = std::getenv("SPARCOLL_MACHINES");
  if (virt && std::atoi(virt) > 0) {
    key = std::to_string(long(r) * std::min(std::atoi(virt), g.size()) / g.size());
  } else if (mpi) {
#ifdef SPARCOLL_HAVE_MPI
    // Shared memory is what makes two ranks "one machine" to the transport,
    // more reliably than host names (containers may share or fake them).
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
    int lowest = r;
    MPI_Allreduce(&r, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    key = std::to_string(lowest);
#endif
  } else {
    char h[256] = "?";
    gethostname(h, sizeof h - 1);
    key = h;
  }
  std::map<std::string, int> ids;
  std::vector<int> out;
  for (const auto& k : g.allgather(key)) out.push_back(ids.emplace(k, int(ids.size())).first->second);
  return out;
}

const std::vector<std::string>& denseAlgorithms(const std::string& c) {
  static const std::vector<std::string> ar{"ring", "rabenseifner", "recdbl", "native"},
      rs{"ring", "rabenseifner", "native"}, ag{"ring", "recdbl", "native"},
      bc{"binomial", "scatter_allgather", "native"};
  return c == "allreduce" ? ar : c == "reduce_scatter" ? rs : c == "allgather" ? ag : bc;
}

int denseAlgoId(const std::string& n) {
  scAlgo_t a = scAlgoAuto;
  return scAlgoFromName(n.c_str(), &a) == scSuccess ? a : scAlgoAuto;
}

namespace {

// An algorithm enum's names from its C name function: values 1 .. count-1
// (auto, 0, left out), and a name's value (0, auto, when unknown).
template <class E>
std::vector<std::string> namesOf(int count, const char* (*name)(E)) {
  std::vector<std::string> v;
  for (int a = 1; a < count; ++a) v.push_back(name(E(a)));
  return v;
}

template <class E>
int idOf(const std::string& n, int count, const char* (*name)(E)) {
  for (int a = 0; a < count; ++a)
    if (n == name(E(a))) return a;
  return 0;
}

}  // namespace

std::vector<std::string> sparseAlgorithms() { return namesOf(scNumSparseAlgos, scSparseAlgoName); }
int sparseAlgoId(const std::string& n) { return idOf(n, scNumSparseAlgos, scSparseAlgoName); }
std::vector<std::string> dsopAlgorithms() { return namesOf(scNumDsopAlgos, scDsopAlgoName); }
int dsopAlgoId(const std::string& n) { return idOf(n, scNumDsopAlgos, scDsopAlgoName); }

std::string humanTime(double s) {
  return s < 1e-3 ? fmt("%.1f us", s * 1e6) : s < 1 ? fmt("%.2f ms", s * 1e3) : fmt("%.2f s", s);
}

std::string humanBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && b >= 1024 && std::fmod(b, 1024) == 0) b /= 1024, ++u;
  return fmt("%.0f %s", b, units[u]);
}

bool Sweep::denseCount(const std::string& coll, size_t bytes, int P, size_t* count, double* fullBytes) {
  // float32; reduce-scatter's and allgather's vector is P blocks.
  const size_t per = coll == "allreduce" || coll == "broadcast" ? 4 : 4 * size_t(P);
  *count = bytes / per;
  *fullBytes = double(*count * per);
  return *count > 0;
}

// The algorithms of one point take turns: a run of each per turn, in an
// order rotated every turn, so that drift and background load over the point
// hit them alike. Timed one algorithm after another instead, two algorithms
// that send the same messages (ring and Rabenseifner at P = 2) measured up to
// 19 % apart in one campaign (bench/results/model-2026-11-25-shm-lazytext.md).
std::vector<Point> Sweep::timeTogether(std::vector<Point> pts, const std::vector<std::function<void()>>& calls) {
  using scbench::now;
  const size_t n = pts.size();
  for (size_t i = 0; i < n; ++i) {
    calls[i]();  // warm-up: scratch memory, connections, caches
    rs_.sync();
    g_.barrier();
    const double t0 = now();
    calls[i]();
    rs_.sync();
    const double once = std::max(g_.max(now() - t0), 1e-7);
    // Runs of back-to-back calls long enough for the timer and the barrier's
    // skew to vanish, so that maxRuns of them fill the budget.
    pts[i].batch = std::clamp(long(plan_.budget / plan_.maxRuns / once), 1L, 100000L);
  }
  std::vector<std::vector<double>> runs(n);
  std::vector<double> spent(n, 0.0);
  // Every rank sees the same times (maxima over ranks), so every rank stops
  // at the same turn.
  auto done = [&](int turns) {
    return turns >= plan_.maxRuns ||
           (turns >= plan_.minRuns && *std::min_element(spent.begin(), spent.end()) >= plan_.budget);
  };
  for (int turn = 0; !done(turn); ++turn)
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (j + size_t(turn)) % n;
      g_.barrier();
      const double s = now();
      for (long c = 0; c < pts[i].batch; ++c) calls[i]();
      rs_.sync();
      const double t = g_.max((now() - s) / double(pts[i].batch));
      runs[i].push_back(t);
      spent[i] += t * double(pts[i].batch);
    }
  for (size_t i = 0; i < n; ++i) {
    pts[i].seconds = median(runs[i]);
    pts[i].runs = int(runs[i].size());
  }
  return pts;
}

namespace {

// One progress line per (collective, size): every algorithm's time.
void progress(bool print, const std::string& head, const std::vector<Point>& pts) {
  if (!print) return;
  std::string line = fmt("  %-16s %-22s", pts.front().collective.c_str(), head.c_str());
  for (const Point& p : pts) line += "  " + p.algorithm + " " + humanTime(p.seconds);
  std::printf("%s\n", line.c_str());
}

uint64_t splitmix(uint64_t& s) {
  uint64_t x = (s += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void Sweep::pingpong(int a, int b, const std::string& level, std::vector<Point>& out) {
  // Two one-way neighbourhoods on the whole communicator (a -> b, then
  // b -> a); the other ranks have no edges and return at once. A neighbour
  // allgather with the naive schedule is one message on the transport's own
  // path, which is what the collectives' steps use.
  const int r = rs_.rank;
  scTopology_t ping = nullptr, pong = nullptr;
  auto make = [&](int from, int to, scTopology_t* t) {
    const int in = r == to, outd = r == from;
    if (const scResult_t rc = scTopologyCreate(t, rs_.comm, in, in ? &from : nullptr, outd, outd ? &to : nullptr);
        rc != scSuccess)
      callFailed(rs_, "scTopologyCreate", rc);
  };
  make(a, b, &ping);
  make(b, a, &pong);
  const size_t maxB = *std::max_element(plan_.sizes.begin(), plan_.sizes.end());
  Buffer send = rs_.alloc(maxB), recv = rs_.alloc(maxB);
  rs_.zero(send.data(), maxB);
  for (size_t n : plan_.sizes) {
    auto call = [&] {
      for (scTopology_t t : {ping, pong})
        if (const scResult_t rc = scNeighborAllGather(send.data(), n, recv.data(), scUint8, scNbrNaive, t, rs_.stream);
            rc != scSuccess)
          callFailed(rs_, "scNeighborAllGather (ping-pong)", rc);
    };
    Point p = timeTogether({{"pingpong", level, n, double(n)}}, {call}).front();
    p.seconds /= 2;  // one way
    out.push_back(p);
    progress(verbose && r == 0, fmt("%s %d<->%d %s", level.c_str(), a, b, humanBytes(double(n)).c_str()), {p});
  }
  scTopologyDestroy(ping);
  scTopologyDestroy(pong);
}

void Sweep::collectives(std::vector<Point>& out) {
  const bool root = rs_.rank == 0;
  if (root) std::printf("# dense collectives\n");
  dense(out);
  if (root) std::printf("# neighbourhood probe\n");
  neighbor(out);
  if (plan_.denseOnly) return;
  if (root) std::printf("# sparse allreduce\n");
  sparse(out);
  if (root) std::printf("# DSOP\n");
  dsop(out);
}

void Sweep::dense(std::vector<Point>& out) {
  const int P = rs_.nranks;
  const size_t maxB = *std::max_element(plan_.sizes.begin(), plan_.sizes.end());
  Buffer send = rs_.alloc(maxB), recv = rs_.alloc(maxB);
  rs_.write(send.data(), maxB / 4, scFloat32, [](uint64_t i) { return double(i % 7); });
  // Sizes outermost, so that drift over the run touches every algorithm alike.
  //
  // Broadcasts rotate their root call by call. From one root, back-to-back
  // broadcasts overlap: the root returns once its messages are on their way,
  // and the next call starts before the last rank has the data, so a loop
  // times the root's sending (2 KiB at P = 2 in 0.4 us, a third of a message's
  // latency), not the broadcast the model prices. The next call's root is the
  // rank the previous tree serves last (relative rank 1: binomial's root sends
  // to it last), and it starts that call only once it has the data.
  int broadcasts = 0;
  for (size_t s : plan_.sizes)
    for (const std::string coll : {"allreduce", "reduce_scatter", "allgather", "broadcast"}) {
      size_t count;
      double full;
      if (!denseCount(coll, s, P, &count, &full)) continue;
      std::vector<Point> pts;
      std::vector<std::function<void()>> calls;
      for (const auto& name : denseAlgorithms(coll)) {
        if (name == "native" && !plan_.native) continue;
        const scAlgo_t a = scAlgo_t(denseAlgoId(name));
        calls.emplace_back([&, a, name, count] {
          const scResult_t rc =
              coll == "allreduce"
                  ? scAllReduce(send.data(), recv.data(), count, scFloat32, scSum, a, rs_.comm, rs_.stream)
              : coll == "reduce_scatter"
                  ? scReduceScatter(send.data(), recv.data(), count, scFloat32, scSum, a, rs_.comm, rs_.stream)
              : coll == "allgather"
                  ? scAllGather(send.data(), recv.data(), count, scFloat32, a, rs_.comm, rs_.stream)
                  : scBroadcast(recv.data(), count, scFloat32, broadcasts++ % P, a, rs_.comm, rs_.stream);
          if (rc != scSuccess) callFailed(rs_, coll + " (" + name + ")", rc);
        });
        pts.push_back({coll, name, count, full});
      }
      const std::vector<Point> here = timeTogether(pts, calls);
      progress(verbose && rs_.rank == 0, humanBytes(full), here);
      out.insert(out.end(), here.begin(), here.end());
    }
}

void Sweep::neighbor(std::vector<Point>& out) {
  const int P = rs_.nranks, r = rs_.rank;
  std::vector<int> others;
  for (int j = 0; j < P; ++j)
    if (j != r) others.push_back(j);
  scTopology_t t = nullptr;
  if (const scResult_t rc = scTopologyCreate(&t, rs_.comm, P - 1, others.data(), P - 1, others.data()); rc != scSuccess)
    callFailed(rs_, "scTopologyCreate (complete graph)", rc);
  scNbrCostTerms_t naive{}, comb{};
  for (auto [algo, terms] : {std::pair{scNbrNaive, &naive}, std::pair{scNbrCombining, &comb}})
    if (const scResult_t rc = scTopologyCostTerms(t, algo, terms); rc != scSuccess)
      callFailed(rs_, "scTopologyCostTerms", rc);
  int k = 0, theta = 0, group = 0;
  if (const scResult_t rc = scTopologyFriendGroup(t, &k, &theta, &group, nullptr); rc != scSuccess)
    callFailed(rs_, "scTopologyFriendGroup", rc);
  const double saved = naive.extraMessages[0] + naive.extraMessages[1] - comb.extraMessages[0] - comb.extraMessages[1];
  if (saved <= 0) {
    if (r == 0)
      std::printf(
          "  combining forms no friend groups on the complete graph of %d ranks (k %d, theta %d):\n"
          "  nothing to measure; the file keeps the default message overhead\n",
          P, k, theta);
    scTopologyDestroy(t);
    return;
  }
  std::vector<size_t> blocks;
  for (size_t s : plan_.sizes)
    if (s <= kProbeMaxBytes) blocks.push_back(s);
  if (blocks.empty()) blocks.push_back(*std::min_element(plan_.sizes.begin(), plan_.sizes.end()));
  if (r == 0)
    std::printf(
        "  complete graph of %d ranks: combining in groups of up to %d (theta %d) saves %g messages on the\n"
        "  busiest rank for %g more round(s)\n",
        P, k, theta, saved, comb.rounds[0] + comb.rounds[1] - naive.rounds[0] - naive.rounds[1]);
  const size_t maxB = *std::max_element(blocks.begin(), blocks.end());
  Buffer send = rs_.alloc(maxB), recv = rs_.alloc(maxB * size_t(P - 1));
  rs_.zero(send.data(), maxB);
  for (size_t b : blocks) {
    std::vector<Point> pts;
    std::vector<std::function<void()>> calls;
    for (auto [algo, name, terms] :
         {std::tuple{scNbrNaive, "naive", &naive}, std::tuple{scNbrCombining, "combining", &comb}}) {
      // algo = algo: a structured binding is not capturable by name before C++20 (Clang refuses it).
      calls.emplace_back([&, algo = algo, b] {
        if (const scResult_t rc = scNeighborAllGather(send.data(), b, recv.data(), scUint8, algo, t, rs_.stream);
            rc != scSuccess)
          callFailed(rs_, "scNeighborAllGather (probe)", rc);
      });
      Point p{"neighbor_allgather", name, b, double(b)};
      p.hasTerms = true;
      p.terms = *terms;
      scNbrAlgo_t pick = scNbrAuto;
      if (const scResult_t rc = scTopologyEstimateTime(t, b, algo, &p.predicted, &pick); rc != scSuccess)
        callFailed(rs_, "scTopologyEstimateTime", rc);
      p.autoPick = pick == scNbrNaive          ? "naive"
                   : pick == scNbrCombining    ? "combining"
                   : pick == scNbrHierarchical ? "hierarchical"
                                               : "native";
      pts.push_back(p);
    }
    const std::vector<Point> here = timeTogether(pts, calls);
    progress(verbose && r == 0, humanBytes(double(b)), here);
    out.insert(out.end(), here.begin(), here.end());
  }
  scTopologyDestroy(t);
}

void Sweep::sparse(std::vector<Point>& out) {
  for (size_t bytes : plan_.sparseSizes) {
    const size_t N = bytes / 4;
    Buffer dense = rs_.alloc(N * 4);
    for (double d : plan_.densities) {
      // k distinct indices, uniform over [0, N), different on every rank
      // (Knuth's selection sampling: sorted by construction).
      const size_t k = std::clamp<size_t>(size_t(std::llround(d * double(N))), 1, N);
      uint64_t seed = uint64_t(rs_.rank) * 1000003 + uint64_t(d * 1e6) + N;
      std::vector<uint32_t> idx;
      idx.reserve(k);
      for (size_t i = 0; i < N && idx.size() < k; ++i)
        if (double(splitmix(seed) >> 11) * 0x1.0p-53 * double(N - i) < double(k - idx.size()))
          idx.push_back(uint32_t(i));
      Buffer bi = rs_.alloc(k * 4), bv = rs_.alloc(k * 4);
      rs_.write(bi.data(), k, scUint32, [&](uint64_t i) { return double(idx[i]); });
      rs_.write(bv.data(), k, scFloat32, [](uint64_t i) { return double(1 + i % 3); });
      std::vector<Point> pts;
      std::vector<std::function<void()>> calls;
      for (const auto& name : sparseAlgorithms()) {
        const scSparseAlgo_t a = scSparseAlgo_t(sparseAlgoId(name));
        calls.emplace_back([&, a, name, k, N] {
          if (const scResult_t rc = scSparseAllReduce(bi.data(), bv.data(), k, N, scIndexU32, scFloat32, scSum, a,
                                                      dense.data(), rs_.comm, rs_.stream);
              rc != scSuccess)
            callFailed(rs_, "scSparseAllReduce (" + name + ")", rc);
        });
        pts.push_back({"sparse_allreduce", name, N, double(N * 4), d});
      }
      const std::vector<Point> here = timeTogether(pts, calls);
      progress(verbose && rs_.rank == 0, fmt("%s d=%g", humanBytes(double(N * 4)).c_str(), d), here);
      out.insert(out.end(), here.begin(), here.end());
    }
  }
}

void Sweep::dsop(std::vector<Point>& out) {
  scDataType_t odt = scFloat32;
  if (const scResult_t rc = scDsopOutputType(scFloat32, &odt); rc != scSuccess) callFailed(rs_, "scDsopOutputType", rc);
  const size_t so = odt == scFloat64 ? 8 : 4;
  for (size_t n : plan_.dsopSizes) {
    Buffer a = rs_.alloc(n * 4), b = rs_.alloc(n * 4), G = rs_.alloc(n * n * so);
    rs_.write(a.data(), n, scFloat32, [&](uint64_t i) { return double(int(i % 5) - 2 + rs_.rank); });
    rs_.write(b.data(), n, scFloat32, [](uint64_t i) { return double(int(i % 3) - 1); });
    std::vector<Point> pts;
    std::vector<std::function<void()>> calls;
    for (const auto& name : dsopAlgorithms()) {
      const scDsopAlgo_t algo = scDsopAlgo_t(dsopAlgoId(name));
      calls.emplace_back([&, algo, name, n] {
        if (const scResult_t rc = scDsop(a.data(), n, b.data(), n, G.data(), scFloat32, algo, rs_.comm, rs_.stream);
            rc != scSuccess)
          callFailed(rs_, "scDsop (" + name + ")", rc);
      });
      pts.push_back({"dsop", name, n, double(n * n * so)});
    }
    const std::vector<Point> here = timeTogether(pts, calls);
    progress(verbose && rs_.rank == 0, fmt("n=m=%zu", n), here);
    out.insert(out.end(), here.begin(), here.end());
  }
}

}  // namespace sctune
