// Topology files at communicator creation (topology/topology.h): every rank's
// machine name, the gathered names matched to the file's hosts, the ring
// order and the per-peer links, the agreement of the ranks' files, and the
// cost model's link terms.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "algo/dense.h"
#include "algo/fold.h"
#include "core/call.h"
#include "core/comm.h"
#include "core/env.h"
#include "core/error.h"
#include "topology/topology.h"

namespace sc::topo {

std::string machineName(int rank, int P) {
  if (const char* v = env::get(env::Var::Hostname)) {
    std::string s = v;
    if (s.find(',') == std::string::npos) return s;
    std::vector<std::string> parts;
    size_t b = 0;
    for (size_t e; (e = s.find(',', b)) != std::string::npos; b = e + 1) parts.push_back(s.substr(b, e - b));
    parts.push_back(s.substr(b));
    SC_ARG(int(parts.size()) == P, env::setting(env::Var::Hostname), " lists ", parts.size(),
           " names; a list must have one per rank (", P, "), or give one name for all");
    SC_ARG(!parts[size_t(rank)].empty(), env::setting(env::Var::Hostname), " has an empty name for rank ", rank);
    return parts[size_t(rank)];
  }
  char buf[HOST_NAME_MAX + 1] = {};
  SC_REQUIRE(::gethostname(buf, sizeof buf - 1) == 0, scSystemError, "gethostname failed: ", std::strerror(errno));
  return buf;
}

bool rankOrderWanted() {
  const char* v = env::get(env::Var::RingOrder);
  if (!v || std::strcmp(v, "topology") == 0) return false;
  SC_ARG(std::strcmp(v, "rank") == 0, env::setting(env::Var::RingOrder), " is not one of topology (the default), rank");
  return true;
}

std::shared_ptr<CommTopo> build(const std::string& text, const std::string& path,
                                const std::vector<std::string>& machines, int rank, bool rankOrder) {
  auto t = std::make_shared<CommTopo>();
  auto tree = std::make_shared<Tree>(parse(text, path));
  t->tree = tree;
  t->path = path;
  t->machine = machines;
  const int P = int(machines.size());
  t->hostOf.resize(static_cast<size_t>(P));
  std::string missing;
  int nmissing = 0;
  for (int r = 0; r < P; ++r) {
    const int h = tree->findHost(machines[size_t(r)]);
    if (h < 0 && nmissing++ < 8)
      missing += cat(missing.empty() ? "" : ", ", "rank ", r, " on '", machines[size_t(r)], "'");
    t->hostOf[size_t(r)] = h;
  }
  SC_ARG(nmissing == 0, "topology file '", path, "' has no host for ", missing,
         nmissing > 8 ? cat(" and ", nmissing - 8, " more") : std::string(),
         " (hosts are matched by name, by scripts/cluster address 10.77.x.y, or by the first label of the name; ",
         env::name(env::Var::Hostname), " overrides the machine name)");
  t->order = ringOrder(*tree, t->hostOf);
  if (rankOrder)
    for (int i = 0; i < P; ++i) t->order[size_t(i)] = i;
  t->pos.resize(static_cast<size_t>(P));
  for (int i = 0; i < P; ++i) t->pos[size_t(t->order[size_t(i)])] = i;
  t->linksTo.resize(static_cast<size_t>(P));
  for (int q = 0; q < P; ++q) t->linksTo[size_t(q)] = tree->path(t->hostOf[size_t(rank)], t->hostOf[size_t(q)]);
  t->linkBytes.assign(size_t(tree->nlinks()), 0);
  return t;
}

void checkSupported(const Config& c, bool device) {
  SC_REQUIRE(c.topologyPath.empty() || !device, scInvalidUsage, "topology file '", c.topologyPath,
             "' (scConfig_t.topologyFile / SPARCOLL_TOPOLOGY_FILE): topologies are supported on host "
             "communicators (transports mpi and local) only for now, not on device communicators");
}

namespace {

uint64_t digestOf(const Config& c) {
  if (!c.topologyReadError.empty()) return 1;  // unreadable
  return std::hash<std::string>{}(c.topologyText) | 2;
}

std::string hex(uint64_t d) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(d));
  return b;
}

// Every rank's record as it travels: the digest of its file, and its machine
// name or why it has none.
struct Wire {
  uint64_t digest;
  int32_t failed, code, rankOrder, pad;
  char text[488];
};
static_assert(sizeof(Wire) == 512, "Wire is packed by hand");

// The verdict every rank reaches from the same table.
void judge(const std::vector<Wire>& all, const std::string& path) {
  const int P = int(all.size());
  for (int q = 0; q < P; ++q)
    if (all[size_t(q)].failed) SC_THROW(scResult_t(all[size_t(q)].code), "rank ", q, ": ", all[size_t(q)].text);
  for (int q = 1; q < P; ++q)
    if (all[size_t(q)].digest != all[0].digest) {
      auto text = [](uint64_t d) { return d == 1 ? std::string("an unreadable file") : "contents " + hex(d); };
      SC_THROW(scInvalidUsage, "the ranks read different topology files (scConfig_t.topologyFile / ",
               env::name(env::Var::TopologyFile), "): rank 0 read ", text(all[0].digest), ", rank ", q, " ",
               text(all[size_t(q)].digest), " (every rank must read the same contents; this rank: '", path, "')");
    }
  for (int q = 1; q < P; ++q)
    SC_REQUIRE(all[size_t(q)].rankOrder == all[0].rankOrder, scInvalidUsage, env::name(env::Var::RingOrder),
               " differs: ", all[0].rankOrder ? "rank" : "topology", " on rank 0, ",
               all[size_t(q)].rankOrder ? "rank" : "topology", " on rank ", q);
}

// The cost model's view of the tree (model/model.h: Model::linkSecondsPerByte):
// every step of a schedule as messages (from, to, share of the call's bytes);
// a step takes as long as the slowest of its most loaded link at the file's
// rate (unshaped links are free), its busiest sender's bytes at the model's
// beta, and all its bytes at beta_s (a medium every message crosses, such as
// the shared cores of a virtual cluster's hosts), and the steps add up. The
// alpha-beta formula (model/dense.cpp) takes beta and beta_s over the whole
// call; per step they stand beside the links: a step bound by one waits for
// it whatever the others allow.
struct Msg {
  int from, to;
  double share;
};

struct StepCost {
  const CommTopo& t;
  double beta, betaShared;   // the model's, at the band of the largest calls
  std::vector<double> load;  // per directed link
  std::vector<double> sent;  // per rank
  StepCost(const CommTopo& t, int P, const model::Params& p)
      : t(t), beta(p.beta), betaShared(p.betaShared), load(size_t(t.tree->nlinks())), sent(size_t(P)) {}

  double seconds(const std::vector<Msg>& step) {
    std::fill(load.begin(), load.end(), 0.0);
    std::fill(sent.begin(), sent.end(), 0.0);
    double all = 0;
    for (const Msg& m : step) {
      for (const int l : t.tree->path(t.hostOf[size_t(m.from)], t.hostOf[size_t(m.to)])) load[size_t(l)] += m.share;
      sent[size_t(m.from)] += m.share;
      all += m.share;
    }
    double worst = all * betaShared;
    for (const double x : sent) worst = std::max(worst, x * beta);
    for (size_t l = 0; l < load.size(); ++l)
      if (const double rate = t.tree->linkRate(int(l)); rate > 0 && load[l] > 0)
        worst = std::max(worst, load[l] * 8 / rate);
    return worst;
  }
};

// The butterflies' ranks are algo/fold.h's Fold, for any P: the first r =
// P - p2 pairs fold (the even rank of each sends to the odd one above it, which
// takes part; the unfold sends back down), and the p2 = 2^floor(log2 P) ranks
// left run the power-of-two stages with partner new rank nr ^ d. New rank nr
// is old rank oldRank(nr) and stands for the old ranks [firstOld(nr),
// firstOld(nr + 1)), whose blocks are its piece in the halving reduce-scatter
// and the doubling allgather.
//
// The share of the call's bytes in the rank blocks of pieces [lo, lo + d).
double blocks(const Fold& f, int lo, int d) { return double(f.firstOld(lo + d) - f.firstOld(lo)) / f.P; }

// The fold's step (up: even to odd, the ranks' inputs) or the unfold's (odd
// to even, the results), each message `share` of the call's bytes; 0 for a
// power of two, which does not fold.
double foldSeconds(StepCost& cost, const Fold& f, bool up, double share) {
  std::vector<Msg> step;
  for (int i = 0; i < f.r; ++i) step.push_back({up ? 2 * i : 2 * i + 1, up ? 2 * i + 1 : 2 * i, share});
  return cost.seconds(step);
}

void priceLinks(scComm& comm) {
  const CommTopo& t = *comm.topo;
  const int P = comm.size();
  model::Model& m = comm.model;
  if (P < 2) return;
  m.links = true;
  // The link term matters for large calls: their band's beta and beta_s.
  StepCost cost(t, P, m.paramsAt(m.level(), double(UINT64_MAX)));
  std::vector<Msg> step;
  // The ring in the communicator's order: every position to the next, 1/P each.
  for (int i = 0; i < P; ++i) step.push_back({t.order[size_t(i)], t.order[size_t((i + 1) % P)], 1.0 / P});
  const double ring = cost.seconds(step);
  m.linkSecondsPerByte[scCollAllReduce][scAlgoRing] = 2.0 * (P - 1) * ring;
  m.linkSecondsPerByte[scCollReduceScatter][scAlgoRing] = (P - 1) * ring;
  m.linkSecondsPerByte[scCollAllGather][scAlgoRing] = (P - 1) * ring;
  // Butterflies, as algo/rabenseifner.cpp, recdbl.cpp and halving_doubling.cpp
  // run them: the fold, then at distance d every new rank nr exchanges with
  // nr ^ d (old ranks f.oldRank) d of the p2 pieces: Rabenseifner's allreduce
  // d/p2 of the vector each way (halving and doubling alike); the halving
  // reduce-scatter gives the partner's half, the rank blocks of pieces
  // [(nr ^ d) & ~(d-1), +d); the doubling allgather sends its own, [nr &
  // ~(d-1), +d); recursive doubling's allreduce the whole vector. Then the
  // unfold. For a power of two the fold is empty and every share d/P.
  const Fold f(P);
  double halving = 0, rsHalving = 0, agDoubling = 0, whole = 0;
  for (int d = f.p2 / 2; d >= 1; d /= 2) {
    step.clear();
    for (int nr = 0; nr < f.p2; ++nr) step.push_back({f.oldRank(nr), f.oldRank(nr ^ d), double(d) / f.p2});
    halving += cost.seconds(step);
    for (int nr = 0; nr < f.p2; ++nr) step[size_t(nr)].share = blocks(f, (nr ^ d) & ~(d - 1), d);
    rsHalving += cost.seconds(step);
    for (int nr = 0; nr < f.p2; ++nr) step[size_t(nr)].share = blocks(f, nr & ~(d - 1), d);
    agDoubling += cost.seconds(step);
    for (Msg& x : step) x.share = 1;
    whole += cost.seconds(step);
  }
  // The fold moves whole vectors up and the unfold whole results down, except
  // the reduce-scatter's unfold (the even rank's block) and the allgather's
  // fold (its own block): 1/P.
  const double foldWhole = foldSeconds(cost, f, true, 1), unfoldWhole = foldSeconds(cost, f, false, 1);
  m.linkSecondsPerByte[scCollAllReduce][scAlgoRabenseifner] = foldWhole + 2 * halving + unfoldWhole;
  m.linkSecondsPerByte[scCollReduceScatter][scAlgoRabenseifner] =
      foldWhole + rsHalving + foldSeconds(cost, f, false, 1.0 / P);
  m.linkSecondsPerByte[scCollAllGather][scAlgoRecDbl] = foldSeconds(cost, f, true, 1.0 / P) + agDoubling + unfoldWhole;
  m.linkSecondsPerByte[scCollAllReduce][scAlgoRecDbl] = foldWhole + whole + unfoldWhole;
  // Broadcast from root 0: the binomial tree's step of mask k sends from
  // every multiple of 2k to +k the whole buffer (binomial) or the receiver's
  // subtree's blocks (scatter), then scatter_allgather's ring.
  int top = 1;
  while (top < P) top *= 2;
  double binomial = 0, scatter = 0;
  for (int k = top / 2; k >= 1; k /= 2) {
    step.clear();
    for (int r = 0; r + k < P; r += 2 * k) step.push_back({r, r + k, 1.0});
    binomial += cost.seconds(step);
    for (Msg& x : step) x.share = double(std::min(x.to + k, P) - x.to) / P;
    scatter += cost.seconds(step);
  }
  m.linkSecondsPerByte[scCollBroadcast][scAlgoBinomial] = binomial;
  m.linkSecondsPerByte[scCollBroadcast][scAlgoScatterAllGather] = scatter + (P - 1) * ring;
}

}  // namespace

void setupExchanged(scComm& comm) {
  const Config& c = comm.cfg;
  if (c.topologyPath.empty()) return;
  checkSupported(c, comm.device());
  const int P = comm.size(), me = comm.rank();
  Wire mine;
  std::memset(&mine, 0, sizeof mine);
  mine.digest = digestOf(c);
  std::string name;
  try {
    name = machineName(me, P);
    mine.rankOrder = rankOrderWanted();
    if (!c.topologyReadError.empty()) SC_THROW(scInvalidArgument, c.topologyReadError);
    SC_ARG(name.size() < sizeof mine.text, "machine name '", name, "' is longer than ", sizeof mine.text - 1,
           " characters");
    std::snprintf(mine.text, sizeof mine.text, "%s", name.c_str());
  } catch (const Error& e) {
    mine.failed = 1;
    mine.code = e.code();
    std::snprintf(mine.text, sizeof mine.text, "%s", std::string(e.what()).c_str());
  }
  std::vector<Wire> all(static_cast<size_t>(P));
  if (P > 1) {
    const scStats_t kept = comm.stats;  // not a collective's traffic
    comm.transport->beginCall(comm.seq, CallSig{"topology"}.hash());
    {
      Ctx x(comm, scUint8, scSum, nullptr);
      x.phase("topology names exchange");
      doublingAllGather(x, &mine, all.data(), sizeof(Wire));
    }
    comm.stats = kept;
  } else {
    all[0] = mine;
  }
  judge(all, c.topologyPath);
  std::vector<std::string> names(static_cast<size_t>(P));
  for (int q = 0; q < P; ++q)
    names[size_t(q)] = std::string(all[size_t(q)].text, strnlen(all[size_t(q)].text, sizeof mine.text));
  comm.topo = build(c.topologyText, c.topologyPath, names, me, all[0].rankOrder != 0);
  priceLinks(comm);
}

void setupLocal(const std::vector<scComm*>& comms) {
  if (comms.empty() || comms[0]->cfg.topologyPath.empty()) return;
  const Config& c = comms[0]->cfg;
  for (scComm* x : comms) checkSupported(c, x->device());
  if (!c.topologyReadError.empty()) SC_THROW(scInvalidArgument, c.topologyReadError);
  const int P = int(comms.size());
  std::vector<std::string> names(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) names[size_t(r)] = machineName(r, P);
  const bool rankOrder = rankOrderWanted();
  for (int r = 0; r < P; ++r) {
    comms[size_t(r)]->topo = build(c.topologyText, c.topologyPath, names, r, rankOrder);
    priceLinks(*comms[size_t(r)]);
  }
}

void setupShrunk(scComm& n, const scComm& old, const std::vector<int>& kept) {
  if (!old.topo) return;
  std::vector<std::string> names;
  for (int r : kept) names.push_back(old.topo->machine[size_t(r)]);
  if (int(names.size()) != n.size()) return;  // not the ranks expected: rank order
  const bool rankOrder = old.topo->order.size() > 1 && old.topo->order != ringOrder(*old.topo->tree, old.topo->hostOf);
  n.topo = build(n.cfg.topologyText, n.cfg.topologyPath, names, n.rank(), rankOrder);
  priceLinks(n);
}

}  // namespace sc::topo
