// The neighbourhood probe's side of the fit (sweep.h, Sweep::neighbor): the
// model's time for a probe point from its recorded terms, and the message
// overhead o fitted from naive against combining (fit.h, fitMessageOverhead).
// The terms are priced by the library (scCostModelNeighborTime, the code
// scTopologyEstimateTime runs, bands blended and a missing level's beta
// derived as there), so the probe holds no copy of the neighbourhood formula.
#pragma once

#include <string>
#include <vector>

#include "model.h"
#include "sweep.h"

namespace sctune {

// The neighbourhood model's time for a probe point: its terms priced with the
// cost model m, apart from the message overhead of level `except` (0 intra,
// 1 inter; -1: everything), whose extra messages are left out of the terms.
// That leaves out exactly their overhead where no bands blend (the price is
// linear in them within a band), as at the probe's blocks: dense sizes the fit
// measured, each inside a band's measured sizes. Fatal on failure.
double probeSeconds(const CostModel& m, const Point& p, int except = -1);

// The message overhead of the fitted level from the probe, written on each of
// its bands with the fit's facts, and printed with the probe's points (rank
// 0); nothing when the probe did not run or changed no message count. The
// rest of the model's difference between the two algorithms is priced with
// `models` as they stand, loaded by the library as the tuning file of the run
// `src` describes (on `transport`).
void fitOverhead(const std::vector<Point>& pts, const std::string& level, std::vector<ModelEntry>& models,
                 const Source& src, scTransport_t transport);

}  // namespace sctune
