// scEstimateTime on any Model: a communicator's, or one of hypothetical size
// (scCostModelCreate), so tools see exactly what a communicator would.
#pragma once

#include <cstddef>

#include "model/model.h"

namespace sc::model {

struct Estimate {
  double seconds = 0;  // of the algorithm asked for (auto: of auto's pick)
  int autoAlgo = 0;    // what auto would run, in the collective's enum
};

// Arguments as scEstimateTime's (sparcoll.h); throws scInvalidArgument.
Estimate estimate(const Model& m, int coll, int algo, size_t count, scDataType_t dt, double density);

}  // namespace sc::model
