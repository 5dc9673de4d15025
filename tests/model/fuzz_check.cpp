#include "fuzz_check.h"

#include <cmath>
#include <exception>

#include "core/error.h"
#include "model/tuning.h"

namespace mtest {

std::string checkTuningBytes(const uint8_t* data, size_t size, bool* parsed) {
  if (parsed) *parsed = false;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto t = sc::model::parseTuning(text, "fuzz.json");
    if (parsed) *parsed = true;
    // Whatever bands a file that parses holds, a price is a number >= 0
    // everywhere, between measured sizes (blended) too.
    const sc::model::Coef c{3, 1e4, 1e4, 4e4};
    for (scTransport_t tr : {scTransportMpi, scTransportNccl, scTransportLocal})
      for (bool device : {false, true}) {
        const sc::model::Model m = sc::model::makeModel(t, {}, tr, device, 4, 2, scAlgoAuto);
        for (sc::model::Level l : {sc::model::Level::Intra, sc::model::Level::Inter})
          for (double bytes : {0.0, 1.0, 1000.0, 65536.0, 1e6, 1e12, 1.8e19}) {
            // (plus the neighbourhood model's message overhead, measured or alpha's share)
            const double s = m.priced(l, bytes, [&](const sc::model::Params& p) {
              return c.dot(p) + sc::model::messageOverhead(p);
            });
            if (std::isnan(s) || s < 0) return "price " + std::to_string(s) + " at " + std::to_string(bytes) + " bytes";
          }
      }
    return "";
  } catch (const sc::Error& e) {
    const std::string m = e.what();
    if (e.code() != scInvalidArgument) return "code " + std::to_string(int(e.code())) + ": " + m;
    if (m.rfind("tuning file 'fuzz.json': ", 0) != 0) return "message does not name the file: " + m;
    return "";
  } catch (const std::exception& e) {
    return std::string("escaped exception: ") + e.what();
  } catch (...) {
    return "escaped unknown exception";
  }
}

}  // namespace mtest
