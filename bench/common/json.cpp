#include "common/json.h"

#ifdef SCBENCH_HAVE_JSON
#include <nlohmann/json.hpp>
#endif

namespace scbench {

bool JsonLines::available() {
#ifdef SCBENCH_HAVE_JSON
  return true;
#else
  return false;
#endif
}

bool JsonLines::open(const std::string& path, std::string* err) {
  path_ = path;
  if (!available()) {
    *err = "JSON output (-J) needs nlohmann_json at build time; it was not found (" + path + " not written)";
    return false;
  }
  f_.open(path, std::ios::trunc);
  if (!f_) {
    *err = "cannot open '" + path + "' for writing (-J); the directory must exist";
    return false;
  }
  return true;
}

void JsonLines::write(const JsonObject& obj) {
#ifdef SCBENCH_HAVE_JSON
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, v] : obj.fields()) std::visit([&, k = &key](const auto& x) { j[*k] = x; }, v);
  f_ << j.dump() << '\n';
#else
  (void)obj;
#endif
}

bool JsonLines::close(std::string* err) {
  f_.flush();
  if (!f_) {
    *err = "error writing '" + path_ + "'";
    return false;
  }
  f_.close();
  return true;
}

bool writeJsonLines(const std::string& path, const std::vector<JsonObject>& objs, std::string* err) {
  JsonLines out;
  if (!out.open(path, err)) return false;
  for (const auto& o : objs) out.write(o);
  return out.close(err);
}

}  // namespace scbench
