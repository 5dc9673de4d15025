// The dense collectives' cost model (Hockney's alpha-beta with gamma for the
// local reduction; Thakur, Rabenseifner & Gropp 2005) and the auto choice
// built on it. Comm-free: the DSOP and sparse models price their dense steps
// here too, and tools predict any P.
#pragma once

#include <cstddef>

#include "model/model.h"

namespace sc {

// Values are the scCollective_t ones, so a Coll is also a rule's collective.
enum class Coll {
  AllReduce = scCollAllReduce,
  ReduceScatter = scCollReduceScatter,
  AllGather = scCollAllGather,
  Broadcast = scCollBroadcast
};

namespace model {

// The coefficients of `algo` for `bytes` (the full vector per rank) on P
// ranks. native, which the model cannot see inside, is priced as ring
// (broadcast's as scatter_allgather).
Coef denseCoef(Coll coll, scAlgo_t algo, int P, double bytes);
// denseCoef on the model's parameters (its level's).
double predictDense(const Model& m, Coll coll, scAlgo_t algo, size_t bytes);
// Whether the collective offers the algorithm (auto excluded).
bool denseOffers(Coll coll, scAlgo_t algo);
// Resolves auto: the explicit `requested`, else the model's denseAlgo
// (scConfig_t.algo / SPARCOLL_ALGO) when the collective offers it, else the
// tuning file's first matching rule, else the fastest prediction. An explicit
// algorithm the collective does not offer is an scInvalidArgument.
scAlgo_t chooseDense(const Model& m, Coll coll, scAlgo_t requested, size_t bytes);

}  // namespace model
}  // namespace sc
