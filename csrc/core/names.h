// The names of scAlgo_t (core/names.cpp): the one table behind scAlgoName,
// scAlgoFromName and the library's own messages.
#pragma once

#include "sparcoll/sparcoll.h"

namespace sc {

// "auto, ring, rabenseifner, recdbl, native, binomial, scatter_allgather":
// every name in scAlgo_t order, for messages that list the valid ones.
const char* algoNameList();

}  // namespace sc
