// scTopologyCreate's checks. Every rank must reach the same verdict: a rank
// that returned on a bad argument of its own would leave its peers waiting
// for it. So a rank's first problem is coded in three words (what, where,
// value) that every rank learns, and all build the same message from them.
//
// Symmetry (rank j lists i in destinations exactly as often as i lists j in
// sources) is checked without any rank holding the whole graph: a
// reduce-scatter gives each rank j the number of edges declared into it and
// two 64-bit hash sums of their senders (log2 P rounds, 24 P bytes per rank),
// which it compares with its own sources. Only when some rank disagrees do
// the ranks exchange exact counts with every other rank, to name one
// offending edge (the smallest pair i -> j) everywhere.
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/env.h"
#include "neighbor/create.h"
#include "neighbor/meta.h"

namespace sc::nbr {
namespace {

enum What : uint64_t {
  kFine = 0,
  kNullTopo,
  kNegIndegree,
  kNegOutdegree,
  kNullSources,
  kNullDestinations,
  kSourceRange,
  kDestinationRange,
  kBadKnob
};
const env::Var kKnobs[] = {env::Var::RanksPerNode, env::Var::NbrK, env::Var::NbrTheta};
const int kKnobLows[] = {1, 1, 0};

struct Problem {
  uint64_t what = kFine, where = 0;
  int64_t value = 0;
};

// A knob: unset, or a whole number >= lo. Returns false when malformed.
bool readKnob(env::Var var, int lo, int* out) {
  const char* v = env::get(var);
  if (!v) return true;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > INT_MAX) return false;
  *out = int(x);
  return true;
}

Problem localProblem(const Declared& d, int P, Knobs& kn) {
  if (d.topoNull) return {kNullTopo};
  if (d.indegree < 0) return {kNegIndegree, 0, d.indegree};
  if (d.outdegree < 0) return {kNegOutdegree, 0, d.outdegree};
  if (d.indegree > 0 && !d.sources) return {kNullSources, 0, d.indegree};
  if (d.outdegree > 0 && !d.destinations) return {kNullDestinations, 0, d.outdegree};
  for (int e = 0; e < d.indegree; ++e)
    if (d.sources[e] < 0 || d.sources[e] >= P) return {kSourceRange, uint64_t(e), d.sources[e]};
  for (int e = 0; e < d.outdegree; ++e)
    if (d.destinations[e] < 0 || d.destinations[e] >= P) return {kDestinationRange, uint64_t(e), d.destinations[e]};
  int* knobs[] = {&kn.ranksPerNode, &kn.k, &kn.theta};
  for (uint64_t i = 0; i < 3; ++i)
    if (!readKnob(kKnobs[i], kKnobLows[i], knobs[i])) return {kBadKnob, i, 0};
  return {};
}

std::string describe(int rank, const Problem& p, int P) {
  const std::string who = cat("scTopologyCreate: rank ", rank, ": ");
  switch (p.what) {
    case kNullTopo: return who + "topo (the output handle) is NULL";
    case kNegIndegree: return who + cat("indegree is ", p.value, ", must be >= 0");
    case kNegOutdegree: return who + cat("outdegree is ", p.value, ", must be >= 0");
    case kNullSources: return who + cat("sources is NULL with indegree ", p.value);
    case kNullDestinations: return who + cat("destinations is NULL with outdegree ", p.value);
    case kSourceRange: return who + cat("sources[", p.where, "] = ", p.value, " is not a rank in [0, ", P, ")");
    case kDestinationRange:
      return who + cat("destinations[", p.where, "] = ", p.value, " is not a rank in [0, ", P, ")");
    case kBadKnob:
      return who + cat("environment variable ", env::name(kKnobs[p.where]),
                       " must be a whole number >= ", kKnobLows[p.where]);
    default: return who + "unknown problem";
  }
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: a well-spread hash of a rank
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
uint64_t hash1(int r) { return mix(uint64_t(r)); }
uint64_t hash2(int r) { return mix(uint64_t(r) ^ 0x5851F42D4C957F2Dull); }

// The error path of the symmetry check: exact counts between every pair.
[[noreturn]] void nameAsymmetricEdge(Meta& m, const Declared& d) {
  const int P = m.size, me = m.rank;
  std::vector<uint64_t> toCount(size_t(P), 0), fromCount(size_t(P), 0);
  for (int e = 0; e < d.outdegree; ++e) ++toCount[size_t(d.destinations[e])];
  for (int e = 0; e < d.indegree; ++e) ++fromCount[size_t(d.sources[e])];
  std::vector<Meta::Msg> sends, recvs;
  for (int r = 0; r < P; ++r) {
    if (r == me) continue;
    sends.push_back({r, {toCount[size_t(r)]}});
    recvs.push_back({r, {0}});
  }
  m.exchange(sends, recvs);
  std::vector<uint64_t> declaredTo(size_t(P), 0);  // how often rank i lists me in destinations
  declaredTo[size_t(me)] = toCount[size_t(me)];
  for (auto& r : recvs) declaredTo[size_t(r.peer)] = r.words[0];
  uint64_t key = ~uint64_t(0);  // the smallest offending (i, me) as i * P + me
  for (int i = 0; i < P && key == ~uint64_t(0); ++i)
    if (declaredTo[size_t(i)] != fromCount[size_t(i)]) key = uint64_t(i) * uint64_t(P) + uint64_t(me);
  std::vector<uint64_t> first{key};
  m.allReduce(first, scMin);
  const int i = int(first[0] / uint64_t(P)), j = int(first[0] % uint64_t(P));
  std::vector<uint64_t> counts{0, 0};
  if (j == me) counts = {declaredTo[size_t(i)] + 1, fromCount[size_t(i)] + 1};
  m.allReduce(counts, scMax);
  SC_THROW(scInvalidArgument, "scTopologyCreate: asymmetric edge ", i, " -> ", j, ": rank ", i, " lists ", j, " ",
           counts[0] - 1, " time(s) in destinations, but rank ", j, " lists ", i, " ", counts[1] - 1,
           " time(s) in sources");
}

}  // namespace

Knobs validate(Meta& m, const Declared& d) {
  const int P = m.size, me = m.rank;
  Knobs kn;
  const Problem mine = localProblem(d, P, kn);
  // Edges declared into each rank: (count, hash sums of the senders).
  std::vector<uint64_t> into(3 * size_t(P), 0);
  if (mine.what == kFine)
    for (int e = 0; e < d.outdegree; ++e) {
      uint64_t* w = &into[3 * size_t(d.destinations[e])];
      w[0] += 1;
      w[1] += hash1(me);
      w[2] += hash2(me);
    }
  const std::vector<uint64_t> got = m.reduceScatterSum(into, 3);
  std::vector<uint64_t> expect{uint64_t(mine.what == kFine ? d.indegree : 0), 0, 0};
  for (int e = 0; mine.what == kFine && e < d.indegree; ++e) {
    expect[1] += hash1(d.sources[e]);
    expect[2] += hash2(d.sources[e]);
  }
  // One agreement: the lowest rank with a problem of its own, and whether any
  // rank's edges disagree (0) or none (1).
  std::vector<uint64_t> verdict{mine.what != kFine ? uint64_t(me) : uint64_t(P), got == expect ? 1u : 0u};
  m.allReduce(verdict, scMin);
  if (verdict[0] < uint64_t(P)) {
    const int who = int(verdict[0]);
    std::vector<uint64_t> w{0, 0, 0};
    if (who == me) w = {mine.what, mine.where, uint64_t(mine.value)};
    m.allReduce(w, scMax);  // only `who` contributes; the others give zeros
    SC_THROW(scInvalidArgument, describe(who, {w[0], w[1], int64_t(w[2])}, P));
  }
  if (verdict[1] == 0) nameAsymmetricEdge(m, d);
  return kn;
}

}  // namespace sc::nbr
