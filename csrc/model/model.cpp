// Where a Model's numbers come from, in order of precedence: the environment
// (SPARCOLL_ALPHA/BETA/GAMMA), the tuning file's entry for the transport,
// memory kind and level, the built-in per-transport defaults.
#include "model/model.h"

#include "model/tuning.h"

namespace sc::model {

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

Model makeModel(std::shared_ptr<const Tuning> tuning, const Overrides& env, scTransport_t transport, bool device,
                int P, int machines, scAlgo_t denseAlgo) {
  Model m;
  m.P = P;
  m.machines = machines;
  m.transport = transport;
  m.device = device;
  m.denseAlgo = denseAlgo;
  m.intra = m.inter = builtinParams(transport);
  if (tuning) {
    const ModelEntry* intra = tuning->entry(transport, device, Level::Intra);
    const ModelEntry* inter = tuning->entry(transport, device, Level::Inter);
    m.intraGiven = intra != nullptr;
    m.interGiven = inter != nullptr;
    // A level the file lacks takes the other level's measured numbers rather
    // than the built-in guess: they describe this machine, the guess another.
    if (intra) m.intra = m.inter = intra->params;
    if (inter) {
      m.inter = inter->params;
      if (!intra) m.intra = inter->params;
    }
    m.tuning = std::move(tuning);
  }
  for (Params* p : {&m.intra, &m.inter}) {
    if (!std::isnan(env.alpha)) p->alpha = env.alpha;
    if (!std::isnan(env.beta)) p->beta = env.beta;
    if (!std::isnan(env.gamma)) p->gamma = env.gamma;
  }
  return m;
}

int ruleFor(const Model& m, int coll, uint64_t bytes, double density) {
  if (!m.tuning) return -1;
  const Rule* r = m.tuning->match(coll, m.transport, m.device, uint64_t(m.P), bytes, density);
  return r ? r->algo : -1;
}

}  // namespace sc::model
