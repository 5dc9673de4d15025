// JSON lines (-J): one object per measurement, keys in the order they were
// added. Writing needs nlohmann_json at build time; without it open() says so
// and the tools refuse -J before running.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace scbench {

class JsonObject {
 public:
  using Value = std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string>;

  // Integers keep their signedness, so values print as they would from C++.
  template <typename T>
  JsonObject& add(const std::string& key, const T& v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::nullptr_t>) fields_.emplace_back(key, Value(v));
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) fields_.emplace_back(key, Value(int64_t(v)));
    else if constexpr (std::is_integral_v<T>) fields_.emplace_back(key, Value(uint64_t(v)));
    else if constexpr (std::is_floating_point_v<T>) fields_.emplace_back(key, Value(double(v)));
    else fields_.emplace_back(key, Value(std::string(v)));
    return *this;
  }
  const std::vector<std::pair<std::string, Value>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, Value>> fields_;
};

class JsonLines {
 public:
  static bool available();
  // Creates (truncates) path; false with *err when it cannot be written.
  bool open(const std::string& path, std::string* err);
  void write(const JsonObject& obj);
  // Flushes; false with *err when a write failed.
  bool close(std::string* err);

 private:
  std::string path_;
  std::ofstream f_;
};

// Writes all objects to path (one line each): open, write, close.
bool writeJsonLines(const std::string& path, const std::vector<JsonObject>& objs, std::string* err);

}  // namespace scbench
