// Pieces shared by the dense tools (all_reduce_perf, reduce_scatter_perf,
// all_gather_perf): algorithm names -> scAlgo_t.
#pragma once

#include <string>

#include "sparcoll/sparcoll.h"

namespace scbench {

// "auto", "ring", "rabenseifner", "recdbl", "native" -> scAlgo_t (the driver has
// already checked the name against the tool's list).
inline scAlgo_t denseAlgo(const std::string& name) {
  if (name == "ring") return scAlgoRing;
  if (name == "rabenseifner") return scAlgoRabenseifner;
  if (name == "recdbl") return scAlgoRecDbl;
  if (name == "native") return scAlgoNative;
  return scAlgoAuto;
}

}  // namespace scbench
