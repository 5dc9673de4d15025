#include "fuzz_check.h"

#include <exception>

#include "core/error.h"
#include "model/tuning.h"

namespace mtest {

std::string checkTuningBytes(const uint8_t* data, size_t size, bool* parsed) {
  if (parsed) *parsed = false;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    sc::model::parseTuning(text, "fuzz.json");
    if (parsed) *parsed = true;
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
