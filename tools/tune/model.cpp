#include "model.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "common/driver.h"
#include "sweep.h"

namespace sctune {

using json = nlohmann::ordered_json;

namespace {

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

scCollective_t collectiveId(const std::string& c) {
  return c == "allreduce"          ? scCollAllReduce
         : c == "reduce_scatter"   ? scCollReduceScatter
         : c == "allgather"        ? scCollAllGather
         : c == "sparse_allreduce" ? scCollSparseAllReduce
         : c == "broadcast"        ? scCollBroadcast
                                   : scCollDsop;
}

std::string algoName(scCollective_t c, int id) {
  if (c == scCollSparseAllReduce) return scSparseAlgoName(scSparseAlgo_t(id));
  if (c == scCollDsop) return scDsopAlgoName(scDsopAlgo_t(id));
  return scAlgoName(scAlgo_t(id));
}

}  // namespace

std::string isoUtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char s[32];
  std::strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return s;
}

namespace {

json sourceJson(const Source& src) {
  int major = 0, minor = 0, patch = 0;
  scGetVersion(&major, &minor, &patch);
  return {{"tool", "sparcoll-tune"},
          {"ranks", src.ranks},
          {"machines", src.machines},
          {"transport", src.transport},
          {"memory", src.memory},
          {"quick", src.quick},
          {"dense_only", src.denseOnly},
          {"sparcoll", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
          {"budget_s", src.budget},
          {"sizes", {src.minBytes, src.maxBytes, src.factor}}};
}

// The source block back; throws (json's exceptions) on a malformed one.
Source sourceFrom(const json& s) {
  Source src;
  src.ranks = s.at("ranks").get<int>();
  src.machines = s.at("machines").get<int>();
  src.transport = s.at("transport").get<std::string>();
  src.memory = s.at("memory").get<std::string>();
  src.quick = s.value("quick", false);
  src.denseOnly = s.value("dense_only", false);
  src.budget = s.value("budget_s", 0.0);
  if (const auto it = s.find("sizes"); it != s.end() && it->is_array() && it->size() == 3) {
    src.minBytes = (*it)[0].get<size_t>();
    src.maxBytes = (*it)[1].get<size_t>();
    src.factor = (*it)[2].get<size_t>();
  }
  if (src.ranks < 2 || src.machines < 1 ||
      (src.transport != "mpi" && src.transport != "nccl" && src.transport != "local") ||
      (src.memory != "host" && src.memory != "device"))
    throw std::runtime_error("source: ranks >= 2, machines >= 1, transport mpi|nccl|local, memory host|device");
  return src;
}

}  // namespace

std::string sourceLine(const Source& src) { return json{{"source", sourceJson(src)}}.dump(); }

std::string tuningJson(const Source& src, const std::vector<ModelEntry>& models, const std::vector<RuleEntry>& rules) {
  json j;
  j["format"] = "sparcoll-tuning";
  j["version"] = 1;
  j["created"] = isoUtcNow();
  j["source"] = sourceJson(src);
  j["models"] = json::array();
  for (const ModelEntry& m : models) {
    json fit = {{"r2", num(m.r2)},
                {"median_abs_rel_error", num(m.medianAbsRelError)},
                {"points", m.points},
                {"dropped", m.dropped}};
    if (m.hasPingpong) fit["pingpong"] = {{"alpha", m.ppAlpha}, {"beta", m.ppBeta}, {"r2", num(m.ppR2)}};
    if (std::isfinite(m.p.messageOverhead))
      fit["message_overhead"] = {{"probe", "naive against combining, complete graph"},
                                 {"block_sizes", m.overheadPoints},
                                 {"messages_saved", m.overheadSaved}};
    json e = {{"transport", src.transport}, {"memory", src.memory}, {"level", m.level}};
    if (m.hasBytes) {
      e["bytes"] = {m.bytesLo, m.bytesHi};
      if (m.hasMeasured) e["measured"] = {m.measuredLo, m.measuredHi};
    }
    e["alpha"] = m.p.alpha;
    e["beta"] = m.p.beta;
    e["gamma"] = m.p.gamma;
    e["beta_shared"] = m.p.betaShared;
    if (std::isfinite(m.p.messageOverhead)) e["message_overhead"] = m.p.messageOverhead;
    e["fit"] = fit;
    j["models"].push_back(e);
  }
  j["rules"] = json::array();
  for (const RuleEntry& r : rules) {
    json e = {{"collective", r.collective},
              {"transport", src.transport},
              {"memory", src.memory},
              {"ranks", {r.ranksLo, r.ranksHi}},
              {"bytes", {r.bytesLo, r.bytesHi}}};
    if (r.hasDensity) e["density"] = {r.densityLo, r.densityHi};
    e["algorithm"] = r.algorithm;
    j["rules"].push_back(e);
  }
  return j.dump(2) + "\n";
}

bool readSource(const std::string& path, Source* src, std::string* err) {
  std::ifstream f(path);
  if (!f) return *err = "cannot read '" + path + "'", false;
  try {
    const json j = json::parse(f);
    if (j.value("format", "") != "sparcoll-tuning" || j.value("version", 0) != 1)
      return *err = "'" + path + "' is not a sparcoll-tuning file of version 1", false;
    *src = sourceFrom(j.at("source"));
    return true;
  } catch (const std::exception& e) {
    return *err = "'" + path + "': " + e.what(), false;
  }
}

bool readPoints(const std::string& path, Source* src, std::vector<Point>* pts, std::string* err) {
  std::ifstream f(path);
  if (!f) return *err = "cannot read '" + path + "' (--points)", false;
  std::string line;
  size_t n = 0;
  bool haveSource = false;
  pts->clear();
  try {
    while (std::getline(f, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const json j = json::parse(line);
      if (j.contains("source")) {
        *src = sourceFrom(j.at("source"));
        haveSource = true;
        continue;
      }
      Point p;
      p.collective = j.at("collective").get<std::string>();
      p.algorithm = j.at("algorithm").get<std::string>();
      p.count = j.at("count").get<size_t>();
      p.bytes = j.at("bytes").get<double>();
      p.density = j.value("density", 0.0);
      p.seconds = j.at("seconds").get<double>();
      p.runs = j.value("runs", 0);
      p.batch = j.value("batch", 0L);
      if (const auto t = j.find("terms"); t != j.end()) {
        // rounds, extra messages, blocks, shared blocks (intra, inter each);
        // files of the first version of the probe have no shared blocks.
        const std::vector<double> v = t->get<std::vector<double>>();
        if (v.size() != 8 && v.size() != 6) throw std::runtime_error("terms: expected 8 numbers");
        p.hasTerms = true;
        p.terms = {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v.size() == 8 ? v[6] : 0, v.size() == 8 ? v[7] : 0}};
      }
      if (!(p.seconds > 0) || !std::isfinite(p.seconds) || !(p.bytes > 0))
        throw std::runtime_error("seconds and bytes must be positive");
      pts->push_back(p);
    }
  } catch (const std::exception& e) {
    // json's messages start with "[json.exception.<kind>.<id>] ": keep the readable part.
    std::string what = e.what();
    if (const size_t p = what.find("] "); what.rfind("[json.", 0) == 0 && p != std::string::npos)
      what = what.substr(p + 2);
    return *err = "'" + path + "' line " + std::to_string(n) + ": " + what, false;
  }
  if (!haveSource)
    return *err = "'" + path + "' has no {\"source\": ...} line (the --raw files of this version start with one)",
           false;
  if (pts->empty()) return *err = "'" + path + "' has no points", false;
  return true;
}

namespace {

int algoId(scCollective_t c, const std::string& a) {
  return a == "auto"                  ? 0
         : c == scCollSparseAllReduce ? sparseAlgoId(a)
         : c == scCollDsop            ? dsopAlgoId(a)
                                      : denseAlgoId(a);
}

// The estimate's result; fatal with a message naming the point on failure.
double finish(scResult_t rc, const char* api, const std::string& detail, scCollective_t c, const std::string& coll,
              const std::string& algo, size_t count, double seconds, int pick, std::string* autoPick) {
  if (rc != scSuccess)
    scbench::fatal(std::string(api) + "(" + coll + ", " + algo + ", count " + std::to_string(count) +
                   ") failed: " + scGetErrorString(rc) + ": " + detail);
  if (autoPick) *autoPick = algoName(c, pick);
  return seconds;
}

// scEstimateTime's density argument: sparse allreduce only.
double densityArg(const std::string& coll, double density) { return coll == "sparse_allreduce" ? density : 1.0; }

}  // namespace

CostModel::CostModel(const std::string& json, scTransport_t transport, bool device, int ranks, int machines) {
  // The library reads tuning files by path: a private temporary one.
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/sparcoll-tune-XXXXXX.json";
  const int fd = mkstemps(path.data(), 5);
  if (fd < 0) scbench::fatal("cannot create a temporary file (" + path + ")");
  const bool ok = write(fd, json.data(), json.size()) == ssize_t(json.size());
  close(fd);
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.transport = transport;
  cfg.tuningFile = path.c_str();
  const scResult_t rc = ok ? scCostModelCreate(&m_, &cfg, ranks, machines, device ? 1 : 0) : scSystemError;
  unlink(path.c_str());
  if (rc != scSuccess)
    scbench::fatal(std::string("scCostModelCreate failed: ") + scGetErrorString(rc) + ": " + scGetLastError(nullptr));
}

double estimate(const CostModel& m, const std::string& collective, const std::string& algorithm, size_t count,
                double density, std::string* autoPick) {
  const scCollective_t c = collectiveId(collective);
  double seconds = 0;
  int pick = 0;
  const scResult_t rc = scCostModelEstimateTime(m.get(), c, algoId(c, algorithm), count, scFloat32,
                                                densityArg(collective, density), &seconds, &pick);
  return finish(rc, "scCostModelEstimateTime", rc ? scGetLastError(nullptr) : "", c, collective, algorithm, count,
                seconds, pick, autoPick);
}

double estimate(scComm_t comm, const std::string& collective, const std::string& algorithm, size_t count,
                double density, std::string* autoPick) {
  const scCollective_t c = collectiveId(collective);
  double seconds = 0;
  int pick = 0;
  const scResult_t rc =
      scEstimateTime(comm, c, algoId(c, algorithm), count, scFloat32, densityArg(collective, density), &seconds, &pick);
  return finish(rc, "scEstimateTime", rc ? scGetLastError(comm) : "", c, collective, algorithm, count, seconds, pick,
                autoPick);
}

}  // namespace sctune
