// Pieces shared by the dense tools (all_reduce_perf, reduce_scatter_perf,
// all_gather_perf, broadcast_perf): algorithm names -> scAlgo_t.
#pragma once

#include <string>

#include "sparcoll/sparcoll.h"

namespace scbench {

// An scAlgoName spelling ("auto", "ring", "binomial", ...) -> scAlgo_t; the
// driver has already checked the name against the tool's list (scAlgoAuto
// for anything else).
inline scAlgo_t denseAlgo(const std::string& name) {
  scAlgo_t a = scAlgoAuto;
  return scAlgoFromName(name.c_str(), &a) == scSuccess ? a : scAlgoAuto;
}

}  // namespace scbench
