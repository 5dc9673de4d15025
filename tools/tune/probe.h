// The neighbourhood probe's side of the fit (sweep.h, Sweep::neighbor): the
// model's time for a probe point from its recorded terms and fitted
// parameters, and the message overhead o fitted from naive against
// combining (fit.h, fitMessageOverhead).
#pragma once

#include <string>
#include <vector>

#include "model.h"
#include "sweep.h"

namespace sctune {

// The parameters the library prices b bytes with at `level` ("intra",
// "inter"), as Model::paramsAt: the band holding b, else the nearest by
// ratio; a level the models lack takes the other level's. The probe's blocks
// are measured dense sizes, where the library blends no bands.
Params paramsAt(const std::vector<ModelEntry>& models, const std::string& level, double b);

// The neighbourhood model's time for a probe point (scTopologyCostTerms'
// formula), apart from the message overhead of level `except` (0 intra,
// 1 inter; -1: everything).
double probeSeconds(const std::vector<ModelEntry>& models, const Point& p, int except = -1);

// The message overhead of the fitted level from the probe, written on each of
// its bands with the fit's facts, and printed with the probe's points (rank
// 0); nothing when the probe did not run or changed no message count.
void fitOverhead(const std::vector<Point>& pts, const std::string& level, std::vector<ModelEntry>& models);

}  // namespace sctune
