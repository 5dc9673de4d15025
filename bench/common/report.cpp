#include "common/report.h"

#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <tuple>

#ifdef SCBENCH_HAVE_JSON
#include <nlohmann/json.hpp>
#endif

namespace scbench {

namespace {

using Key = std::tuple<int, int, size_t, bool>;  // dtype, op, bytes, in-place
Key keyOf(const Result& r) { return Key{int(r.dtype), int(r.op), r.bytes, r.inPlace}; }

std::map<Key, const Result*> baselineIndex(const std::vector<Result>& all, const std::string& baseline) {
  std::map<Key, const Result*> m;
  for (const auto& r : all)
    if (r.algorithm == baseline) m[keyOf(r)] = &r;
  return m;
}

std::string ratio(double num, double den) {
  if (!(den > 0) || !(num > 0)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", num / den);
  return b;
}

}  // namespace

std::string Report::formatTime(double us) {
  char b[32];
  if (us >= 10000.0) std::snprintf(b, sizeof b, "%7.0f", us);
  else if (us >= 100.0) std::snprintf(b, sizeof b, "%7.1f", us);
  else std::snprintf(b, sizeof b, "%7.2f", us);
  return b;
}

void Report::header(const std::vector<std::string>& rankLines) {
  const bool factor = o_.stepFactor > 1;
  std::fprintf(out_,
               "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
               "validation: %d graph: %d\n",
               info_.nthreads, o_.ngpus, o_.minBytes, o_.maxBytes, factor ? o_.stepFactor : o_.stepBytes,
               factor ? "factor" : "bytes", o_.warmupIters, o_.iters, o_.aggIters, o_.check, o_.cudaGraph);
  static const char* combineNames[] = {"rank 0", "mean over ranks", "min over ranks", "max over ranks"};
  std::string algos;
  for (const auto& a : o_.algorithms) algos += (algos.empty() ? "" : ",") + a;
  std::fprintf(out_, "# sparcoll %s: transport %s, %d ranks, %s buffers, algorithms %s, time: %s\n",
               info_.collective.c_str(), transportName(info_.transport), info_.nranks,
               info_.device ? "device" : "host", algos.c_str(), combineNames[int(o_.combine)]);
  std::fprintf(out_, "#\n# Using devices\n");
  for (const auto& l : rankLines) std::fprintf(out_, "%s\n", l.c_str());
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void Report::beginBlock(const std::string& algorithm) {
  const char* t = o_.reportCpuTime ? "cputime" : "time";
  std::fprintf(out_, "# Algorithm: %s\n#\n", algorithm.c_str());
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
               "", "", "");
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type",
               "redop", "root", t, "algbw", "busbw", "#wrong", t, "algbw", "busbw", "#wrong");
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
               "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  std::fflush(out_);
}

void Report::row(const Result& oop, const Result& ip) {
  std::fprintf(out_, "%12zu  %12zu  %8s  %6s  %6i", oop.bytes, oop.count, typeName(oop.dtype),
               info_.hasOp ? opName(oop.op) : "none", -1);
  for (const Result* r : {&oop, &ip}) {
    const double t = o_.reportCpuTime ? r->cpuTimeUs : r->timeUs;
    if (r->wrong >= 0)
      std::fprintf(out_, "  %7s  %6.2f  %6.2f  %5lld", formatTime(t).c_str(), r->algbw, r->busbw, (long long)r->wrong);
    else
      std::fprintf(out_, "  %7s  %6.2f  %6.2f  %5s", formatTime(t).c_str(), r->algbw, r->busbw, "N/A");
  }
  std::fprintf(out_, "\n");
  std::fflush(out_);
}

void Report::endBlock(int64_t errors, double avgBusBw) {
  std::fprintf(out_, "# Out of bounds values : %lld %s\n", (long long)errors, errors ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %g \n", avgBusBw);
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void Report::summary(const std::vector<Result>& all) {
  const std::string& base = info_.baseline;
  const auto native = baselineIndex(all, base);
  std::fprintf(out_,
               "# Summary: time per call in us (%s); x/%s = time / %s time (oop: out-of-place, ip: in-place);\n"
               "# speedup = %s time / time (out-of-place); sent = bytes sent per rank per call by sparcoll's "
               "schedules\n# (max over ranks; native calls are not counted); sent/size = sent / size\n",
               o_.reportCpuTime ? "cputime" : "time", base.c_str(), base.c_str(), base.c_str());
  std::fprintf(out_, "# %10s  %8s  %6s  %-13s %9s %9s  %10s %10s %8s  %14s %9s\n", "size", "type", "redop", "algorithm",
               "oop(us)", "ip(us)", ("oop/" + base).c_str(), ("ip/" + base).c_str(), "speedup", "sent/rank(B)",
               "sent/size");
  // Rows grouped by (type, op, size), algorithms in command-line order.
  std::map<std::tuple<int, int, size_t>, std::vector<std::pair<const Result*, const Result*>>> groups;
  std::vector<std::tuple<int, int, size_t>> order;
  std::map<std::pair<std::string, Key>, const Result*> inPlace;
  for (const auto& r : all)
    if (r.inPlace) inPlace[{r.algorithm, keyOf(r)}] = &r;
  for (const auto& r : all) {
    if (r.inPlace) continue;
    const auto k = std::make_tuple(int(r.dtype), int(r.op), r.bytes);
    const auto ip = inPlace.find({r.algorithm, Key{int(r.dtype), int(r.op), r.bytes, true}});
    if (!groups.count(k)) order.push_back(k);
    groups[k].push_back({&r, ip == inPlace.end() ? nullptr : ip->second});
  }
  for (const auto& k : order) {
    for (const auto& [oop, ip] : groups[k]) {
      auto time = [&](const Result* r) { return r ? (o_.reportCpuTime ? r->cpuTimeUs : r->timeUs) : 0.0; };
      const auto no = native.find(keyOf(*oop));
      const Result* nOop = no == native.end() ? nullptr : no->second;
      const Result* nIp = nullptr;
      if (ip) {
        const auto ni = native.find(keyOf(*ip));
        nIp = ni == native.end() ? nullptr : ni->second;
      }
      const bool isNative = oop->algorithm == base;
      char sent[32] = "-", perSize[32] = "-";
      if (oop->algorithm != "native") {
        std::snprintf(sent, sizeof sent, "%.0f", oop->sentMax);
        if (oop->bytes) std::snprintf(perSize, sizeof perSize, "%.3f", oop->sentMax / double(oop->bytes));
      }
      std::fprintf(out_, "# %10zu  %8s  %6s  %-13s %9s %9s  %10s %10s %8s  %14s %9s\n", oop->bytes,
                   typeName(oop->dtype), info_.hasOp ? opName(oop->op) : "none", oop->algorithm.c_str(),
                   formatTime(time(oop)).c_str(), ip ? formatTime(time(ip)).c_str() : "-",
                   isNative ? "-" : ratio(time(oop), time(nOop)).c_str(),
                   isNative ? "-" : ratio(time(ip), time(nIp)).c_str(),
                   isNative ? "-" : ratio(time(nOop), time(oop)).c_str(), sent, perSize);
    }
  }
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

bool Report::writeJson(const std::vector<Result>& all, const std::string& path, std::string* err) {
#ifdef SCBENCH_HAVE_JSON
  std::ofstream f(path);
  if (!f) {
    *err = "cannot open '" + path + "' for writing";
    return false;
  }
  const auto native = baselineIndex(all, info_.baseline);
  char stamp[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  for (const auto& r : all) {
    nlohmann::ordered_json j;
    j["tool"] = info_.tool;
    j["collective"] = info_.collective;
    j["algorithm"] = r.algorithm;
    j["transport"] = transportName(info_.transport);
    j["nranks"] = info_.nranks;
    j["device_buffers"] = info_.device;
    j["type"] = typeName(r.dtype);
    j["redop"] = info_.hasOp ? opName(r.op) : "none";
    j["root"] = -1;
    j["size_bytes"] = r.bytes;
    j["count"] = r.count;
    j["in_place"] = r.inPlace;
    j["time_us"] = r.timeUs;
    j["cputime_us"] = r.cpuTimeUs;
    j["algbw_gbps"] = r.algbw;
    j["busbw_gbps"] = r.busbw;
    j["wrong"] = r.wrong >= 0 ? nlohmann::ordered_json(r.wrong) : nlohmann::ordered_json(nullptr);
    j["bytes_sent_per_rank_avg"] = r.sentAvg;
    j["bytes_sent_per_rank_max"] = r.sentMax;
    j["msgs_sent_per_rank_max"] = r.msgsMax;
    j["traffic_counted"] = r.algorithm != "native";
    const auto n = native.find(keyOf(r));
    if (n != native.end() && r.algorithm != info_.baseline && n->second->timeUs > 0 && r.timeUs > 0) {
      j["baseline"] = info_.baseline;
      j["baseline_time_us"] = n->second->timeUs;
      j["time_ratio_to_baseline"] = r.timeUs / n->second->timeUs;
      j["speedup_vs_baseline"] = n->second->timeUs / r.timeUs;
    }
    j["iters"] = o_.iters;
    j["warmup_iters"] = o_.warmupIters;
    j["agg_iters"] = o_.aggIters;
    j["time_combine"] = int(o_.combine);
    j["timestamp"] = stamp;
    f << j.dump() << '\n';
  }
  if (!f) {
    *err = "error writing '" + path + "'";
    return false;
  }
  return true;
#else
  (void)all;
  *err = "JSON output (-J) needs nlohmann_json at build time; it was not found (" + path + " not written)";
  return false;
#endif
}

}  // namespace scbench
