// The neighbourhood model's pricing of cost terms (model.cpp), on its own so
// that the cost model's C API (model/api_model.cpp, scCostModelNeighborTime)
// prices terms with the same code as a topology's estimate, without the
// topology's patterns.
#pragma once

#include "model/model.h"
#include "sparcoll/neighbor.h"

namespace sc::nbr {

// The seconds of an algorithm whose terms are c, for blocks of `bytes`, with
// the parameters of m (model.cpp's formula; each level's bands blended on
// their own). predictSeconds is this on the topology's terms and its
// communicator's model.
double termsSeconds(const model::Model& m, const scNbrCostTerms_t& c, double bytes);

}  // namespace sc::nbr
