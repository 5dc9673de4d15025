// combining's pattern: friend groups over common out-neighbourhoods
// (Ghazimirsaeed et al.; Mirsadeghi et al.'s message combining), built fully
// distributed at creation.
//
// 1. Friends. create.cpp gave this rank, for each out-neighbour j, the ranks
//    that send to j. So it knows c(i, f) = |N(i) ∩ N(f) \ {i, f}|, the
//    out-neighbours it shares with any rank f; c is symmetric, so both ends
//    agree on whether c > theta, which makes them friends.
// 2. Groups, in rounds. Every ungrouped rank proposes the group it would form
//    greedily among its ungrouped friends (most common neighbours first, for
//    as long as the group's common neighbourhood stays above theta, at most k
//    ranks). A rank accepts the best proposal that includes it (largest
//    saving, then lowest proposer); a proposal all its members accept forms a
//    group. The best proposal overall is always accepted, so each round forms
//    a group; rounds go on while any rank still has a proposal.
// 3. Routes. Each member computes the group's common neighbourhood C (the
//    out-neighbours all members share; the same set on every member), and
//    member t brings the group's blocks to C[t], C[t+g], ... Every rank then
//    tells each out-neighbour how its block will arrive: direct, inside a
//    group's message from a given friend, or in the receiver's own group.
//
// theta and k come from the alpha-beta model: a group of g ranks with c
// common neighbours and e edges among themselves saves (g-1)c - g(g-1) + e
// messages and sends g(g-1) - e blocks more (the friends' exchange). A saved
// message is worth its overhead o (model.cpp: the messages of a round share
// one latency; o is the tuning file's message_overhead, else a share of
// alpha), so with no inner edges a group pays
// at blocks of kSmallBlock bytes when c > g(1 + beta kSmallBlock / o) =
// theta(g). Whether combining's second round pays for the saving is auto's
// decision (model.cpp), not the groups'. k is the size whose greedy
// groups save most over all ranks (an allreduce of one estimate per size).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "neighbor/create.h"
#include "neighbor/meta.h"

namespace sc::nbr {
namespace {

constexpr int kMaxK = 8;              // largest group size the model considers
constexpr double kSmallBlock = 1024;  // the block size combining is meant for (bytes)
constexpr int kMaxRounds = 64;        // grouping rounds; ranks left over stay alone
constexpr uint64_t kNone = ~uint64_t(0);
constexpr int kNoGroupTheta = 1 << 30;  // more common neighbours than any rank has

enum Route : uint64_t { kDirect = 0, kCombined = 1, kInGroup = 2 };

// What this rank knows of its out-neighbourhood: out[x] and the sorted
// distinct ranks that send to it.
struct Shared {
  const std::vector<int>& out;
  const std::vector<std::vector<int>>& srcs;
  const std::vector<int>& in;  // this rank's distinct in-neighbours, ascending
  bool sends(size_t x, int f) const { return std::binary_search(srcs[x].begin(), srcs[x].end(), f); }
  // Whether a -> b is an edge, as far as this rank can tell (it sees its own
  // edges and those into its out-neighbours).
  bool knownEdge(int me, int a, int b) const {
    auto x = std::lower_bound(out.begin(), out.end(), b);
    if (a == me) return x != out.end() && *x == b;
    if (b == me) return std::binary_search(in.begin(), in.end(), a);
    return x != out.end() && *x == b && sends(size_t(x - out.begin()), a);
  }
};

struct Proposal {
  double benefit = 0;
  int proposer = -1;
  std::vector<int> members;  // proposer first
  bool valid() const { return members.size() >= 2; }
  bool beats(const Proposal& o) const {
    return !o.valid() || benefit > o.benefit || (benefit == o.benefit && proposer < o.proposer);
  }
};

// A group of g with c common neighbours and e edges among its members:
// naive sends g c + e messages there, combining g(g-1) + c; the friends'
// exchange carries g(g-1) - e blocks more. o: a message's overhead.
struct Model {
  double o, beta;
  // A message worth nothing (o = 0: measured so, or alpha 0) never pays for
  // a group: theta beyond any neighbourhood.
  int theta(int g) const {
    const double t = std::floor(g * (1 + beta * kSmallBlock / o));
    return o > 0 && t < double(kNoGroupTheta) ? int(t) : kNoGroupTheta;
  }
  double benefit(int g, size_t c, int e) const {
    const double extra = double(g) * (g - 1) - e;
    return o * ((g - 1) * double(c) - extra) - beta * kSmallBlock * extra;
  }
};

// Indices x of the out-neighbours shared by every member (none of them a member).
std::vector<size_t> commonOf(const Shared& s, int me, const std::vector<int>& members) {
  std::vector<size_t> C;
  for (size_t x = 0; x < s.out.size(); ++x) {
    bool all = true;
    for (int m : members) all = all && s.out[x] != m && (m == me || s.sends(x, m));
    if (all) C.push_back(x);
  }
  return C;
}

// The greedy group this rank would lead: friends in order, each kept while
// the common neighbourhood stays above theta.
Proposal propose(const Shared& s, int me, const std::vector<int>& friends, int cap, int theta, const Model& md) {
  Proposal p;
  p.proposer = me;
  p.members = {me};
  std::vector<size_t> C = commonOf(s, me, p.members);
  for (int f : friends) {
    if (int(p.members.size()) >= cap) break;
    std::vector<size_t> next;
    for (size_t x : C)
      if (s.out[x] != f && s.sends(x, f)) next.push_back(x);
    if (int(next.size()) <= theta) continue;
    p.members.push_back(f);
    C.swap(next);
  }
  if (!p.valid()) return Proposal{};
  int e = 0;
  for (int a : p.members)
    for (int b : p.members) e += a != b && s.knownEdge(me, a, b);
  p.benefit = md.benefit(int(p.members.size()), C.size(), e);
  return p;
}

std::vector<uint64_t> encode(const Proposal& p, int k) {
  std::vector<uint64_t> w(size_t(k) + 2, kNone);
  uint64_t bits;
  std::memcpy(&bits, &p.benefit, 8);
  w[0] = p.valid() ? uint64_t(p.members.size()) : 0;
  w[1] = bits;
  for (size_t i = 0; i < p.members.size(); ++i) w[2 + i] = uint64_t(p.members[i]);
  return w;
}

Proposal decode(const std::vector<uint64_t>& w) {
  Proposal p;
  if (w[0] == 0) return p;
  std::memcpy(&p.benefit, &w[1], 8);
  for (size_t i = 0; i < w[0]; ++i) p.members.push_back(int(w[2 + i]));
  p.proposer = p.members[0];
  return p;
}

// One round of one-word messages with every active friend; returns theirs.
std::vector<uint64_t> tell(Meta& m, const std::vector<int>& friends, uint64_t word) {
  std::vector<Meta::Msg> sends, recvs;
  for (int f : friends) {
    sends.push_back({f, {word}});
    recvs.push_back({f, {0}});
  }
  m.exchange(sends, recvs);
  std::vector<uint64_t> got;
  for (auto& r : recvs) got.push_back(r.words[0]);
  return got;
}

// The rounds of step 2. Returns this rank's group (itself alone if none).
std::vector<int> formGroups(Meta& m, const Shared& s, std::vector<int> active, int k, int theta, const Model& md) {
  const int me = m.rank;
  std::vector<int> group{me};
  for (int round = 0; round < kMaxRounds; ++round) {
    const Proposal mine = group.size() == 1 ? propose(s, me, active, k, theta, md) : Proposal{};
    std::vector<uint64_t> any{mine.valid() ? 1u : 0u};
    m.allReduce(any, scMax);
    if (any[0] == 0) break;
    // A: proposals.
    std::vector<Meta::Msg> sends, recvs;
    for (int f : active) {
      sends.push_back({f, encode(mine, k)});
      recvs.push_back({f, std::vector<uint64_t>(size_t(k) + 2)});
    }
    m.exchange(sends, recvs);
    // B: accept the best proposal that includes this rank.
    Proposal best = mine;
    for (auto& r : recvs) {
      Proposal q = decode(r.words);
      if (q.valid() && std::count(q.members.begin(), q.members.end(), me) && q.beats(best)) best = q;
    }
    const std::vector<uint64_t> accepted = tell(m, active, best.valid() ? uint64_t(best.proposer) : kNone);
    // C: a proposer whose every member accepted it announces the group.
    bool formed = best.valid() && best.proposer == me;
    for (size_t i = 0; formed && i < active.size(); ++i)
      if (std::count(mine.members.begin(), mine.members.end(), active[i])) formed = accepted[i] == uint64_t(me);
    const std::vector<uint64_t> formedBy = tell(m, active, formed ? 1 : 0);
    for (size_t i = 0; i < active.size() && !formed && best.valid(); ++i)
      if (active[i] == best.proposer) formed = formedBy[i] == 1;
    if (formed) group = best.members;
    // D: friends learn who is grouped; grouped ranks leave the rounds.
    const std::vector<uint64_t> grouped = tell(m, active, group.size() > 1 ? 1 : 0);
    std::vector<int> still;
    for (size_t i = 0; i < active.size(); ++i)
      if (grouped[i] == 0 && group.size() == 1) still.push_back(active[i]);
    active.swap(still);
  }
  return group;
}

}  // namespace

void buildCombining(Topology& t, Meta& m, const Knobs& kn, const std::vector<std::vector<int>>& sourcesOfOut) {
  Combining& p = t.comb;
  std::vector<int> in;
  for (const InNbr& n : t.in) in.push_back(n.rank);
  const Shared s{t.out, sourcesOfOut, in};
  // Priced at the small blocks the grouping decision is about.
  const model::Params& pm = t.comm->model.params(double(kSmallBlock));
  const Model md{model::messageOverhead(pm), pm.beta};
  const int me = t.rank;

  // Step 1: c(me, f) for every rank f sharing an out-neighbour.
  std::unordered_map<int, int> common;
  for (size_t x = 0; x < t.out.size(); ++x)
    for (int f : sourcesOfOut[x])
      if (f != me && f != t.out[x]) ++common[f];
  std::vector<std::pair<int, int>> byCommon(common.begin(), common.end());  // (f, c)
  std::sort(byCommon.begin(), byCommon.end(),
            [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  auto friendsAbove = [&](int theta) {
    std::vector<int> f;
    for (auto& [r, c] : byCommon)
      if (c > theta) f.push_back(r);
    return f;
  };

  // k and theta: the knobs, else the model.
  auto thetaFor = [&](int g) { return kn.theta >= 0 ? kn.theta : md.theta(g); };
  int k = kn.k;
  if (k == 0) {
    std::vector<double> saving(kMaxK + 1, 0.0);  // by size cap; each group counted once over its members
    for (int g = 2; g <= kMaxK && t.size > 1; ++g) {
      const Proposal q = propose(s, me, friendsAbove(thetaFor(g)), g, thetaFor(g), md);
      if (q.valid()) saving[size_t(g)] = q.benefit / double(q.members.size());
    }
    m.allReduce(saving, scSum);
    k = 1;
    for (int g = 2; g <= kMaxK; ++g)
      if (saving[size_t(g)] > 0 && saving[size_t(g)] > saving[size_t(k)]) k = g;
  }
  p.k = k;
  p.theta = thetaFor(std::max(k, 2));

  // Step 2.
  p.group = k >= 2 ? formGroups(m, s, friendsAbove(p.theta), k, p.theta, md) : std::vector<int>{me};
  const int g = int(p.group.size());
  p.pos = int(std::find(p.group.begin(), p.group.end(), me) - p.group.begin());

  // Step 3: the common neighbourhood, this rank's share, and the routes.
  std::vector<size_t> C = g > 1 ? commonOf(s, me, p.group) : std::vector<size_t>{};
  std::vector<uint64_t> deliverer(t.out.size(), kNone);
  for (size_t i = 0; i < C.size(); ++i) {
    deliverer[C[i]] = uint64_t(p.group[i % size_t(g)]);
    if (int(i % size_t(g)) == p.pos) p.share.push_back(t.out[C[i]]);
  }
  std::vector<Meta::Msg> sends, recvs;
  for (size_t x = 0; x < t.out.size(); ++x) {
    const int j = t.out[x];
    const bool member = std::count(p.group.begin(), p.group.end(), j) > 0;
    const uint64_t route = member ? kInGroup : deliverer[x] != kNone ? kCombined : kDirect;
    if (route == kDirect) p.directOut.push_back(j);
    sends.push_back({j, {route, deliverer[x], uint64_t(p.group[0]), uint64_t(g), uint64_t(p.pos)}});
  }
  for (const InNbr& n : t.in) recvs.push_back({n.rank, std::vector<uint64_t>(5)});
  m.exchange(sends, recvs);
  std::unordered_map<int, size_t> byLeader;  // leader -> index in combinedIn
  for (size_t i = 0; i < recvs.size(); ++i) {
    const std::vector<uint64_t>& w = recvs[i].words;
    const int from = recvs[i].peer;
    if (w[0] == kDirect) {
      p.directIn.push_back(from);
    } else if (w[0] == kInGroup) {
      SC_REQUIRE(std::count(p.group.begin(), p.group.end(), from), scInternalError, "combining: rank ", from,
                 " counts rank ", me, " in its friend group, which it is not");
      p.groupIn.push_back(from);
    } else {
      auto [it, fresh] = byLeader.try_emplace(int(w[2]), p.combinedIn.size());
      if (fresh) p.combinedIn.push_back({int(w[1]), std::vector<int>(w[3], -1)});
      CombinedIn& ci = p.combinedIn[it->second];
      SC_REQUIRE(ci.deliverer == int(w[1]) && ci.members.size() == w[3] && w[4] < w[3], scInternalError,
                 "combining: inconsistent route from rank ", from);
      ci.members[w[4]] = from;
    }
  }
  for (const CombinedIn& ci : p.combinedIn)
    for (int r : ci.members)
      SC_REQUIRE(r >= 0, scInternalError, "combining: a group delivering to rank ", me,
                 " has a member that does not send here");
}

}  // namespace sc::nbr
