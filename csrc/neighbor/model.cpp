// The alpha-beta model behind scNbrAuto. An algorithm is a sequence of
// rounds; a round in which some rank sends or receives costs, on its busiest
// rank,
//     alpha + o (m - 1) + beta_inter * B_inter + beta_intra * (B_intra + B_copy)
//       + beta_shared_intra * S_intra + beta_shared_inter * S_inter
// with m messages and B_inter / B_intra bytes (each the larger of what is
// sent and what is received) and B_copy bytes copied locally around the round
// (combining packs and unpacks group messages), and S the bytes every rank
// sends in the round, summed (what a shared medium carries, as in the dense
// model); the algorithm costs the sum of its rounds. alpha is the latency of a round with one message, as in the
// dense model (the inter-node level's when the round crosses machines); the
// messages of a round are posted together, so each further one adds only its
// overhead o, not another latency: the tuning file's message_overhead, which
// sparcoll-tune measures from combining against naive, else
// alpha * kDefaultMessageOverhead (model/model.h). The
// two betas are the levels of the cost model (model/model.h); where the
// tuning file measures only one level (or none: the built-in parameters),
// intra-node bytes and copies are taken to move kIntraSpeedup = 4 times as
// fast as bytes between nodes. Bytes are priced by the machines the ranks
// are on (Topology::machineOf), not by virtual nodes (SPARCOLL_RANKS_PER_NODE):
// on one machine, virtual nodes of 4 ranks made auto pick hierarchical for
// its inter-node bytes that cost nothing extra there, up to 1.8x slower than
// MPI_Neighbor_allgather at 64 KiB .. 4 MiB.
//
// Charging alpha per message and nothing per round, as this model first did,
// made a second round free: auto picked combining wherever it saved a
// message, and it ran up to 1.5x slower than MPI_Neighbor_allgather (1.8x
// than naive) at small blocks; without the copies it looked as cheap as
// naive at large blocks too, where it moves as many bytes plus the copies
// and ran 2.2x slower (bench/results/neighbor-cpu-mpi-2026-11-23.md).
//
// Here each rank's figures for each algorithm, in blocks; create.cpp takes
// their maxima over ranks, so every rank predicts the same times and picks
// the same algorithm. A tuning-file rule for neighbor_allgather (bytes = the
// block) beats the model. The terms' price (termsSeconds, neighbor/model.h)
// is also scCostModelNeighborTime's, which tools (sparcoll-tune's fit of o)
// call on recorded terms: the formula stays here, once.
#include <algorithm>

#include "neighbor/create.h"
#include "neighbor/model.h"

namespace sc::nbr {
namespace {

constexpr double kIntraSpeedup = 4;

// One round's traffic on this rank, sent [0] and received [1].
class Tally {
 public:
  explicit Tally(const Topology& t) : t_(t) {}
  void sent(int peer, double blocks) { add(0, peer, blocks); }
  void received(int peer, double blocks) { add(1, peer, blocks); }
  void copied(double blocks) { copies_ += blocks; }
  // This rank's figures; create.cpp takes the maxima over ranks, and the
  // sums of the shared (sent) blocks.
  RoundCost round() const {
    return {std::max(msgs_[0], msgs_[1]),
            std::max(inter_[0], inter_[1]),
            std::max(intra_[0], intra_[1]),
            copies_,
            intra_[0],
            inter_[0]};
  }

 private:
  void add(int side, int peer, double blocks) {
    msgs_[side] += 1;
    (t_.otherMachine(peer) ? inter_ : intra_)[side] += blocks;
  }
  const Topology& t_;
  double msgs_[2] = {0, 0}, inter_[2] = {0, 0}, intra_[2] = {0, 0}, copies_ = 0;
};

// A member's share of a fan's block.
double share(const Fan& f, size_t x) {
  double all = 0;
  for (uint64_t w : f.weights) all += double(w);
  return double(f.weights[x]) / all;
}

}  // namespace

Cost naiveCost(const Topology& t) {
  Tally r(t);
  for (int j : t.destinations)
    if (j != t.rank) r.sent(j, 1);
  for (int i : t.sources)
    if (i != t.rank) r.received(i, 1);
  return {r.round()};
}

Cost combiningCost(const Topology& t) {
  const Combining& p = t.comb;
  const double g = double(p.group.size());
  Tally r1(t), r2(t);
  for (int f : p.group)
    if (f != t.rank) {
      r1.sent(f, 1);
      r1.received(f, 1);
    }
  for (int j : p.directOut) r1.sent(j, 1);
  for (int i : p.directIn) r1.received(i, 1);
  for (int j : p.share) r2.sent(j, g);
  // The own block into the group buffer; after round 2, every block that came
  // in a group message or from a friend, out of the staging or group buffer.
  if (g > 1) r1.copied(1);
  r2.copied(double(p.groupIn.size()));
  for (const CombinedIn& ci : p.combinedIn) {
    r2.received(ci.deliverer, double(ci.members.size()));
    r2.copied(double(ci.members.size()));
  }
  return {r1.round(), r2.round()};
}

Cost hierarchicalCost(const Topology& t) {
  const Hierarchical& h = t.hier;
  Tally r1(t), r2(t);
  for (int j : h.intraOut) r1.sent(j, 1);
  for (int j : h.wholeOut) r1.sent(j, 1);
  for (const Fan& f : h.fansOut)
    for (size_t x = 0; x < f.members.size(); ++x) r1.sent(f.members[x], share(f, x));
  for (int i : h.intraIn) r1.received(i, 1);
  for (int i : h.wholeIn) r1.received(i, 1);
  for (const Fan& f : h.fansIn) {
    r1.received(f.sender, share(f, size_t(f.pos)));
    for (size_t x = 0; x < f.members.size(); ++x)
      if (int(x) != f.pos) {
        r2.sent(f.members[x], share(f, size_t(f.pos)));
        r2.received(f.members[x], share(f, x));
      }
  }
  return {r1.round(), r2.round()};
}

scNbrCostTerms_t costTerms(const Topology& t, scNbrAlgo_t algo) {
  scNbrCostTerms_t c{};
  for (const RoundCost& r : t.cost[algo == scNbrNative ? scNbrNaive : algo]) {
    if (r.msgs <= 0) continue;  // a round no rank sends or receives in (one node: hierarchical's second)
    const int l = r.interBlocks > 0 ? 1 : 0;
    c.rounds[l] += 1;
    c.extraMessages[l] += r.msgs - 1;
    c.blocks[0] += r.intraBlocks + r.copyBlocks;
    c.blocks[1] += r.interBlocks;
    c.sharedBlocks[0] += r.sharedIntra;
    c.sharedBlocks[1] += r.sharedInter;
  }
  return c;
}

double termsSeconds(const model::Model& m, const scNbrCostTerms_t& c, double bytes) {
  // Each level's bands blend on their own (Model::priced), the other level's
  // parameters held.
  return m.priced(model::Level::Intra, bytes, [&](const model::Params& intra) {
    return m.priced(model::Level::Inter, bytes, [&](const model::Params& inter) {
      const double intraBeta = m.intraGiven ? intra.beta : inter.beta / kIntraSpeedup;
      const double interBeta = m.interGiven || !m.intraGiven ? inter.beta : intra.beta * kIntraSpeedup;
      return c.rounds[0] * intra.alpha + c.extraMessages[0] * model::messageOverhead(intra) +
             c.rounds[1] * inter.alpha + c.extraMessages[1] * model::messageOverhead(inter) +
             bytes * (c.blocks[0] * intraBeta + c.blocks[1] * interBeta + c.sharedBlocks[0] * intra.betaShared +
                      c.sharedBlocks[1] * inter.betaShared);
    });
  });
}

double predictSeconds(const Topology& t, scNbrAlgo_t algo, double bytes) {
  return termsSeconds(t.comm->model, costTerms(t, algo), bytes);
}

scNbrAlgo_t pickAlgo(const Topology& t, double bytes) {
  const double b = std::min(bytes, 1.8e19);
  if (const int r = model::ruleFor(t.comm->model, model::kCollNeighborAllGather, uint64_t(b)); r > 0)
    return scNbrAlgo_t(r);
  scNbrAlgo_t best = scNbrNaive;
  double bestSeconds = predictSeconds(t, best, bytes);
  for (scNbrAlgo_t a : {scNbrCombining, scNbrHierarchical})
    if (const double s = predictSeconds(t, a, bytes); s < bestSeconds) best = a, bestSeconds = s;
  return best;
}

// The pick depends on the block size alone (the model and the topology's
// figures are fixed at creation), and working it out costs ~800
// instructions: auto on an 8-byte block took 1.3x naive's instructions per
// call (callgrind), and 1.11x naive's time at blocks up to 1 KiB where it
// ran naive (1.06x with the pick kept; bench/results/
// neighbor-cpu-mpi-2026-11-25-keptpick.md). So the last pick is kept
// (core/kept_pick.h).
scNbrAlgo_t chooseAlgo(const Topology& t, double bytes) {
  static_assert(scNumNbrAlgos <= KeptPick::kAlgos, "a kept pick holds an algorithm in 3 bits");
  // A whole number of bytes below 2^64 (callers pass a size_t's): kept.
  if (!(bytes >= 0 && bytes < 0x1p64 && bytes == double(uint64_t(bytes)))) return pickAlgo(t, bytes);
  return chooseAlgo(t, uint64_t(bytes));
}

}  // namespace sc::nbr
