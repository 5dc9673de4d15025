// The one cost model behind every auto (dense, sparse, DSOP, neighbourhood):
// alpha-beta-gamma parameters per level (intra-node, inter-node) and the rules
// of a tuning file, held as a Model that needs no communicator. A communicator
// keeps one (scComm::model, built at creation); tools build one for any P
// (scCostModelCreate) to predict scales they do not have at hand, with the
// same formulas and the same choices a communicator of that size would make.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace sc::model {

// Seconds per message (alpha), per byte a rank sends on the critical path
// (beta), per byte reduced locally (gamma), and per byte all ranks together
// put on a medium they share (betaShared: a hub, a shaped link, the memory
// bandwidth of oversubscribed cores; 0 on a switched fabric, where every link
// has its own rate). messageOverhead: what each message of a round adds
// beyond its first, in seconds (the neighbourhood model's o; NaN: not
// measured, see messageOverhead() below).
struct Params {
  double alpha = 0, beta = 0, gamma = 0, betaShared = 0;
  double messageOverhead = NAN;
};

// The overhead o of a message beyond a round's first, as a share of alpha,
// where no tuning file measured it: LogP's view that the messages of a round
// are posted together and pay one latency plus an overhead each. Measured
// with naive on 8 and 16 MPI ranks of a 2-core machine: a round cost 30-70 us
// and each further message 3-6 us, a ratio of 9-12; networks show latencies
// of 1-2 us against message overheads of 0.1-0.3 us. 1/12 errs on the side of
// fewer rounds: picking a two-round schedule that does not pay loses up to a
// round's latency, missing one that pays loses a few overheads. What the
// ratio really is depends on the transport and the network (over TCP on the
// same machine a message saved by combining was worth about one alpha, on
// oversubscribed shared memory nothing: bench/results/
// neighbor-overhead-2026-11-29.md), so sparcoll-tune measures it (README
// "Cost model").
constexpr double kDefaultMessageOverhead = 1.0 / 12;
inline double messageOverhead(const Params& p) {
  return std::isnan(p.messageOverhead) ? p.alpha * kDefaultMessageOverhead : p.messageOverhead;
}

// A prediction as coefficients of the parameters: seconds = a alpha + b beta
// + g gamma + s betaShared. The formulas produce these, so each is written
// once and a prediction on any parameters is a dot product.
struct Coef {
  double a = 0, b = 0, g = 0, s = 0;
  Coef operator+(const Coef& o) const { return {a + o.a, b + o.b, g + o.g, s + o.s}; }
  Coef operator*(double x) const { return {a * x, b * x, g * x, s * x}; }
  double dot(const Params& p) const { return a * p.alpha + b * p.beta + g * p.gamma + s * p.betaShared; }
};

enum class Level { Intra, Inter };

// The parameters of one level for the calls whose bytes (as ruleFor counts
// them) lie in [lo, hi]. A tuning file may measure several bands per level:
// shared memory is faster while a call's data stays in cache, a shaped link
// passes its burst at line rate, a transport switches protocol at a size.
// [measuredLo, measuredHi] (within [lo, hi]): the sizes the band's fit saw;
// between one band's largest and the next one's smallest, nobody knows where
// one regime gives way to the other, and the prediction blends the two.
struct Band {
  uint64_t lo = 0, hi = UINT64_MAX;
  uint64_t measuredLo = 0, measuredHi = UINT64_MAX;
  Params p;
};

// Environment overrides (SPARCOLL_ALPHA, _BETA, _GAMMA, _BETA_SHARED,
// _MESSAGE_OVERHEAD); NaN: not set.
struct Overrides {
  double alpha = NAN, beta = NAN, gamma = NAN, betaShared = NAN, messageOverhead = NAN;
};

struct Tuning;  // model/tuning.h

// The rule collectives: scCollective_t, and the neighbourhood allgather (a
// topology's collective, priced by scTopologyEstimateTime).
constexpr int kCollNeighborAllGather = scNumCollectives;
constexpr int kNumRuleCollectives = scNumCollectives + 1;

struct Model {
  int P = 1;
  int machines = 1;  // machines the ranks span: > 1 prices dense, sparse and DSOP at the inter level
  scTransport_t transport = scTransportMpi;
  bool device = false;
  scAlgo_t denseAlgo = scAlgoAuto;  // scConfig_t.algo / SPARCOLL_ALGO: the dense collectives' default
  // Both levels always have at least one band, sorted by bytes: a level the
  // tuning file lacks copies the other one (the built-in defaults are one set
  // for both). given says which the file had, for the neighbourhood model's
  // rule for a missing level.
  std::vector<Band> intra, inter;
  bool intraGiven = false, interGiven = false;
  std::shared_ptr<const Tuning> tuning;  // rules; null without a tuning file
  // With a topology file (topology/topology.h, set at creation): per dense
  // collective (scCollective_t) and algorithm, the seconds per byte of the
  // call that the schedule's most loaded tree link needs, summed over its
  // steps (links at their rates from the file; 0: not priced, e.g. native).
  // A prediction is then at least its alpha and gamma terms plus this.
  bool links = false;
  double linkSecondsPerByte[scNumCollectives][scNumAlgos] = {};

  Level level() const { return machines > 1 ? Level::Inter : Level::Intra; }
  // The parameters for a call of `bytes` at this communicator's level / at a
  // given level: the band holding bytes, else the nearest band (by ratio), so
  // a size between or beyond the measured bands takes its closest neighbour.
  const Params& params(double bytes) const { return paramsAt(level(), bytes); }
  const Params& paramsAt(Level l, double bytes) const;

  // The predicted seconds of a call of `bytes`, seconds(params) being its
  // formula on one set of parameters. Inside a band's measured sizes (and
  // beyond the outermost ones): that band's. Between two bands' measured
  // sizes: log-linear in size from the lower band's prediction at its
  // largest measured size to the upper band's at its smallest,
  //   t = t_lo^(1-w) t_hi^w,  w = log(bytes / lo.measuredHi) / log(hi.measuredLo / lo.measuredHi),
  // so a prediction never jumps where the bands meet (README "Cost model").
  template <class F>
  double priced(Level l, double bytes, F&& seconds) const {
    const Blend b = blendAt(l, bytes);
    if (b.w <= 0) return seconds(*b.lo);
    return std::pow(seconds(*b.lo), 1 - b.w) * std::pow(seconds(*b.hi), b.w);
  }
  template <class F>
  double priced(double bytes, F&& seconds) const {
    return priced(level(), bytes, std::forward<F>(seconds));
  }

  // The bands a prediction at `bytes` blends: lo alone (w = 0), or lo and hi
  // with weight w in (0, 1) on hi.
  struct Blend {
    const Params* lo;
    const Params* hi;
    double w;
  };
  Blend blendAt(Level l, double bytes) const;
};

// The built-in parameters of a transport (typical figures of each transport;
// README "Cost model").
Params builtinParams(scTransport_t transport);

// The model of P ranks on `machines` machines: built-in parameters, replaced
// by the tuning file's entry for (transport, memory, level) where it has one,
// each number then replaced by its environment override where set.
Model makeModel(std::shared_ptr<const Tuning> tuning, const Overrides& env, scTransport_t transport, bool device, int P,
                int machines, scAlgo_t denseAlgo);

// The algorithm of the first tuning-file rule matching this call: its enum
// value in the collective's own algorithm enum (0: auto, the model decides),
// or -1 when no rule matches. bytes: README "Cost model" (the full vector's
// bytes per rank; sparse: N x value size; DSOP: n x m x output size;
// neighbourhood: the block). density: sparse allreduce only.
int ruleFor(const Model& m, int coll, uint64_t bytes, double density = 0);

}  // namespace sc::model
