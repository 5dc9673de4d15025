#include "model_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <vector>

#include "common/harness.h"
#include "core/error.h"
#include "model/tuning.h"
#include "sparcoll/neighbor.h"

namespace mtest {
namespace {

std::mutex gMutex;
std::vector<std::string>* gFiles = nullptr;

void removeAll() {
  std::lock_guard<std::mutex> lk(gMutex);
  if (!gFiles) return;
  for (const std::string& f : *gFiles) std::remove(f.c_str());
}

}  // namespace

std::string writeTuning(const std::string& text) {
  static std::atomic<int> counter{0};
  const std::string path =
      testing::TempDir() + "sparcoll-tuning-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json";
  std::ofstream(path, std::ios::binary) << text;
  std::lock_guard<std::mutex> lk(gMutex);
  if (!gFiles) {
    gFiles = new std::vector<std::string>;
    std::atexit(removeAll);
  }
  gFiles->push_back(path);
  return path;
}

std::string tuningJson(const std::string& models, const std::string& rules) {
  return R"({"format": "sparcoll-tuning", "version": 1, "models": )" + models + R"(, "rules": )" + rules + "}";
}

std::string parseError(const std::string& text) {
  try {
    sc::model::parseTuning(text, "t.json");
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), scInvalidArgument);
    std::string m = e.what();
    const size_t at = m.rfind(" (csrc/");
    return at == std::string::npos ? m : m.substr(0, at);
  }
  return "";
}

scConfig_t configWith(const char* tuningFile) {
  scConfig_t cfg = sctest::testConfig();
  cfg.tuningFile = tuningFile;
  return cfg;
}

std::vector<int> othersThan(int rank, int P) {
  std::vector<int> v;
  for (int q = 0; q < P; ++q)
    if (q != rank) v.push_back(q);
  return v;
}

scTopology_t completeTopology(scComm_t comm, int rank, int P) {
  const std::vector<int> others = othersThan(rank, P);
  scTopology_t t = nullptr;
  EXPECT_EQ(scTopologyCreate(&t, comm, P - 1, others.data(), P - 1, others.data()), scSuccess) << scGetLastError(comm);
  return t;
}

}  // namespace mtest
