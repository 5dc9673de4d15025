// Where a Model's numbers come from, in order of precedence: the environment
// (SPARCOLL_ALPHA/BETA/GAMMA/BETA_SHARED/MESSAGE_OVERHEAD), the tuning file's entry for the transport,
// memory kind and level, the built-in per-transport defaults.
#include "model/model.h"

#include <algorithm>

#include "model/tuning.h"

namespace sc::model {
namespace {

// The file's bands for one level, sorted by bytes (the parser has rejected
// overlapping ones).
std::vector<Band> bandsOf(const Tuning& t, scTransport_t transport, bool device, Level level) {
  std::vector<Band> out;
  for (const ModelEntry* e : t.entries(transport, device, level))
    out.push_back({e->bytes.lo, e->bytes.hi, e->measured.lo, e->measured.hi, e->params});
  std::sort(out.begin(), out.end(), [](const Band& a, const Band& b) { return a.lo < b.lo; });
  return out;
}

}  // namespace

Params builtinParams(scTransport_t transport) {
  // Typical figures of each transport (README "Cost model"); one set for both
  // levels. The neighbourhood model prices intra-node bytes at a quarter of
  // beta unless a tuning file measures them (neighbor/model.cpp).
  switch (transport) {
    case scTransportNccl: return {10e-6, 1.0 / 20e9, 1.0 / 400e9};
    case scTransportLocal: return {3e-6, 1.0 / 6e9, 1.0 / 4e9};
    default: return {5e-6, 1.0 / 4e9, 1.0 / 4e9};
  }
}

Model makeModel(std::shared_ptr<const Tuning> tuning, const Overrides& env, scTransport_t transport, bool device, int P,
                int machines, scAlgo_t denseAlgo) {
  Model m;
  m.P = P;
  m.machines = machines;
  m.transport = transport;
  m.device = device;
  m.denseAlgo = denseAlgo;
  m.intra = m.inter = {Band{0, UINT64_MAX, 0, UINT64_MAX, builtinParams(transport)}};
  if (tuning) {
    const std::vector<Band> intra = bandsOf(*tuning, transport, device, Level::Intra);
    const std::vector<Band> inter = bandsOf(*tuning, transport, device, Level::Inter);
    m.intraGiven = !intra.empty();
    m.interGiven = !inter.empty();
    // A level the file lacks takes the other level's measured numbers rather
    // than the built-in guess: they describe this machine, the guess another.
    if (m.intraGiven) m.intra = m.inter = intra;
    if (m.interGiven) {
      m.inter = inter;
      if (!m.intraGiven) m.intra = inter;
    }
    m.tuning = std::move(tuning);
  }
  for (std::vector<Band>* level : {&m.intra, &m.inter})
    for (Band& b : *level) {
      if (!std::isnan(env.alpha)) b.p.alpha = env.alpha;
      if (!std::isnan(env.beta)) b.p.beta = env.beta;
      if (!std::isnan(env.gamma)) b.p.gamma = env.gamma;
      if (!std::isnan(env.betaShared)) b.p.betaShared = env.betaShared;
      if (!std::isnan(env.messageOverhead)) b.p.messageOverhead = env.messageOverhead;
    }
  return m;
}

const Params& Model::paramsAt(Level l, double bytes) const {
  const std::vector<Band>& bands = l == Level::Inter ? inter : intra;
  // Bands are few (a handful per level), sorted and disjoint: one walk finds
  // the band holding bytes, else its neighbours below and above.
  const Band *below = nullptr, *above = nullptr;
  for (const Band& b : bands) {
    if (double(b.lo) > bytes) {
      above = &b;
      break;
    }
    if (bytes <= double(b.hi)) return b.p;
    below = &b;
  }
  if (!below) return above->p;
  if (!above) return below->p;
  // In a gap: the nearer band by ratio (sizes are compared geometrically).
  return double(above->lo) / std::max(bytes, 1.0) < std::max(bytes, 1.0) / std::max(double(below->hi), 1.0) ? above->p
                                                                                                            : below->p;
}

Model::Blend Model::blendAt(Level l, double bytes) const {
  const std::vector<Band>& bands = l == Level::Inter ? inter : intra;
  // Between band i's largest measured size and band i+1's smallest: blend.
  // Sizes are compared geometrically, so the weight is a ratio of logarithms.
  for (size_t i = 0; i + 1 < bands.size(); ++i) {
    const double below = std::max(double(bands[i].measuredHi), 1.0), above = double(bands[i + 1].measuredLo);
    if (bytes <= below || bytes >= above || above <= below) continue;
    return {&bands[i].p, &bands[i + 1].p, std::log(bytes / below) / std::log(above / below)};
  }
  return {&paramsAt(l, bytes), nullptr, 0};
}

int ruleFor(const Model& m, int coll, uint64_t bytes, double density) {
  if (!m.tuning) return -1;
  const Rule* r = m.tuning->match(coll, m.transport, m.device, uint64_t(m.P), bytes, density);
  return r ? r->algo : -1;
}

}  // namespace sc::model
